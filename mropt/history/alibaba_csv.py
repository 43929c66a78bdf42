"""Importer of the Alibaba cluster trace v2017 ``batch_task.csv`` (task level), read by DuckDB's CSV reader.

The columns are :data:`mropt.instances.alibaba.COLUMNS` (the trace's schema; see
``mropt.instances.alibaba`` and the trace's README). The whole file is read and checked
inside DuckDB (its parallel CSV reader, then SQL, on a connection that may read this one
file and nothing else: :func:`mropt.history.guard.reader_connection`), never row by row
in Python, so the 80,553 rows (11.9 million task instances) of the published day import
in well under a second (benchmarks/bench_history.py).

Rows:

* ``tasks``: one row per trace row: ``task_id``, ``job_id``, type ``other`` (the trace
  does not say map or reduce), ``start_time`` = ``task_create_time`` and ``finish_time``
  = ``task_end_time`` (the trace has no start time; its end is the last state change),
  ``status`` (Terminated -> SUCCEEDED, Failed -> FAILED, Running -> RUNNING, Waiting ->
  PENDING), ``slots`` = ``number_of_instances`` (HEI eq. 2's N_slot: the row stands for
  that many identical one-slot instances; they are not expanded into rows of their own,
  since the 2017 file gives them no times, hosts or sizes of their own), ``cpu`` (cores
  per instance: the trace's value / 100) and ``mem`` (normalised, per instance). Empty
  requests (Waiting rows) stay null; negative times (a few rows) are kept as the trace
  has them.
* ``jobs``: one row per ``job_id``: submit time = its first ``task_create_time``, finish
  time = its last ``task_end_time``, status FAILED if a task failed, SUCCEEDED if all
  terminated, else RUNNING. The trace has no user, group, name, input or output bytes.

A header row (first field not a number) is skipped. A row that is not eight fields, a
time or instance count that is not a whole number, a negative or out-of-range instance
count (more than ``MAX_INSTANCES``), a request that is not a finite number >= 0, or an
empty job or task id is an InputError naming the file, the line and the field, and
nothing of the file is imported.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import duckdb

from mropt.history.batch import Batch, conform_table
from mropt.history.guard import reader_connection
from mropt.instances.alibaba import COLUMNS, MAX_INSTANCES
from mropt.model.errors import InputError

KIND = "alibaba"
_STATUS_SQL = (
    "CASE status WHEN 'Terminated' THEN 'SUCCEEDED' WHEN 'Failed' THEN 'FAILED' WHEN 'Running' THEN 'RUNNING' "
    "WHEN 'Waiting' THEN 'PENDING' ELSE 'UNKNOWN' END"
)
_NUMERIC = (0, 1, 4, 6, 7)

#: per-row value rules checked in SQL over the whole file: (column index, SQL test of a bad value, rule)
_RULES: tuple[tuple[int, str, str], ...] = (
    (0, "c0 IS NULL OR NOT isfinite(c0) OR c0 <> round(c0) OR abs(c0) > 9.2e18", "must be a whole number"),
    (1, "c1 IS NULL OR NOT isfinite(c1) OR c1 <> round(c1) OR abs(c1) > 9.2e18", "must be a whole number"),
    (2, "c2 IS NULL OR trim(c2) = ''", "must not be empty"),
    (3, "c3 IS NULL OR trim(c3) = ''", "must not be empty"),
    (
        4,
        f"c4 IS NULL OR NOT isfinite(c4) OR c4 <> round(c4) OR c4 < 0 OR c4 > {MAX_INSTANCES}",
        f"must be a whole number from 0 to {MAX_INSTANCES}",
    ),
    (6, "c6 IS NOT NULL AND (NOT isfinite(c6) OR c6 < 0)", "must be empty or a finite number >= 0"),
    (7, "c7 IS NOT NULL AND (NOT isfinite(c7) OR c7 < 0)", "must be empty or a finite number >= 0"),
)


def _py_bad(index: int, text: str) -> bool:
    """The Python twin of :data:`_RULES` (used only to find the line of a value SQL found bad)."""
    text = text.strip()
    if index in (2, 3):
        return not text
    if index in (6, 7) and not text:
        return False
    try:
        v = float(text)
    except ValueError:
        return True
    if not math.isfinite(v):
        return True
    if index in (6, 7):
        return v < 0
    if v != round(v) or abs(v) > 9.2e18:
        return True
    return index == 4 and not (0 <= v <= MAX_INSTANCES)


def _has_header(path: Path) -> bool:
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.strip():
                head = line.split(",", 1)[0].strip().strip('"')
                try:
                    float(head)
                    return False
                except ValueError:
                    return True
    return False


def _locate(path: Path, index: int, rule: str, header: bool) -> InputError:
    """The first line whose field ``index`` breaks ``rule`` (the slow path, only after SQL found one)."""
    with open(path, encoding="utf-8", newline="") as f:
        for lineno, line in enumerate(f, start=1):
            if (header and lineno == 1) or not line.strip():
                continue
            rec = next(csv.reader([line]), [])
            if len(rec) > index and _py_bad(index, rec[index]):
                shown = rec[index].strip()[:40]
                return InputError(f"{path.name} line {lineno}: field '{COLUMNS[index]}' {rule}, got {shown!r}")
    return InputError(f"{path.name}: field '{COLUMNS[index]}' {rule} (a row breaks it)")  # pragma: no cover


def read_alibaba_tables(path: Path, con: duckdb.DuckDBPyConnection | None = None) -> dict[str, Any]:
    """``{"tasks": Arrow table, "jobs": Arrow table}`` of the file (module docstring)."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    header = _has_header(path)
    own = con is None
    con = con or reader_connection([path])
    try:
        columns = {f"c{i}": ("DOUBLE" if i in _NUMERIC else "VARCHAR") for i in range(len(COLUMNS))}
        try:
            con.execute(
                "CREATE OR REPLACE TEMP TABLE alibaba_raw AS SELECT * FROM read_csv($p, header = $h, delim = ',', "
                "quote = '\"', escape = '\"', columns = $c, store_rejects = true, auto_detect = false, "
                "null_padding = false, strict_mode = true)",
                {"p": str(path), "h": header, "c": columns},
            )
        except duckdb.Error as exc:
            raise InputError(f"{path.name}: cannot read as CSV ({str(exc).splitlines()[0]})") from None
        reject = con.execute(
            "SELECT line, column_idx, error_type, error_message FROM reject_errors ORDER BY line LIMIT 1"
        ).fetchone()
        if reject is not None:
            line, col, etype, message = reject
            if etype == "CAST" and col is not None and 1 <= col <= len(COLUMNS):
                name = COLUMNS[col - 1]
                rule = "must be a number" if (col - 1) in _NUMERIC else "is not valid"
                raise InputError(f"{path.name} line {line}: field '{name}' {rule} ({message.splitlines()[0]})")
            raise InputError(
                f"{path.name} line {line}: expected {len(COLUMNS)} comma-separated fields "
                f"({etype.lower()}: {message.splitlines()[0]})"
            )
        for index, bad, rule in _RULES:
            row = con.execute(f"SELECT 1 FROM alibaba_raw WHERE {bad} LIMIT 1").fetchone()
            if row is not None:
                raise _locate(path, index, rule, header)
        tasks = con.execute(
            f"""SELECT trim(c2) AS job_id, trim(c3) AS task_id, 'other' AS type,
                       c0 AS start_time, c1 AS finish_time, {_STATUS_SQL.replace("status", "trim(c5)")} AS status,
                       CAST(c4 AS BIGINT) AS slots, c6 / 100.0 AS cpu, c7 AS mem
                FROM alibaba_raw"""
        ).to_arrow_table()
        jobs = con.execute(
            """SELECT trim(c2) AS job_id, min(c0) AS submit_time, max(c1) AS finish_time,
                      CASE WHEN bool_or(trim(c5) = 'Failed') THEN 'FAILED'
                           WHEN bool_and(trim(c5) = 'Terminated') THEN 'SUCCEEDED' ELSE 'RUNNING' END AS status
               FROM alibaba_raw GROUP BY trim(c2) ORDER BY min(c0), trim(c2)"""
        ).to_arrow_table()
        con.execute("DROP TABLE alibaba_raw")
    finally:
        if own:
            con.close()
    return {"tasks": tasks, "jobs": jobs}


def alibaba_batch(path: str | Path, source: str | None = None) -> Batch:
    """The import batch of one ``batch_task.csv``."""
    path = Path(path)
    source = source or path.name
    tables = read_alibaba_tables(path)
    return Batch(source, KIND, {t: conform_table(t, tables[t], source) for t in ("jobs", "tasks")})
