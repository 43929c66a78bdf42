"""``capacity`` in heartbeat mode as one compiled loop (numba): the plain rule of
:mod:`mropt.sim.policies.capacity` (``CapacityReference._assign_reference``), of
:mod:`mropt.sim.heartbeat_offers` and of the engine, over arrays (issue 32).

What it runs, and nothing else (:func:`mropt.sim.compiled.capacity_engine.why_not`): ``capacity`` without
listed queues (one queue ``default`` at 100 %, every job in it: its user limit never holds a job back,
as ``_limit`` shows: a tracker with a free slot leaves the queue below its capacity, the whole cluster),
heartbeat mode on a cluster of map and reduce slots and two resources, every task with a demand, or of
slots alone, no task with a demand (then ``free0``, ``free1`` and the demands are 0 and the room test
counts slots), jobs of a map stage and perhaps a reduce stage, each of one duration and one demand (the map
stages' replicas generated, or none; the reduces' none); no speculation, faults, straggler draws,
slow-start or live utilisation rows. The shapes of an ``mropt import-alibaba --workload --slots`` day and
of the SWIM Facebook 2009 day. The reduce side is :mod:`mropt.sim.compiled.capacity_reduce`'s, inlined
here. Step for step:

* **the event order** and **a node's heartbeat** (``HeartbeatOffers``: ``_room``, ``_next_beat``,
  ``beat``, ``stall_limit``), as :mod:`mropt.sim.compiled.fair_core` runs them: completions, arrivals,
  heartbeats of an instant, one heap of completions and heartbeats, ``_schedule_all`` after new work (an
  arrival, or a map stage's end that opens the job's reduces: ``Completions._stage_done``); the room
  test over both slot types (:func:`~mropt.sim.compiled.heartbeats.room_two`), and without demands the
  lone heartbeats' rule (:mod:`mropt.sim.lone_beats`, :func:`~mropt.sim.compiled.heartbeats.lone_next`:
  no look at the watch before one, ``NO_LOOK``; one without room leaves the clock where it was);
* **the heartbeat** (``_assign_reference``): while the tracker has a free map slot, a walk of the
  queue's map candidates (active jobs with pending maps) in the order (submit time, job), their
  **rank**: each job the walk passes gets a scheduling opportunity (``missed``); a node- or rack-local
  map (or one without replicas, ``Stage.take_far``) launches and resets the job's count, else an
  off-switch map launches when the job missed more than min(unfinished maps, trackers) x
  ``_locality_wait_factor``; the first job that launches ends the walk, and after an off-switch map (or
  a walk that launched nothing) the heartbeat ends (``maximum-tasks-after-offswitch`` 0);
* **the walk in bulk** (``Capacity._walk_fitting``, :mod:`mropt.sim.compiled.capacity_order`): a job whose
  demand does not fit the tracker's free resources fails its launches before a task is looked for
  (``Capacity.fits``); its missed opportunity is all that happens to it, counted in bulk by the passes
  at its rank (``PassCounts``: a job's count is ``missed`` plus the passes at its rank since ``base``).
  The walk visits only the fitting candidates, in rank order; a job whose local launch failed on this
  heartbeat fails again (only launches happen until it ends), so it goes straight to its off-switch test;
* **the launch** (``Launches.launch_tasks``, ``Stage.take``): the lowest pending task with a replica on
  the node, else in its rack, else (off-switch) the lowest pending task; batches join as in
  :mod:`mropt.sim.compiled.drf_core`. ``_launched``: a job with no pending map leaves the candidates;
* **the reduce** (``addReduceTask``, after the maps, whatever ended their walks): where the tracker has a
  free reduce slot, the first job in rank order with a pending reduce whose demand fits launches its
  stage's lowest pending reduce (:func:`~mropt.sim.compiled.capacity_reduce.assign_reduce`);
* **the utilisation rows** of each instant (``Recorder.flush``; :mod:`mropt.sim.compiled.rows`); a run
  with reduces writes none: its rows are built after the run from its attempts and row breaks.

:func:`step` runs instants until the run ends, the next instant is past ``until``, the event count
reaches ``stop_events`` or the buffers are nearly full (:mod:`mropt.sim.compiled.driver` empties them and
calls it again); the state lives in the arrays it is given.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from mropt.sim.compiled.capacity_order import (
    NOT_A_RANK,
    alive_at,
    group_least,
    leaf_set,
    pass_below,
    passes_at,
    wait_factor,
)
from mropt.sim.compiled.capacity_reduce import assign_reduce, open_reduces
from mropt.sim.compiled.drf_index import build_stacks, ev_pop, ev_push, pop_place
from mropt.sim.compiled.fair_order import fit_set
from mropt.sim.compiled.heartbeats import lone_next, next_beat, room_two
from mropt.sim.compiled.rows import emit, touch

_FIT_EPS = 1e-9  # mropt.sim.capacity.FIT_EPS and mropt.sim.demand_index._EPS
_PENDING, _RUNNING, _DONE = 0, 1, 2  # mropt.sim.task_states
_NODE, _RACK, _ANY, _NONE = 0, 1, 2, -1  # mropt.sim.state
#: a heartbeat's sequence number in the event heap is its push order plus this (fair_core's)
HEARTBEAT_SEQ = 1 << 60
#: the workload, as arrays (read only); ``arrivals`` is also the jobs by rank
Work = namedtuple(
    "Work",
    "arrivals rank submit j_n j_off j_dur j_d0 j_d1 j_class j_pool cl_off c_d0 c_d1 c_group g_first g_d0 g_off g_size"
    " replicas node_rack node_speed node_slots phase j_nr j_off_r j_dur_r j_d0r j_d1r j_class_r",
)
#: the run's state, as arrays (changed in place)
State = namedtuple(
    "State",
    "state a_task a_node pending fresh finished first_start finish end_order built"
    " missed base lwf j_fail j_pos tree pc mark"
    " cl_n cl_head cl_live nxt cl_rank mt gb wt fit"
    " free0 free1 fslot beating et es eslot"
    " s_job s_first s_count s_start s_end s_level free_slots"
    " o_job o_first o_count o_start o_end o_level bt ba be p_running p_row p_touch touched rt rk rp rb rc"
    " map_end r_pending r_fresh r_finished c_pending_r fit_r rq0 rq1 rslot s_stage o_stage",
)
#: per job its locality stacks (a numba typed list), built at its first launch, dropped at its end
Lists = namedtuple("Lists", "stacks")
DONE, PAUSED, UNTIL = 0, 1, 2
#: the int64 registers (``R``); the names the driver reads are those of drf_core
AI, N_EV, NEXT_ATTEMPT, OPEN, EVENTS, RUNNABLE, N_ENDED, N_BREAKS, N_JOB_END, N_FREE, SEQ, STARTED = range(12)
BUSY, HEARTBEAT, IDLE_BEATS, STALLED = range(12, 16)
#: the rows in their buffer, the busy maps of the last cluster row (-1: none yet), the pools given a row
#: index, the pools touched at the instant, the instant's stamp (fair_core's)
N_ROWS, ROW_BUSY, N_INDEXED, N_TOUCHED, INSTANT = range(16, 21)
#: the reduce side's: runnable reduces, running reduces
RUNNABLE_R, BUSY_R = range(21, 23)
#: the loop paused before an instant the Python engine runs as a lone heartbeat: the driver does not look
#: at the watch there (:func:`~mropt.sim.compiled.heartbeats.lone_next`; fair_core's)
NO_LOOK = 23
N_REGISTERS = 24
#: the float64 registers (``F``)
LAST, FIRST_TIME, OPEN_WORK, NOW = range(4)
N_FLOAT_REGISTERS = 4


@njit(cache=True)
def step(W, P, Q, S, L, R, F, until, stop_events):
    """Run instants from the state (module docstring); DONE, PAUSED or UNTIL. (The heartbeat is inline,
    not a call, as fair_core's is.)"""
    arrivals, rank_of, submit, j_n, j_off, j_dur = W.arrivals, W.rank, W.submit, W.j_n, W.j_off, W.j_dur
    j_d0, j_d1, j_class, j_pool, cl_off, c_d0, c_d1 = W.j_d0, W.j_d1, W.j_class, W.j_pool, W.cl_off, W.c_d0, W.c_d1
    replicas, node_rack, node_speed, phase = W.replicas, W.node_rack, W.node_speed, W.phase
    j_off_r, j_d0r, j_d1r = W.j_off_r, W.j_d0r, W.j_d1r
    state, a_task, a_node, pending, fresh = S.state, S.a_task, S.a_node, S.pending, S.fresh
    finished, first_start, finish, end_order, built = S.finished, S.first_start, S.finish, S.end_order, S.built
    missed, base, lwf, j_fail, j_pos, tree, pc, mark = S.missed, S.base, S.lwf, S.j_fail, S.j_pos, S.tree, S.pc, S.mark
    cl_n, cl_head, cl_live, nxt, cl_rank = S.cl_n, S.cl_head, S.cl_live, S.nxt, S.cl_rank
    mt, gb, wt, fit = S.mt, S.gb, S.wt, S.fit
    c_group, g_first, g_d0, g_off, g_size = W.c_group, W.g_first, W.g_d0, W.g_off, W.g_size
    n_groups = len(g_d0)
    free0, free1, fslot, beating, et, es, eslot = S.free0, S.free1, S.fslot, S.beating, S.et, S.es, S.eslot
    s_job, s_first, s_count, s_start, s_end, s_level = S.s_job, S.s_first, S.s_count, S.s_start, S.s_end, S.s_level
    free_slots = S.free_slots
    o_job, o_first, o_count, o_start, o_end, o_level = S.o_job, S.o_first, S.o_count, S.o_start, S.o_end, S.o_level
    bt, ba, be, rt, rk, rp, rb, rc = S.bt, S.ba, S.be, S.rt, S.rk, S.rp, S.rb, S.rc
    p_running, p_row, p_touch, touched = S.p_running, S.p_row, S.p_touch, S.touched
    map_end, rslot, s_stage, o_stage, fit_r, j_nr = S.map_end, S.rslot, S.s_stage, S.o_stage, S.fit_r, W.j_nr
    r_finished = S.r_finished
    stacks_of = L.stacks
    factor_rack, factor_any, interval, wait_param = P[0], P[1], P[2], P[3]
    placed, batching, n_racks, stall_limit, slots_map, slots_reduce = Q[0] != 0, Q[1] != 0, Q[2], Q[3], Q[4], Q[5]
    demands, rows_inline = Q[6] != 0, Q[7] != 0  # (no demands: the room test counts slots)
    regs_r = (RUNNABLE_R, BUSY_R, NEXT_ATTEMPT, OPEN, N_FREE, N_EV, SEQ)  # (``assign_reduce``'s)
    fregs_r = (OPEN_WORK,)
    fit_size = len(fit) >> 1
    n_jobs = len(j_n)
    n_nodes = len(node_rack)  # (the trackers up: no node goes down)
    in_flight = len(s_job)
    local = placed and replicas.shape[1] > 0  # (``Stage.take_far``: without replicas every map is at NONE)
    empty = np.empty(0, np.int32)
    while True:
        # a pause at the end of an instant: a look of the watch, or buffers to empty. Without demands the
        # Python engine runs a lone heartbeat outside its queue and looks at the watch only after the
        # queue's instants (:mod:`mropt.sim.lone_beats`): no look before such a one (``NO_LOOK``)
        full = R[N_ENDED] + in_flight > len(o_job) or R[N_BREAKS] == len(bt) or R[N_ROWS] + 2 + len(touched) > len(rt)
        if R[EVENTS] >= stop_events or full:
            lone = (
                R[EVENTS] >= stop_events
                and not demands
                and lone_next(R[N_EV], R[AI], R[STALLED], R[N_FREE], et, es, submit, arrivals, until, n_jobs, in_flight)
            )
            if full or not lone:
                R[NO_LOOK] = 1 if lone else 0
                return PAUSED
        arriving = R[AI] < n_jobs and R[STALLED] == 0  # (a stalled run's queue was cleared: its arrivals too)
        now = et[0] if R[N_EV] > 0 else np.inf
        if arriving and submit[arrivals[R[AI]]] < now:
            now = submit[arrivals[R[AI]]]
        if now == np.inf:
            R[NO_LOOK] = 0
            return DONE
        if now > until:
            F[NOW] = until
            R[NO_LOOK] = 0
            return UNTIL
        if R[STARTED] == 0:
            R[STARTED] = 1
            F[FIRST_TIME] = now
        if now == F[LAST]:  # the instant before wrote its rows at this time: a break
            b = R[N_BREAKS]
            bt[b], ba[b], be[b] = now, R[NEXT_ATTEMPT], R[N_ENDED]
            R[N_BREAKS] = b + 1
        # (a lone heartbeat that finds no room leaves the Python engine's clock where it was: ``HeldBeats``)
        was = F[NOW]
        lone = not demands and lone_next(
            R[N_EV], R[AI], R[STALLED], R[N_FREE], et, es, submit, arrivals, until, n_jobs, in_flight
        )
        F[LAST] = F[NOW] = now
        new_work = False
        while True:  # the instant's events: completions, arrivals, heartbeats (``event_queue.drain``)
            if R[N_EV] > 0 and et[0] == now and es[0] < HEARTBEAT_SEQ:
                # -- a completion (class 0): a batch ends; each member's node may beat (``freed``)
                slot = eslot[0]
                R[N_EV] = ev_pop(et, es, eslot, R[N_EV])
                R[EVENTS] += 1
                if slot == R[OPEN]:  # a task of no time, ending at its start
                    R[OPEN] = -1
                j = s_job[slot]
                st = s_stage[slot]  # (0: the map stage, 1: the reduce stage; its slot type too)
                k = s_count[slot]
                first = s_first[slot]
                if st == 0:
                    off, d0, d1, fs = j_off[j], j_d0[j], j_d1[j], fslot
                else:
                    off, d0, d1, fs = j_off_r[j], j_d0r[j], j_d1r[j], rslot
                for m in range(k):  # each member's slot and demand, then its node's heartbeat (``freed``)
                    node = a_node[first + m]
                    state[off + a_task[first + m]] = _DONE
                    fs[node] += 1
                    free0[node] += d0
                    free1[node] += d1
                    if not beating[node] and room_two(
                        node,
                        R[RUNNABLE],
                        R[RUNNABLE_R],
                        fslot,
                        rslot,
                        demands,
                        free0,
                        free1,
                        c_d0,
                        fit,
                        fit_r,
                        fit_size,
                    ):
                        beating[node] = True
                        t = next_beat(phase[node], now, interval)
                        R[N_EV] = ev_push(et, es, eslot, R[N_EV], t, HEARTBEAT_SEQ + R[SEQ], -1 - node)
                        R[SEQ] += 1
                e = R[N_ENDED]
                o_job[e], o_first[e], o_count[e] = j, first, k
                o_start[e], o_end[e], o_level[e], o_stage[e] = s_start[slot], s_end[slot], s_level[slot], st
                R[N_ENDED] = e + 1
                free_slots[R[N_FREE]] = slot
                R[N_FREE] += 1
                if st != 0:  # reduces: their count, and perhaps the job's end
                    R[BUSY_R] -= k
                    r_finished[j] += k
                    if r_finished[j] == j_nr[j]:
                        finish[j] = now
                        end_order[R[N_JOB_END]] = j
                        R[N_JOB_END] += 1
                else:  # maps
                    R[BUSY] -= k
                    finished[j] += k
                    p = j_pool[j]
                    p_running[p] -= k
                    R[N_TOUCHED] = touch(p, R[INSTANT], R[N_TOUCHED], p_touch, touched)  # (its utilisation rows)
                    if finished[j] == j_n[j]:  # the map stage ends (``_stage_done``): the reduces open, or the job ends
                        map_end[j] = now
                        if built[j]:  # (its locality stacks freed)
                            stacks_of[j] = empty
                        if j_nr[j] > 0:
                            open_reduces(j, W, S, R, RUNNABLE_R, fit_size)
                            new_work = True
                        else:
                            finish[j] = now
                            end_order[R[N_JOB_END]] = j
                            R[N_JOB_END] += 1
            elif arriving and submit[arrivals[R[AI]]] == now:
                # -- an arrival (class 2): its tasks runnable, a map candidate at its rank, in its class
                j = arrivals[R[AI]]
                R[AI] += 1
                arriving = R[AI] < n_jobs
                R[EVENTS] += 1
                R[RUNNABLE] += j_n[j]
                c = j_class[j]
                pos = cl_off[c] + cl_n[c]
                cl_n[c] += 1
                nxt[pos] = pos
                cl_rank[pos] = rank_of[j]
                j_pos[j] = pos
                cl_live[c] += 1
                if cl_live[c] == 1:  # its class has a candidate again: its leaf, and in the fit tree
                    cl_head[c] = pos
                    g = c_group[c]
                    leaf_set(mt, g_off[g], g_size[g], c - g_first[g], rank_of[j])
                    fit_set(fit, fit_size, c, c_d1[c])
                base[j] = passes_at(tree, pc, rank_of[j])  # (``_set_key``: it counts passes from now)
                new_work = True
            elif R[N_EV] > 0 and et[0] == now:
                # -- a heartbeat (class 3): ``HeartbeatOffers.beat``
                node = -1 - eslot[0]
                R[N_EV] = ev_pop(et, es, eslot, R[N_EV])
                R[EVENTS] += 1
                beating[node] = False
                if not room_two(
                    node, R[RUNNABLE], R[RUNNABLE_R], fslot, rslot, demands, free0, free1, c_d0, fit, fit_r, fit_size
                ):
                    if lone:
                        F[NOW] = was
                    if R[STALLED] != 0:
                        break
                    continue
                before = R[NEXT_ATTEMPT]
                R[HEARTBEAT] += 1
                hb = R[HEARTBEAT]
                rack = node_rack[node]
                while fslot[node] > 0 and R[RUNNABLE] > 0:  # ``addMapTasks``: a walk per map
                    # the least rank of each group's classes that fit the tracker; the least of them
                    lim0 = free0[node] + _FIT_EPS
                    lim1 = free1[node] + _FIT_EPS
                    best = NOT_A_RANK
                    fitting = 0  # (the groups of cpu demand <= lim0: a prefix)
                    while fitting < n_groups and g_d0[fitting] <= lim0:
                        v = group_least(mt, g_off, g_size, g_first, c_d1, fitting, lim1)
                        gb[fitting] = v
                        if v < best:
                            best = v
                        fitting += 1
                    chosen = -1
                    task = -1
                    level = _NONE
                    r = 0
                    far = False
                    moved = 0  # (the classes whose leaf the walk moved on: put back at its end)
                    while best != NOT_A_RANK:
                        r = best
                        j = arrivals[r]
                        off = j_off[j]
                        if j_fail[j] != hb:  # ``launch(job, node, MAP, RACK)``: node-local, rack-local
                            if placed:
                                if not built[j]:
                                    stacks_of[j] = build_stacks(replicas, off, j_n[j], node_rack, n_nodes, n_racks)
                                    built[j] = True
                                stacks = stacks_of[j]
                                task = pop_place(stacks, 2 + 2 * node, state, off)
                                if task >= 0:
                                    level = _NODE
                                else:
                                    task = pop_place(stacks, 2 + 2 * n_nodes + 2 * rack, state, off)
                                    if task >= 0:
                                        level = _RACK
                            else:  # (no replicas: every task at level NONE, at any level asked)
                                task = fresh[j]
                                while state[off + task] != _PENDING:
                                    task += 1
                                fresh[j] = task
                                level = _NONE
                        if task < 0:  # ``scheduleOffSwitch``: its count, this walk's pass included
                            j_fail[j] = hb
                            due = missed[j] + passes_at(tree, pc, r) - base[j] + 1
                            w = lwf[j]
                            if w != w:  # (NaN: not read yet)
                                if wait_param >= 0:
                                    w = wait_param
                                else:
                                    w = wait_factor(replicas, off, j_n[j], mark, j + 1, n_nodes)
                                lwf[j] = w
                            if float(min(j_n[j] - finished[j], n_nodes)) * w < due:
                                task = fresh[j]  # ``Stage.take_far``
                                while state[off + task] != _PENDING:
                                    task += 1
                                fresh[j] = task
                                level = _ANY if local else _NONE
                                far = True
                        if task >= 0:
                            chosen = j
                            break
                        # the job's class's leaf on to its next live candidate; its group's least again
                        c = j_class[j]
                        end = cl_off[c] + cl_n[c]
                        pos = alive_at(nxt, j_pos[j] + 1, end)
                        g = c_group[c]
                        leaf_set(mt, g_off[g], g_size[g], c - g_first[g], cl_rank[pos] if pos < end else NOT_A_RANK)
                        wt[moved] = c
                        moved += 1
                        gb[g] = group_least(mt, g_off, g_size, g_first, c_d1, g, lim1)
                        best = NOT_A_RANK
                        for x in range(fitting):
                            if gb[x] < best:
                                best = gb[x]
                    for x in range(moved):  # the moved leaves back at their classes' first live candidates
                        c = wt[x]
                        g = c_group[c]
                        h = cl_head[c]
                        leaf_set(mt, g_off[g], g_size[g], c - g_first[g], cl_rank[h] if cl_live[c] > 0 else NOT_A_RANK)
                    if chosen < 0:
                        pass_below(tree, pc, n_jobs, n_jobs)  # every candidate passed
                        break
                    j = chosen
                    pass_below(tree, pc, n_jobs, r)  # the ranks below the job passed
                    if far:
                        missed[j] += 1  # (its own pass: an off-switch launch does not reset it)
                    else:
                        missed[j] = 0  # resetSchedulingOpportunities (local launch)
                        base[j] = passes_at(tree, pc, r)
                    # the launch (``launch_tasks``): the task on the node
                    off = j_off[j]
                    state[off + task] = _RUNNING
                    pending[j] -= 1
                    R[RUNNABLE] -= 1
                    R[BUSY] += 1
                    work = j_dur[j] / node_speed[node]
                    if level == _RACK:
                        work *= factor_rack
                    elif level == _ANY:
                        work *= factor_any
                    aid = R[NEXT_ATTEMPT]
                    R[NEXT_ATTEMPT] = aid + 1
                    a_task[aid] = task
                    a_node[aid] = node
                    b = R[OPEN]
                    if (
                        b >= 0
                        and F[OPEN_WORK] == work
                        and s_start[b] == now
                        and s_job[b] == j
                        and s_stage[b] == 0
                        and s_level[b] == level
                    ):
                        s_count[b] += 1  # (it joins the open batch)
                    else:
                        R[N_FREE] -= 1
                        b = free_slots[R[N_FREE]]
                        s_job[b], s_first[b], s_count[b], s_stage[b] = j, aid, 1, 0
                        s_start[b], s_end[b], s_level[b] = now, now + work, level
                        R[N_EV] = ev_push(et, es, eslot, R[N_EV], now + work, R[SEQ], b)
                        R[SEQ] += 1
                        R[OPEN] = b if batching else -1
                        F[OPEN_WORK] = work
                    free0[node] -= j_d0[j]
                    free1[node] -= j_d1[j]
                    fslot[node] -= 1
                    if np.isnan(first_start[j]):
                        first_start[j] = now
                    p = j_pool[j]
                    p_running[p] += 1
                    if p_row[p] < 0:  # its index in the rows: pools in the order of their first start
                        R[N_INDEXED] += 1
                        p_row[p] = R[N_INDEXED]
                    R[N_TOUCHED] = touch(p, R[INSTANT], R[N_TOUCHED], p_touch, touched)
                    if pending[j] == 0:  # ``_launched``: no pending map, no longer a candidate
                        c = j_class[j]
                        p = j_pos[j]
                        nxt[p] = p + 1
                        cl_live[c] -= 1
                        if cl_live[c] == 0:  # (its class leaves the walks and the fit tree)
                            g = c_group[c]
                            leaf_set(mt, g_off[g], g_size[g], c - g_first[g], NOT_A_RANK)
                            fit_set(fit, fit_size, c, np.inf)
                        elif cl_head[c] == p:  # its class's first live candidate, and leaf, the next one
                            end = cl_off[c] + cl_n[c]
                            h = alive_at(nxt, p, end)
                            cl_head[c] = h
                            g = c_group[c]
                            leaf_set(mt, g_off[g], g_size[g], c - g_first[g], cl_rank[h])
                    if far:
                        break  # maximum-tasks-after-offswitch = 0
                if rslot[node] > 0 and R[RUNNABLE_R] > 0:  # ``addReduceTask``: at most one reduce
                    assign_reduce(node, now, batching, fit_size, W, S, R, F, regs_r, fregs_r)
                # ``beat``'s end: the stall count; a node with room beats again an interval later
                if R[NEXT_ATTEMPT] == before:
                    R[IDLE_BEATS] += 1
                    if R[IDLE_BEATS] > stall_limit:
                        R[STALLED] = 1
                        break
                else:
                    R[IDLE_BEATS] = 0
                if room_two(
                    node, R[RUNNABLE], R[RUNNABLE_R], fslot, rslot, demands, free0, free1, c_d0, fit, fit_r, fit_size
                ):
                    beating[node] = True
                    R[N_EV] = ev_push(et, es, eslot, R[N_EV], now + interval, HEARTBEAT_SEQ + R[SEQ], -1 - node)
                    R[SEQ] += 1
            else:
                break
            if R[STALLED] != 0:  # (a stalled run's instants end after their first event)
                break
        if R[STALLED] != 0:  # the engine clears its queue (and the arrivals in it)
            R[N_EV] = 0
        if new_work:  # ``_schedule_all``: every node whose heartbeat is not scheduled, in order
            for node in range(n_nodes):
                if not beating[node] and room_two(
                    node, R[RUNNABLE], R[RUNNABLE_R], fslot, rslot, demands, free0, free1, c_d0, fit, fit_r, fit_size
                ):
                    beating[node] = True
                    t = next_beat(phase[node], now, interval)
                    R[N_EV] = ev_push(et, es, eslot, R[N_EV], t, HEARTBEAT_SEQ + R[SEQ], -1 - node)
                    R[SEQ] += 1
        # the utilisation rows of the instant (``Recorder.flush``; :mod:`mropt.sim.compiled.rows`)
        # (a run with reduces builds them after the run from its attempts: ``Recorder.keep_row_marks``)
        if rows_inline:
            R[N_ROWS] = emit(
                now, R[N_ROWS], R[BUSY], R[ROW_BUSY], slots_map, slots_reduce, R[N_TOUCHED], touched, p_row,
                p_running, rt, rk, rp, rb, rc,
            )  # fmt: skip
            R[ROW_BUSY] = R[BUSY]
        R[N_TOUCHED] = 0
        R[INSTANT] += 1
