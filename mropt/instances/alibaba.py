"""Importer of the Alibaba cluster trace v2017 (``batch_task.csv``) into fairness instances.

The trace (see ``../shared/traces/alibaba-2017/README.md``) has one row per task of a
batch job: create and end times (s), job id, task id, number of instances, status,
CPUs requested per instance (100 = one core) and normalised memory per instance.
Model ``alibaba-2017-drf`` version 1:

* **Window**: rows with ``start <= task_create_time < start + duration`` (defaults 0 and
  3600 s). Rows are skipped and counted, never a crash, when: a column is not a number
  or a row has too few columns (``malformed``), the CPU or memory request is empty
  (``empty_request``, e.g. Waiting rows), a time is negative (``negative_time``), or
  the instance count or both requests are 0 (``no_demand``). A skipped row is counted
  whether or not it is in the window. Each line is read on its own, so a stray double
  quote spoils only its line; ``malformed`` also takes ``inf``, ``nan``, a time or count
  that is not a whole 64-bit number, more than ``MAX_INSTANCES`` (1e11) instances, and
  a request outside an instance number's magnitudes (0, or 1e-100 to 1e100). A job whose
  mean requests round to 0 on the grid below is left out, its rows counted as
  ``no_demand``.
* **Users**: one per job (``group="job"``): its demand per task is the instance-weighted
  mean of its rows' per-instance requests (CPU rounded to 1e-4 cores, memory to
  1e-9), its ``max_tasks`` the total instance count;
  or one per task row (``group="task"``). Users are ordered by first create time, then
  id; ``max_users`` keeps the first ones (0: all).
* **Cluster**: ``machines`` machines of 64 CPUs (the trace's machines) and memory 1.0
  each (the trace normalises memory to a machine's; an assumption, documented), so
  ``resources = {"cpu": 64 M, "mem": M}`` in cores and machine memories. With
  ``with_nodes`` the machines are listed, in racks of ``rack_size``.

Everything (parameters, file name and SHA-256, counts of rows read, used and skipped
by reason) is recorded under ``source``. The trace is never copied into the repo.
"""

from __future__ import annotations

import csv
import hashlib
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mropt.instances.params import check_counts, check_types
from mropt.model.errors import InputError, read_input_file
from mropt.model.fairness import FairnessInstance, FairNode, User
from mropt.model.fields import magnitude_problem

MODEL_NAME = "alibaba-2017-drf"
MODEL_VERSION = 1
MACHINE_CPUS = 64
SKIP_REASONS = ("malformed", "empty_request", "negative_time", "no_demand")
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


@dataclass(frozen=True)
class AlibabaParams:
    start: float = 0.0
    duration: float = 3600.0
    machines: int = 100
    max_users: int = 0
    group: str = "job"
    with_nodes: bool = False
    rack_size: int = 20

    def check(self) -> None:
        check_shared(self)
        if not (math.isfinite(self.duration) and self.duration > 0):
            raise param_error(self, "duration", "must be > 0")
        if self.max_users < 0:
            raise param_error(self, "max_users", "must be >= 0")
        if self.group not in ("job", "task"):
            raise param_error(self, "group", "must be 'job' or 'task'")


def param_error(params: Any, name: str, rule: str) -> InputError:
    """The one-line error of an Alibaba importer's parameter ``name``."""
    return InputError(f"import-alibaba: parameter '{name}' {rule}, got {getattr(params, name)!r}")


def check_shared(params: Any) -> None:
    """The checks both Alibaba importers' parameters share: types, ``start``, ``machines``, ``rack_size``."""
    check_types(params, "import-alibaba")
    if not math.isfinite(params.start):
        raise param_error(params, "start", "must be a finite number")
    if params.machines < 1:
        raise param_error(params, "machines", "must be >= 1")
    if params.rack_size < 1:
        raise param_error(params, "rack_size", "must be >= 1")
    check_counts(params, ("machines",), "import-alibaba")


@dataclass(frozen=True)
class TaskRow:
    create: int
    end: int
    job: str
    task: str
    instances: int
    status: str
    cpu: float  # cores per instance
    mem: float  # normalised memory per instance


#: an instance count per row beyond this is not a trace row (Alibaba's largest is about 1e5); the
#: bound keeps a job's total (its ``max_tasks``) in 64 bits for any file mropt reads (at most 1 GiB)
MAX_INSTANCES = 10**11
#: times are 64-bit integers of seconds
_INT64_MAX = 2**63 - 1


def _integer(text: str) -> int:
    """A whole number written as an integer or a float (``6459``, ``6459.0``, ``1e3``); ValueError otherwise.

    Refuses what ``int(float(text))`` would crash on or misread: ``inf``, ``nan``, more
    digits than a float holds, and anything outside the 64-bit range.
    """
    if len(text) > 40:
        raise ValueError(text)
    value = float(text)
    if not (math.isfinite(value) and value.is_integer() and abs(value) <= _INT64_MAX):
        raise ValueError(text)
    return int(value)


def _amount(text: str) -> float:
    """A request: finite, >= 0, and 0 or of an instance number's magnitude; ValueError otherwise."""
    if len(text) > 40:
        raise ValueError(text)
    value = float(text)
    if not math.isfinite(value) or value < 0 or magnitude_problem(value):
        raise ValueError(text)
    return value


def parse_row(line: str) -> TaskRow | str | None:
    """One line of the trace: a :class:`TaskRow`, the reason it is skipped (``SKIP_REASONS``), or None (blank).

    Each line is parsed on its own (``csv`` with ``strict=True``), so a stray double
    quote makes its own line ``malformed`` instead of swallowing the lines after it.
    """
    try:
        records = list(csv.reader([line], strict=True))
    except csv.Error:  # a stray quote, a NUL byte, a field over the csv module's size limit
        return "malformed"
    rec = records[0] if records else []
    if not line.strip():
        return None
    if not rec or all(not c.strip() for c in rec):  # commas and spaces only
        return "malformed"
    rec = [c.strip() for c in rec]
    if len(rec) < 8:
        return "malformed"
    if not rec[6] or not rec[7]:
        return "empty_request"
    try:
        create, end, instances = _integer(rec[0]), _integer(rec[1]), _integer(rec[4])
        cpu, mem = _amount(rec[6]) / 100.0, _amount(rec[7])
    except ValueError:
        return "malformed"
    if instances > MAX_INSTANCES or magnitude_problem(cpu):
        return "malformed"
    if create < 0 or end < 0:
        return "negative_time"
    if instances <= 0 or (cpu == 0 and mem == 0):
        return "no_demand"
    return TaskRow(create, end, rec[2], rec[3], instances, rec[5], cpu, mem)


def read_alibaba_rows(path: str | Path) -> tuple[list[TaskRow], dict[str, int], str]:
    """(good rows, skip counts by reason, SHA-256 of the file); bad rows are counted, never raised.

    Every non-blank line but a header is either a good row or counted under exactly
    one reason, so ``len(rows) + sum(skipped.values())`` is the number of data lines.
    """
    path = Path(path)
    raw = read_input_file(path)
    digest = hashlib.sha256(raw).hexdigest()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a CSV text file (not UTF-8)") from None
    skipped = dict.fromkeys(SKIP_REASONS, 0)
    rows: list[TaskRow] = []
    first = True
    for line in text.splitlines():
        if not line.strip():
            continue
        if first:
            first = False
            head = line.split(",", 1)[0].strip().strip('"')
            if head and not head.lstrip("-").isdigit():
                continue  # header
        row = parse_row(line)
        if row is None:
            continue
        if isinstance(row, str):
            skipped[row] += 1
        else:
            rows.append(row)
    return rows, skipped, digest


def import_alibaba(path: str | Path, params: AlibabaParams | None = None, **overrides: Any) -> FairnessInstance:
    """A fairness instance from a time window of ``batch_task.csv`` (module docstring)."""
    params = params or AlibabaParams()
    if overrides:
        params = AlibabaParams(**{**asdict(params), **overrides})
    params.check()
    rows, skipped, digest = read_alibaba_rows(path)
    window = [r for r in rows if params.start <= r.create < params.start + params.duration]
    if not window:
        raise InputError(
            f"{path}: no usable rows with task_create_time in [{params.start:g}, {params.start + params.duration:g}) "
            f"({len(rows)} usable rows in the file, skipped {sum(skipped.values())})"
        )
    groups: dict[str, list[TaskRow]] = {}
    for r in window:
        key = r.job if params.group == "job" else f"{r.job}/{r.task}"
        groups.setdefault(key, []).append(r)
    ordered = sorted(groups, key=lambda g: (min(r.create for r in groups[g]), g))
    users: list[User] = []
    for key in ordered:
        if params.max_users and len(users) == params.max_users:
            break
        rs = groups[key]
        count = sum(r.instances for r in rs)
        cpu = round(sum(r.cpu * r.instances for r in rs) / count, 4)
        mem = round(sum(r.mem * r.instances for r in rs) / count, 9)
        if cpu == 0 and mem == 0:  # requests too small for the grid: the user would ask for nothing
            skipped["no_demand"] += len(rs)
            continue
        users.append(
            User(
                id=f"job{key}" if params.group == "job" else f"job{key}",
                demand={"cpu": cpu, "mem": mem},
                max_tasks=count,
                extra={
                    "rows": len(rs),
                    "first_create": min(r.create for r in rs),
                    "duration_mean": round(sum((r.end - r.create) * r.instances for r in rs) / count, 1),
                },
            )
        )
    nodes = None
    if params.with_nodes:
        nodes = tuple(
            FairNode(f"m{v + 1}", {"cpu": MACHINE_CPUS, "mem": 1.0}, rack=f"r{v // params.rack_size + 1}")
            for v in range(params.machines)
        )
    source = {
        "model": MODEL_NAME,
        "model_version": MODEL_VERSION,
        "trace": Path(path).name,
        "sha256": digest,
        "params": asdict(params),
        "rows_usable": len(rows),
        "rows_in_window": len(window),
        "skipped": skipped,
        "users_in_window": len(groups),
    }
    return FairnessInstance(
        resources={"cpu": MACHINE_CPUS * params.machines, "mem": float(params.machines)},
        users=tuple(users),
        nodes=nodes,
        name=f"alibaba2017-t{params.start:g}-d{params.duration:g}-m{params.machines}",
        meta={"source": source},
    )
