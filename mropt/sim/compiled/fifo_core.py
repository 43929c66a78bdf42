"""``fifo`` in event mode as one compiled loop (numba): the plain rule of :mod:`mropt.sim.policies.fifo`
(Hadoop 1.0.3 ``JobQueueTaskScheduler.assignTasks``) and of the engine, over arrays (issue 32).

What it runs, and nothing else (:func:`mropt.sim.compiled.fifo_engine.why_not` checks a run qualifies;
``simulate``'s ``auto`` runs the Python engine otherwise, ``compiled`` refuses: :mod:`mropt.sim.engines`):
``fifo`` without a decision trace, event mode, a cluster of map and reduce slots, jobs of a map stage and
optionally a reduce stage, each of one task group without demands, no replicas, no speculation, no node
faults, no straggler draws, no reduce slow-start, no live utilisation rows. The rules are those of the
Python engine and policy, step for step:

* **the event order** (:mod:`mropt.sim.engine`): an instant runs the completions due at its time (in
  the order they were scheduled), then the arrivals (in (submit, index) order), then the pass of
  :class:`mropt.sim.offers.EventOffers` (``_pass``; ``_pass_runs`` is the same pass in bulk): every
  node in order after new work (an arrival, a reduce stage made runnable), else the nodes whose slots
  freed, in order; the pass stops once no task is pending and skips a node without a free slot of a
  type with pending tasks. A completion the pass schedules at the instant's own time makes a new
  instant at that time;
* **the queue** (``Fifo.on_arrival``, ``on_job_end``): the active jobs in (-priority, submit, index)
  order, kept here as a list linked in that order (:data:`Work` ``j_rank``);
* **the offer of a node** (``Fifo.assign``): its maps, up to ``ceil(remaining maps x slots / cluster
  map slots)`` (capped at its slots: ``_tracker_capacity``) less its running maps, taken from the
  queue's first jobs with pending maps in order (each ``launch_tasks`` call as many as the job has;
  tasks without replicas are never off-switch, so nothing stops the node's maps early), then one
  reduce from the first job with a pending reduce when ``ceil((pending + running reduces) x slots /
  cluster reduce slots)`` exceeds its running reduces;
* **the task** (``Stage.take`` without replicas): the stage's next task (no task is ever re-queued
  here), at locality ``NONE``, its running time the stage's duration over the node's speed
  (``AttemptTime.of``);
* **batches** (:mod:`mropt.sim.attempts`, ``LaunchRuns.segment``): a launch joins the batch opened
  last when its job, stage, start and running time are the same; a batch ends in one completion
  (``Completions._done_batch``): its slots free, its stage's finished count grows, and a stage that
  ends opens the job's reduce stage (new work) or ends the job (``_stage_done``).

:func:`step` runs instants until the run ends, the next instant is past ``until``, the event count
reaches ``stop_events`` (a look of the watch) or the buffers of ended batches or of row breaks are
nearly full; the driver (:mod:`mropt.sim.compiled.driver`) empties them and calls it again. The state
lives in the arrays it is given, so a run is resumed where it paused.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from mropt.sim.compiled.drf_index import ev_pop, ev_push

_RUNNING, _DONE = 1, 2  # mropt.sim.task_states
_NONE = -1  # mropt.sim.state.NONE: a task without replicas
#: the workload, as arrays (read only): per job (in the workload's order) and per node
Work = namedtuple(
    "Work",
    "arrivals submit j_rank j_nm j_nr j_off_m j_off_r j_dm j_dr node_speed slots_m slots_r",
)
#: the run's state, as arrays (changed in place): tasks, attempts, jobs, the queue, nodes, the event heap,
#: the running batches' slots, the nodes freed at the instant, the buffers the driver empties
State = namedtuple(
    "State",
    "state a_task a_node pending fresh finished first_start finish end_order built"
    " m_pend r_pend m_fin r_fin cur map_end q_next q_prev free_m free_r et es eslot"
    " s_job s_first s_count s_start s_end s_level s_stage free_slots dirty_mark dirty"
    " o_job o_first o_count o_start o_end o_level o_stage bt ba be"
    " p_row p_touch touched rt rk rp rb rc",
)
#: what :func:`step` returns
DONE, PAUSED, UNTIL = 0, 1, 2
#: the int64 registers (``R``): the arrivals taken, the event heap's size, the next attempt id, the open
#: batch's slot (-1: none), events, the ended batches and row breaks buffered, jobs ended, free batch
#: slots, the completions' order, whether an instant ran; the cluster's pending, running and remaining
#: tasks of each type; the queue's first and last jobs; the utilisation rows buffered (none: built after)
AI, N_EV, NEXT_ATTEMPT, OPEN, EVENTS, N_ENDED, N_BREAKS, N_JOB_END, N_FREE, SEQ, STARTED = range(11)
RUN_M, RUN_R, BUSY_M, BUSY_R, REM_M, REM_R, HEAD, TAIL, N_ROWS = range(11, 20)
N_REGISTERS = 20
#: the float64 registers (``F``): the last instant's time, the first's, the open batch's running time, now
LAST, FIRST_TIME, OPEN_WORK, NOW = range(4)
N_FLOAT_REGISTERS = 4


@njit(cache=True)
def step(W, Q, S, R, F, until, stop_events):
    """Run instants from the state (module docstring); DONE, PAUSED or UNTIL. (The arrays are taken out
    of the tuples once, here: an array taken out of a tuple costs two reference-count steps.)"""
    arrivals, submit, j_rank, j_nm, j_nr = W.arrivals, W.submit, W.j_rank, W.j_nm, W.j_nr
    j_off_m, j_off_r, j_dm, j_dr = W.j_off_m, W.j_off_r, W.j_dm, W.j_dr
    node_speed, slots_m, slots_r = W.node_speed, W.slots_m, W.slots_r
    state, a_task, a_node, first_start, finish, end_order = (
        S.state,
        S.a_task,
        S.a_node,
        S.first_start,
        S.finish,
        S.end_order,
    )
    m_pend, r_pend, m_fin, r_fin, cur, map_end = S.m_pend, S.r_pend, S.m_fin, S.r_fin, S.cur, S.map_end
    q_next, q_prev, free_m, free_r = S.q_next, S.q_prev, S.free_m, S.free_r
    et, es, eslot = S.et, S.es, S.eslot
    s_job, s_first, s_count, s_start, s_end = S.s_job, S.s_first, S.s_count, S.s_start, S.s_end
    s_level, s_stage, free_slots, dirty_mark, dirty = S.s_level, S.s_stage, S.free_slots, S.dirty_mark, S.dirty
    o_job, o_first, o_count, o_start, o_end = S.o_job, S.o_first, S.o_count, S.o_start, S.o_end
    o_level, o_stage, bt, ba, be = S.o_level, S.o_stage, S.bt, S.ba, S.be
    total_m, total_r, batching = Q[0], Q[1], Q[2] != 0
    n_jobs = len(j_nm)
    n_nodes = len(slots_m)
    in_flight = len(et)  # the most batches that can run at once (the slots' number)
    every_node = np.arange(n_nodes)
    while R[AI] < n_jobs or R[N_EV] > 0:
        # a pause at the end of an instant: a look of the watch, or buffers to empty
        if R[EVENTS] >= stop_events or R[N_ENDED] + in_flight > len(o_job) or R[N_BREAKS] == len(bt):
            return PAUSED
        now = et[0] if R[N_EV] > 0 else np.inf
        if R[AI] < n_jobs and submit[arrivals[R[AI]]] < now:
            now = submit[arrivals[R[AI]]]
        if now > until:
            F[NOW] = until
            return UNTIL
        if R[STARTED] == 0:
            R[STARTED] = 1
            F[FIRST_TIME] = now
        if now == F[LAST]:  # the instant before wrote its rows at this time: a break
            b = R[N_BREAKS]
            bt[b], ba[b], be[b] = now, R[NEXT_ATTEMPT], R[N_ENDED]
            R[N_BREAKS] = b + 1
        F[LAST] = F[NOW] = now
        new_work = False
        n_dirty = 0
        # -- completions (class 0), in the order they were scheduled (``Completions._done_batch``)
        while R[N_EV] > 0 and et[0] == now:
            slot = eslot[0]
            R[N_EV] = ev_pop(et, es, eslot, R[N_EV])
            R[EVENTS] += 1
            if slot == R[OPEN]:  # a task of no time, ending at its start
                R[OPEN] = -1
            j = s_job[slot]
            st = s_stage[slot]
            off = j_off_m[j] if st == 0 else j_off_r[j]
            free = free_m if st == 0 else free_r
            k = s_count[slot]
            first = s_first[slot]
            for m in range(k):
                node = a_node[first + m]
                state[off + a_task[first + m]] = _DONE
                free[node] += 1
                if not dirty_mark[node]:
                    dirty_mark[node] = True
                    dirty[n_dirty] = node
                    n_dirty += 1
            e = R[N_ENDED]
            o_job[e], o_first[e], o_count[e], o_stage[e] = j, first, k, st
            o_start[e], o_end[e], o_level[e] = s_start[slot], s_end[slot], s_level[slot]
            R[N_ENDED] = e + 1
            free_slots[R[N_FREE]] = slot
            R[N_FREE] += 1
            ended = False
            if st == 0:
                R[BUSY_M] -= k
                R[REM_M] -= k
                m_fin[j] += k
                if m_fin[j] == j_nm[j]:  # the map stage ends (``_stage_done``)
                    map_end[j] = now
                    if j_nr[j] > 0:  # its reduces become runnable (``_stage_ready``): new work
                        cur[j] = 1
                        R[RUN_R] += j_nr[j]
                        new_work = True
                    else:
                        ended = True
            else:
                R[BUSY_R] -= k
                R[REM_R] -= k
                r_fin[j] += k
                ended = r_fin[j] == j_nr[j]
            if ended:  # the job ends: out of the queue (``Fifo.on_job_end``)
                cur[j] = 2
                finish[j] = now
                end_order[R[N_JOB_END]] = j
                R[N_JOB_END] += 1
                p, nx = q_prev[j], q_next[j]
                if p >= 0:
                    q_next[p] = nx
                else:
                    R[HEAD] = nx
                if nx >= 0:
                    q_prev[nx] = p
                else:
                    R[TAIL] = p
        # -- arrivals (class 2): into the queue in rank order (``Fifo.on_arrival``), its maps runnable
        while R[AI] < n_jobs and submit[arrivals[R[AI]]] == now:
            j = arrivals[R[AI]]
            R[AI] += 1
            R[EVENTS] += 1
            p = R[TAIL]
            while p >= 0 and j_rank[p] > j_rank[j]:
                p = q_prev[p]
            nx = q_next[p] if p >= 0 else R[HEAD]
            q_prev[j], q_next[j] = p, nx
            if p >= 0:
                q_next[p] = j
            else:
                R[HEAD] = j
            if nx >= 0:
                q_prev[nx] = j
            else:
                R[TAIL] = j
            R[REM_M] += j_nm[j]
            R[REM_R] += j_nr[j]
            R[RUN_M] += j_nm[j]
            new_work = True
        # -- the pass
        if new_work:
            nodes = every_node
            n_pass = n_nodes
        else:
            nodes = dirty
            dirty[:n_dirty].sort()
            n_pass = n_dirty
        for i in range(n_dirty):
            dirty_mark[dirty[i]] = False
        mj = R[HEAD]  # the first job of the queue with pending maps (only moves on within a pass)
        rj = R[HEAD]  # the first with pending reduces
        for i in range(n_pass):
            if R[RUN_M] + R[RUN_R] == 0:
                break
            node = nodes[i]
            # ``Fifo.assign(node)``: its maps
            if R[RUN_M] > 0 and free_m[node] > 0:
                sm = slots_m[node]
                capacity = min((R[REM_M] * sm + total_m - 1) // total_m, sm)
                available = capacity - (sm - free_m[node])
                while available > 0:
                    while mj >= 0 and (cur[mj] != 0 or m_pend[mj] == 0):
                        mj = q_next[mj]
                    if mj < 0:
                        break
                    take = min(available, m_pend[mj])
                    _launch(
                        mj, 0, node, take, now, j_nm, j_off_m, j_dm, node_speed, m_pend, free_m, state, a_task,
                        a_node, first_start, s_job, s_first, s_count, s_start, s_end, s_level, s_stage, free_slots,
                        et, es, eslot, R, F, batching,
                    )  # fmt: skip
                    R[RUN_M] -= take
                    R[BUSY_M] += take
                    available -= take
            # its reduce: one at most
            if R[RUN_R] > 0 and free_r[node] > 0:
                sr = slots_r[node]
                capacity = min(((R[RUN_R] + R[BUSY_R]) * sr + total_r - 1) // total_r, sr)
                if capacity - (sr - free_r[node]) > 0:
                    while rj >= 0 and (cur[rj] != 1 or r_pend[rj] == 0):
                        rj = q_next[rj]
                    if rj >= 0:
                        _launch(
                            rj, 1, node, 1, now, j_nr, j_off_r, j_dr, node_speed, r_pend, free_r, state, a_task,
                            a_node, first_start, s_job, s_first, s_count, s_start, s_end, s_level, s_stage,
                            free_slots, et, es, eslot, R, F, batching,
                        )  # fmt: skip
                        R[RUN_R] -= 1
                        R[BUSY_R] += 1
    return DONE


@njit(cache=True, inline="always")
def _launch(
    j, st, node, count, now, j_n, j_off, j_dur, node_speed, pend, free, state, a_task, a_node, first_start,
    s_job, s_first, s_count, s_start, s_end, s_level, s_stage, free_slots, et, es, eslot, R, F, batching,
):  # fmt: skip
    """``count`` tasks of stage ``st`` of job ``j`` on ``node`` (``Launches.launch_tasks``, or a segment of
    ``LaunchRuns``): the stage's next tasks, each joining the open batch when its job, stage, start and
    running time are the same (the first may open one: its completion scheduled)."""
    work = j_dur[j] / node_speed[node]
    off = j_off[j]
    for _ in range(count):
        task = j_n[j] - pend[j]
        pend[j] -= 1
        state[off + task] = _RUNNING
        aid = R[NEXT_ATTEMPT]
        R[NEXT_ATTEMPT] = aid + 1
        a_task[aid] = task
        a_node[aid] = node
        b = R[OPEN]
        if b >= 0 and F[OPEN_WORK] == work and s_start[b] == now and s_job[b] == j and s_stage[b] == st:
            s_count[b] += 1  # (it joins the open batch)
        else:
            R[N_FREE] -= 1
            b = free_slots[R[N_FREE]]
            s_job[b], s_first[b], s_count[b], s_stage[b] = j, aid, 1, st
            s_start[b], s_end[b], s_level[b] = now, now + work, _NONE
            R[N_EV] = ev_push(et, es, eslot, R[N_EV], now + work, R[SEQ], b)
            R[SEQ] += 1
            R[OPEN] = b if batching else -1
            F[OPEN_WORK] = work
    free[node] -= count
    if np.isnan(first_start[j]):
        first_start[j] = now
