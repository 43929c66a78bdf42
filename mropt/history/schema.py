"""The tables of the job-history database (HEI sec. 2.1: the Job, Task and Jobconf tables, plus attempts).

HEI's collector parses each job's Jobconf and JobHistory files into three MySQL tables,
``Job``, ``Task`` and ``Jobconf`` (sec. 2.1, Fig. 1); the analyses of sec. 2.2 need a
task's start and finish times, its input bytes and the node it ran on. mropt keeps them
in one DuckDB file with four tables, every row carrying ``source``: the name of the
file (or simulation folder) it was imported from, so one import can be told from
another (``mropt history report`` counts per source).

Times are seconds (``DOUBLE``) in the source's own clock: epoch seconds for Hadoop's
job history and Rumen (their epoch milliseconds / 1000), seconds from the trace start
for Alibaba 2017 and SWIM, simulated seconds for a simulation. Bytes are ``BIGINT``.
Statuses use Hadoop's names (:data:`STATUSES`); each importer maps its source's own.

``jobs``: one row per job. ``user_group`` is the Fair Scheduler pool / Capacity
Scheduler queue the job ran in (HEI's user group); :data:`GROUP_EXPR` falls back to
the user, then ``default``.

``tasks``: one row per task. ``slots`` is HEI eq. 2's N_slot (1 for a Hadoop task; an
Alibaba 2017 task row stands for ``number_of_instances`` identical instances, one slot
each, so its ``slots`` is that count). ``host``/``rack``: where the task's successful
(else last) attempt ran. ``type`` is ``map``, ``reduce`` or ``other`` (Alibaba tasks,
Hadoop's setup and cleanup tasks).

``attempts``: one row per task attempt (Hadoop's TaskAttempt), with the reduce's
shuffle and sort finish times where the source records them.

``jobconf``: the job's configuration, one (key, value) row per property.
"""

from __future__ import annotations

import duckdb

TABLES = ("jobs", "tasks", "attempts", "jobconf")

#: Hadoop's task and job states (and REJECTED: refused by a simulated admission policy); importers map onto these
STATUSES = ("SUCCEEDED", "FAILED", "KILLED", "RUNNING", "PENDING", "REJECTED", "UNKNOWN")
TASK_TYPES = ("map", "reduce", "other")

#: column name -> DuckDB type, in table order
COLUMNS: dict[str, dict[str, str]] = {
    "jobs": {
        "source": "VARCHAR NOT NULL",
        "job_id": "VARCHAR NOT NULL",
        "name": "VARCHAR",
        "user": "VARCHAR",
        "user_group": "VARCHAR",
        "priority": "VARCHAR",
        "submit_time": "DOUBLE",
        "launch_time": "DOUBLE",
        "finish_time": "DOUBLE",
        "status": "VARCHAR",
        "maps": "BIGINT",
        "reduces": "BIGINT",
        "finished_maps": "BIGINT",
        "finished_reduces": "BIGINT",
        "failed_maps": "BIGINT",
        "failed_reduces": "BIGINT",
        "input_bytes": "BIGINT",
        "shuffle_bytes": "BIGINT",
        "output_bytes": "BIGINT",
    },
    "tasks": {
        "source": "VARCHAR NOT NULL",
        "job_id": "VARCHAR NOT NULL",
        "task_id": "VARCHAR NOT NULL",
        "type": "VARCHAR NOT NULL",
        "start_time": "DOUBLE",
        "finish_time": "DOUBLE",
        "status": "VARCHAR",
        "slots": "BIGINT NOT NULL DEFAULT 1",
        "input_bytes": "BIGINT",
        "output_bytes": "BIGINT",
        "host": "VARCHAR",
        "rack": "VARCHAR",
        "cpu": "DOUBLE",
        "mem": "DOUBLE",
    },
    "attempts": {
        "source": "VARCHAR NOT NULL",
        "job_id": "VARCHAR NOT NULL",
        "task_id": "VARCHAR NOT NULL",
        "attempt_id": "VARCHAR NOT NULL",
        "type": "VARCHAR NOT NULL",
        "host": "VARCHAR",
        "rack": "VARCHAR",
        "start_time": "DOUBLE",
        "finish_time": "DOUBLE",
        "status": "VARCHAR",
        "speculative": "BOOLEAN",
        "shuffle_finish": "DOUBLE",
        "sort_finish": "DOUBLE",
        "input_bytes": "BIGINT",
        "error": "VARCHAR",
    },
    "jobconf": {
        "source": "VARCHAR NOT NULL",
        "job_id": "VARCHAR NOT NULL",
        "key": "VARCHAR NOT NULL",
        "value": "VARCHAR",
    },
}

#: a job's user group (HEI's): its pool or queue, else its user, else ``default``
GROUP_EXPR = "coalesce(nullif(user_group, ''), nullif(\"user\", ''), 'default')"


def create_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create the four tables if missing (idempotent)."""
    for table, columns in COLUMNS.items():
        cols = ", ".join(f'"{name}" {kind}' for name, kind in columns.items())
        con.execute(f"CREATE TABLE IF NOT EXISTS {table} ({cols})")


def column_names(table: str) -> list[str]:
    return list(COLUMNS[table])
