"""Shared helpers of the compiled ``fair`` core's tests (tests/sim/test_compiled_fair.py).

The ``compiled`` fixture (``mropt.sim.compiled.fair_engine``), a seeded random workload of the shape the
fair core supports (the shape of ``mropt import-alibaba --workload --slots N``: nodes of map slots and
cpu and mem, jobs of one map stage of one task group with a demand of both, pools the jobs' users,
no pool specs), random Fair parameters, and the comparison of a Python run with a compiled run: every
table bit for bit (:mod:`compiled_helpers`' functions), the event-log hash, events, clock, stop,
stall, each job's unfinished cause and the next attempt id. Not a test module: pytest collects
nothing here.
"""

from __future__ import annotations

import random
from importlib.util import find_spec
from typing import Any

import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy
from mropt.sim.recorder import Recorder
from mropt.sim.unfinished import unfinished_causes

from compiled_helpers import (
    CPUS,
    FINE_CPUS,
    FINE_MEMS,
    MEMS,
    ODD,
    WHOLE,
    differences,
    run_outcome,
)
from sim_helpers import workload

#: task demands: whole and inexact ones (their sums are not exact: 0.1 + 0.2 > 0.3)
CPU_DEMANDS = (0.25, 0.5, 1.0, 2.0, 3.0, 0.1, 0.3, 0.7, 1 / 3)
MEM_DEMANDS = (0.0, 0.016, 0.1, 0.3, 0.5, 1.0, 2.0, 0.7)
#: Fair parameters (``fair_params``): small update intervals, zero and long delays, caps
UPDATE_INTERVALS = (0.5, 0.5, 0.001, 0.1, 1.0, 3.0, 7.5)
DELAYS = (-1.0, -1.0, 0.0, 0.0, 0.5, 2.0, 3.0, 6.0, 20.0)


@pytest.fixture(scope="module", name="compiled")
def compiled_fixture() -> Any:
    """``mropt.sim.compiled.fair_engine``, its core imported (compiled or loaded from numba's cache);
    the module's tests skip while it does not exist."""
    pytest.importorskip("numba")
    if find_spec("mropt.sim.compiled.fair_engine") is None:
        pytest.skip("mropt.sim.compiled.fair_engine does not exist yet")
    from mropt.sim.compiled import fair_engine

    return fair_engine


# ---------------------------------------------------------------------------------------------
# random workloads of the supported shape


def _fits(demand: dict[str, float], cap: dict[str, float]) -> bool:
    return all(cap[k] >= v for k, v in demand.items())


def _demand(rng: random.Random, caps: list[dict[str, float]]) -> dict[str, float]:
    """A demand of cpu and mem (mem 0 in some) that fits some node: often small, sometimes a node's
    whole capacity (it fills that node exactly and may fit it alone), or 1/k of one."""
    while True:
        r = rng.random()
        cap = rng.choice(caps)
        if r < 0.12:  # a node's whole capacity
            demand = {"cpu": float(cap["cpu"]), "mem": float(cap["mem"])}
        elif r < 0.24:  # 1/k of a node: k tasks fill it exactly (if its slots allow)
            k = rng.choice([2, 3, 4])
            demand = {"cpu": cap["cpu"] / k, "mem": cap["mem"] / k}
        elif r < 0.3:  # the largest cpu and the largest mem of the cluster: one node of both, or redrawn
            demand = {"cpu": float(max(c["cpu"] for c in caps)), "mem": float(max(c["mem"] for c in caps))}
        else:
            demand = {"cpu": rng.choice(CPU_DEMANDS), "mem": rng.choice(MEM_DEMANDS)}
        if any(_fits(demand, c) for c in caps):
            return demand


def _submit(rng: random.Random, style: int, burst: list[float]) -> float:
    """A submit time: whole seconds, quarters, odd ones (0.1, 0.3, 2.7) or a burst's shared time."""
    if burst and rng.random() < 0.4:
        return rng.choice(burst)
    if style == 0:
        t = float(rng.randint(0, 20))
    elif style == 1:
        t = rng.randint(0, 80) / 4
    else:
        t = rng.choice([0.0, 0.1, 0.3, 0.7, 1.1, 2.7, 3.3, 9.9]) + rng.randint(0, 6) * 3
    burst.append(t)
    return t


def fair_workload(rng: random.Random, placed: float = 0.5) -> WorkloadInstance:
    """1-8 nodes (some entries of ``count`` 2-3 identical nodes) on 1-3 racks, 0-8 map slots (0 on some
    entries but the first; every demand fits a node with map slots) and 0-2 reduce slots each, cpu and
    mem (whole, or inexact in 1 of 4), speeds in 1 of 5; 2-25 map-only jobs of one task group (1-25
    tasks, one duration, one demand of cpu and mem, mem 0 given or omitted), priorities -2..2 (a few
    outside: clamped), 1-4 users of several jobs (some jobs name none: ``default``; some name a pool
    the workload does not list), submit times with ties, bursts and odd values; a generated placement
    in a share ``placed`` (the same draws whatever ``placed``), with other locality factors in some."""
    fine = rng.random() < 0.25
    cpus, mems = (FINE_CPUS, FINE_MEMS) if fine else (CPUS, MEMS)
    speeds = rng.random() < 0.2
    same_slots = rng.random() < 0.5
    slots = rng.randint(1, 8)
    reduces = rng.choice([0, 0, 0, 1, 2])
    want = rng.randint(1, 8)
    racks = rng.randint(1, min(3, want))
    nodes: list[dict[str, Any]] = []
    n = 0
    while n < want:
        count = rng.choice([1, 1, 1, 2, 3]) if want - n >= 2 else 1
        count = min(count, want - n)
        node: dict[str, Any] = {
            "id": f"n{len(nodes)}",
            "rack": f"r{len(nodes) % racks}",
            "resources": {"cpu": rng.choice(cpus), "mem": rng.choice(mems)},
            "map_slots": slots if same_slots else rng.randint(0 if nodes else 1, 8),
            "reduce_slots": reduces,
        }
        if count > 1:
            node["count"] = count
        if speeds:
            node["speed"] = rng.choice([0.5, 1.0, 2.0])
        nodes.append(node)
        n += count
    caps = [node["resources"] for node in nodes if node["map_slots"] > 0]  # (a demand fits a node that runs maps)
    durations = WHOLE + ODD if rng.random() < 0.5 else WHOLE
    users = rng.randint(1, 4)
    style = rng.randrange(3)
    burst: list[float] = []
    jobs: list[dict[str, Any]] = []
    for i in range(rng.randint(2, 25)):
        group = {"duration": rng.choice(durations), "count": rng.randint(1, 25), "demand": _demand(rng, caps)}
        job: dict[str, Any] = {
            "id": f"j{i}",
            "submit_time": _submit(rng, style, burst),
            "stages": [{"type": "map", "tasks": [group]}],
        }
        if rng.random() < 0.6:
            job["priority"] = rng.randint(-2, 2) if rng.random() < 0.9 else rng.choice([-5, 3])  # (clamped)
        r = rng.random()
        if r < 0.8:
            job["user"] = f"u{rng.randrange(users)}"
        elif r < 0.85:
            job["user"] = "default"  # the user of the jobs that name none
        elif r < 0.9:
            job["pool"] = f"p{rng.randrange(2)}"  # a pool the workload does not list (its defaults)
        if group["demand"]["mem"] == 0.0 and rng.random() < 0.5:
            del group["demand"]["mem"]  # (mem 0 by omission)
        jobs.append(job)
    extra: dict[str, Any] = {}
    if rng.random() < placed:
        extra["placement"] = {"replicas": rng.randint(1, 3), "seed": rng.randint(0, 9)}
        if rng.random() < 0.3:
            extra["timing"] = {"rack_factor": rng.choice([1.0, 1.2, 2.5]), "remote_factor": rng.choice([1.0, 3.0, 4.5])}
    return workload(nodes, jobs, **extra)


def reduce_workload(rng: random.Random) -> WorkloadInstance:
    """A random workload of the shape the core runs with reduces: 1-10 nodes (some entries of ``count`` 2-3)
    on 1-3 racks, 0-4 map slots (at least 1 on the first entry) and 0-3 reduce slots (at least 1 on the
    first entry: some nodes have none), speeds in 1 of 5; no resources and tasks without demands in 3 of 5,
    else cpu and mem and every task a demand of both (each fits a node with slots of its type); 1-30 jobs
    of a map stage (1-20 tasks) and, in 3 of 5, a reduce stage (1-8 tasks), each one task group, whole or
    odd durations; priorities, users and unlisted pools, submit times with ties and bursts as
    :func:`fair_workload`'s; a generated placement in 3 of 5 (other locality factors in some)."""
    resources = rng.random() < 0.4
    fine = rng.random() < 0.25
    cpus, mems = (FINE_CPUS, FINE_MEMS) if fine else (CPUS, MEMS)
    speeds = rng.random() < 0.2
    want = rng.randint(1, 10)
    racks = rng.randint(1, min(3, want))
    nodes: list[dict[str, Any]] = []
    n = 0
    while n < want:
        count = min(rng.choice([1, 1, 1, 2, 3]), want - n)
        node: dict[str, Any] = {
            "id": f"n{len(nodes)}",
            "rack": f"r{len(nodes) % racks}",
            "map_slots": rng.randint(0 if nodes else 1, 4),
            "reduce_slots": rng.choice([0, 1, 2, 3]) if nodes else rng.randint(1, 3),
        }
        if resources:
            node["resources"] = {"cpu": rng.choice(cpus), "mem": rng.choice(mems)}
        if count > 1:
            node["count"] = count
        if speeds:
            node["speed"] = rng.choice([0.5, 1.0, 2.0])
        nodes.append(node)
        n += count
    durations = WHOLE + ODD if rng.random() < 0.5 else WHOLE
    users = rng.randint(1, 4)
    style = rng.randrange(3)
    burst: list[float] = []
    jobs: list[dict[str, Any]] = []
    for i in range(rng.randint(1, 30)):
        stages = [{"type": "map", "tasks": [{"duration": rng.choice(durations), "count": rng.randint(1, 20)}]}]
        if rng.random() < 0.6:
            stages.append(
                {"type": "reduce", "tasks": [{"duration": rng.choice(durations), "count": rng.randint(1, 8)}]}
            )
        if resources:
            for stage, key in zip(stages, ("map_slots", "reduce_slots"), strict=False):
                caps = [node["resources"] for node in nodes if node[key] > 0]
                stage["tasks"][0]["demand"] = _demand(rng, caps)
        job: dict[str, Any] = {"id": f"j{i}", "submit_time": _submit(rng, style, burst), "stages": stages}
        if rng.random() < 0.5:
            job["priority"] = rng.randint(-2, 2)
        r = rng.random()
        if r < 0.8:
            job["user"] = f"u{rng.randrange(users)}"
        elif r < 0.9:
            job["pool"] = f"p{rng.randrange(2)}"
        jobs.append(job)
    extra: dict[str, Any] = {}
    if rng.random() < 0.6:
        extra["placement"] = {"replicas": rng.randint(1, 3), "seed": rng.randint(0, 9)}
        if rng.random() < 0.3:
            extra["timing"] = {"rack_factor": rng.choice([1.0, 1.2, 2.5]), "remote_factor": rng.choice([1.0, 3.0, 4.5])}
    return workload(nodes, jobs, **extra)


def reduce_case(rng: random.Random) -> tuple[WorkloadInstance, dict[str, Any]]:
    """A random workload with reduces (:func:`reduce_workload`) and random Fair parameters, a reduce cap
    per heartbeat (-1 or 1-3) among them."""
    w = reduce_workload(rng)
    params = fair_params(rng)
    if rng.random() < 0.35:
        params["assign_multiple_reduces"] = rng.choice([1, 1, 2, 3])
    return w, params


def fair_params(rng: random.Random) -> dict[str, Any]:
    """Fair parameters the core supports (preemption off): update_interval (0.001 s to 7.5 s),
    assign_multiple, a map cap per heartbeat (-1 or 1-3), node and rack delays (-1 auto, 0, up to 20 s)."""
    params: dict[str, Any] = {}
    if rng.random() < 0.6:
        params["update_interval"] = rng.choice(UPDATE_INTERVALS)
    if rng.random() < 0.25:
        params["assign_multiple"] = False
    if rng.random() < 0.35:
        params["assign_multiple_maps"] = rng.choice([1, 1, 2, 3])
    if rng.random() < 0.8:
        params["node_delay"] = rng.choice(DELAYS)
    if rng.random() < 0.8:
        params["rack_delay"] = rng.choice(DELAYS)
    return params


def fair_case(rng: random.Random, placed: float = 0.6) -> tuple[WorkloadInstance, dict[str, Any]]:
    """A random workload and random Fair parameters (the workload drawn first)."""
    w = fair_workload(rng, placed)
    return w, fair_params(rng)


# ---------------------------------------------------------------------------------------------
# comparing two runs


def fair_outcome(sim: Simulation, rec: Recorder) -> dict[str, Any]:
    """:func:`compiled_helpers.run_outcome` plus what a heartbeat run leaves besides: ``stalled``, each
    job's unfinished cause and the next attempt id."""
    out = run_outcome(sim, rec)
    out["stalled"] = sim.stalled
    out["causes"] = unfinished_causes(sim)
    out["next_attempt"] = sim.next_attempt
    return out


def fair_differences(py: dict[str, Any], cc: dict[str, Any]) -> list[str]:
    """What differs between two :func:`fair_outcome` (floats by ``repr``: exactly)."""
    out = [f"{k}: {py[k]!r} != {cc[k]!r}" for k in ("stalled", "causes", "next_attempt") if repr(py[k]) != repr(cc[k])]
    return out + differences(py, cc)


def fair_sim(
    w: WorkloadInstance, params: dict[str, Any] | None = None, reference: bool = False, **options: Any
) -> Simulation:
    """A simulation of ``fair`` (heartbeat mode, its own) with ``params``; ``reference``: the plain rule."""
    return Simulation(w, make_policy("fair", params or {}, reference=reference), **options)


def python_fair_run(
    w: WorkloadInstance, params: dict[str, Any] | None = None, reference: bool = False, **options: Any
) -> tuple[Simulation, Recorder]:
    sim = fair_sim(w, params, reference, **options)
    return sim, sim.run()


def compiled_fair_run(
    compiled: Any, w: WorkloadInstance, params: dict[str, Any] | None = None, **options: Any
) -> tuple[Simulation, Recorder]:
    """The compiled run of ``fair``; fails the test if ``why_not`` names a reason."""
    sim = fair_sim(w, params, **options)
    reason = compiled.why_not(sim)
    assert reason is None, reason
    rec = compiled.run_compiled(sim)
    assert rec is sim.record
    return sim, rec


def fair_problems(
    compiled: Any,
    w: WorkloadInstance,
    params: dict[str, Any] | None = None,
    reference: bool = False,
    **options: Any,
) -> list[str]:
    """What differs between the Python engine's run (``reference``: the plain rule's) and the compiled run."""
    py = fair_outcome(*python_fair_run(w, params, reference, **options))
    cc = fair_outcome(*compiled_fair_run(compiled, w, params, **options))
    return fair_differences(py, cc)


def assert_same_fair_runs(
    compiled: Any,
    w: WorkloadInstance,
    where: str,
    params: dict[str, Any] | None = None,
    reference: bool = False,
    **options: Any,
) -> None:
    problems = fair_problems(compiled, w, params, reference, **options)
    assert not problems, f"{where} (fair {params or ''}, {options or 'defaults'}): " + "\n".join(problems[:6])


def task_rows(rec: Recorder) -> list[tuple[str, str, float]]:
    """The tasks table's (job, node, start) rows in attempt order."""
    t = rec.tasks_columns()
    rows = sorted(zip(t["attempt"].tolist(), t["job_id"], t["node"], t["start"].tolist()))
    return [(job, node, start) for _, job, node, start in rows]


def left_state(sim: Simulation) -> tuple[Any, ...]:
    """What a run leaves in the simulation besides its tables: the cluster's counts, each node's free
    slots and free resources (bit for bit), the active jobs in order, each job's status, current stage,
    counts and times and its stages' counts, end times and task states, the finished count and the next
    attempt id."""
    jobs = [
        (j.status, j.cur, j.remaining, j.runnable, j.running, j.first_start, j.map_end, j.finish,
         [(st.pending, st.finished, st.running, st.end_time, bytes(st.state)) for st in j.stages])
        for j in sim.jobs
    ]  # fmt: skip
    free = [[float(x).hex() for x in f] for f in sim.free_resources]
    slots = [list(f) for f in sim.free]
    return (sim.busy, sim.runnable, sim.remaining, free, slots, list(sim.active), jobs, sim.jobs_finished,
            sim.next_attempt)  # fmt: skip
