"""HEI sec. 2.2's analyses of the execution history, as SQL over the history database.

Each analysis is a view (created as a temporary view on every connection that
:func:`views` is run on, so ``mropt history query DB "SELECT * FROM task_resource"``
sees them and the database file holds only the four tables). Notation of HEI sec. 2.2:

``task_resource`` (eqs. 2-3)
    R_i = N_slot^i x T_Ocup^i, with T_Ocup^i = T_finish^i - T_start^i: one row per task
    whose start and finish are known (finish >= start), any status (a failed task held
    its slot too). N_slot^i is ``tasks.slots`` (1 for a Hadoop task).
``job_resource`` (eq. 4)
    R_total = sum of R_i over the job's tasks (also split into map, reduce and other).
``map_task_cost`` (eq. 5, and sec. 2.2 step 3)
    D_i = R_i / M_i in seconds per MB (M_i = the task's input bytes / 10^6: the data a map
    reads from HDFS), for every SUCCEEDED map task that read at least
    :data:`MIN_INPUT_BYTES` (64 KiB). A map that read less (TeraGen's and the Sleep job's
    maps generate their data and report 48-86 bytes read) has no D_i: its time
    is start-up, not reading, and R_i / M_i would be seconds per few bytes (5.5e5 s/MB for
    SLS's TeraGen sample, ``2jobs2min-rumen-jh.json``). Such maps still count in R_i, R_total
    and the demand (eqs. 2-4); :func:`tiny_input_maps` counts them per source. Within each job,
    the mean and the population standard deviation of its tasks' D_i; a task is an
    **outlier** when |D_i - mean| > k x sd (k = :data:`OUTLIER_SD` = 2, HEI's "empirical
    threshold"; with sd = 0 nothing is an outlier) and **slow** when D_i - mean > k x sd:
    its node is a possible slow node (step 3).
``job_map_cost`` (eqs. 6-8, step 4)
    The job's D_average^Map = sum R_i / sum M_i over its map tasks **without the outliers**
    (eq. 7, the ratio of sums as eq. 6 writes it); P = sum M_i over all its map tasks (MB
    read from HDFS); R_Map = D_average^Map x P' (eq. 8) with P' = P, the data a run of the
    job processes (the HEI scheduler uses its unread input instead).
``group_map_cost`` (eq. 7 per user group)
    D per user group: sum R_i / sum M_i over the non-outlier map tasks of all its jobs.
``reduce_cost`` / ``group_reduce_cost`` (eq. 9)
    R_average^reduce = sum T_Ocup-reduce^i / L over the SUCCEEDED reduce tasks (L of them)
    of a job, and pooled over all the jobs of a user group.
``slow_nodes`` (sec. 2.2 step 3)
    Per host: its map tasks with a D_i, how many are slow (above), their share, and the
    mean of (D_i - job mean) / sd; a host with a slow task is a possible slow node.
``demand_by_group_hour`` (sec. 2.2, the cluster-wide analysis; eq. 4)
    For each user group and hour of day h (0-23): the R_total (slot-seconds, all task
    types) of the group's jobs submitted in hour h, summed and divided by the number of
    days in the history, a day being a (source, day number) pair with at least one job
    (day number = floor(submit_time / 86400); hour = floor((submit_time mod 86400) / 3600),
    in the source's clock: UTC for epoch times). Every (group, hour) pair appears, 0 when
    the group submitted nothing at that hour. Jobs without tasks (SWIM) add nothing.

The user group is the jobs table's ``user_group`` (pool or queue), else the user, else
``default`` (:data:`mropt.history.schema.GROUP_EXPR`).

The Python functions (:func:`demand_by_group_hour`, :func:`map_cost_per_unit`,
:func:`mean_reduce_cost`, ...) take a database path or an open DuckDB connection and
return pandas DataFrames; they are what the ``hei`` scheduler policy calls.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from mropt.history.schema import GROUP_EXPR
from mropt.history.store import connect

#: k of the outlier and slow-task rule |D_i - mean| > k x sd (HEI sec. 2.2 step 3: an empirical threshold)
OUTLIER_SD = 2.0
#: bytes per MB in D (seconds per MB of map input)
MB = 1e6
#: a SUCCEEDED map that read fewer bytes has no D_i (eq. 5): 64 KiB, one HDFS packet
#: (dfs.client-write-packet-size), far above a generator's split (TeraGen's 79-86 bytes) and
#: far below any block of real input (module docstring, ``map_task_cost``)
MIN_INPUT_BYTES = 65536
SECONDS_PER_DAY = 86400.0


def view_sql(k: float = OUTLIER_SD) -> dict[str, str]:
    """The SELECT of every view, by name, in creation order (module docstring); ``k`` is the outlier rule's."""
    k = float(k)
    return {
        # eqs. 2-3: R_i = N_slot^i x (T_finish^i - T_start^i)
        "task_resource": f"""
            SELECT t.source, t.job_id, t.task_id, t.type, t.status, t.host, t.slots, t.input_bytes,
                   {GROUP_EXPR.replace("user_group", "j.user_group").replace('"user"', 'j."user"')} AS "group",
                   t.finish_time - t.start_time AS occupied,
                   t.slots * (t.finish_time - t.start_time) AS r
            FROM tasks t LEFT JOIN jobs j ON j.source = t.source AND j.job_id = t.job_id
            WHERE t.start_time IS NOT NULL AND t.finish_time IS NOT NULL AND t.finish_time >= t.start_time""",
        # eq. 4: R_total = sum R_i
        "job_resource": f"""
            SELECT j.source, j.job_id, {GROUP_EXPR.replace("user_group", "j.user_group").replace('"user"', 'j."user"')} AS "group",
                   j.submit_time, count(r.r) AS tasks, coalesce(sum(r.r), 0) AS r_total,
                   coalesce(sum(r.r) FILTER (r.type = 'map'), 0) AS r_map,
                   coalesce(sum(r.r) FILTER (r.type = 'reduce'), 0) AS r_reduce,
                   coalesce(sum(r.r) FILTER (r.type = 'other'), 0) AS r_other
            FROM jobs j LEFT JOIN task_resource r ON r.source = j.source AND r.job_id = j.job_id
            GROUP BY ALL""",
        # eq. 5: D_i = R_i / M_i; step 3: per-job mean and standard deviation, outliers and slow tasks
        "map_task_cost": f"""
            WITH d AS (
                SELECT source, job_id, task_id, "group", host, r, input_bytes / {MB} AS mb,
                       r / (input_bytes / {MB}) AS d
                FROM task_resource WHERE type = 'map' AND status = 'SUCCEEDED' AND input_bytes >= {MIN_INPUT_BYTES}),
            s AS (
                SELECT *, avg(d) OVER w AS d_mean, coalesce(stddev_pop(d) OVER w, 0) AS d_sd
                FROM d WINDOW w AS (PARTITION BY source, job_id))
            SELECT *, d_sd > 0 AND abs(d - d_mean) > {k} * d_sd AS outlier,
                   d_sd > 0 AND d - d_mean > {k} * d_sd AS slow,
                   CASE WHEN d_sd > 0 THEN (d - d_mean) / d_sd END AS z
            FROM s""",
        # eqs. 6-8: D_average^Map = sum R_i / sum M_i without outliers; R_Map = D x P'
        "job_map_cost": """
            SELECT source, job_id, any_value("group") AS "group", count(*) AS map_tasks,
                   count(*) FILTER (outlier) AS outliers,
                   sum(r) FILTER (NOT outlier) / sum(mb) FILTER (NOT outlier) AS d,
                   sum(mb) AS input_mb,
                   sum(r) FILTER (NOT outlier) / sum(mb) FILTER (NOT outlier) * sum(mb) AS r_map_need
            FROM map_task_cost GROUP BY source, job_id""",
        # eq. 7 per user group
        "group_map_cost": """
            SELECT "group", sum(r) / sum(mb) AS d, count(*) AS map_tasks, count(DISTINCT (source, job_id)) AS jobs
            FROM map_task_cost WHERE NOT outlier GROUP BY "group\"""",
        # eq. 9 per job
        "reduce_cost": """
            SELECT source, job_id, any_value("group") AS "group", count(*) AS reduce_tasks, sum(r) / count(*) AS reduce_cost
            FROM task_resource WHERE type = 'reduce' AND status = 'SUCCEEDED' GROUP BY source, job_id""",
        # eq. 9 pooled per user group
        "group_reduce_cost": """
            SELECT "group", sum(r) / count(*) AS reduce_cost, count(*) AS reduce_tasks
            FROM task_resource WHERE type = 'reduce' AND status = 'SUCCEEDED' GROUP BY "group\"""",
        # step 3: slow nodes by the standard deviation of per-task D
        "slow_nodes": """
            SELECT host, count(*) AS map_tasks, count(*) FILTER (slow) AS slow_tasks,
                   count(*) FILTER (slow) / count(*) AS slow_share, avg(z) AS mean_z
            FROM map_task_cost WHERE host IS NOT NULL GROUP BY host""",
        # the cluster-wide analysis: demand (eq. 4 slot-seconds) per user group per hour of day
        "demand_by_group_hour": f"""
            WITH jr AS (
                SELECT "group", source, submit_time, r_total,
                       CAST(floor((((submit_time % {SECONDS_PER_DAY}) + {SECONDS_PER_DAY}) % {SECONDS_PER_DAY}) / 3600) AS INTEGER) AS hour
                FROM job_resource WHERE submit_time IS NOT NULL),
            days AS (SELECT greatest(count(DISTINCT (source, floor(submit_time / {SECONDS_PER_DAY}))), 1) AS n FROM jr),
            groups AS (SELECT DISTINCT "group" FROM jr),
            hours AS (SELECT CAST(range AS INTEGER) AS hour FROM range(24)),
            sums AS (SELECT "group", hour, sum(r_total) AS r FROM jr GROUP BY "group", hour)
            SELECT g."group", h.hour, coalesce(s.r, 0) / (SELECT n FROM days) AS demand
            FROM groups g CROSS JOIN hours h LEFT JOIN sums s ON s."group" = g."group" AND s.hour = h.hour""",
    }


VIEWS = tuple(view_sql())


def create_views(con: duckdb.DuckDBPyConnection, k: float = OUTLIER_SD) -> None:
    """Create (or replace) the analysis views as temporary views on ``con``."""
    for name, sql in view_sql(k).items():
        con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS {sql}")


@contextmanager
def views(db: str | Path | duckdb.DuckDBPyConnection, k: float = OUTLIER_SD) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to ``db`` with the views created: a path is opened read-only by
    :func:`mropt.history.store.connect` (locked and checked); an open connection is used as given."""
    if isinstance(db, duckdb.DuckDBPyConnection):
        create_views(db, k)
        yield db
        return
    with connect(db) as con:
        create_views(con, k)
        yield con


def _frame(db: str | Path | duckdb.DuckDBPyConnection, sql: str, k: float = OUTLIER_SD) -> Any:
    with views(db, k) as con:
        return con.execute(sql).df()


def demand_by_group_hour(db: str | Path | duckdb.DuckDBPyConnection) -> Any:
    """Columns [group, hour (0-23), demand]: slot-seconds (eq. 4) of each group's jobs submitted in that
    hour of day, averaged over the days in the history (module docstring); every (group, hour) pair."""
    return _frame(db, 'SELECT "group", hour, demand FROM demand_by_group_hour ORDER BY "group", hour')


def map_cost_per_unit(db: str | Path | duckdb.DuckDBPyConnection, k: float = OUTLIER_SD) -> Any:
    """Columns [group, D]: eqs. 5-7, map seconds per MB of input per user group, outlier tasks
    (|D_i - job mean| > k x sd) removed. Groups without a map task of known input of at least
    :data:`MIN_INPUT_BYTES` are absent."""
    return _frame(db, 'SELECT "group", d AS "D" FROM group_map_cost ORDER BY "group"', k)


def mean_reduce_cost(db: str | Path | duckdb.DuckDBPyConnection) -> Any:
    """Columns [group, reduce_cost]: eq. 9, mean seconds (slot-seconds) per SUCCEEDED reduce task, per
    user group. Groups without a finished reduce task are absent."""
    return _frame(db, 'SELECT "group", reduce_cost FROM group_reduce_cost ORDER BY "group"')


def task_resource(db: str | Path | duckdb.DuckDBPyConnection) -> Any:
    """Eqs. 2-3: one row per task with known times: source, job_id, task_id, type, status, host, slots, occupied, r."""
    return _frame(db, "SELECT * FROM task_resource ORDER BY source, job_id, task_id")


def job_resource(db: str | Path | duckdb.DuckDBPyConnection) -> Any:
    """Eq. 4: R_total per job (and its map, reduce and other parts)."""
    return _frame(db, "SELECT * FROM job_resource ORDER BY source, job_id")


def job_map_need(db: str | Path | duckdb.DuckDBPyConnection, k: float = OUTLIER_SD) -> Any:
    """Eqs. 7-8 per job: map_tasks, outliers removed, D, input_mb (P), r_map_need = D x P."""
    return _frame(db, "SELECT * FROM job_map_cost ORDER BY source, job_id", k)


def slow_nodes(db: str | Path | duckdb.DuckDBPyConnection, k: float = OUTLIER_SD) -> Any:
    """Sec. 2.2 step 3 per host: map_tasks, slow_tasks (D_i > job mean + k x sd), slow_share, mean_z;
    slowest first."""
    return _frame(db, "SELECT * FROM slow_nodes ORDER BY slow_share DESC, mean_z DESC NULLS LAST, host", k)


def tiny_input_maps(db: str | Path | duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Per source, its SUCCEEDED map tasks that read fewer than :data:`MIN_INPUT_BYTES`: no D_i (eq. 5) from them."""
    sql = f"""SELECT source, count(*) FROM tasks WHERE type = 'map' AND status = 'SUCCEEDED'
              AND input_bytes < {MIN_INPUT_BYTES} GROUP BY source ORDER BY source"""
    with views(db) as con:
        return {source: int(n) for source, n in con.execute(sql).fetchall()}


def untimed_jobs(db: str | Path | duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Per source, its jobs without a task row of known start and finish (a SWIM trace's jobs): they add
    nothing to R_total, D, the reduce cost or the demand (eqs. 2-9)."""
    sql = "SELECT source, count(*) FROM job_resource WHERE tasks = 0 GROUP BY source ORDER BY 2 DESC, 1"
    with views(db) as con:
        return {source: int(n) for source, n in con.execute(sql).fetchall()}
