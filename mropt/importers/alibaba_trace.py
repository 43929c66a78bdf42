"""The one reader of the Alibaba cluster trace v2017 ``batch_task.csv`` (task level).

The trace's schema (its README, "batch_task.csv"): one row per task of a batch job, eight
comma-separated columns, :data:`COLUMNS`. Every importer of the file reads it here, line by line
(:func:`read_trace`), and decides what a line that breaks the format means to it:

* the fairness instance and the workload (:mod:`.alibaba`, :mod:`.alibaba_workload`) skip such a
  line and count it as ``malformed``, never a crash (a trace day has a few odd rows);
* the job-history database (:func:`alibaba_batch`, ``mropt history import``) refuses the file with
  an InputError naming the file, the line and the field, and imports nothing of it.

**The format's rules** (:func:`parse_line`). Blank lines are skipped; the first non-blank line is a
header when its first field is not a number. Each line is parsed on its own as CSV (``csv`` with
``strict=True``), so a stray double quote spoils only its own line, never the lines after it. A
line is a :class:`TraceRow` when it has exactly eight fields and: ``task_create_time`` and
``task_end_time`` are whole numbers of 64 bits (``6459``, ``6459.0``, ``1e3``; negative times are
rows: the trace has a few); ``job_id`` and ``task_id`` are not empty; ``number_of_instances`` is a
whole number from 0 to :data:`MAX_INSTANCES`; each request is empty (a Waiting row) or a finite
number >= 0 (CPU in hundredths of a core, stored in cores; memory as the trace normalises it).
Numbers are at most 40 characters (what ``float`` would misread or take long over is refused).
Otherwise the line is a :class:`BadLine` naming the field and the rule it breaks.

The published day (80,553 rows, 11.9 million task instances) reads in about a second.
"""

from __future__ import annotations

import csv
import hashlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa

from mropt.history.batch import Batch, conform_table
from mropt.instances.params import check_counts, check_types
from mropt.model.errors import InputError, read_input_file
from mropt.model.fields import magnitude_problem

KIND = "alibaba"
#: the file's eight columns, in order (the trace's schema; the header row spells some with spaces)
COLUMNS = (
    "task_create_time",
    "task_end_time",
    "job_id",
    "task_id",
    "number_of_instances",
    "status",
    "number_of_cpus_requested_per_instance_in_the_task",
    "normalized_memory_requested_per_instance_in_the_task",
)
#: an instance count per row beyond this is not a trace row (Alibaba's largest is about 1e5); the
#: bound keeps a job's total (its ``max_tasks``) in 64 bits for any file mropt reads (at most 1 GiB)
MAX_INSTANCES = 10**11
#: CPUs of one of the trace's machines (a request of 100 is one core)
MACHINE_CPUS = 64
_INT64_MAX = 2**63 - 1
_WHOLE = "must be a whole number"
_INSTANCES = f"must be a whole number from 0 to {MAX_INSTANCES}"
_REQUEST = "must be empty or a finite number >= 0"
#: the trace's task statuses as the history database's
_STATUS = {"Terminated": "SUCCEEDED", "Failed": "FAILED", "Running": "RUNNING", "Waiting": "PENDING"}


class TraceRow(NamedTuple):
    """One task row of the trace, as the format gives it."""

    line: int
    create: int
    end: int
    job: str
    task: str
    instances: int
    status: str
    cpu: float | None  # cores per instance; None: empty in the file
    mem: float | None  # normalised memory per instance; None: empty in the file


@dataclass(frozen=True)
class BadLine:
    """A data line that breaks the format: the field (an index into COLUMNS; None: the line) and the rule."""

    line: int
    column: int | None
    rule: str
    text: str

    def error(self, name: str) -> InputError:
        """The one-line error naming the file ``name``, the line and the field."""
        if self.column is None:
            return InputError(f"{name} line {self.line}: {self.rule}")
        shown = self.text[:40]
        return InputError(f"{name} line {self.line}: field '{COLUMNS[self.column]}' {self.rule}, got {shown!r}")


@dataclass(frozen=True)
class Trace:
    """The data lines of a file: its rows and bad lines in file order, and the file's SHA-256."""

    rows: list[TraceRow]
    bad: list[BadLine]
    sha256: str


def _whole(text: str) -> int | None:
    """A whole number of 64 bits written as an integer or a float, else None."""
    if text.isascii() and text.isdigit() and len(text) < 19:
        return int(text)  # the trace's own form, below 2^63
    if len(text) > 40:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    if not (math.isfinite(value) and value.is_integer() and abs(value) <= _INT64_MAX):
        return None
    return int(value)


def _request(text: str) -> float | None:
    """A request: a finite number >= 0, else ValueError."""
    if len(text) > 40:
        raise ValueError(text)
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise ValueError(text)
    return value


def _fields(text: str) -> list[str] | str:
    """The line's fields (stripped), or why it is no CSV line."""
    if '"' not in text and "\x00" not in text and len(text) < 100_000:
        fields = text.split(",")  # what csv gives a line without quotes, faster
        if text.isascii() and text.isprintable() and " " not in text:
            return fields  # nothing to strip
    else:
        try:
            records = list(csv.reader([text], strict=True))
        except csv.Error as exc:  # a stray quote, a NUL byte, a field over the csv module's size limit
            return f"not a CSV line ({exc})"
        fields = records[0] if records else []
    return [f.strip() for f in fields]


def parse_line(text: str, line: int = 1) -> TraceRow | BadLine | None:
    """One line of the file: a row, a bad line (module docstring), or None for a blank line."""
    if not text.strip():
        return None
    fields = _fields(text)
    if isinstance(fields, str):
        return BadLine(line, None, fields, text)
    if len(fields) != len(COLUMNS):
        return BadLine(line, None, f"expected {len(COLUMNS)} comma-separated fields, got {len(fields)}", text)
    create, end, instances = _whole(fields[0]), _whole(fields[1]), _whole(fields[4])
    if create is None:
        return BadLine(line, 0, _WHOLE, fields[0])
    if end is None:
        return BadLine(line, 1, _WHOLE, fields[1])
    for k in (2, 3):
        if not fields[k]:
            return BadLine(line, k, "must not be empty", fields[k])
    if instances is None or not 0 <= instances <= MAX_INSTANCES:
        return BadLine(line, 4, _INSTANCES, fields[4])
    requests: list[float | None] = []
    for k in (6, 7):
        try:
            requests.append(_request(fields[k]) if fields[k] else None)
        except ValueError:
            return BadLine(line, k, _REQUEST, fields[k])
    cpu, mem = requests
    return TraceRow(
        line, create, end, fields[2], fields[3], instances, fields[5], None if cpu is None else cpu / 100.0, mem
    )


def _is_header(text: str) -> bool:
    head = text.split(",", 1)[0].strip().strip('"')
    if not head:
        return False
    try:
        float(head)
    except ValueError:
        return True
    return False


def read_trace(path: str | Path) -> Trace:
    """Every data line of ``batch_task.csv``, parsed (module docstring); InputError only for an unreadable file."""
    path = Path(path)
    raw = read_input_file(path)
    digest = hashlib.sha256(raw).hexdigest()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a CSV text file (not UTF-8)") from None
    rows: list[TraceRow] = []
    bad: list[BadLine] = []
    first = True
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        if first:
            first = False
            if _is_header(line):
                continue
        parsed = parse_line(line, number)
        if isinstance(parsed, TraceRow):
            rows.append(parsed)
        elif parsed is not None:
            bad.append(parsed)
    return Trace(rows, bad, digest)


# -- what the models take: rows, and the skipped lines counted by reason ------------------------
#: why the models skip a line (module docstring of :mod:`.alibaba`)
SKIP_REASONS = ("malformed", "empty_request", "negative_time", "no_demand")


class TaskRow(NamedTuple):
    """A row the models take: both requests given, of an instance number's magnitudes."""

    create: int
    end: int
    job: str
    task: str
    instances: int
    status: str
    cpu: float  # cores per instance
    mem: float  # normalised memory per instance


def model_row(parsed: TraceRow) -> TaskRow | str:
    """The row as the models take it, or the reason they skip it (``SKIP_REASONS``).

    ``empty_request``: a request is empty (Waiting rows); ``malformed``: a request outside an
    instance number's magnitudes (0, or 1e-100 to 1e100); ``negative_time``; ``no_demand``: no
    instance, or both requests 0.
    """
    cpu, mem = parsed.cpu, parsed.mem
    if cpu is None or mem is None:
        return "empty_request"
    if magnitude_problem(cpu * 100.0) or magnitude_problem(cpu) or magnitude_problem(mem):
        return "malformed"
    if parsed.create < 0 or parsed.end < 0:
        return "negative_time"
    if parsed.instances <= 0 or (cpu == 0 and mem == 0):
        return "no_demand"
    p = parsed
    return TaskRow(p.create, p.end, p.job, p.task, p.instances, p.status, cpu, mem)


def parse_row(line: str) -> TaskRow | str | None:
    """One line of the trace: a row the models take, the reason it is skipped, or None (blank)."""
    parsed = parse_line(line)
    if parsed is None:
        return None
    return model_row(parsed) if isinstance(parsed, TraceRow) else "malformed"


def read_alibaba_rows(path: str | Path) -> tuple[list[TaskRow], dict[str, int], str]:
    """(rows the models take, skip counts by reason, SHA-256 of the file); bad rows are counted, never raised.

    Every non-blank line but a header is either a row or counted under exactly one reason, so
    ``len(rows) + sum(skipped.values())`` is the number of data lines.
    """
    trace = read_trace(path)
    skipped = dict.fromkeys(SKIP_REASONS, 0)
    skipped["malformed"] = len(trace.bad)
    rows: list[TaskRow] = []
    for parsed in trace.rows:
        row = model_row(parsed)
        if isinstance(row, str):
            skipped[row] += 1
        else:
            rows.append(row)
    return rows, skipped, trace.sha256


def empty_window_error(
    path: str | Path, start: float, end: float | None, rows: list[TaskRow], skipped: dict[str, int]
) -> InputError:
    """The one-line error of a window [start, end) (``end`` None: to the end) holding no usable row.

    It says where the file's usable rows are (their first and last ``task_create_time``, so that a
    reader can pick a ``--start`` that holds some) and why lines were skipped, by reason; a file with
    no usable row at all is asked whether it is the trace's ``batch_task.csv`` (a SWIM TSV or a
    Rumen JSON file given here breaks every line's format).
    """
    window = f"[{_seconds(start)}, {'end' if end is None else _seconds(end)})"
    reasons = ", ".join(f"{reason} {count}" for reason, count in skipped.items() if count)
    skip = f"skipped {sum(skipped.values())}" + (f" ({reasons})" if reasons else "")
    if rows:
        first, last = min(r.create for r in rows), max(r.create for r in rows)
        found = f"{len(rows)} usable rows in the file, task_create_time {first} to {last}; {skip}"
    else:
        found = (
            f"0 usable rows in the file, {skip}; is it Alibaba 2017's batch_task.csv, "
            f"{len(COLUMNS)} comma-separated fields a line ({COLUMNS[0]}, {COLUMNS[1]}, ...)?"
        )
    return InputError(f"{path}: no usable rows with task_create_time in {window} ({found})")


def _seconds(value: float) -> str:
    """A window bound as given (``99999999``, ``0.5``), not rounded to 6 digits as ``:g`` would."""
    return f"{value:.15g}"


# -- the parameters both models share -----------------------------------------------------
def param_error(params: Any, name: str, rule: str) -> InputError:
    """The one-line error of an Alibaba importer's parameter ``name``."""
    return InputError(f"import-alibaba: parameter '{name}' {rule}, got {getattr(params, name)!r}")


def check_shared(params: Any) -> None:
    """The checks both Alibaba models' parameters share: types, ``start``, ``machines``, ``rack_size``."""
    check_types(params, "import-alibaba")
    if not math.isfinite(params.start):
        raise param_error(params, "start", "must be a finite number")
    if params.machines < 1:
        raise param_error(params, "machines", "must be >= 1")
    if params.rack_size < 1:
        raise param_error(params, "rack_size", "must be >= 1")
    check_counts(params, ("machines",), "import-alibaba")


# -- the job-history database -------------------------------------------------------------
def alibaba_batch(path: str | Path, source: str | None = None) -> Batch:
    """The job-history import batch of one ``batch_task.csv``; InputError at its first bad line.

    * ``tasks``: one row per trace row: ``task_id``, ``job_id``, type ``other`` (the trace does not
      say map or reduce), ``start_time`` = ``task_create_time`` and ``finish_time`` =
      ``task_end_time`` (the trace has no start time; its end is the last state change), ``status``
      (Terminated -> SUCCEEDED, Failed -> FAILED, Running -> RUNNING, Waiting -> PENDING), ``slots``
      = ``number_of_instances`` (HEI eq. 2's N_slot: the row stands for that many identical
      one-slot instances, which the file gives no times, hosts or sizes of their own), ``cpu``
      (cores per instance) and ``mem`` (normalised, per instance). Empty requests (Waiting rows)
      stay null; negative times (a few rows) are kept as the trace has them.
    * ``jobs``: one row per ``job_id``, in order of first create time then id: submit time = its
      first ``task_create_time``, finish time = its last ``task_end_time``, status FAILED if a task
      failed, SUCCEEDED if all terminated, else RUNNING. The trace has no user, group, name, input
      or output bytes.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    source = source or path.name
    trace = read_trace(path)
    if trace.bad:
        raise trace.bad[0].error(path.name)
    rows = trace.rows
    tasks = pa.table(
        {
            "job_id": [r.job for r in rows],
            "task_id": [r.task for r in rows],
            "type": pa.repeat("other", len(rows)),
            "start_time": pa.array([r.create for r in rows], type=pa.int64()).cast(pa.float64(), safe=False),
            "finish_time": pa.array([r.end for r in rows], type=pa.int64()).cast(pa.float64(), safe=False),
            "status": [_STATUS.get(r.status, "UNKNOWN") for r in rows],
            "slots": pa.array([r.instances for r in rows], type=pa.int64()),
            "cpu": pa.array([r.cpu for r in rows], type=pa.float64()),
            "mem": pa.array([r.mem for r in rows], type=pa.float64()),
        }
    )
    by_job: dict[str, list[Any]] = {}  # job -> [first create, last end, any failed, all terminated]
    for r in rows:
        entry = by_job.get(r.job)
        if entry is None:
            by_job[r.job] = [r.create, r.end, r.status == "Failed", r.status == "Terminated"]
        else:
            entry[0] = min(entry[0], r.create)
            entry[1] = max(entry[1], r.end)
            entry[2] = entry[2] or r.status == "Failed"
            entry[3] = entry[3] and r.status == "Terminated"
    order = sorted(by_job, key=lambda j: (by_job[j][0], j))
    jobs = pa.table(
        {
            "job_id": order,
            "submit_time": [float(by_job[j][0]) for j in order],
            "finish_time": [float(by_job[j][1]) for j in order],
            "status": ["FAILED" if by_job[j][2] else "SUCCEEDED" if by_job[j][3] else "RUNNING" for j in order],
        }
    )
    return Batch(
        source, KIND, {"jobs": conform_table("jobs", jobs, source), "tasks": conform_table("tasks", tasks, source)}
    )
