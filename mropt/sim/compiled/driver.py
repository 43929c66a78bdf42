"""The driver of the compiled loops (:mod:`mropt.sim.compiled.drf_core`, :mod:`~mropt.sim.compiled.fair_core`,
:mod:`~mropt.sim.compiled.capacity_core`, :mod:`~mropt.sim.compiled.fifo_core`):
it calls a loop's ``step`` until the run ends and leaves what a run's readers read as the Python engine's
``run`` would. What every engine refuses (:func:`run_why_not`: speculation, faults, straggler draws or
slow-start, a trace, live rows, a run already made) and the refusal before a run (:func:`run_or_refuse`)
are written here once.

At each pause of the loop it moves the ended batches into the recorder's store (so a day's attempts are
never held twice), the row breaks into the utilisation marks and the loop's utilisation rows into their
file (``on_pause``: :func:`move_rows`), and lets the watch look (progress bar, time limit, Ctrl-C), as the
Python loop does every ``watch.every`` events (not where a loop's ``NO_LOOK`` register says the Python loop
would not look there: ``fair_core``'s). At the end: the attempts still running, recorded as killed at the run's time; the jobs' outcomes and states, ``active``, the
cluster's counts and free resources, the recorder's job ends (:func:`jobs_back`, for jobs of one map stage;
:func:`stages_back`, for jobs of a map stage and perhaps a reduce stage: ``fifo_engine``'s and
``heartbeat_engine``'s). A loop whose jobs have a reduce stage
keeps the stage of each ended batch (``o_stage``) and running one (``s_stage``), which are also its slot
type; the others keep none, and their attempts' stage and type are 0. A loop's module names
its registers as ``drf_core`` does (``AI``, ``NEXT_ATTEMPT``, ``EVENTS``, ``N_ENDED``, ``N_BREAKS``,
``N_JOB_END``, ``N_FREE``, ``STARTED``; ``NOW``, ``FIRST_TIME``) and its state's arrays likewise.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mropt.sim.compiled import numba_cache
from mropt.sim.policy import ACCEPT
from mropt.sim.recorder import Recorder
from mropt.sim.state import ACTIVE, DONE, FINISHED, MAP, REDUCE, RUNNING
from mropt.sim.watch import UNTIL

if TYPE_CHECKING:
    from mropt.sim.engine import Simulation
    from mropt.sim.spilled_rows import SpilledRows
    from mropt.sim.state import Job

#: ended batches the loop keeps before the driver moves them into the recorder's store
CHUNK = 1 << 18
#: row breaks the loop keeps before the driver moves them into the marks
BREAKS = 1 << 12
#: utilisation rows the loop keeps (plus a pool each) before the driver moves them to their file
ROWS = 1 << 16
_NEVER = 1 << 62


def run_why_not(sim: Simulation) -> str | None:
    """Why ``sim``'s options or state keep it from every compiled loop (a short phrase), or None: a
    speculation rule, node faults, straggler draws or a reduce slow-start, a decision trace, live
    utilisation rows, or a simulation already run."""
    if sim.speculation is not None:
        return "a speculation rule"
    if sim.workload.faults:
        return "node faults"
    if sim.timing.rate or sim.slowstart is not None:
        return "straggler draws or a reduce slow-start"
    if sim.policy.trace is not None:
        return "a decision trace"
    if sim.rows_live:
        return "live utilisation rows"
    if sim.events or sim.now or sim.next_attempt:
        return "a simulation already run"
    return None


def stages_why_not(jobs: Sequence[Job], demands: bool) -> str | None:
    """Why ``jobs`` are not of the shape of a loop that runs reduces (a short phrase), or None: each job a map
    stage and perhaps a reduce stage, each of one task group, every task with a demand (``demands``) or
    none without one; the map stages' replicas all generated (one array) or none, the reduce stages'
    none."""
    placed = None
    for j in jobs:
        types = [st.type for st in j.stages]
        if types not in ([MAP], [MAP, REDUCE]):
            return f"job {j.id!r}: stages other than a map stage and perhaps a reduce stage"
        for st in j.stages:
            if len(st.durations) != 1 or len(st.demands) != 1:
                return f"job {j.id!r}: a stage of several task groups"
            if (st.demands[0] is not None) != demands:
                return f"job {j.id!r}: a task " + ("without a demand" if demands else "with a demand")
        has = j.stages[0].replicas is not None
        if placed is None:
            placed = has
        if has != placed or (has and not isinstance(j.stages[0].replicas, np.ndarray)):
            return "replicas listed by the workload"
        if len(j.stages) > 1 and j.stages[1].replicas is not None:
            return f"job {j.id!r}: reduces with replicas"
    return None


def jobs_why_not(jobs: Sequence[Job]) -> str | None:
    """Why ``jobs`` are not of the shape every compiled loop runs (a short phrase), or None: each job one map
    stage of one task group with a demand, and the replicas of all generated (one array) or of none."""
    placed = None
    for j in jobs:
        if len(j.stages) != 1:
            return f"job {j.id!r} has several stages"
        st = j.stages[0]
        if st.type != MAP or len(st.durations) != 1 or len(st.demands) != 1 or st.demands[0] is None:
            return f"job {j.id!r}: a stage of several task groups, or a task without a demand"
        has = st.replicas is not None
        if placed is None:
            placed = has
        if has != placed or (has and not isinstance(st.replicas, np.ndarray)):
            return "replicas listed by the workload"
    return None


class NotCompilable(ValueError):
    """:func:`run_compiled` refused a simulation, before touching it; ``reason`` is :func:`why_not`'s."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"simulate: the compiled core cannot run this simulation: {reason}")
        self.reason = reason


def run_or_refuse(
    sim: Simulation, why_not: Callable[[Simulation], str | None], run: Callable[[], Recorder]
) -> Recorder:
    """``run()`` with Python's cyclic garbage collector paused (as ``Simulation.run`` pauses it: the set-up
    makes many objects and no cycles); :class:`NotCompilable`, ``sim`` untouched, where ``why_not(sim)``
    names a reason."""
    reason = why_not(sim)
    if reason is not None:
        raise NotCompilable(reason)
    enabled = gc.isenabled()
    gc.disable()
    try:
        return run()
    finally:
        if enabled:
            gc.enable()


def drive(
    sim: Simulation,
    core: Any,
    args: tuple[Any, ...],
    state: Any,
    regs: np.ndarray,
    fregs: np.ndarray,
    on_pause: Callable[[], None] | None = None,
) -> Recorder:
    """Run ``core.step(*args, until, stop_events)`` until the run ends (module docstring); ``args`` are the
    loop's workload, parameters, state (``state``), lists and registers (``regs``, ``fregs``); ``on_pause``
    empties a loop's own buffers at each pause."""
    record, marks, watch = sim.record, sim._marks, sim.watch
    until = math.inf if sim.until is None else float(sim.until)
    look_at = watch.every if watch is not None else _NEVER
    no_look = getattr(core, "NO_LOOK", None)  # (a loop's register: it paused where the Python loop does not look)
    if watch is not None:
        watch.begin(sim)
    try:
        while True:
            with numba_cache.first_call():
                status = core.step(*args, until, look_at)
            empty_buffers(sim, state, regs, core)
            if on_pause is not None:
                on_pause()
            sim.now, sim.events = float(fregs[core.NOW]), int(regs[core.EVENTS])
            sim.jobs_finished = int(regs[core.N_JOB_END])
            if status == core.UNTIL:
                sim.stopped = UNTIL
                break
            # (the Python loop looks after its last instant too; not before a lone heartbeat: ``NO_LOOK``)
            if watch is not None and sim.events >= look_at and not (no_look is not None and regs[no_look]):
                sim.stopped = watch.check(sim)
                if sim.stopped is not None:
                    break
                look_at = sim.events + watch.every
            if status == core.DONE:
                break
    finally:
        if watch is not None:
            watch.end(sim)
    sim.next_attempt = int(regs[core.NEXT_ATTEMPT])
    if marks is not None:  # (as ``Simulation._run`` ends: the first instant's time, the last break, the cut)
        if regs[core.STARTED]:
            marks.first = float(fregs[core.FIRST_TIME])
        marks.breaks.append((sim.now, sim.next_attempt, len(record.ended_attempts), 0))
        marks.cut = sim.now
    kill_running(sim, state, regs, core)
    return record


def member_ids(firsts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The attempt ids of batches' members, batch after batch: ``firsts[b]`` .. ``firsts[b] + counts[b] - 1``
    (a batch's members are consecutive launches: consecutive ids, the rows of ``a_task`` and ``a_node``)."""
    counts = counts.astype(np.int64)
    return np.repeat(firsts - (np.cumsum(counts) - counts), counts) + np.arange(int(counts.sum()))


def common_arrays(j_n: np.ndarray, n_tasks: int, n_nodes: int, n_pools: int, in_flight: int) -> dict[str, np.ndarray]:
    """The state arrays every loop keeps under the same names, at the run's start, by name: the tasks'
    states and the attempts' tasks and nodes; the jobs' pending, fresh and finished counts, first start,
    finish, order of ends and whether their stacks are built; the running batches' ``in_flight`` slots;
    the buffers the driver empties (ended batches, row breaks, utilisation rows) and each pool's row
    index, last touch and the pools touched at an instant (:mod:`mropt.sim.compiled.rows`)."""
    n_jobs = len(j_n)
    node_type = np.int16 if n_nodes < 2**15 else np.int32
    buffer = CHUNK + in_flight
    rows = ROWS + n_pools + 2  # (an instant's rows: the cluster's two and one a pool at most)

    def f(n: int, fill: float | None = None) -> np.ndarray:
        return np.empty(n, dtype=np.float64) if fill is None else np.full(n, fill, dtype=np.float64)

    def i(n: int, dtype: Any = np.int64, fill: int | None = None) -> np.ndarray:
        return np.empty(n, dtype=dtype) if fill is None else np.full(n, fill, dtype=dtype)

    return {
        # tasks and attempts (attempts in launch order: a task each)
        "state": np.zeros(n_tasks, dtype=np.int8),
        "a_task": i(n_tasks, np.int32),
        "a_node": i(n_tasks, node_type),
        # jobs
        "pending": j_n.copy(),
        "fresh": i(n_jobs, fill=0),
        "finished": i(n_jobs, fill=0),
        "first_start": f(n_jobs, math.nan),
        "finish": f(n_jobs, math.nan),
        "end_order": i(n_jobs, np.int32),
        "built": np.zeros(n_jobs, dtype=np.bool_),
        # the running batches' slots
        "s_job": i(in_flight, np.int32),
        "s_first": i(in_flight),
        "s_count": i(in_flight, np.int32),
        "s_start": f(in_flight),
        "s_end": f(in_flight),
        "s_level": i(in_flight, np.int8),
        "free_slots": np.arange(in_flight, dtype=np.int64)[::-1].copy(),
        # the buffers the driver empties: ended batches, row breaks
        "o_job": i(buffer, np.int32),
        "o_first": i(buffer),
        "o_count": i(buffer, np.int32),
        "o_start": f(buffer),
        "o_end": f(buffer),
        "o_level": i(buffer, np.int8),
        "bt": f(BREAKS),
        "ba": i(BREAKS),
        "be": i(BREAKS),
        # the utilisation rows: each pool's index in them, the instant that last touched it, the pools
        # touched at the instant; the rows' buffer (time, slot type, pool, busy, capacity)
        "p_row": i(n_pools, fill=-1),
        "p_touch": i(n_pools, fill=-1),
        "touched": i(n_pools),
        "rt": f(rows),
        "rk": i(rows, np.int8),
        "rp": i(rows, np.int32),
        "rb": i(rows, np.int32),
        "rc": i(rows, np.int32),
    }


def move_rows(state: Any, regs: np.ndarray, core: Any, rows: SpilledRows | None) -> None:
    """Move the loop's utilisation rows (:mod:`mropt.sim.compiled.rows`) to their file (None: the run
    keeps none, and they are dropped)."""
    n = int(regs[core.N_ROWS])
    if n and rows is not None:
        rows.add(state.rt[:n], state.rk[:n], state.rp[:n], state.rb[:n], state.rc[:n])
    regs[core.N_ROWS] = 0


def _stages(state: Any, name: str, n: int) -> np.ndarray:
    """The first ``n`` stages of the loop's buffer ``name``, or zeros for a loop whose jobs are one map
    stage (it keeps no such buffer). A loop that keeps one runs jobs of a map stage then perhaps a
    reduce stage, so a stage's index is its slot type (``MAP`` 0, ``REDUCE`` 1): the same column."""
    return getattr(state, name)[:n] if hasattr(state, name) else np.zeros(n, dtype=np.int8)


def empty_buffers(sim: Simulation, state: Any, regs: np.ndarray, core: Any) -> None:
    """Move the loop's ended batches into the recorder's store and its row breaks into the marks (a
    break's count of ended entries is the loop's, from its buffer's start: the store's count added)."""
    before = len(sim.record.ended_attempts)
    n = int(regs[core.N_ENDED])
    if n:
        counts = state.o_count[:n]
        firsts = state.o_first[:n]
        rows = member_ids(firsts, counts)
        zeros = np.zeros(n, dtype=np.int8)
        stages = _stages(state, "o_stage", n)
        columns = {
            "job": state.o_job[:n],
            "stage": stages,
            "type": stages,
            "id": firsts,
            "start": state.o_start[:n],
            "end": state.o_end[:n],
            "level": state.o_level[:n],
            "spec": zeros,
            "outcome": zeros,
            "count": counts,
        }
        sim.record.ended_attempts.add_columns(columns, state.a_task[rows], state.a_node[rows])
        regs[core.N_ENDED] = 0
    b = int(regs[core.N_BREAKS])
    if b:
        marks = sim._marks
        if marks is not None:
            ended = (state.be[:b] + before).tolist()
            marks.breaks.extend(zip(state.bt[:b].tolist(), state.ba[:b].tolist(), ended, [0] * b))
        regs[core.N_BREAKS] = 0


def kill_running(sim: Simulation, state: Any, regs: np.ndarray, core: Any) -> None:
    """The attempts still running when the run stopped, recorded as killed at its time, one entry each
    in attempt id order (``Recorder.finish``)."""
    slots = np.setdiff1d(np.arange(len(state.free_slots)), state.free_slots[: regs[core.N_FREE]])
    if not len(slots):
        return
    counts = state.s_count[slots].astype(np.int64)
    ids = member_ids(state.s_first[slots], counts)
    which = np.repeat(slots, counts)
    order = np.argsort(ids, kind="stable")
    ids, which = ids[order], which[order]
    n = len(ids)
    ones = np.ones(n, dtype=np.int64)
    zeros = np.zeros(n, dtype=np.int8)
    stages = state.s_stage[which] if hasattr(state, "s_stage") else zeros
    columns = {
        "job": state.s_job[which],
        "stage": stages,
        "type": stages,
        "id": ids,
        "start": state.s_start[which],
        "end": np.full(n, sim.now),
        "level": state.s_level[which],
        "spec": zeros,
        "outcome": np.ones(n, dtype=np.int8),  # (killed: recorder.OUTCOMES)
        "count": ones,
    }
    sim.record.ended_attempts.add_columns(columns, state.a_task[ids], state.a_node[ids])


def stages_back(
    sim: Simulation,
    arrivals: np.ndarray,
    state: Any,
    regs: np.ndarray,
    core: Any,
    counts: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...],
) -> None:
    """:func:`jobs_back` for jobs of a map stage and perhaps a reduce stage (``counts``: per stage index, the
    jobs' offsets of its tasks in ``state.state``, their pending and finished counts; ``state.map_end``
    and ``state.finish`` the times their map stage and they ended, NaN while not), the cluster's counts of
    both slot types, the recorder's job ends in order; the nodes' free capacity is the caller's."""
    busy, runnable, remaining = [0, 0], [0, 0], [0, 0]
    for j in arrivals[: int(regs[core.AI])].tolist():  # (the jobs that arrived, in arrival order)
        job = sim.jobs[j]
        job.reason = ACCEPT.reason
        if not math.isnan(state.first_start[j]):
            job.first_start = float(state.first_start[j])
        done = not math.isnan(state.finish[j])
        map_end = float(state.map_end[j])
        cur = len(job.stages) if done else 0 if math.isnan(map_end) else 1
        for k, st in enumerate(job.stages):
            off, pend, fin = counts[k]
            tasks = state.state[off[j] : off[j] + st.n]
            st.state[:] = tasks.tobytes()
            st.pending = int(pend[j])
            st.finished = int(fin[j])
            st.running = job.running[k] = int(np.count_nonzero(tasks == RUNNING))
            assert st.finished == int(np.count_nonzero(tasks == DONE))
            job.runnable[k] = st.pending if cur == k else 0
            job.remaining[k] = st.n - st.finished
        if not math.isnan(map_end):
            job.map_end = job.stages[0].end_time = map_end
            job.stages[0].drop_locality()
        if done:
            job.status = FINISHED
            job.finish = job.stages[-1].end_time = float(state.finish[j])
            job.stages[-1].drop_locality()
            job.cur = cur
        else:
            job.cur = cur
            job.status = ACTIVE
            sim.active[j] = job
            for k in (MAP, REDUCE):
                busy[k] += job.running[k]
                runnable[k] += job.runnable[k]
                remaining[k] += job.remaining[k]
    sim.busy[:], sim.runnable[:], sim.remaining[:] = busy, runnable, remaining
    jobs = sim.jobs
    for j in state.end_order[: regs[core.N_JOB_END]].tolist():
        sim.record.job_ended(jobs[j])


def jobs_back(sim: Simulation, arrivals: np.ndarray, state: Any, regs: np.ndarray, core: Any) -> None:
    """The jobs' outcomes and states as the Python engine leaves them (status, times, counts, tasks'
    states; ``active`` in arrival order), the cluster's counts and free resources, and the recorder's
    job ends in order."""
    offsets = np.concatenate(([0], np.cumsum([job.stages[0].n for job in sim.jobs])))
    busy = runnable = remaining = 0
    for j in arrivals[: int(regs[core.AI])].tolist():  # (the jobs that arrived, in arrival order)
        job = sim.jobs[j]
        st = job.stages[0]
        n = st.n
        job.reason = ACCEPT.reason
        if not math.isnan(state.first_start[j]):
            job.first_start = float(state.first_start[j])
        tasks = state.state[offsets[j] : offsets[j] + n]
        done = int(np.count_nonzero(tasks == DONE))
        running = int(np.count_nonzero(tasks == RUNNING))
        st.state[:] = tasks.tobytes()
        st.pending = int(state.pending[j])
        st.finished = done
        st.running = job.running[MAP] = running
        job.runnable[MAP] = st.pending
        job.remaining[MAP] = n - done
        if not math.isnan(state.finish[j]):
            job.status = FINISHED
            job.finish = job.map_end = st.end_time = float(state.finish[j])
            job.cur = 1
            st.drop_locality()
        else:
            job.status = ACTIVE
            sim.active[j] = job
            busy += running
            runnable += st.pending
            remaining += n - done
    sim.busy[MAP], sim.runnable[MAP], sim.remaining[MAP] = busy, runnable, remaining
    for node, free in enumerate(sim.free_resources):
        free[0], free[1] = float(state.free0[node]), float(state.free1[node])
    for j in state.end_order[: regs[core.N_JOB_END]].tolist():
        sim.record.job_ended(sim.jobs[j])


__all__ = [
    "BREAKS",
    "CHUNK",
    "common_arrays",
    "ROWS",
    "NotCompilable",
    "drive",
    "jobs_why_not",
    "empty_buffers",
    "jobs_back",
    "kill_running",
    "stages_back",
    "stages_why_not",
    "member_ids",
    "move_rows",
    "run_or_refuse",
    "run_why_not",
]
