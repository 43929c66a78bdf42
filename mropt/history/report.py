"""``mropt history report DB``: a short readable summary of a history database.

Counts per table, per source (kind of rows, time span), per user group (jobs, tasks,
R_total of eq. 4 in slot-hours, D of eq. 7, the reduce cost of eq. 9, its busiest hour
of day by :func:`mropt.history.analyses.demand_by_group_hour`), and the possible slow
nodes of HEI sec. 2.2 step 3.

A user group pools every source's jobs, as HEI's analyses do (the history of a group is all
of it); ``by_source`` (``--by-source``) gives one row per source and group instead, each
source's peak hour in its own days. Notes under the groups say what the numbers leave out:
groups that pool several sources, jobs without timed task rows (a SWIM trace's: they add no
R_total, D, reduce cost or demand) and succeeded maps that read under
:data:`~mropt.history.analyses.MIN_INPUT_BYTES` (no D).
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

import duckdb

from mropt.history.analyses import MIN_INPUT_BYTES, OUTLIER_SD, SECONDS_PER_DAY, tiny_input_maps, untimed_jobs, views
from mropt.history.schema import TABLES


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e6 else f"{value:.3e}"
    return str(value)


#: times in [EPOCH_FROM, EPOCH_TO) are epoch seconds (a job history's, a Rumen trace's), printed as a
#: UTC date: from 2001-09-09 to the last second a date can print (9999-12-31T23:59:59Z); a trace's own
#: seconds (a simulation's: from 0) and times past the year 9999 (a hostile file's) print as numbers
EPOCH_FROM, EPOCH_TO = 1e9, 253402300800.0


def _time(value: Any) -> str:
    """A time of the ``jobs`` table readably: epoch seconds as ISO UTC, trace seconds in full (not ``1.400e+09``)."""
    if value is None or math.isnan(float(value)):
        return "-"
    t = float(value)
    if EPOCH_FROM <= t < EPOCH_TO:
        return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{t:.10g}"


def _table(header: list[str], rows: list[tuple[Any, ...]], names: int = 1) -> list[str]:
    """Rows under ``header``, the first ``names`` columns left-aligned, the numbers right-aligned."""
    cells = [header] + [[_fmt(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return [
        "  " + "  ".join(c.ljust(w) if i < names else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
        for r in cells
    ]


#: the per-group table per source (``--by-source``): the group query's columns over each source's own jobs,
#: the peak hour's demand over that source's days (as ``demand_by_group_hour`` over all sources)
_BY_SOURCE = f"""
    WITH g AS (SELECT source, "group", count(*) AS jobs, sum(tasks) AS tasks, sum(r_total) / 3600 AS r_hours
               FROM job_resource GROUP BY source, "group"),
         m AS (SELECT source, "group", sum(r) / sum(mb) AS d FROM map_task_cost WHERE NOT outlier
               GROUP BY source, "group"),
         rc AS (SELECT source, "group", sum(r) / count(*) AS reduce_cost FROM task_resource
                WHERE type = 'reduce' AND status = 'SUCCEEDED' GROUP BY source, "group"),
         jr AS (SELECT source, "group", r_total, floor(submit_time / {SECONDS_PER_DAY}) AS day,
                       CAST(floor((((submit_time % {SECONDS_PER_DAY}) + {SECONDS_PER_DAY}) % {SECONDS_PER_DAY})
                                  / 3600) AS INTEGER) AS hour
                FROM job_resource WHERE submit_time IS NOT NULL),
         days AS (SELECT source, count(DISTINCT day) AS n FROM jr GROUP BY source),
         hours AS (SELECT source, "group", hour, sum(r_total) AS r FROM jr GROUP BY source, "group", hour),
         peak AS (SELECT source, "group", arg_max(hour, r) AS hour, max(r) AS r FROM hours GROUP BY source, "group")
    SELECT g.source, g."group", g.jobs, g.tasks, g.r_hours, m.d, rc.reduce_cost,
           CASE WHEN peak.r > 0 THEN peak.hour END, peak.r / days.n / 3600
    FROM g LEFT JOIN m USING (source, "group") LEFT JOIN rc USING (source, "group")
         LEFT JOIN peak USING (source, "group") LEFT JOIN days USING (source)
    ORDER BY g.source, g.r_hours DESC, g."group" LIMIT ?"""


def _some(names: list[str], n: int = 3) -> str:
    return ", ".join(names[:n]) + (f" and {len(names) - n} more" if len(names) > n else "")


def _notes(con: duckdb.DuckDBPyConnection, by_source: bool) -> list[str]:
    """What the group table pools or leaves out (module docstring), one line each."""
    out = []
    pooled = con.execute(
        'SELECT "group" FROM job_resource GROUP BY "group" HAVING count(DISTINCT source) > 1 ORDER BY 1'
    ).fetchall()
    if pooled and not by_source:
        out.append(
            f"note: {len(pooled)} group(s) pool jobs of several sources ({_some([g for (g,) in pooled])}), as HEI's "
            "analyses do; --by-source gives a row per source and group"
        )
    untimed = untimed_jobs(con)
    if untimed:
        out.append(
            f"note: {sum(untimed.values())} job(s) have no task rows with times "
            f"({_some([f'{s}: {n}' for s, n in untimed.items()])}): they count in jobs but add no R_total, D, reduce "
            "cost or demand (HEI sec. 2.2 needs task times; a SWIM trace has job rows only)"
        )
    tiny = tiny_input_maps(con)
    if tiny:
        out.append(
            f"note: {sum(tiny.values())} succeeded map task(s) read under {MIN_INPUT_BYTES // 1024} KiB "
            f"({_some([f'{s}: {n}' for s, n in tiny.items()])}): no D from them (maps that generate their data, "
            "as TeraGen's: seconds per few bytes is no cost per MB)"
        )
    return out


def report_lines(db: str | Path | duckdb.DuckDBPyConnection, max_rows: int = 20, by_source: bool = False) -> list[str]:
    """The report's lines (module docstring); ``by_source``: the group table per source and group."""
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
        rows = [(*row[:4], _time(row[4]), _time(row[5])) for row in rows]
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
        header = ["group", "jobs", "tasks", "R_total h", "D s/MB", "reduce s", "peak hour", "slot-h/day"]
        if by_source:
            groups = con.execute(_BY_SOURCE, [int(max_rows)]).fetchall()
            header = ["source", *header]
        out.append("")
        out.append(
            f"per {'source and ' if by_source else ''}user group (R_total eq. 4 in slot-hours; D eq. 7 in s/MB; "
            "reduce cost eq. 9 in s; peak hour of day):"
        )
        out += _table(header, groups, names=2 if by_source else 1)
        out += ["  " + line for line in _notes(con, by_source)]
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
