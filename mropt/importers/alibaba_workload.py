"""Importer of Alibaba's 2017 batch trace (``batch_task.csv``) as a simulator workload.

``mropt import-alibaba TRACE --workload``. The rows are read, checked and skipped exactly as
for the fairness importer (:func:`mropt.importers.alibaba_trace.read_alibaba_rows`: never a crash,
every skipped row counted by reason); the file's schema is in
the trace's README (``docs/papers.md``). Model ``alibaba-2017-workload`` version 1:

* **Jobs.** One workload job per task row of the trace (the 2017 trace gives a job's tasks
  no DAG, so a row is a set of identical instances that run independently), id
  ``j<job>-t<task>``, ``user`` = ``job<job>`` (the trace's job id: jobs are the users of
  DRF, DDRF paper sec. 3.1). The job has one ``map`` stage of one task group:
  ``count`` = the row's ``number_of_instances``, ``demand`` ``{"cpu", "mem"}`` = the
  per-instance requests (CPU in cores: the trace's 100 is one core; memory as the trace
  normalises it), ``duration`` = ``task_end_time - task_create_time``. The 2017 task
  table has no start time (only ``batch_instance.csv`` has one), so the duration is the
  task's whole life in the traced cluster, queueing included: an upper bound on its
  instances' run time. ``submit_time`` = ``task_create_time - t0``, where ``t0`` is the
  earliest create time of the imported rows, so the workload starts at 0. Jobs are in
  create-time order, then file order.
* **Rows without usable times** are skipped and counted on top of the fairness importer's
  reasons: ``no_duration`` (end <= create), ``unfinished`` (status ``Running``: its end is
  only the latest state change, so its duration is unknown), ``too_large`` (a request
  above one machine's CPUs or memory: it could never run; or more than 1e8 instances, a
  workload file's bound) and ``duplicate`` (a row whose job id ``j<job>-t<task>`` was seen
  before). ``Failed`` rows are kept: they held their resources until they failed.
* **Window**: rows with ``start <= task_create_time < start + duration`` (trace seconds;
  ``duration`` 0: to the end of the file, the default: the whole file); ``jobs`` > 0
  keeps the rows of the first ``jobs`` trace jobs by their first create time in the window.
* **Cluster**: ``machines`` machines (default 1,300, about the size of the traced cluster)
  of 64 CPUs and memory 1.0 each (the trace normalises memory to a machine's, the same
  assumption as :mod:`mropt.importers.alibaba`), in racks of ``rack_size`` (default 20):
  one node entry ``r<i>`` (rack ``rack<i>``) with ``count`` per rack.
* **Locality**: the trace records no data locations. ``replicas`` > 0 (default 3) writes
  the workload's ``placement`` ``{replicas, seed}``: the simulator gives every task a
  seeded synthetic HDFS-default replica placement (:mod:`mropt.sim.placement`); 0 writes
  none (no locality). ``rack_factor`` and ``remote_factor`` (default 1.0 each: the trace's
  durations are as run, wherever they ran) set the workload's ``timing`` factors; pass
  Mumak's 1.5 and 3.0 to make off-node tasks slower.
* **Slots** (for the slot schedulers, e.g. ``fair``): ``slots`` > 0 gives every machine
  that many map slots besides its CPUs and memory; a task then holds one slot *and* its
  requests (the engine checks both), so Hadoop 1.x's slot-counting Fair Scheduler runs on
  the same machines as DRF. 0 (the default): resources only.

Everything (parameters, file name and SHA-256, ``t0``, counts of rows read, used and
skipped by reason) is recorded under ``source``. The file stays compact: one task group
with a count per row (about 12 million instances in about 71,000 groups for the whole file).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from mropt.importers.alibaba_trace import (
    MACHINE_CPUS,
    SKIP_REASONS,
    TaskRow,
    check_shared,
    empty_window_error,
    param_error,
    read_alibaba_rows,
)
from mropt.model.workload import NodeSpec, Placement, Stage, TaskGroup, Timing, WorkloadInstance, WorkloadJob

MODEL_NAME = "alibaba-2017-workload"
MODEL_VERSION = 1
#: memory of one machine (the trace's normalised unit)
MACHINE_MEM = 1.0
#: the traced cluster's size (Alibaba's 2017 trace: about 1,300 machines)
DEFAULT_MACHINES = 1300
#: the most tasks of one task group a workload file may hold (``TaskGroup.from_dict``'s bound)
MAX_GROUP_COUNT = 100_000_000
WORKLOAD_SKIP_REASONS = (*SKIP_REASONS, "no_duration", "unfinished", "too_large", "duplicate")


def _opt(default: Any, help: str) -> Any:
    """A field of the workload path only, with its command-line help (``mropt import-alibaba --workload``)."""
    return field(default=default, metadata={"help": help, "group": "workload (with --workload)"})


@dataclass(frozen=True)
class AlibabaWorkloadParams:
    """The window and cluster of an imported workload (module docstring)."""

    start: float = 0.0
    duration: float = 0.0  # 0: to the end of the file
    jobs: int = _opt(0, "keep the rows of the first N trace jobs (default 0: all)")
    machines: int = DEFAULT_MACHINES
    rack_size: int = 20
    replicas: int = _opt(
        3,
        "synthetic HDFS replicas of each task, placed by the simulator (the trace has none); 0 = no locality "
        "(default 3)",
    )
    seed: int = _opt(0, "seed of the replica placement (default 0)")
    rack_factor: float = _opt(1.0, "time factor of a rack-local task (default 1: real durations)")
    remote_factor: float = _opt(1.0, "time factor of an off-rack task (default 1: real durations)")
    slots: int = _opt(
        0, "map slots per machine besides its CPUs and memory, for slot schedulers such as fair (default 0: none)"
    )

    def check(self) -> None:
        check_shared(self)
        if not (math.isfinite(self.duration) and self.duration >= 0):
            raise param_error(self, "duration", "must be >= 0 (0: to the end of the file)")
        if self.jobs < 0:
            raise param_error(self, "jobs", "must be >= 0 (0: all)")
        if not 0 <= self.replicas <= 16:
            raise param_error(self, "replicas", "must be an integer in [0, 16]")
        if self.seed < 0:
            raise param_error(self, "seed", "must be >= 0")
        if not 0 <= self.slots <= 100_000:
            raise param_error(self, "slots", "must be an integer in [0, 100000] (0: resources only)")
        for name in ("rack_factor", "remote_factor"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) >= 1.0):
                raise param_error(self, name, "must be >= 1")

    def in_window(self, create: int) -> bool:
        return create >= self.start and (self.duration == 0 or create < self.start + self.duration)


def resource_nodes(machines: int, rack_size: int, slots: int = 0) -> tuple[NodeSpec, ...]:
    """``machines`` 64-CPU machines of memory 1.0 in racks of ``rack_size``: one entry ``r<i>`` per rack.

    ``slots`` > 0 also gives each machine that many map slots (and no reduce slot).
    """
    resources = {"cpu": float(MACHINE_CPUS), "mem": MACHINE_MEM}
    return tuple(
        NodeSpec(
            id=f"r{i}",
            rack=f"rack{i}",
            resources=resources,
            count=min(rack_size, machines - first),
            map_slots=slots if slots else None,
            reduce_slots=0 if slots else None,
        )
        for i, first in enumerate(range(0, machines, rack_size))
    )


def usable_rows(rows: list[TaskRow], skipped: dict[str, int]) -> list[TaskRow]:
    """The rows with a usable duration and a demand that fits one machine; the others counted in ``skipped``."""
    seen: set[str] = set()
    out: list[TaskRow] = []
    for r in rows:
        if r.status == "Running":
            reason = "unfinished"
        elif r.end <= r.create:
            reason = "no_duration"
        elif r.cpu > MACHINE_CPUS or r.mem > MACHINE_MEM or r.instances > MAX_GROUP_COUNT:
            reason = "too_large"
        elif job_id(r) in seen:
            reason = "duplicate"
        else:
            seen.add(job_id(r))
            out.append(r)
            continue
        skipped[reason] = skipped.get(reason, 0) + 1
    return out


def import_alibaba_workload(
    path: str | Path, params: AlibabaWorkloadParams | None = None, **overrides: Any
) -> WorkloadInstance:
    """A window of ``batch_task.csv`` (the whole file by default) as a simulator workload (module docstring)."""
    params = params or AlibabaWorkloadParams()
    if overrides:
        params = replace(params, **overrides)
    params.check()
    rows, skipped, digest = read_alibaba_rows(path)
    skipped = {**dict.fromkeys(WORKLOAD_SKIP_REASONS, 0), **skipped}
    good = usable_rows(rows, skipped)
    window = sorted(
        (r for r in good if params.in_window(r.create)), key=lambda r: r.create
    )  # stable: file order within a create time
    if params.jobs:
        first: dict[str, None] = {}
        for r in window:
            if r.job not in first:
                first[r.job] = None
                if len(first) == params.jobs:
                    break
        window = [r for r in window if r.job in first]
    if not window:
        end = None if params.duration == 0 else params.start + params.duration
        raise empty_window_error(path, params.start, end, good, skipped)
    t0 = window[0].create
    jobs = tuple(
        WorkloadJob(
            id=job_id(r),
            stages=(
                Stage("map", (TaskGroup(duration=float(r.end - r.create), count=r.instances, demand=_demand(r)),)),
            ),
            submit_time=float(r.create - t0),
            user=f"job{r.job}",
        )
        for r in window
    )
    source = {
        "model": MODEL_NAME,
        "model_version": MODEL_VERSION,
        "trace": Path(path).name,
        "sha256": digest,
        "params": asdict(params),
        "t0": t0,
        "rows_usable": len(good),
        "rows_in_window": len(window),
        "trace_jobs": len({r.job for r in window}),
        "instances": sum(r.instances for r in window),
        "skipped": skipped,
    }
    return WorkloadInstance(
        nodes=resource_nodes(params.machines, params.rack_size, params.slots),
        jobs=jobs,
        timing=Timing(rack_factor=params.rack_factor, remote_factor=params.remote_factor),
        placement=Placement(params.replicas, params.seed) if params.replicas > 0 else None,
        name=f"alibaba2017-t{params.start:g}-d{params.duration:g}-m{params.machines}-workload",
        meta={"source": source},
    )


def job_id(r: TaskRow) -> str:
    """The workload job of a task row: ``j<job>-t<task>``."""
    return f"j{r.job}-t{r.task}"


def _demand(r: TaskRow) -> dict[str, float]:
    return {"cpu": r.cpu, "mem": r.mem}
