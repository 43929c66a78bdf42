"""A :class:`~mropt.sim.engine.Simulation` of ``capacity`` run by the compiled loop
(:mod:`mropt.sim.compiled.capacity_core`).

:func:`why_not` says why a built simulation cannot run compiled (None: it can; the shape both heartbeat
loops cover: :func:`mropt.sim.compiled.heartbeat_engine.shape_why_not`); :func:`run_compiled` runs it
(:func:`~mropt.sim.compiled.heartbeat_engine.run_heartbeat`) and leaves what a run's readers read as its
own ``run`` would (the jobs' stages: :func:`mropt.sim.compiled.driver.stages_back`), as
:mod:`mropt.sim.compiled.fair_engine` does. The policy object is not run (its queues, counts and missed
opportunities stay as built): nothing after a run reads them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from mropt.sim.compiled.driver import common_arrays
from mropt.sim.compiled.fair_engine import _demands
from mropt.sim.compiled.heartbeat_engine import run_heartbeat, shape_why_not
from mropt.sim.state import MAP, REDUCE

if TYPE_CHECKING:
    from mropt.sim.engine import Simulation
    from mropt.sim.recorder import Recorder


def why_not(sim: Simulation) -> str | None:
    """Why ``sim`` cannot run compiled (a short phrase), or None: fair_engine's limits, with listed queues
    in place of pools (also map and reduce slots with no resources and jobs with a reduce stage:
    :func:`~mropt.sim.compiled.heartbeat_engine.shape_why_not` with ``reduces``)."""
    from mropt.sim.policies.capacity import Capacity

    policy = sim.policy
    if type(policy) is not Capacity:
        return f"policy {type(policy).__name__.lower()} (only capacity runs by this loop)"
    if sim.workload.queues:
        return "queues listed by the workload"
    return shape_why_not(sim, reduces=True)


def run_compiled(sim: Simulation) -> Recorder:
    """Run ``sim`` by the compiled loop (:func:`~mropt.sim.compiled.heartbeat_engine.run_heartbeat`);
    :class:`~mropt.sim.compiled.driver.NotCompilable` (and ``sim`` untouched) where :func:`why_not` names
    a reason."""
    from mropt.sim.compiled import capacity_core as core

    return run_heartbeat(sim, core, why_not, _arrays)


def _arrays(sim: Simulation) -> tuple[Any, np.ndarray, np.ndarray, Any, Any]:
    """The loop's workload, float and int parameters, state and lists at the run's start."""
    work, params, flags, n_tasks = _work(sim)
    state, lists = _state(sim, work, n_tasks)
    return work, params, flags, state, lists


def _work(sim: Simulation) -> tuple[Any, np.ndarray, np.ndarray, int]:
    """The workload as the loop reads it (``capacity_core.Work``), its float and int parameters, its task
    count. A job's rank is its place in the arrivals: (submit, job), the queue's order without
    ``supports_priority`` (the default queue's)."""
    from mropt.sim.compiled.capacity_core import Work
    from mropt.sim.compiled.drf_engine import _replicas

    jobs = sim.jobs
    n_jobs = len(jobs)
    arrivals = np.array(sorted(range(n_jobs), key=lambda j: (jobs[j].submit, j)), dtype=np.int64)
    rank = np.empty(n_jobs, dtype=np.int64)
    rank[arrivals] = np.arange(n_jobs, dtype=np.int64)
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
    j_class = classes[:n_jobs].copy()
    names = sorted({j.pool for j in jobs})  # (the utilisation rows' pools, numbered by name)
    number = {name: k for k, name in enumerate(names)}
    sizes = np.bincount(j_class, minlength=len(pairs))  # (a class of reduces alone: an empty segment)
    cl_off = np.zeros(len(pairs), dtype=np.int64)
    np.cumsum(sizes[:-1], out=cl_off[1:])
    c_d0 = np.ascontiguousarray(pairs[:, 0])
    # the classes' groups (one per cpu demand: the classes are sorted by it) and their min-trees' places
    g_d0, g_first = np.unique(c_d0, return_index=True)
    g_first = np.append(g_first, len(c_d0)).astype(np.int64)
    g_size = np.array([1 << max(0, int(n - 1).bit_length()) for n in np.diff(g_first)], dtype=np.int64)
    g_off = np.zeros(len(g_d0), dtype=np.int64)
    np.cumsum(2 * g_size[:-1], out=g_off[1:])
    placed = stages[0].replicas is not None
    n_nodes = sim.n_nodes
    interval = sim.heartbeat_interval
    work = Work(
        arrivals=arrivals,
        rank=rank,
        submit=np.array([j.submit for j in jobs], dtype=np.float64),
        j_n=j_n,
        j_off=j_off,
        j_dur=np.array([st.durations[0] for st in stages], dtype=np.float64),
        j_d0=j_d0,
        j_d1=j_d1,
        j_class=j_class,
        j_pool=np.array([number[j.pool] for j in jobs], dtype=np.int64),
        cl_off=cl_off,
        c_d0=c_d0,
        c_d1=np.ascontiguousarray(pairs[:, 1]),
        c_group=np.repeat(np.arange(len(g_d0), dtype=np.int64), np.diff(g_first)),
        g_first=g_first,
        g_d0=g_d0,
        g_off=g_off,
        g_size=g_size,
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
    )
    factors = sim.timing.factors
    wait = float(sim.policy.params["locality_wait_factor"])
    params = np.array([factors[1], factors[2], interval, wait], dtype=np.float64)
    n_racks = int(work.node_rack.max()) + 1
    slots = [int(sim.total_slots[MAP]), int(sim.total_slots[REDUCE])]
    demands = len(sim.resources) == 2
    rows_inline = not j_nr.any()  # (with reduces, the rows are built after the run)
    flags = np.array([placed, sim.batches.on, n_racks, sim.stall_limit, *slots, demands, rows_inline], dtype=np.int64)
    return work, params, flags, int(j_n.sum() + j_nr.sum())


def _state(sim: Simulation, work: Any, n_tasks: int) -> tuple[Any, Any]:
    """The loop's state (``capacity_core.State``) and lists (``capacity_core.Lists``) at the run's start."""
    from numba.typed import List

    from mropt.sim.compiled.capacity_core import Lists, State
    from mropt.sim.compiled.capacity_order import NOT_A_RANK

    n_jobs, n_nodes, n_classes = len(work.j_n), sim.n_nodes, len(work.c_d0)
    n_pools = int(work.j_pool.max()) + 1
    slots = int(work.node_slots.sum()) + int(np.sum(sim.slots[REDUCE]))
    in_flight = min(n_tasks, slots) + 1  # (a running task holds a slot)
    rq_size = 1 << max(0, (n_jobs - 1).bit_length())
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
        # jobs: missed opportunities (its own, and the passes at its rank
        # when it began counting them), locality wait factor (NaN: not read), the heartbeat its local
        # launch last failed at, its position in its class's segment
        missed=i(n_jobs, fill=0),
        base=i(n_jobs, fill=0),
        lwf=f(n_jobs, math.nan),
        j_fail=i(n_jobs, fill=0),
        j_pos=i(n_jobs, fill=0),
        # the passes in bulk (a Fenwick tree over the ranks; the walks past every rank, those in the tree)
        tree=i(n_jobs + 1, fill=0),
        pc=i(2, fill=0),
        mark=i(n_nodes, fill=0),
        # the candidates by demand class: appended, the first live one, live; each position's next live
        # one and rank; the groups' min-trees of the classes' first ranks, a walk's least rank of each
        # group and the classes it moved; the fit tree
        cl_n=i(n_classes, fill=0),
        cl_head=work.cl_off.copy(),
        cl_live=i(n_classes, fill=0),
        nxt=i(n_jobs),
        cl_rank=i(n_jobs),
        mt=i(int(2 * work.g_size.sum()), fill=NOT_A_RANK),
        gb=i(len(work.g_d0)),
        wt=i(n_jobs),
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
        # each pool's running maps (its utilisation rows' busy count)
        p_running=i(n_pools, fill=0),
        # the reduce side (:mod:`mropt.sim.compiled.capacity_reduce`): jobs' map stage end (NaN: not yet),
        # pending, fresh and finished reduces; the reduce classes' pending tasks and fit tree; the reduce
        # candidates' tree over the ranks; the nodes' free reduce slots; each running and ended batch's stage
        map_end=f(n_jobs, math.nan),
        r_pending=work.j_nr.copy(),
        r_fresh=i(n_jobs, fill=0),
        r_finished=i(n_jobs, fill=0),
        c_pending_r=i(n_classes, fill=0),
        fit_r=f(2 * fit_size, math.inf),
        rq0=f(2 * rq_size, math.inf),
        rq1=f(2 * rq_size, math.inf),
        rslot=np.asarray(sim.free[REDUCE], dtype=np.int64).copy(),
        s_stage=i(in_flight, np.int8, 0),
        o_stage=i(n_ended, np.int8, 0),
    )
    empty32 = np.empty(0, dtype=np.int32)
    return state, Lists(List([empty32] * n_jobs))


__all__ = ["run_compiled", "why_not"]
