"""How much memory a simulation needs, estimated from its workload before it starts.

A run keeps every attempt (``tasks.parquet`` has one row per attempt, :mod:`mropt.sim.recorder`),
so its memory grows with the tasks: a schema-valid workload of one job of 1e8 tasks (a task
group may count up to 1e8) filled a 23 GB machine after minutes and ended in ``MemoryError``.
:func:`check_memory` refuses such a run before anything big is allocated, with one line naming
the estimate and the cap, as ``mpsa-exact`` refuses sojourn tables beyond its cap
(:mod:`mropt.priority.exact`); ``mropt simulate --max-memory GIB`` (``simulate(...,
max_memory=BYTES)``) raises the cap, :data:`MAX_MEMORY_BYTES` (16 GiB) by default.

:func:`memory_estimate` adds per-item costs measured on generated workloads (peak RSS of the
run, its summary and its ``--out`` tables, above the process with the workload loaded;
``docs/simulation.md``, "Memory"). Each constant is the largest cost measured, rounded up:

* :data:`ATTEMPT_BYTES` per attempt kept: the recorder's typed row, the summary's columns,
  the ``--out`` tables. Attempts are counted as one per task, two with a speculation rule (a
  backup each, at most); re-runs after failures and preemption come on top (few). Batches of
  identical attempts (:mod:`mropt.sim.engine`) cost less: a trace replay uses a fraction of
  the estimate (the Alibaba day under ``drf``: about 15 GiB estimated, 0.9 GB peak measured
  without ``--out`` since :mod:`mropt.sim.ended_attempts`, 1.7 GB before);
* :data:`TASK_BYTES` per task, :data:`GROUP_BYTES` per task group, :data:`STAGE_BYTES` per
  stage, :data:`JOB_BYTES` per job (run-time jobs, the policy's per-job and per-pool state,
  the job table, the utilisation rows), :data:`NODE_BYTES` per node;
* per replica entry (a task's input on one node, listed or placed by ``placement``):
  :data:`REPLICA_BYTES`, or :data:`SMALL_STAGE_REPLICA_BYTES` in a stage of at most
  :data:`mropt.sim.locality_stacks.SMALL` entries (its locality stacks are Python lists).

The Python process itself (interpreter, numpy, pyarrow: about 150 MB) and the workload as
loaded are not counted.
"""

from __future__ import annotations

import math

from mropt.model.errors import InputError
from mropt.model.workload import WorkloadInstance
from mropt.sim.locality_stacks import SMALL

GIB = 1 << 30
#: the most memory a simulation may plan to use (its estimate, :func:`memory_estimate`) unless raised
MAX_MEMORY_BYTES = 16 * GIB
#: one attempt kept: its recorder row, the summary's columns and the ``--out`` tables (unbatched)
ATTEMPT_BYTES = 1024
#: one task's run-time state besides its attempts
TASK_BYTES = 64
#: one task group (a stage's per-group durations, demands and offsets)
GROUP_BYTES = 128
#: one stage (its run-time object and lists)
STAGE_BYTES = 512
#: one job: run-time job, policy and pool state, the job table's row, utilisation rows
JOB_BYTES = 4096
#: one node: capacities, free counts, ids, heartbeats, the policy's per-node state
NODE_BYTES = 1536
#: one replica entry (task x node): the placement array or listed tuple, locality stacks
REPLICA_BYTES = 32
#: one replica entry of a stage of at most ``SMALL`` entries (its stacks are Python lists)
SMALL_STAGE_REPLICA_BYTES = 128


def replica_entries(workload: WorkloadInstance) -> tuple[int, int]:
    """(entries in stages of at most ``SMALL`` entries, entries in larger stages), listed or placed.

    A group that lists one replica list gives it to each of its tasks; ``placement`` gives R
    replicas (at most the node count) to every task of a first stage that lists none
    (:func:`mropt.sim.placement.place_replicas`).
    """
    placed = 0 if workload.placement is None else min(workload.placement.replicas, workload.n_nodes)
    small = large = 0
    for job in workload.jobs:
        for s, stage in enumerate(job.stages):
            if any(g.replicas for g in stage.tasks):
                entries = sum(
                    sum(map(len, g.replicas)) if g.per_task_replicas else g.count * len(g.replicas[0])
                    for g in stage.tasks
                    if g.replicas
                )
            else:
                entries = stage.n_tasks * placed if s == 0 else 0
            if entries <= SMALL:
                small += entries
            else:
                large += entries
    return small, large


def memory_estimate(workload: WorkloadInstance, *, speculation: bool = False, until: float | None = None) -> int:
    """Bytes a run of ``workload`` needs at most (module docstring); O(jobs x groups), no task is built.

    ``until`` (a run stopped at that simulated time): attempts are counted for the jobs submitted by
    then only (:func:`attempts_by`); the engine builds every job's tasks and stages at its start.
    """
    tasks = workload.n_tasks
    attempts = attempts_by(workload, until, speculation)
    stages = sum(len(job.stages) for job in workload.jobs)
    groups = sum(len(stage.tasks) for job in workload.jobs for stage in job.stages)
    small, large = replica_entries(workload)
    return (
        ATTEMPT_BYTES * attempts
        + TASK_BYTES * tasks
        + GROUP_BYTES * groups
        + STAGE_BYTES * stages
        + JOB_BYTES * len(workload.jobs)
        + NODE_BYTES * workload.n_nodes
        + SMALL_STAGE_REPLICA_BYTES * small
        + REPLICA_BYTES * large
    )


def attempts_by(workload: WorkloadInstance, until: float | None, speculation: bool) -> int:
    """Attempts counted: one per task (two with a speculation rule) of the jobs submitted by ``until``
    (all of them when None; a job submitted at ``until`` runs: the run stops after the events then)."""
    tasks = workload.n_tasks if until is None else sum(j.n_tasks for j in workload.jobs if j.submit_time <= until)
    return tasks * (2 if speculation else 1)


def check_memory(
    workload: WorkloadInstance, max_memory: int | None = None, *, speculation: bool = False, until: float | None = None
) -> int:
    """The estimate (:func:`memory_estimate`); an InputError when it exceeds ``max_memory`` bytes.

    ``max_memory`` None is :data:`MAX_MEMORY_BYTES`. Called by :func:`mropt.sim.run.simulate`
    before the run builds anything of the size of the workload's tasks.
    """
    cap = MAX_MEMORY_BYTES if max_memory is None else max_memory
    if isinstance(cap, bool) or not isinstance(cap, (int, float)) or not math.isfinite(cap) or cap <= 0:
        raise InputError(f"simulate: max_memory must be a number of bytes > 0, got {cap!r}")
    need = memory_estimate(workload, speculation=speculation, until=until)
    if need > cap:
        by = "" if until is None else f" (of the jobs submitted by --until {until:g})"
        counts = ", ".join(
            f"{n:,} {word}{'' if n == 1 else 's'}{after}"
            for n, word, after in (
                (workload.n_tasks, "task", ""),
                (attempts_by(workload, until, speculation), "attempt", by),
                (len(workload.jobs), "job", ""),
                (workload.n_nodes, "node", ""),
            )
        )
        raise InputError(
            f"simulate: this run needs about {need / GIB:.3g} GiB ({counts}; docs/simulation.md), more than the "
            f"{cap / GIB:.3g} GiB cap of simulate; give --max-memory GIB to raise it, or a smaller workload"
        )
    return need


__all__ = ["MAX_MEMORY_BYTES", "attempts_by", "check_memory", "memory_estimate", "replica_entries"]
