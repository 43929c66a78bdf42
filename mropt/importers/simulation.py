"""Importer of a simulation's output folder (``mropt simulate ... --out DIR``, :mod:`mropt.sim.outputs`).

The folder's ``jobs.parquet`` and ``tasks.parquet`` (one row per attempt) are read by
DuckDB, on a connection that may read these two files and nothing else
(:func:`mropt.history.guard.reader_connection`). A map task's ``input_bytes`` comes from the attempt table's ``input_mb`` (MB of 10^6
bytes; folders written before that column existed leave it null).

* ``jobs``: ``job_id``, ``user``, ``user_group`` = the job's Fair Scheduler pool (else its
  user), ``priority``, ``submit_time``, ``launch_time`` = its first task start,
  ``finish_time``, ``status`` (finished: SUCCEEDED; dropped: KILLED; refused by admission:
  REJECTED; else RUNNING), ``maps`` and ``reduces`` (tasks of its map and reduce stages).
  A job the run never submitted (``not_submitted``: a run stopped early, :mod:`mropt.sim.watch`)
  is left out: a history holds submitted jobs; one the stop left running is RUNNING.
* ``tasks``: one per (job, stage, task) that ran, ``task_id`` = ``JOB/STAGE/TASK``:
  start = its first attempt's start, finish = its successful attempt's end (else the
  last attempt's), host and rack of that attempt.
* ``attempts``: every attempt, ``attempt_id`` = ``JOB/STAGE/TASK/ATTEMPT``, with its node,
  rack, start, end, speculative flag and outcome (succeeded -> SUCCEEDED, killed, failed).
* ``jobconf``: the run's policy, seed, mode and policy parameters from ``summary.json``
  (when present), as keys ``mropt.sim.*`` of every job.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa

from mropt.history.batch import Batch, conform_table
from mropt.history.guard import reader_connection
from mropt.importers.table import Importer, register_importer
from mropt.model.errors import InputError

KIND = "simulation"
JOBS, TASKS, SUMMARY = "jobs.parquet", "tasks.parquet", "summary.json"
_JOB_COLUMNS = ("job_id", "submit_time", "user", "pool", "decision", "dropped", "first_start", "finish")
_TASK_COLUMNS = (
    "job_id",
    "stage",
    "stage_type",
    "task",
    "attempt",
    "node",
    "rack",
    "start",
    "end",
    "speculative",
    "outcome",
)


def is_simulation_folder(path: Path) -> bool:
    """A folder holding a simulation's ``jobs.parquet`` and ``tasks.parquet``."""
    return path.is_dir() and (path / JOBS).is_file() and (path / TASKS).is_file()


def _check_columns(con: duckdb.DuckDBPyConnection, path: Path, wanted: tuple[str, ...]) -> None:
    have = {r[0] for r in con.execute("DESCRIBE SELECT * FROM read_parquet($p)", {"p": str(path)}).fetchall()}
    missing = [c for c in wanted if c not in have]
    if missing:
        raise InputError(f"{path}: field '{missing[0]}' is missing (not a simulation's {path.name})")


def simulation_batch(path: str | Path, source: str | None = None) -> Batch:
    """The import batch of one simulation output folder."""
    folder = Path(path)
    if not is_simulation_folder(folder):
        raise InputError(f"{folder}: not a simulation output folder (no {JOBS} and {TASKS})")
    source = source or folder.resolve().name
    con = reader_connection([folder / JOBS, folder / TASKS])
    try:
        try:
            _check_columns(con, folder / JOBS, _JOB_COLUMNS)
            _check_columns(con, folder / TASKS, _TASK_COLUMNS)
            con.execute("CREATE TEMP TABLE a AS SELECT * FROM read_parquet($p)", {"p": str(folder / TASKS)})
            columns = {r[0] for r in con.execute("DESCRIBE a").fetchall()}
            input_bytes = (
                "CASE WHEN isnan(input_mb) THEN NULL ELSE CAST(round(input_mb * 1e6) AS BIGINT) END"
                if "input_mb" in columns
                else "CAST(NULL AS BIGINT)"
            )
            con.execute("CREATE TEMP TABLE j AS SELECT * FROM read_parquet($p)", {"p": str(folder / JOBS)})
            attempts = con.execute(
                f"""SELECT job_id, job_id || '/' || stage || '/' || task AS task_id,
                          job_id || '/' || stage || '/' || task || '/' || attempt AS attempt_id,
                          stage_type AS type, node AS host, rack, start AS start_time, "end" AS finish_time,
                          CASE outcome WHEN 'succeeded' THEN 'SUCCEEDED' WHEN 'killed' THEN 'KILLED'
                               WHEN 'failed' THEN 'FAILED' ELSE 'UNKNOWN' END AS status, speculative,
                          {input_bytes} AS input_bytes
                   FROM a ORDER BY start, attempt"""
            ).to_arrow_table()
            con.register("att", attempts)
            tasks = con.execute(
                """SELECT job_id, task_id, any_value(type) AS type, min(start_time) AS start_time,
                          arg_max(finish_time, (status = 'SUCCEEDED', finish_time)) AS finish_time,
                          CASE WHEN bool_or(status = 'SUCCEEDED') THEN 'SUCCEEDED'
                               ELSE arg_max(status, finish_time) END AS status,
                          arg_max(host, (status = 'SUCCEEDED', finish_time)) AS host,
                          arg_max(rack, (status = 'SUCCEEDED', finish_time)) AS rack,
                          any_value(input_bytes) AS input_bytes
                   FROM att GROUP BY job_id, task_id ORDER BY min(start_time), task_id"""
            ).to_arrow_table()
            con.register("tsk", tasks)
            jobs = con.execute(
                """SELECT j.job_id, j."user", coalesce(j.pool, j."user") AS user_group, CAST(j.priority AS VARCHAR) AS priority,
                          j.submit_time, CASE WHEN isnan(j.first_start) THEN NULL ELSE j.first_start END AS launch_time,
                          CASE WHEN isnan(j.finish) THEN NULL ELSE j.finish END AS finish_time,
                          CASE WHEN j.decision = 'rejected' THEN 'REJECTED' WHEN j.dropped THEN 'KILLED'
                               WHEN NOT isnan(j.finish) THEN 'SUCCEEDED' ELSE 'RUNNING' END AS status,
                          coalesce(c.maps, 0) AS maps, coalesce(c.reduces, 0) AS reduces,
                          coalesce(c.done_maps, 0) AS finished_maps, coalesce(c.done_reduces, 0) AS finished_reduces
                   FROM j LEFT JOIN (
                       SELECT job_id, count(*) FILTER (type = 'map') AS maps, count(*) FILTER (type = 'reduce') AS reduces,
                              count(*) FILTER (type = 'map' AND status = 'SUCCEEDED') AS done_maps,
                              count(*) FILTER (type = 'reduce' AND status = 'SUCCEEDED') AS done_reduces
                       FROM tsk GROUP BY job_id) c USING (job_id)
                   WHERE j.decision <> 'not_submitted'
                   ORDER BY j.submit_time, j.job_id"""
            ).to_arrow_table()
        except duckdb.Error as exc:
            raise InputError(f"{folder}: cannot read the simulation tables ({str(exc).splitlines()[0]})") from None
    finally:
        con.close()
    conf: list[dict[str, str]] = []
    summary = folder / SUMMARY
    if summary.is_file():
        try:
            record = json.loads(summary.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"{summary}: not a JSON summary ({exc})") from None
        settings = {k: record.get(k) for k in ("policy", "seed", "mode", "workload")}
        settings.update({f"params.{k}": v for k, v in (record.get("params") or {}).items()})
        pairs = [
            (f"mropt.sim.{k}", json.dumps(v) if not isinstance(v, str) else v)
            for k, v in settings.items()
            if v is not None
        ]
        conf = [{"job_id": jid, "key": k, "value": v} for jid in jobs.column("job_id").to_pylist() for k, v in pairs]
    jobconf = pa.table(
        {"job_id": [c["job_id"] for c in conf], "key": [c["key"] for c in conf], "value": [c["value"] for c in conf]},
        schema=pa.schema([("job_id", pa.string()), ("key", pa.string()), ("value", pa.string())]),
    )
    tables = {"jobs": jobs, "tasks": tasks, "attempts": attempts, "jobconf": jobconf}
    return Batch(source, KIND, {t: conform_table(t, data, source) for t, data in tables.items()})


def _looks_like(path: Path, head: str | None) -> bool:
    return head is None and is_simulation_folder(path)


register_importer(
    Importer(
        KIND,
        summary="a simulation's output folder (mropt simulate --out DIR): jobs, tasks, attempts, the run's settings",
        source="mropt.sim.outputs (jobs.parquet, tasks.parquet, summary.json)",
        title="a simulation output folder",
        detect=_looks_like,
        history=simulation_batch,
    )
)
