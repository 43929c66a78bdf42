"""``mropt history report DB``: a short readable summary of a history database.

Counts per table, per source (kind of rows, time span), per user group (jobs, tasks,
R_total of eq. 4 in slot-hours, D of eq. 7, the reduce cost of eq. 9, its busiest hour
of day by :func:`mropt.history.analyses.demand_by_group_hour`), and the possible slow
nodes of HEI sec. 2.2 step 3.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import duckdb

from mropt.history.analyses import OUTLIER_SD, views
from mropt.history.schema import TABLES


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e6 else f"{value:.3e}"
    return str(value)


def _table(header: list[str], rows: list[tuple[Any, ...]]) -> list[str]:
    cells = [header] + [[_fmt(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return [
        "  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in cells
    ]


def report_lines(db: str | Path | duckdb.DuckDBPyConnection, max_rows: int = 20) -> list[str]:
    """The report's lines (module docstring)."""
    out: list[str] = []
    with views(db) as con:
        counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}  # type: ignore[index]
        out.append("history: " + ", ".join(f"{n} {t}" for t, n in counts.items()))
        rows = con.execute(
            """SELECT s.source, coalesce(j.n, 0), coalesce(t.n, 0), coalesce(a.n, 0), j.t_first, j.t_last
               FROM (SELECT source FROM jobs UNION SELECT source FROM tasks) s
               LEFT JOIN (SELECT source, count(*) n, min(submit_time) AS t_first, max(coalesce(finish_time, submit_time)) AS t_last
                          FROM jobs GROUP BY source) j USING (source)
               LEFT JOIN (SELECT source, count(*) n FROM tasks GROUP BY source) t USING (source)
               LEFT JOIN (SELECT source, count(*) n FROM attempts GROUP BY source) a USING (source)
               ORDER BY s.source"""
        ).fetchall()
        out.append("")
        out.append(f"per source ({len(rows)}):")
        out += _table(["source", "jobs", "tasks", "attempts", "first submit", "last finish"], rows)
        groups = con.execute(
            f"""WITH g AS (SELECT "group", count(*) AS jobs, sum(tasks) AS tasks, sum(r_total) / 3600 AS r_hours
                          FROM job_resource GROUP BY "group"),
                    peak AS (SELECT "group", arg_max(hour, demand) AS hour, max(demand) AS demand
                             FROM demand_by_group_hour GROUP BY "group")
               SELECT g."group", g.jobs, g.tasks, g.r_hours, m.d, r.reduce_cost,
                      CASE WHEN peak.demand > 0 THEN peak.hour END, peak.demand / 3600
               FROM g LEFT JOIN group_map_cost m USING ("group") LEFT JOIN group_reduce_cost r USING ("group")
               LEFT JOIN peak USING ("group")
               ORDER BY g.r_hours DESC, g."group" LIMIT {int(max_rows)}"""
        ).fetchall()
        out.append("")
        out.append(
            "per user group (R_total eq. 4 in slot-hours; D eq. 7 in s/MB; reduce cost eq. 9 in s; peak hour of day):"
        )
        out += _table(["group", "jobs", "tasks", "R_total h", "D s/MB", "reduce s", "peak hour", "slot-h/day"], groups)
        slow = con.execute(
            f"""SELECT host, map_tasks, slow_tasks, slow_share, mean_z FROM slow_nodes WHERE slow_tasks > 0
                ORDER BY slow_share DESC, mean_z DESC, host LIMIT {int(max_rows)}"""
        ).fetchall()
        hosts = con.execute("SELECT count(*) FROM slow_nodes").fetchone()[0]  # type: ignore[index]
        out.append("")
        if slow:
            out.append(f"possible slow nodes (a map task with D_i > job mean + {OUTLIER_SD:g} sd), of {hosts} hosts:")
            out += _table(["host", "map tasks", "slow", "share", "mean z"], slow)
        else:
            out.append(f"possible slow nodes: none of {hosts} hosts with map tasks of known input")
    return out
