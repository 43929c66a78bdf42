"""Admission instances as workloads and back: the SEQ model's idealised cluster.

:func:`to_workload` turns an admission instance (AMB sec. 3: ``M`` map slots, ``R`` reduce
slots, jobs with phase times or task counts) into a workload the simulator runs; every
admission method's plan can then be executed on a cluster (policy ``seq``).
:func:`to_admission` goes back where the data allows.

**The cluster.** Each map slot and each reduce slot of the instance becomes one slot:
``g`` identical nodes with ``M/g`` map slots and ``R/g`` reduce slots each, one rack, speed
1, where ``g`` is ``nodes`` when given (it must divide both M and R; e.g. 40 for the AMB
paper's 40 x (2+2) cluster) and ``gcd(M, R)`` otherwise (M = R = 80 gives 80 nodes of 1+1).
No replicas (no locality penalty), no stragglers, no faults, no reduce slow-start.

**Jobs.** Task form: ``map_tasks`` tasks of ``map_task_time`` s, then ``reduce_tasks`` of
``reduce_task_time`` s; ``reduce_tasks = 0`` gives a map-only job (one stage). Phase form
(``map_phase_time`` TCm is the time of the phase with the whole cluster serving it): M map
tasks of TCm each and R reduce tasks of TCr each, one wave each. Deadline, benefit, submit
time and ``alpha`` are kept.

**rho** (Appendix A's slack factor) is the *planner's* pessimism about task times, not a
property of the cluster: task durations are the instance's task times, unscaled, so with
``rho > 1`` a job runs faster on the cluster than the SEQ model plans. ``rho`` and ``beta``
travel in the workload's top-level ``admission`` field, with what a phase-form job or a
map-only job needs to come back identical (each job's ``admission`` field), so
``to_admission(to_workload(x)) == x`` field for field (``meta`` and job extras included).

:func:`to_admission` of any other workload needs: a slotted cluster whose nodes all have
the same map and reduce slots and the same speed; every job with a deadline and a benefit,
one map stage then at most one reduce stage, identical task durations within a stage.
Timing factors, replicas and faults are not part of the SEQ model and are ignored. Task
times are divided by the common node speed. Anything else is an InputError naming why.
"""

from __future__ import annotations

import math
from typing import Any

from mropt.model.admission import AdmissionInstance, Cluster, Job
from mropt.model.errors import InputError
from mropt.model.workload import NodeSpec, Stage, TaskGroup, Timing, WorkloadInstance, WorkloadJob

#: the workload field (top level and per job) carrying what the admission instance needs back
FIELD = "admission"


def _cluster_nodes(cluster: Cluster, nodes: int | None) -> NodeSpec:
    m, r = cluster.map_slots, cluster.reduce_slots
    g = math.gcd(m, r) if nodes is None else nodes
    if g < 1 or m % g or r % g:
        raise InputError(
            f"to_workload: parameter 'nodes' must divide map_slots {m} and reduce_slots {r}, got {nodes!r}"
        )
    return NodeSpec(id="n", count=g, map_slots=m // g, reduce_slots=r // g)


def to_workload(instance: AdmissionInstance, *, nodes: int | None = None) -> WorkloadInstance:
    """The workload of ``instance`` on the SEQ model's idealised cluster (module docstring)."""
    spec = _cluster_nodes(instance.cluster, nodes)
    m, r = instance.cluster.map_slots, instance.cluster.reduce_slots
    jobs: list[WorkloadJob] = []
    for job in instance.jobs:
        hint: dict[str, Any] = {}
        if job.has_task_form:
            stages = [Stage("map", (TaskGroup(float(job.map_task_time), int(job.map_tasks)),))]  # type: ignore[arg-type]
            if job.reduce_tasks:
                stages.append(Stage("reduce", (TaskGroup(float(job.reduce_task_time), int(job.reduce_tasks)),)))  # type: ignore[arg-type]
            else:
                hint["reduce_task_time"] = job.reduce_task_time
        else:
            hint["form"] = "phase"
            stages = [
                Stage("map", (TaskGroup(float(job.map_phase_time), m),)),  # type: ignore[arg-type]
                Stage("reduce", (TaskGroup(float(job.reduce_phase_time), r),)),  # type: ignore[arg-type]
            ]
        if job.extra:
            hint["extra"] = dict(job.extra)
        jobs.append(
            WorkloadJob(
                id=job.id,
                stages=tuple(stages),
                submit_time=job.submit_time,
                deadline=job.deadline,
                benefit=job.benefit,
                extra={FIELD: hint} if hint else {},
            )
        )
    record: dict[str, Any] = {"beta": instance.beta, "rho": instance.rho}
    if instance.cluster.extra:
        record["cluster"] = dict(instance.cluster.extra)
    if instance.meta:
        record["meta"] = dict(instance.meta)
    return WorkloadInstance(
        nodes=(spec,),
        jobs=tuple(jobs),
        timing=Timing(rack_factor=1.0, remote_factor=1.0),
        alpha=instance.alpha,
        name=instance.name,
        meta={FIELD: record},
    )


def _stage_time(workload_job: WorkloadJob, k: int, speed: float) -> tuple[int, float]:
    stage = workload_job.stages[k]
    durations = {g.duration for g in stage.tasks}
    if len(durations) != 1:
        raise InputError(
            f"to_admission: job {workload_job.id!r}: stages[{k}] has tasks of different durations "
            f"({', '.join(f'{d:g}' for d in sorted(durations))}); the SEQ model needs one task time per stage"
        )
    return stage.n_tasks, durations.pop() / speed


def to_admission(workload: WorkloadInstance) -> AdmissionInstance:
    """The admission instance of ``workload`` where the data allows (module docstring)."""
    if not workload.uses_slots:
        raise InputError("to_admission: the cluster gives resources, not map and reduce slots")
    shapes = {(s.map_slots, s.reduce_slots, s.speed) for s in workload.nodes}
    if len(shapes) != 1:
        raise InputError(
            "to_admission: the cluster is not homogeneous (nodes differ in map_slots, reduce_slots or speed)"
        )
    per_map, per_reduce, speed = shapes.pop()
    n = workload.n_nodes
    m, r = n * (per_map or 0), n * (per_reduce or 0)
    if m < 1 or r < 1:
        raise InputError(f"to_admission: the cluster needs map and reduce slots, got {m} map and {r} reduce")
    record = workload.meta.get(FIELD)
    record = record if isinstance(record, dict) else {}
    jobs: list[Job] = []
    for wj in workload.jobs:
        where = f"to_admission: job {wj.id!r}"
        if wj.deadline is None or wj.benefit is None:
            missing = "deadline" if wj.deadline is None else "benefit"
            raise InputError(f"{where}: field '{missing}' is missing (the admission model needs both)")
        types = [s.type for s in wj.stages]
        if types not in (["map"], ["map", "reduce"]):
            raise InputError(f"{where}: stages are {'+'.join(types)}; the SEQ model needs map, or map then reduce")
        hint = wj.extra.get(FIELD)
        hint = hint if isinstance(hint, dict) else {}
        extra = hint.get("extra") if isinstance(hint.get("extra"), dict) else {}
        n_map, t_map = _stage_time(wj, 0, speed)
        common: dict[str, Any] = {
            "id": wj.id,
            "deadline": wj.deadline,
            "benefit": wj.benefit,
            "submit_time": wj.submit_time,
            "extra": extra,
        }
        if len(types) == 2:
            n_red, t_red = _stage_time(wj, 1, speed)
        else:
            n_red, t_red = 0, float(hint.get("reduce_task_time", t_map))
        if hint.get("form") == "phase" and n_map == m and n_red == r:
            jobs.append(Job(map_phase_time=t_map, reduce_phase_time=t_red, **common))
        else:
            jobs.append(Job(map_tasks=n_map, reduce_tasks=n_red, map_task_time=t_map, reduce_task_time=t_red, **common))
    cluster_extra = record.get("cluster")
    meta = record.get("meta")
    kwargs: dict[str, Any] = {}
    for key in ("beta", "rho"):
        if key in record:
            kwargs[key] = record[key]
    return AdmissionInstance(
        cluster=Cluster(m, r, cluster_extra if isinstance(cluster_extra, dict) else {}),
        jobs=tuple(jobs),
        alpha=workload.alpha,
        name=workload.name,
        meta=meta if isinstance(meta, dict) else {},
        **kwargs,
    )


__all__ = ["to_admission", "to_workload"]
