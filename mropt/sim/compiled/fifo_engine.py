"""A :class:`~mropt.sim.engine.Simulation` of ``fifo`` run by the compiled loop
(:mod:`mropt.sim.compiled.fifo_core`).

:func:`why_not` says why a built simulation cannot run compiled (None: it can); :func:`run_compiled`
runs it and leaves what a run's readers read as its own ``run`` would: the recorder's attempts, job
ends and utilisation marks (the rows are built from them after the run, as the Python engine's are),
the jobs' outcomes and stages' states, ``active``, the event count, the clock, ``stopped``, and the
cluster's counts (``busy``, ``runnable``, ``remaining``, the nodes' free slots).
:func:`mropt.sim.compiled.driver.drive` calls :func:`~mropt.sim.compiled.fifo_core.step` until the run
ends. The policy object is not run (not even started: it has no queue): nothing after a run reads it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from mropt.sim.compiled.driver import (
    NotCompilable,
    common_arrays,
    drive,
    run_or_refuse,
    run_why_not,
    stages_back,
    stages_why_not,
)
from mropt.sim.policy import EVENT
from mropt.sim.state import MAP, REDUCE

if TYPE_CHECKING:
    from mropt.sim.engine import Simulation
    from mropt.sim.recorder import Recorder


def why_not(sim: Simulation) -> str | None:
    """Why ``sim`` cannot run compiled (a short phrase), or None."""
    from mropt.sim.policies.fifo import Fifo

    policy = sim.policy
    if type(policy) is not Fifo:
        return f"policy {type(policy).__name__.lower()} (only fifo runs compiled here)"
    if sim.mode != EVENT:
        return f"mode {sim.mode} (only event)"
    if not sim.uses_slots:
        return "a cluster without slots"
    reason = run_why_not(sim)
    if reason is not None:
        return reason
    if not sim.jobs or not sim.n_nodes:
        return "no jobs or no nodes"
    shape = stages_why_not(sim.jobs, demands=False)
    if shape is not None:
        return shape
    if any(st.replicas is not None for job in sim.jobs for st in job.stages):
        return "replicas (a placement or listed)"
    return None


def run_compiled(sim: Simulation) -> Recorder:
    """Run ``sim`` by the compiled loop (module docstring); :class:`NotCompilable` (and ``sim`` untouched)
    where :func:`why_not` names a reason."""
    return run_or_refuse(sim, why_not, lambda: _run(sim))


def _run(sim: Simulation) -> Recorder:
    """:func:`run_compiled`, its garbage collector paused."""
    from mropt.sim.compiled import fifo_core as core

    work, flags, n_tasks = _work(sim)
    state = _state(sim, work, n_tasks)
    regs = np.zeros(core.N_REGISTERS, dtype=np.int64)
    regs[core.OPEN] = regs[core.HEAD] = regs[core.TAIL] = -1
    regs[core.N_FREE] = len(state.free_slots)
    fregs = np.zeros(core.N_FLOAT_REGISTERS, dtype=np.float64)
    fregs[core.LAST] = -math.inf
    args = (work, flags, state, regs, fregs)
    record = drive(sim, core, args, state, regs, fregs)
    _jobs_back(sim, work, state, regs, core)
    if sim._marks is not None:
        record.keep_row_marks(sim._marks)
    return record


def _work(sim: Simulation) -> tuple[Any, np.ndarray, int]:
    """The workload as the loop reads it (``fifo_core.Work``), its int parameters, its task count."""
    from mropt.sim.compiled.fifo_core import Work

    jobs = sim.jobs
    n_jobs = len(jobs)
    arrivals = np.array(sorted(range(n_jobs), key=lambda j: (jobs[j].submit, j)), dtype=np.int32)
    rank = np.zeros(n_jobs, dtype=np.int64)  # (``Fifo._queue``'s order: -priority, submit, index)
    rank[sorted(range(n_jobs), key=lambda j: (-jobs[j].priority, jobs[j].submit, j))] = np.arange(n_jobs)
    j_nm = np.array([j.stages[0].n for j in jobs], dtype=np.int64)
    j_nr = np.array([j.stages[1].n if len(j.stages) > 1 else 0 for j in jobs], dtype=np.int64)
    sizes = np.stack((j_nm, j_nr), axis=1).reshape(-1)  # (each job's map tasks, then its reduces)
    offsets = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    work = Work(
        arrivals=arrivals,
        submit=np.array([j.submit for j in jobs], dtype=np.float64),
        j_rank=rank,
        j_nm=j_nm,
        j_nr=j_nr,
        j_off_m=np.ascontiguousarray(offsets[0::2]),
        j_off_r=np.ascontiguousarray(offsets[1::2]),
        j_dm=np.array([j.stages[0].durations[0] for j in jobs], dtype=np.float64),
        j_dr=np.array([j.stages[1].durations[0] if len(j.stages) > 1 else 0.0 for j in jobs], dtype=np.float64),
        node_speed=np.asarray(sim.timing.speed, dtype=np.float64),
        slots_m=np.array(sim.slots[MAP], dtype=np.int64),
        slots_r=np.array(sim.slots[REDUCE], dtype=np.int64),
    )
    flags = np.array([sim.total_slots[MAP], sim.total_slots[REDUCE], sim.batches.on], dtype=np.int64)
    return work, flags, int(sizes.sum())


def _state(sim: Simulation, work: Any, n_tasks: int) -> Any:
    """The loop's state (``fifo_core.State``) at the run's start."""
    from mropt.sim.compiled.fifo_core import State

    n_jobs, n_nodes = len(work.j_nm), sim.n_nodes
    in_flight = min(n_tasks, int(sim.total_slots[MAP]) + int(sim.total_slots[REDUCE])) + 1  # (a batch holds a slot)
    common = common_arrays(work.j_nm + work.j_nr, n_tasks, n_nodes, 1, in_flight)
    common["s_level"][:] = -1
    return State(
        **common,
        m_pend=work.j_nm.copy(),
        r_pend=work.j_nr.copy(),
        m_fin=np.zeros(n_jobs, dtype=np.int64),
        r_fin=np.zeros(n_jobs, dtype=np.int64),
        cur=np.zeros(n_jobs, dtype=np.int8),
        map_end=np.full(n_jobs, math.nan),
        q_next=np.full(n_jobs, -1, dtype=np.int64),
        q_prev=np.full(n_jobs, -1, dtype=np.int64),
        free_m=np.array(sim.free[MAP], dtype=np.int64),
        free_r=np.array(sim.free[REDUCE], dtype=np.int64),
        et=np.empty(in_flight, dtype=np.float64),
        es=np.empty(in_flight, dtype=np.int64),
        eslot=np.empty(in_flight, dtype=np.int64),
        s_stage=np.zeros(in_flight, dtype=np.int8),
        dirty_mark=np.zeros(n_nodes, dtype=np.bool_),
        dirty=np.empty(n_nodes, dtype=np.int64),
        o_stage=np.zeros(len(common["o_job"]), dtype=np.int8),
    )


def _jobs_back(sim: Simulation, work: Any, state: Any, regs: np.ndarray, core: Any) -> None:
    """The jobs' outcomes and stages as the Python engine leaves them, the cluster's counts and the
    recorder's job ends (:func:`~mropt.sim.compiled.driver.stages_back`), and the nodes' free slots."""
    counts = ((work.j_off_m, state.m_pend, state.m_fin), (work.j_off_r, state.r_pend, state.r_fin))
    stages_back(sim, work.arrivals, state, regs, core, counts)
    sim.free[MAP][:] = state.free_m.tolist()
    sim.free[REDUCE][:] = state.free_r.tolist()


__all__ = ["NotCompilable", "run_compiled", "why_not"]
