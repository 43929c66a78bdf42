"""A :class:`~mropt.sim.engine.Simulation` of ``fair`` run by the compiled loop
(:mod:`mropt.sim.compiled.fair_core`).

:func:`why_not` says why a built simulation cannot run compiled (None: it can; the shape both heartbeat
loops cover, and for ``fair`` also map and reduce slots with no resources and jobs with a reduce stage:
:func:`mropt.sim.compiled.heartbeat_engine.shape_why_not` with ``reduces``); :func:`run_compiled` runs it
(:func:`~mropt.sim.compiled.heartbeat_engine.run_heartbeat`) and leaves what a run's readers read as its
own ``run`` would (the jobs' stages: :func:`mropt.sim.compiled.driver.stages_back`). The policy object is not run (its
pools, keys and waits stay as built): nothing after a run reads them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from mropt.sim.compiled.driver import common_arrays
from mropt.sim.compiled.heartbeat_engine import run_heartbeat, shape_why_not
from mropt.sim.state import MAP, NODE, REDUCE

if TYPE_CHECKING:
    from mropt.sim.engine import Simulation
    from mropt.sim.recorder import Recorder


def why_not(sim: Simulation) -> str | None:
    """Why ``sim`` cannot run compiled (a short phrase), or None."""
    from mropt.sim.policies.fair import Fair

    policy = sim.policy
    if type(policy) is not Fair:
        return f"policy {type(policy).__name__.lower()} (only fair runs by this loop)"
    if policy.params["preemption"]:
        return "fair with preemption"
    if sim.workload.pools:
        return "pools listed by the workload"
    return shape_why_not(sim, reduces=True)


def run_compiled(sim: Simulation) -> Recorder:
    """Run ``sim`` by the compiled loop (:func:`~mropt.sim.compiled.heartbeat_engine.run_heartbeat`);
    :class:`~mropt.sim.compiled.driver.NotCompilable` (and ``sim`` untouched) where :func:`why_not` names
    a reason."""
    from mropt.sim.compiled import fair_core as core

    return run_heartbeat(sim, core, why_not, _arrays)


def _arrays(sim: Simulation) -> tuple[Any, np.ndarray, np.ndarray, Any, Any]:
    """The loop's workload, float and int parameters, state and lists at the run's start."""
    work, params, flags, n_tasks = _work(sim)
    state, lists = _state(sim, work, n_tasks)
    return work, params, flags, state, lists


def _fair_params(sim: Simulation) -> tuple[float, bool, int, float, float]:
    """``Fair.start``'s reading of its parameters: update interval, assignmultiple, the map cap per
    heartbeat, the node and rack delays (-1: Hadoop's auto value)."""
    from mropt.sim.policies.fair import MAX_AUTO_DELAY

    p = sim.policy.params
    auto = min(MAX_AUTO_DELAY, 1.5 * sim.heartbeat_interval)
    node_delay, rack_delay = float(p["node_delay"]), float(p["rack_delay"])
    return (
        float(p["update_interval"]),
        bool(p["assign_multiple"]),
        int(p["assign_multiple_maps"]),
        auto if node_delay < 0 else node_delay,
        auto if rack_delay < 0 else rack_delay,
    )


def _work(sim: Simulation) -> tuple[Any, np.ndarray, np.ndarray, int]:
    """The workload as the loop reads it (``fair_core.Work``), its float and int parameters, its task count."""
    from mropt.sim.compiled.drf_engine import _replicas
    from mropt.sim.compiled.fair_core import Work
    from mropt.sim.policies.fair_shares import priority_factor

    jobs = sim.jobs
    n_jobs = len(jobs)
    arrivals = np.array(sorted(range(n_jobs), key=lambda j: (jobs[j].submit, j)), dtype=np.int32)
    names = sorted({j.pool for j in jobs})  # a pool's number is its name's rank (the comparator's tie)
    number = {name: k for k, name in enumerate(names)}
    j_pool = np.array([number[j.pool] for j in jobs], dtype=np.int64)
    sizes = np.bincount(j_pool, minlength=len(names))
    p_off = np.zeros(len(names), dtype=np.int64)
    np.cumsum(sizes[:-1], out=p_off[1:])
    stages = [j.stages[0] for j in jobs]
    j_n = np.array([st.n for st in stages], dtype=np.int64)
    j_off = np.zeros(n_jobs, dtype=np.int64)
    np.cumsum(j_n[:-1], out=j_off[1:])
    # the reduce stages (none: 0 tasks), their tasks after every map task in the tasks' states
    reduce_stages = [j.stages[1] if len(j.stages) > 1 else None for j in jobs]
    j_nr = np.array([0 if st is None else st.n for st in reduce_stages], dtype=np.int64)
    j_off_r = np.full(n_jobs, int(j_n.sum()), dtype=np.int64)
    j_off_r[1:] += np.cumsum(j_nr[:-1])
    j_d0, j_d1 = _demands(stages)
    j_d0r, j_d1r = _demands([st if st is not None else stages[0] for st in reduce_stages])
    # the demand classes: the distinct (cpu, mem) pairs of maps and reduces, sorted
    pairs, classes = np.unique(
        np.stack((np.concatenate((j_d0, j_d0r)), np.concatenate((j_d1, j_d1r))), axis=1), axis=0, return_inverse=True
    )
    classes = classes.reshape(-1).astype(np.int64)
    placed = stages[0].replicas is not None
    n_nodes = sim.n_nodes
    interval = sim.heartbeat_interval
    work = Work(
        arrivals=arrivals,
        submit=np.array([j.submit for j in jobs], dtype=np.float64),
        j_n=j_n,
        j_off=j_off,
        j_dur=np.array([st.durations[0] for st in stages], dtype=np.float64),
        j_d0=j_d0,
        j_d1=j_d1,
        j_w=np.array([priority_factor(j.priority) for j in jobs], dtype=np.float64),
        j_pool=j_pool,
        j_class=classes[:n_jobs].copy(),
        p_off=p_off,
        c_d0=np.ascontiguousarray(pairs[:, 0]),
        c_d1=np.ascontiguousarray(pairs[:, 1]),
        replicas=_replicas(stages) if placed else np.zeros((0, 0), dtype=np.int16),
        node_rack=np.asarray(sim.node_rack, dtype=np.int32),
        node_speed=np.asarray(sim.node_speed, dtype=np.float64),
        node_slots=np.asarray(sim.slots[MAP], dtype=np.int64),
        phase=np.array(
            [interval * node / n_nodes for node in range(n_nodes)], dtype=np.float64
        ),  # (``HeartbeatOffers``)
        j_nr=j_nr,
        j_off_r=j_off_r,
        j_dur_r=np.array([0.0 if st is None else st.durations[0] for st in reduce_stages], dtype=np.float64),
        j_d0r=j_d0r,
        j_d1r=j_d1r,
        j_class_r=classes[n_jobs:].copy(),
        node_rslots=np.asarray(sim.slots[REDUCE], dtype=np.int64),
    )
    update_interval, multiple, cap, node_delay, rack_delay = _fair_params(sim)
    factors = sim.timing.factors
    total, total_r = float(sim.total_slots[MAP]), float(sim.total_slots[REDUCE])
    params = np.array(
        [factors[1], factors[2], interval, update_interval, node_delay, rack_delay, total, total_r], dtype=np.float64
    )
    n_racks = int(work.node_rack.max()) + 1
    slots = [int(sim.total_slots[MAP]), int(sim.total_slots[REDUCE])]
    cap_r = int(sim.policy.params["assign_multiple_reduces"])
    demands = len(sim.resources) == 2
    rows_inline = not j_nr.any()  # (with reduces, the rows are built after the run)
    flags = np.array(
        [placed, sim.batches.on, n_racks, multiple, cap, sim.stall_limit, *slots, cap_r, demands, rows_inline],
        dtype=np.int64,
    )
    return work, params, flags, int(j_n.sum() + j_nr.sum())


def _demands(stages: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """The stages' (one demand each) cpu and mem demands; 0 where the tasks have none (a cluster of no
    resources, whose room and fit tests count slots alone)."""
    demands = [st.demands[0] for st in stages]
    d0 = np.array([0.0 if d is None else d[0] for d in demands], dtype=np.float64)
    d1 = np.array([0.0 if d is None else d[1] for d in demands], dtype=np.float64)
    return d0, d1


def _state(sim: Simulation, work: Any, n_tasks: int) -> tuple[Any, Any]:
    """The loop's state (``fair_core.State``) and lists (``fair_core.Lists``) at the run's start."""
    from numba.typed import List

    from mropt.sim.compiled.fair_core import Lists, State

    n_jobs, n_nodes, n_pools, n_classes = len(work.j_n), sim.n_nodes, len(work.p_off), len(work.c_d0)
    slots = int(work.node_slots.sum() + work.node_rslots.sum())
    in_flight = min(n_tasks, slots) + 1  # (a running task holds a slot)
    fit_size = 1 << max(0, (n_classes - 1).bit_length())

    def f(n: int, fill: float | None = None) -> np.ndarray:
        return np.empty(n, dtype=np.float64) if fill is None else np.full(n, fill, dtype=np.float64)

    def i(n: int, dtype: Any = np.int64, fill: int | None = None) -> np.ndarray:
        return np.empty(n, dtype=dtype) if fill is None else np.full(n, fill, dtype=dtype)

    events = in_flight + n_nodes + 1  # (completions, and a heartbeat per node at most)
    common = common_arrays(work.j_n, n_tasks, n_nodes, n_pools, in_flight)
    n_ended = len(common["o_job"])
    resources = sim.free_resources if sim.resources else [[0.0, 0.0]] * n_nodes
    state = State(
        **common,
        # jobs: running maps, delay scheduling's level and wait, the key among their pool's candidates
        # (NaN: none), the heartbeat that last visited, launched, passed them by
        running=i(n_jobs, fill=0),
        last_level=i(n_jobs, np.int8, NODE),
        waited=f(n_jobs, 0.0),
        j_key=f(n_jobs, math.nan),
        j_visit=i(n_jobs, fill=0),
        j_launch=i(n_jobs, fill=0),
        j_fail=i(n_jobs, fill=0),
        skipped=i(n_jobs),
        visited=i(n_jobs),
        # pools: running counts, candidates, the key in the order (NaN: none), the heartbeat that passed
        # every candidate by; the candidates' segments (ratio, submit, job); the order (key, pool)
        p_running=i(n_pools, fill=0),
        p_n=i(n_pools, fill=0),
        p_key=f(n_pools, math.nan),
        p_fail=i(n_pools, fill=0),
        ck=f(n_jobs),
        cs=f(n_jobs),
        cj=i(n_jobs),
        ok=f(n_pools),
        op=i(n_pools),
        # the demand classes' pending tasks and their fit tree
        c_pending=i(n_classes, fill=0),
        fit=f(2 * fit_size, math.inf),
        # nodes
        free0=np.array([r[0] for r in resources], dtype=np.float64),
        free1=np.array([r[1] for r in resources], dtype=np.float64),
        fslot=np.asarray(sim.free[MAP], dtype=np.int64).copy(),
        beating=np.zeros(n_nodes, dtype=np.bool_),
        # the event heap (completions and heartbeats)
        et=f(events),
        es=i(events),
        eslot=i(events),
        # the reduce side (:mod:`mropt.sim.compiled.fair_reduce`): jobs' map stage end (NaN: not yet),
        # pending, fresh and finished reduces, running reduces and the keys and marks as the map side's;
        # pools' the same; the reduce candidates' segments and the reduce order; the reduce classes' pending
        # tasks and fit tree; the nodes' free reduce slots; each running and ended batch's stage
        map_end=f(n_jobs, math.nan),
        r_pending=work.j_nr.copy(),
        r_fresh=i(n_jobs, fill=0),
        r_finished=i(n_jobs, fill=0),
        running_r=i(n_jobs, fill=0),
        j_key_r=f(n_jobs, math.nan),
        j_fail_r=i(n_jobs, fill=0),
        p_running_r=i(n_pools, fill=0),
        p_n_r=i(n_pools, fill=0),
        p_key_r=f(n_pools, math.nan),
        p_fail_r=i(n_pools, fill=0),
        ck_r=f(n_jobs),
        cs_r=f(n_jobs),
        cj_r=i(n_jobs),
        ok_r=f(n_pools),
        op_r=i(n_pools),
        c_pending_r=i(n_classes, fill=0),
        fit_r=f(2 * fit_size, math.inf),
        rslot=np.asarray(sim.free[REDUCE], dtype=np.int64).copy(),
        s_stage=i(in_flight, np.int8, 0),
        o_stage=i(n_ended, np.int8, 0),
    )
    empty32 = np.empty(0, dtype=np.int32)
    return state, Lists(List([empty32] * n_jobs))


__all__ = ["run_compiled", "why_not"]
