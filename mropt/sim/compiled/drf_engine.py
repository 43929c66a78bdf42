"""A :class:`~mropt.sim.engine.Simulation` of ``drf``, ``ddrf`` or ``delay`` run by the compiled loop
(:mod:`mropt.sim.compiled.drf_core`).

:func:`why_not` says why a built simulation cannot run compiled (None: it can);
:func:`run_compiled` runs it and leaves what a run's readers read as its own ``run`` would: the
recorder's attempts, job ends and utilisation marks, the jobs' outcomes and states, ``active``, the
event count, the clock, ``stopped``, and the cluster's counts (``busy``, ``runnable``, ``remaining``,
the nodes' free resources). :func:`mropt.sim.compiled.driver.drive` calls
:func:`~mropt.sim.compiled.drf_core.step` until the run ends.
The policy object is not run (its shares, skips and heap stay as built): nothing after a run reads them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from mropt.fairness.drf import tie_key
from mropt.sim.compiled.driver import (
    NotCompilable,
    common_arrays,
    drive,
    jobs_back,
    jobs_why_not,
    move_rows,
    run_or_refuse,
    run_why_not,
)
from mropt.sim.policy import EVENT
from mropt.sim.spilled_rows import SpilledRows

if TYPE_CHECKING:
    from mropt.sim.engine import Simulation
    from mropt.sim.recorder import Recorder


def why_not(sim: Simulation) -> str | None:
    """Why ``sim`` cannot run compiled (a short phrase), or None."""
    policy = sim.policy
    if _rule(policy) is None:
        return f"policy {type(policy).__name__.lower()} (only drf, ddrf and delay run compiled)"
    if sim.mode != EVENT:
        return f"mode {sim.mode} (only event)"
    if sim.uses_slots or len(sim.resources) != 2:
        return "a cluster of slots, or of other than two resources"
    reason = run_why_not(sim)
    if reason is not None:
        return reason
    if getattr(policy, "tie_break", None) != "largest-demand":
        return f"the tie break {getattr(policy, 'tie_break', None)!r} (only largest-demand)"
    if not sim.jobs or not sim.n_nodes:
        return "no jobs or no nodes"
    shape = jobs_why_not(sim.jobs)
    if shape is not None:
        return shape
    if not all(t > 0 for t in _totals(sim)):
        return "a resource of total 0"
    return None


def _rule(policy: object) -> tuple[int, int, int] | None:
    """The compiled loop's delay rule of ``policy`` (``drf_core.NO_DELAY``, ``DDRF``, ``DELAY``) and its
    two thresholds (E1, E2; D twice), or None for a policy it does not run (a subclass included)."""
    from mropt.sim.policies.ddrf import Ddrf, Delay
    from mropt.sim.policies.drf import Drf

    kind = type(policy)
    if kind is Drf:
        return 0, 0, 0
    if kind is Ddrf:
        return 1, policy.e1, policy.e2  # type: ignore[attr-defined]
    if kind is Delay:
        return 2, policy.d, policy.d  # type: ignore[attr-defined]
    return None


def _totals(sim: Simulation) -> list[float]:
    """The cluster's total of each resource, summed as ``_DrfBase.start`` sums it."""
    return [sum(free[k] for free in sim.free_resources) for k in range(len(sim.resources))]


def run_compiled(sim: Simulation) -> Recorder:
    """Run ``sim`` by the compiled loop (module docstring); :class:`NotCompilable` (and ``sim`` untouched)
    where :func:`why_not` names a reason."""
    return run_or_refuse(sim, why_not, lambda: _run(sim))


def _run(sim: Simulation) -> Recorder:
    """:func:`run_compiled`, its garbage collector paused."""
    from mropt.sim.compiled import drf_core as core

    work, params, flags, n_tasks = _work(sim)
    state, lists = _state(sim, work, n_tasks)
    regs = np.zeros(core.N_REGISTERS, dtype=np.int64)
    regs[core.OPEN] = -1
    regs[core.N_FREE] = len(state.free_slots)
    fregs = np.zeros(core.N_FLOAT_REGISTERS, dtype=np.float64)
    fregs[core.LAST] = -math.inf
    fregs[core.CHECK_AT] = fregs[core.REOFFER_AT] = math.inf
    fregs[core.MUTE] = -1.0  # (``_DrfBase``'s ``_mute`` before any check)
    regs[core.ROW_BUSY] = -1
    record = sim.record
    rows = SpilledRows() if record.utilisation else None
    args = (work, params, flags, state, lists, regs, fregs)
    drive(sim, core, args, state, regs, fregs, on_pause=lambda: move_rows(state, regs, core, rows))
    jobs_back(sim, work.arrivals, state, regs, core)
    if rows is not None:
        record.keep_spilled_rows(rows)
    if sim._marks is not None:
        record.keep_row_marks(sim._marks)
    return record


def _work(sim: Simulation) -> tuple[Any, np.ndarray, np.ndarray, int]:
    """The workload as the loop reads it (``drf_core.Work``), its float and int parameters, its task count."""
    from mropt.sim.compiled.drf_core import Work

    jobs = sim.jobs
    n_jobs = len(jobs)
    totals = _totals(sim)
    arrivals = np.array(sorted(range(n_jobs), key=lambda j: (jobs[j].submit, j)), dtype=np.int32)
    users: dict[str, int] = {}
    j_user = np.zeros(n_jobs, dtype=np.int64)
    for j in arrivals.tolist():  # (users numbered in order of first arrival, as ``on_arrival`` does)
        j_user[j] = users.setdefault(jobs[j].user, len(users))
    stages = [j.stages[0] for j in jobs]
    j_n = np.array([st.n for st in stages], dtype=np.int32)
    j_off = np.zeros(n_jobs, dtype=np.int64)
    np.cumsum(j_n[:-1], out=j_off[1:])
    demands = [st.demands[0] for st in stages]
    j_d0 = np.array([d[0] for d in demands], dtype=np.float64)  # type: ignore[index]
    j_d1 = np.array([d[1] for d in demands], dtype=np.float64)  # type: ignore[index]
    ties: dict[Any, float] = {}
    for d in demands:  # (``_DrfBase._vector``: the tie key of a task's dominant share)
        if d not in ties:
            ties[d] = tie_key(max(d[0] / totals[0], d[1] / totals[1]), "largest-demand")  # type: ignore[index]
    placed = bool(stages) and stages[0].replicas is not None
    j_class, c_group, c_d1, g_d0, g_first, g_off, g_size = _classes(j_d0, j_d1)
    names = sorted({j.pool for j in jobs})  # (a job's pool for its utilisation rows)
    number = {name: k for k, name in enumerate(names)}
    work = Work(
        arrivals=arrivals,
        submit=np.array([j.submit for j in jobs], dtype=np.float64),
        j_user=j_user,
        j_pool=np.array([number[j.pool] for j in jobs], dtype=np.int64),
        j_n=j_n,
        j_off=j_off,
        j_dur=np.array([st.durations[0] for st in stages], dtype=np.float64),
        j_d0=j_d0,
        j_d1=j_d1,
        j_tie=np.array([ties[d] for d in demands], dtype=np.float64),
        j_class=j_class,
        replicas=_replicas(stages) if placed else np.zeros((0, 0), dtype=np.int16),
        node_rack=np.asarray(sim.node_rack, dtype=np.int32),
        node_speed=np.asarray(sim.node_speed, dtype=np.float64),
        c_group=c_group,
        c_d1=c_d1,
        g_d0=g_d0,
        g_first=g_first,
        g_off=g_off,
        g_size=g_size,
    )
    lows = [float(min(j_d0)) if n_jobs else 0.0, float(min(j_d1)) if n_jobs else 0.0]
    factors = sim.timing.factors
    idle = tie_key(0.0, "largest-demand")
    params = np.array([*totals, *lows, factors[1], factors[2], idle, sim.heartbeat_interval], dtype=np.float64)
    n_racks = int(work.node_rack.max()) + 1 if sim.n_nodes else 0
    rule = _rule(sim.policy)
    assert rule is not None
    slots = [int(sim.total_slots[0]), int(sim.total_slots[1])]
    flags = np.array([placed, sim.batches.on, n_racks, len(work.c_d1), *rule, *slots], dtype=np.int64)
    return work, params, flags, int(j_n.sum())


def _replicas(stages: list[Any]) -> np.ndarray:
    """The stages' replicas as one array of rows in job order: the placement's own array when the
    stages hold consecutive views of it (no copy), else their concatenation."""
    base = stages[0].replicas.base
    if base is not None and base.ndim == 2 and sum(len(st.replicas) for st in stages) == len(base):
        start = base.__array_interface__["data"][0]
        row = base.strides[0]
        at = 0
        for st in stages:
            r = st.replicas
            if r.base is not base or r.__array_interface__["data"][0] != start + at * row:
                break
            at += len(r)
        else:
            return base
    return np.concatenate([st.replicas for st in stages])


def _classes(d0: np.ndarray, d1: np.ndarray) -> tuple[np.ndarray, ...]:
    """The demand classes (distinct (demand 0, demand 1), sorted) and their groups (one per demand 0):
    each job's class; each class's group and demand 1; each group's demand 0, first class, tree
    offset and tree size (leaves: a power of two)."""
    if not len(d0):
        z = np.zeros(0, dtype=np.int32)
        return (
            z,
            z,
            np.zeros(0),
            np.zeros(0),
            np.zeros(1, dtype=np.int32),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
        )
    pairs, j_class = np.unique(np.stack((d0, d1), axis=1), axis=0, return_inverse=True)
    g_d0, c_group = np.unique(pairs[:, 0], return_inverse=True)
    g_first = np.searchsorted(c_group, np.arange(len(g_d0) + 1)).astype(np.int32)
    sizes = np.diff(g_first)
    g_size = np.array([1 << max(0, int(n - 1).bit_length()) for n in sizes], dtype=np.int64)
    g_off = np.zeros(len(g_d0), dtype=np.int64)
    np.cumsum(2 * g_size[:-1], out=g_off[1:])
    return (
        j_class.reshape(-1).astype(np.int64),
        c_group.astype(np.int32),
        np.ascontiguousarray(pairs[:, 1]),
        g_d0.astype(np.float64),
        g_first,
        g_off,
        g_size,
    )


def _in_flight(work: Any, free0: np.ndarray, free1: np.ndarray, n_tasks: int) -> int:
    """The most batches (tasks) that can run at once, the size of the event heap and of the batches'
    slots. A task of a positive demand of a resource holds at least the least such demand of it, so a
    node runs at most its capacity over that of them (plus the fit's slack: each fit allows 1e-9 over);
    the tasks of demand 0 there are counted by the other resource likewise (the lesser of the two ways
    of counting, per node). A task of demand 0 in both is bounded by nothing but the task count."""
    d0, d1 = work.j_d0, work.j_d1
    if np.any((d0 <= 0) & (d1 <= 0)):
        return n_tasks + 1

    def most(free: np.ndarray, demands: np.ndarray) -> np.ndarray:  # (per node, tasks of these demands)
        return np.floor((free + 1e-6) / demands.min()) + 2 if len(demands) else np.zeros(len(free))

    by_first = most(free0, d0[d0 > 0]) + most(free1, d1[d0 <= 0])
    by_second = most(free1, d1[d1 > 0]) + most(free0, d0[d1 <= 0])
    return int(min(n_tasks, np.minimum(by_first, by_second).sum())) + 1


def _state(sim: Simulation, work: Any, n_tasks: int) -> tuple[Any, Any]:
    """The loop's state (``drf_core.State``) and lists (``drf_core.Lists``) at the run's start."""
    from numba.typed import List

    from mropt.sim.compiled.drf_core import Lists, State

    n_jobs, n_nodes, n_classes = len(work.j_n), sim.n_nodes, len(work.c_d1)
    n_pools = int(work.j_pool.max()) + 1 if n_jobs else 1
    n_users = int(work.j_user.max()) + 1 if n_jobs else 0
    free0 = np.array([f[0] for f in sim.free_resources], dtype=np.float64)
    free1 = np.array([f[1] for f in sim.free_resources], dtype=np.float64)
    in_flight = _in_flight(work, free0, free1, n_tasks)

    def f(n: int, fill: float | None = None) -> np.ndarray:
        return np.empty(n, dtype=np.float64) if fill is None else np.full(n, fill, dtype=np.float64)

    def i(n: int, dtype: Any = np.int64, fill: int | None = None) -> np.ndarray:
        return np.empty(n, dtype=dtype) if fill is None else np.full(n, fill, dtype=dtype)

    # the class heaps' segments: twice the users with jobs of the class, and more (``drf_index.compact``)
    pairs = np.unique(work.j_user.astype(np.int64) * n_classes + work.j_class)
    c_cap = 2 * np.bincount(pairs % n_classes, minlength=n_classes).astype(np.int64) + 34
    c_base = np.zeros(n_classes, dtype=np.int64)
    np.cumsum(c_cap[:-1], out=c_base[1:])
    pool = int(c_cap.sum())
    slots, classes, aside = in_flight, n_classes, n_jobs + n_classes
    state = State(
        **common_arrays(work.j_n, n_tasks, n_nodes, n_pools, slots),
        # jobs
        j_next=i(n_jobs, np.int32, -1),
        j_prev=i(n_jobs, np.int32, -1),
        # users
        u_work=i(n_users, np.int32, -1),
        u_tail=i(n_users, np.int32, -1),
        u_use0=f(n_users, 0.0),
        u_use1=f(n_users, 0.0),
        u_share=f(n_users, 0.0),
        u_ver=i(n_users, fill=0),
        # nodes
        free0=free0,
        free1=free1,
        # the event heap (completions: time, order, batch slot)
        et=f(slots),
        es=i(slots),
        eslot=i(slots),
        # the nodes freed at the instant
        dirty_mark=np.zeros(n_nodes, dtype=np.bool_),
        dirty=i(n_nodes),
        # the class heaps (pooled segments), their tops and trees, the groups' first classes with users
        pk=f(pool),
        pt=f(pool),
        pu=i(pool),
        pv=i(pool),
        c_base=c_base,
        c_cap=c_cap,
        ch_n=i(classes, fill=0),
        c_valid=i(classes, fill=0),
        top_k=f(classes),
        top_t=f(classes),
        top_u=i(classes, fill=0),
        tree=i(int(2 * work.g_size.sum()), np.int64, -1),
        g_low=i(len(work.g_d0), fill=-1),
        mark_u=i(classes, fill=-1),
        mark_v=i(classes, fill=-1),
        # the delay rules: skip counts, the offer call that last offered a job, that excluded a user,
        # and the class tops an offer call set aside
        skips=i(n_jobs, fill=0),
        offered=i(n_jobs, fill=0),
        u_excl=i(n_users, fill=0),
        xk=f(aside),
        xt=f(aside),
        xu=i(aside),
        xv=i(aside),
        xc=i(aside),
        # each pool's running tasks (its utilisation rows' busy count)
        p_busy=i(n_pools, fill=0),
    )
    empty32 = np.empty(0, dtype=np.int32)
    return state, Lists(List([empty32] * n_jobs))


__all__ = ["NotCompilable", "run_compiled", "why_not"]
