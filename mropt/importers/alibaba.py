"""Importer of the Alibaba cluster trace v2017 (``batch_task.csv``) into fairness instances.

The trace (Alibaba cluster-trace-v2017, its README's schema; ``docs/papers.md``) has one row per task of a
batch job: create and end times (s), job id, task id, number of instances, status,
CPUs requested per instance (100 = one core) and normalised memory per instance.
Model ``alibaba-2017-drf`` version 1:

* **Window**: rows with ``start <= task_create_time < start + duration`` (defaults 0 and
  3600 s). The file is read by the format's one reader (:mod:`.alibaba_trace`); a line is
  skipped and counted, never a crash, when it breaks the format's rules (``malformed``: not
  eight fields, a time or count that is not a whole 64-bit number, more than ``MAX_INSTANCES``
  (1e11) instances or a negative count, an empty job or task id, ``inf``, ``nan``, a stray double
  quote, which spoils only its own line) or a request outside an instance number's magnitudes
  (``malformed`` too: 0, or 1e-100 to 1e100), when a request is empty (``empty_request``, e.g.
  Waiting rows), a time is negative (``negative_time``), or the instance count or both requests
  are 0 (``no_demand``). A skipped row is counted whether or not it is in the window. A job whose
  mean requests round to 0 on the grid below is left out, its rows counted as ``no_demand``.
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

The format registers as importer ``alibaba`` (:mod:`mropt.importers.table`): ``mropt
import-alibaba``'s options are the fields of :class:`AlibabaParams` and (``--workload``)
:class:`~mropt.importers.alibaba_workload.AlibabaWorkloadParams`; an experiment's windows sweep
``start`` and ``duration``; ``mropt history import`` reads the file's task rows
(:func:`mropt.importers.alibaba_trace.alibaba_batch`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mropt.importers.alibaba_trace import (
    KIND,
    MACHINE_CPUS,
    TaskRow,
    alibaba_batch,
    check_shared,
    empty_window_error,
    param_error,
    read_alibaba_rows,
)
from mropt.importers.alibaba_workload import AlibabaWorkloadParams, import_alibaba_workload
from mropt.importers.table import Importer, Output, register_importer
from mropt.model.fairness import FairnessInstance, FairNode, User

MODEL_NAME = "alibaba-2017-drf"
MODEL_VERSION = 1


def _opt(default: Any, help: str, **more: Any) -> Any:
    """A parameter field with its command-line help (``metadata``; see mropt.cli.common.add_param_options)."""
    return field(default=default, metadata={"help": help, **more})


@dataclass(frozen=True)
class AlibabaParams:
    """The window and cluster of a fairness instance (module docstring)."""

    start: float = _opt(0.0, "window start, s of trace time (default 0)")
    duration: float = _opt(3600.0, "window length, s (default 3600; with --workload 0: to the end of the file)")
    machines: int = _opt(100, "cluster machines of 64 CPUs (default 100; with --workload 1300, the traced cluster)")
    max_users: int = _opt(0, "keep the first N users by create time (default 0: all)")
    group: str = _opt("job", "one user per job (default) or per task row", choices=("job", "task"))
    with_nodes: bool = _opt(False, "list the machines as nodes")
    rack_size: int = _opt(20, "machines per rack with --with-nodes or --workload (default 20)")

    def check(self) -> None:
        check_shared(self)
        if not (math.isfinite(self.duration) and self.duration > 0):
            raise param_error(self, "duration", "must be > 0")
        if self.max_users < 0:
            raise param_error(self, "max_users", "must be >= 0")
        if self.group not in ("job", "task"):
            raise param_error(self, "group", "must be 'job' or 'task'")


def import_alibaba(path: str | Path, params: AlibabaParams | None = None, **overrides: Any) -> FairnessInstance:
    """A fairness instance from a time window of ``batch_task.csv`` (module docstring)."""
    params = params or AlibabaParams()
    if overrides:
        params = AlibabaParams(**{**asdict(params), **overrides})
    params.check()
    rows, skipped, digest = read_alibaba_rows(path)
    window = [r for r in rows if params.start <= r.create < params.start + params.duration]
    if not window:
        raise empty_window_error(path, params.start, params.start + params.duration, rows, skipped)
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


def _looks_like(path: Path, head: str | None) -> bool:
    """Eight comma-separated fields on the first non-blank line."""
    first = next((ln for ln in (head or "").splitlines() if ln.strip()), "")
    return head is not None and first.count(",") == 7


register_importer(
    Importer(
        KIND,
        summary="Alibaba cluster trace v2017 batch_task.csv: fairness instances (DRF), workloads, task rows",
        source="Alibaba cluster-trace-v2017, batch_task.csv (its README's schema)",
        title="Alibaba 2017 batch_task.csv",
        detect=_looks_like,
        history=alibaba_batch,
        command="import-alibaba",
        description="Jobs become users with their real CPU and memory requests and instance counts, on a cluster of "
        "64-CPU machines (see mropt.importers.alibaba). Rows with empty requests or negative times are skipped and "
        "counted under 'source'. With --workload, every task row becomes a workload job (user: its trace job) of one "
        "task group with its instance count, requests and real duration (end - create), for `mropt simulate` (see "
        "mropt.importers.alibaba_workload); the whole file by default.",
        trace_metavar="batch_task.csv",
        output=Output("fairness", (AlibabaParams,), import_alibaba),
        workload=Output("workload", (AlibabaWorkloadParams,), import_alibaba_workload),
        windows=("start", "duration"),
    )
)
