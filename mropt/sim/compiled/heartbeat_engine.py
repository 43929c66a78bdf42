"""What the heartbeat-mode loops' engines share (:mod:`mropt.sim.compiled.fair_engine`,
:mod:`~mropt.sim.compiled.capacity_engine`): the shape of run both loops cover (:func:`shape_why_not`) and
the run itself from the loop's arrays (:func:`run_heartbeat`), leaving the simulation as its own ``run``
would (the jobs' stages: :func:`~mropt.sim.compiled.driver.stages_back`; the nodes' free slots and
resources, ``stalled``). Both loops keep their state under the same names for it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from mropt.sim.compiled.driver import (
    drive,
    jobs_why_not,
    move_rows,
    run_or_refuse,
    run_why_not,
    stages_back,
    stages_why_not,
)
from mropt.sim.policy import HEARTBEAT
from mropt.sim.spilled_rows import SpilledRows
from mropt.sim.state import MAP, REDUCE

if TYPE_CHECKING:
    from mropt.sim.engine import Simulation
    from mropt.sim.recorder import Recorder


def shape_why_not(sim: Simulation, reduces: bool = False) -> str | None:
    """Why ``sim``'s run is not of the shape the heartbeat loops cover (a short phrase), or None: heartbeat
    mode on a cluster of slots and two resources, jobs of one map stage of one task group with a demand
    (replicas all generated, or none), no speculation, faults, straggler draws, slow-start, decision trace
    or live utilisation rows, a simulation not run yet. ``reduces`` (the ``fair`` loop's): also clusters
    of no resources, whose tasks have no demands, and jobs with a reduce stage after the map stage
    (:func:`~mropt.sim.compiled.driver.stages_why_not`)."""
    if sim.mode != HEARTBEAT:
        return f"mode {sim.mode} (only heartbeat)"
    if not sim.uses_slots:
        return "a cluster without slots"
    n_resources = len(sim.resources)
    if n_resources != 2 and not (reduces and n_resources == 0):
        only = "two, or none" if reduces else "only two"
        return f"a cluster of {n_resources} resources ({only}: a task's demand of each)"
    reason = run_why_not(sim)
    if reason is not None:
        return reason
    if not sim.jobs or not sim.n_nodes or not sim.heartbeat_interval > 0:
        return "no jobs, no nodes or no heartbeat interval"
    return stages_why_not(sim.jobs, n_resources == 2) if reduces else jobs_why_not(sim.jobs)


def run_heartbeat(
    sim: Simulation,
    core: Any,
    why_not: Callable[[Simulation], str | None],
    arrays: Callable[[Simulation], tuple[Any, np.ndarray, np.ndarray, Any, Any]],
) -> Recorder:
    """Run ``sim`` by the loop ``core`` (its ``step`` and registers) on the arrays ``arrays(sim)`` makes
    (workload, float and int parameters, state, lists); :class:`NotCompilable` (and ``sim`` untouched)
    where ``why_not`` names a reason; then the jobs and the nodes' free capacity as the Python engine leaves
    them (module docstring). A run of jobs with a reduce stage writes no utilisation rows as it runs: they
    are built after it from its attempts and marks (``Recorder.keep_row_marks``)."""
    return run_or_refuse(sim, why_not, lambda: _run(sim, core, arrays))


def _run(
    sim: Simulation,
    core: Any,
    arrays: Callable[[Simulation], tuple[Any, np.ndarray, np.ndarray, Any, Any]],
) -> Recorder:
    """:func:`run_heartbeat`, its garbage collector paused."""
    work, params, flags, state, lists = arrays(sim)
    regs = np.zeros(core.N_REGISTERS, dtype=np.int64)
    regs[core.OPEN] = -1
    regs[core.N_FREE] = len(state.free_slots)
    regs[core.ROW_BUSY] = -1
    fregs = np.zeros(core.N_FLOAT_REGISTERS, dtype=np.float64)
    fregs[core.LAST] = -math.inf
    record = sim.record
    reduces = any(len(job.stages) > 1 for job in sim.jobs)
    rows = SpilledRows() if record.utilisation and not reduces else None
    args = (work, params, flags, state, lists, regs, fregs)
    drive(sim, core, args, state, regs, fregs, on_pause=lambda: move_rows(state, regs, core, rows))
    counts = ((work.j_off, state.pending, state.finished), (work.j_off_r, state.r_pending, state.r_finished))
    stages_back(sim, work.arrivals, state, regs, core, counts)
    sim.free[MAP][:] = state.fslot.tolist()
    sim.free[REDUCE][:] = state.rslot.tolist()
    if sim.resources:
        for node, free in enumerate(sim.free_resources):
            free[0], free[1] = float(state.free0[node]), float(state.free1[node])
    sim.stalled = bool(regs[core.STALLED])
    if rows is not None:
        record.keep_spilled_rows(rows)
    if sim._marks is not None:
        record.keep_row_marks(sim._marks)
    return record


__all__ = ["run_heartbeat", "shape_why_not"]
