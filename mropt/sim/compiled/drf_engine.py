"""A :class:`~mropt.sim.engine.Simulation` of ``drf`` run by the compiled loop (:mod:`mropt.sim.compiled.drf_core`).

:func:`why_not` says why a built simulation cannot run compiled (None: it can);
:func:`run_compiled` runs it and leaves the simulation as its own ``run`` would: the recorder's
attempts and job ends, the jobs' outcomes, the event count, the clock and the utilisation rows'
marks. The policy object is not updated (its shares and heap stay as at the start): nothing
after a run reads them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mropt.fairness.drf import tie_key
from mropt.sim.policy import ACCEPT, EVENT
from mropt.sim.recorder import Recorder
from mropt.sim.state import DONE, FINISHED, MAP

if TYPE_CHECKING:
    from mropt.sim.engine import Simulation


def why_not(sim: Simulation) -> str | None:
    """Why ``sim`` cannot run compiled (a short phrase), or None."""
    from mropt.sim.policies.drf import Drf

    policy = sim.policy
    if type(policy) is not Drf:
        return "policy is not drf"
    if sim.mode != EVENT:
        return "mode is not event"
    if sim.uses_slots or len(sim.resources) != 2:
        return "cluster is not of two resources without slots"
    if sim.speculation is not None or sim.workload.faults or sim.until is not None or sim.watch is not None:
        return "speculation, faults, until or a watch"
    if sim.timing.rate or sim.slowstart is not None:
        return "stragglers or reduce slow-start"
    if policy.trace is not None or policy.tie_break != "largest-demand" or sim.rows_live:
        return "a trace, another tie break, or live utilisation rows"
    if sim.events or sim.now:
        return "already run"
    placed = None
    for j in sim.jobs:
        if len(j.stages) != 1:
            return "a job of several stages"
        st = j.stages[0]
        if st.type != MAP or len(st.durations) != 1 or len(st.demands) != 1 or st.demands[0] is None or st.n < 1:
            return "a stage of several durations or demands"
        has = st.replicas is not None
        if placed is None:
            placed = has
        if has != placed or (has and not isinstance(st.replicas, np.ndarray)):
            return "replicas listed by the workload"
    totals = [sum(free[k] for free in sim.free_resources) for k in range(2)]
    if not all(t > 0 for t in totals):
        return "a resource of total 0"
    return None


def _classes(d0: np.ndarray, d1: np.ndarray) -> tuple[np.ndarray, ...]:
    """The jobs' demand classes (distinct (demand 0, demand 1), sorted) and their groups (one per
    demand 0): each job's class, each class's group and demand 1, each group's demand 0 and first class."""
    pairs, j_class = np.unique(np.stack((d0, d1), axis=1), axis=0, return_inverse=True)
    g_d0, c_group = np.unique(pairs[:, 0], return_inverse=True)
    g_first = np.searchsorted(c_group, np.arange(len(g_d0) + 1)).astype(np.int32)
    return (
        j_class.reshape(-1).astype(np.int32),
        c_group.astype(np.int32),
        np.ascontiguousarray(pairs[:, 1]),
        g_d0.astype(np.float64),
        g_first,
    )


def run_compiled(sim: Simulation) -> Recorder:
    """Run ``sim`` (for which :func:`why_not` is None) by the compiled loop."""
    from mropt.sim.compiled.drf_core import run_drf

    reason = why_not(sim)
    if reason is not None:
        raise ValueError(f"simulate: the compiled drf cannot run this simulation: {reason}")
    jobs = sim.jobs
    n_jobs = len(jobs)
    totals = [sum(free[k] for free in sim.free_resources) for k in range(2)]
    arrivals = np.array(sorted(range(n_jobs), key=lambda j: (jobs[j].submit, j)), dtype=np.int32)
    users: dict[str, int] = {}
    j_user = np.zeros(n_jobs, dtype=np.int32)
    for j in arrivals.tolist():
        j_user[j] = users.setdefault(jobs[j].user, len(users))
    stages = [j.stages[0] for j in jobs]
    j_n = np.array([st.n for st in stages], dtype=np.int32)
    j_off = np.zeros(n_jobs, dtype=np.int64)
    np.cumsum(j_n[:-1], out=j_off[1:])
    j_dur = np.array([st.durations[0] for st in stages], dtype=np.float64)
    demands = [st.demands[0] for st in stages]
    j_d0 = np.array([d[0] for d in demands], dtype=np.float64)
    j_d1 = np.array([d[1] for d in demands], dtype=np.float64)
    tie_of: dict[tuple[float, ...], float] = {}
    for d in demands:
        if d not in tie_of:
            tie_of[d] = tie_key(max(d[0] / totals[0], d[1] / totals[1]), "largest-demand")
    j_tie = np.array([tie_of[d] for d in demands], dtype=np.float64)
    placed = stages[0].replicas is not None if stages else False
    if placed:
        replicas = np.concatenate([st.replicas for st in stages])  # type: ignore[misc]
    else:
        replicas = np.zeros((0, 0), dtype=np.int16)
    low = [min(d[k] for d in demands) for k in range(2)] if demands else [0.0, 0.0]
    node_rack = np.asarray(sim.node_rack, dtype=np.int32)
    factors = sim.timing.factors
    free0 = np.array([f[0] for f in sim.free_resources], dtype=np.float64)
    free1 = np.array([f[1] for f in sim.free_resources], dtype=np.float64)
    out = run_drf(
        arrivals,
        np.array([j.submit for j in jobs], dtype=np.float64),
        j_user,
        j_n,
        j_off,
        j_dur,
        j_d0,
        j_d1,
        j_tie,
        replicas,
        placed,
        node_rack,
        np.asarray(sim.node_speed, dtype=np.float64),
        free0,
        free1,
        float(totals[0]),
        float(totals[1]),
        float(low[0]),
        float(low[1]),
        float(factors[1]),
        float(factors[2]),
        len(users),
        int(node_rack.max()) + 1 if len(node_rack) else 0,
        tie_key(0.0, "largest-demand"),
        bool(sim.batches.on),
        *_classes(j_d0, j_d1),
    )
    (a_task, a_node, b_job, b_first, b_count, b_start, b_end, b_level, ended, first_start, finish, end_order) = out[:12]
    events, breaks_t, breaks_a, breaks_e, first_time, last = out[12:18]
    sim.compiled_counts = out[18:]  # type: ignore[attr-defined]
    del replicas
    # the attempts that ended, in order: one entry per batch
    counts = b_count[ended]
    firsts = b_first[ended]
    entry_rows = np.repeat(firsts - (np.cumsum(counts) - counts), counts) + np.arange(int(counts.sum()), dtype=np.int64)
    zeros = np.zeros(len(ended), dtype=np.int8)
    record = sim.record
    record.ended_attempts.add_columns(
        {
            "job": b_job[ended],
            "stage": zeros,
            "type": zeros,
            "id": firsts,
            "start": b_start[ended],
            "end": b_end[ended],
            "level": b_level[ended],
            "spec": zeros,
            "outcome": zeros,
            "count": counts,
        },
        a_task[entry_rows],
        a_node[entry_rows],
    )
    del entry_rows
    # the jobs
    for j, job in enumerate(jobs):
        job.status = FINISHED if not np.isnan(finish[j]) else job.status
        job.reason = ACCEPT.reason
        if not np.isnan(first_start[j]):
            job.first_start = float(first_start[j])
        if not np.isnan(finish[j]):
            t = float(finish[j])
            st = job.stages[0]
            job.finish = job.map_end = st.end_time = t
            job.cur = 1
            st.finished = st.n
            st.pending = 0
            st.state[:] = bytes([DONE]) * st.n
            job.remaining = [0, 0]
    for j in end_order.tolist():
        record.job_ended(jobs[j])
    sim.jobs_finished = len(end_order)
    sim.active = {j.index: j for j in jobs if j.status != FINISHED}
    sim.events = int(events)
    sim.next_attempt = len(a_task)
    if not np.isnan(first_time):
        sim.now = float(last)
    marks = sim._marks
    if marks is not None:
        if not np.isnan(first_time):
            marks.first = float(first_time)
        marks.breaks.extend(zip(breaks_t.tolist(), breaks_a.tolist(), breaks_e.tolist(), [0] * len(breaks_t)))
        marks.breaks.append((sim.now, sim.next_attempt, len(record.ended_attempts), 0))  # the loop's last
        marks.cut = sim.now
    record.finish()
    if marks is not None:
        record.keep_row_marks(marks)
    return record


__all__ = ["run_compiled", "why_not"]
