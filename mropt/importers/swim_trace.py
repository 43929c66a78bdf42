"""The one reader of SWIM trace files (the Facebook 2009 MapReduce workload, UC Berkeley's SWIM).

A trace file has one job per row, six tab-separated columns and no header::

    job_id  submit_time_seconds  inter_job_gap_seconds  map_input_bytes  shuffle_bytes  reduce_output_bytes

:func:`read_swim_rows` reads and checks every row; the model that turns rows into
admission instances and workloads is :mod:`mropt.importers.swim`, and :func:`swim_batch`
gives the job-history database the rows as they are (``mropt history import``): each row one
``jobs`` row, ``job_id``, ``submit_time`` (seconds from the trace start), ``input_bytes`` (map
input), ``shuffle_bytes`` and ``output_bytes``. SWIM records no tasks, users, groups or
outcomes: those columns stay null, and the tasks, attempts and jobconf tables get nothing.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from mropt.history.batch import Batch, batch_from_rows
from mropt.model.errors import InputError, read_input_file

#: Byte counts must fit in a Java ``long``, as in SWIM's own tools.
MAX_BYTES = 2**63 - 1

COLUMNS = (
    "job_id",
    "submit_time_seconds",
    "inter_job_gap_seconds",
    "map_input_bytes",
    "shuffle_bytes",
    "reduce_output_bytes",
)
_UINT = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class SwimRow:
    """One data row of a SWIM trace file, as read (bytes unscaled)."""

    index: int  # position among the file's data rows, 0-based
    line: int  # 1-based line number in the file
    job_id: str
    submit_time: int
    gap: int
    input_bytes: int
    shuffle_bytes: int
    output_bytes: int


def read_swim_rows(path: str | Path) -> tuple[list[SwimRow], str]:
    """All data rows of a trace file, validated, and the file's SHA-256.

    Blank lines, a trailing newline and CRLF line ends are accepted; anything else
    that is not six tab-separated fields (a non-empty job id and five non-negative
    integers) is an :class:`InputError` naming the file and the line.
    """
    path = Path(path)
    data = read_input_file(path)
    digest = hashlib.sha256(data).hexdigest()
    name = path.name
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad_line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"{name} line {bad_line}: not UTF-8 text") from None

    rows: list[SwimRow] = []
    seen: dict[str, int] = {}
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        where = f"{name} line {lineno}"
        parts = line.split("\t")
        if len(parts) != len(COLUMNS):
            raise InputError(
                f"{where}: expected {len(COLUMNS)} tab-separated columns ({', '.join(COLUMNS)}), got {len(parts)}"
            )
        job_id = parts[0].strip()
        if not job_id:
            raise InputError(f"{where}: column 1 (job_id) must not be empty")
        if job_id in seen:
            raise InputError(f"{where}: column 1 (job_id) {job_id!r} repeats the job id of line {seen[job_id]}")
        seen[job_id] = lineno
        values = []
        for col in range(1, len(COLUMNS)):
            field = parts[col].strip()
            label = f"column {col + 1} ({COLUMNS[col]})"
            shown = field if len(field) <= 40 else field[:37] + "..."
            if not _UINT.fullmatch(field):
                raise InputError(f"{where}: {label} must be a non-negative integer, got {shown!r}")
            if len(field) > 25 or int(field) > MAX_BYTES:
                raise InputError(f"{where}: {label} must be below 2^63, got {shown}")
            value = int(field)
            values.append(value)
        rows.append(SwimRow(len(rows), lineno, job_id, *values))
    return rows, digest


def swim_batch(path: str | Path, source: str | None = None) -> Batch:
    """The job-history import batch of one SWIM trace file (module docstring)."""
    path = Path(path)
    rows, _digest = read_swim_rows(path)
    jobs = [
        {
            "job_id": r.job_id,
            "submit_time": float(r.submit_time),
            "input_bytes": r.input_bytes,
            "shuffle_bytes": r.shuffle_bytes,
            "output_bytes": r.output_bytes,
        }
        for r in rows
    ]
    return batch_from_rows(source or path.name, "swim", {"jobs": jobs})
