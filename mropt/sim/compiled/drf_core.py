"""``drf``, ``ddrf`` and ``delay`` in event mode as one compiled loop (numba): the plain rules of
:mod:`mropt.sim.policies.drf` and :mod:`mropt.sim.policies.ddrf` and of the engine, over arrays (issue 32).

What it runs, and nothing else (:func:`mropt.sim.compiled.drf_engine.why_not` checks a run qualifies;
``simulate``'s ``auto`` runs the Python engine otherwise, ``compiled`` refuses: :mod:`mropt.sim.engines`):
those three policies, event mode, a cluster of two resources and no slots, jobs of one map stage of one
duration and one demand, no speculation, no node faults, no straggler draws, no reduce slow-start, no
live utilisation rows. The rules are those of the Python engine and policies, step for step:

* **the event order** (:mod:`mropt.sim.engine`): an instant runs the completions due at its time
  (in the order they were scheduled), then the arrivals (in (submit, index) order), then the pass
  of :class:`mropt.sim.offers.EventOffers`: every node in order after new work, else the nodes whose
  capacity freed, in order, each offered while a task is runnable; a completion that the pass
  schedules at the instant's own time makes a new instant at that time;
* **the offer of a node** (``_DrfBase._assign_reference``, one *call*): while the node has room for
  the workload's smallest demand, the users in increasing key (dominant share rounded to 12
  significant digits, tie key of its next task at its last push, user index), each user's jobs in
  arrival order, each job offered the node at most once a call (``_offer``): a job whose task fits
  launches one task at the level its skip count allows, or declines (its skip count grows by one);
  after a launch the user is pushed again (its share grew) and the order taken again. Who the next
  user is comes from the class heaps of :mod:`mropt.sim.compiled.drf_index`, not from a walk over the
  users (the same user); a user whose fitting jobs all were offered in the call is set aside until
  its end;
* **the delay rules** (``_level``, ``_after_launch``): ``drf`` any level; ``ddrf`` node-local while the
  skips are below E1, rack-local below E2, then any, the count reset at every launch; ``delay``
  node-local below D skips, then any, the count reset at a node-local launch (or one without
  replicas); a call that declined asks a ``check`` at its instant (``_ask_check``), whose pass is muted
  and which asks a ``reoffer`` a heartbeat interval later when nothing runs (``on_timer``);
* **the task** (``Stage.take``): the lowest pending task with a replica on the node, else in its
  rack, else the lowest pending task (levels node, rack, any; none without replicas);
* **batches** (:mod:`mropt.sim.attempts`): a launch joins the batch opened last when its job, level,
  start and running time are the same; a batch ends in one completion, and the user's share falls by
  the batch's count times its task's vector in one addition, as ``_DrfBase.on_attempts_end`` does;
* **shares** (``_DrfBase._add``): ``use_k + count x vec_k``, the share ``max(use_0 / R_0, use_1 / R_1)``.

:func:`step` runs instants until the run ends, the next instant is past ``until``, the event
count reaches ``stop_events`` (a look of the watch: progress, time limit, Ctrl-C) or the
buffers of ended batches or of row breaks are nearly full; the driver
(:mod:`mropt.sim.compiled.drf_engine`) empties them and calls it again. The state lives in the
arrays it is given, so a run is resumed where it paused.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from mropt.sim.compiled.drf_index import (
    build_stacks,
    class_push,
    ev_pop,
    ev_push,
    first_fitting,
    heap_pop,
    pop_place,
    refresh,
)
from mropt.sim.compiled.rounding import sig12
from mropt.sim.compiled.rows import emit, touch

_FIT_EPS = 1e-9  # mropt.sim.capacity.FIT_EPS
_ROOM_EPS = 1e-9  # mropt.sim.policies.drf_runs._EPS (``_DrfBase._room``)
_PENDING, _RUNNING, _DONE = 0, 1, 2  # mropt.sim.task_states
_NODE, _RACK, _ANY, _NONE = 0, 1, 2, -1  # mropt.sim.state
#: the workload, as arrays (read only): per job (in the workload's order), per node, per demand class and group
Work = namedtuple(
    "Work",
    "arrivals submit j_user j_pool j_n j_off j_dur j_d0 j_d1 j_tie j_class replicas node_rack node_speed"
    " c_group c_d1 g_d0 g_first g_off g_size",
)
#: the run's state, as arrays (changed in place): tasks, attempts, jobs, users, nodes, the event heap,
#: the running batches' slots, the nodes freed at the instant, the class heaps' tops and trees, and the
#: buffers of ended batches and of row breaks the driver empties
State = namedtuple(
    "State",
    "state a_task a_node pending fresh finished first_start finish end_order j_next j_prev built"
    " u_work u_tail u_use0 u_use1 u_share u_ver free0 free1 et es eslot"
    " s_job s_first s_count s_start s_end s_level free_slots dirty_mark dirty"
    " pk pt pu pv c_base c_cap ch_n c_valid top_k top_t top_u tree g_low mark_u mark_v"
    " o_job o_first o_count o_start o_end o_level bt ba be"
    " skips offered u_excl xk xt xu xv xc"
    " p_busy p_row p_touch touched rt rk rp rb rc",
)
#: the run's lists of arrays (a numba typed list, changed in place): per job its locality stacks, built
#: at its first launch and dropped at its end (``drf_index.build_stacks``)
Lists = namedtuple("Lists", "stacks")
#: what :func:`step` returns
DONE, PAUSED, UNTIL = 0, 1, 2
#: the int64 registers (``R``)
AI, N_EV, NEXT_ATTEMPT, OPEN, EVENTS, RUNNABLE, N_ENDED, N_BREAKS, N_JOB_END, N_FREE, SEQ, OFFERS, STARTED = range(13)
CALL, BUSY, CHECK_SEQ, REOFFER_SEQ = range(13, 17)
#: the utilisation rows (:mod:`mropt.sim.compiled.rows`): in their buffer, the busy count of the last
#: cluster row (-1: none yet), the pools given a row index, the pools touched at the instant, its stamp
N_ROWS, ROW_BUSY, N_INDEXED, N_TOUCHED, INSTANT = range(17, 22)
N_REGISTERS = 22
#: the float64 registers (``F``): the timers' times (infinity: none pending), the muted instant's time
LAST, FIRST_TIME, OPEN_WORK, NOW, CHECK_AT, REOFFER_AT, MUTE = range(7)
N_FLOAT_REGISTERS = 7
#: the delay rules (``Q[RULE]``): none (``drf``), ``ddrf``'s two levels, ``delay``'s one
NO_DELAY, DDRF, DELAY = 0, 1, 2


@njit(cache=True)
def step(W, P, Q, S, L, R, F, until, stop_events):
    """Run instants from the state (module docstring); DONE, PAUSED or UNTIL. (The arrays are taken out
    of the tuples once, here, and handed to the helpers one by one: an array taken out of a tuple costs
    two atomic reference-count steps, which in the helpers would be most of the run.)"""
    arrivals, submit, j_user, j_pool, j_n, j_off = W.arrivals, W.submit, W.j_user, W.j_pool, W.j_n, W.j_off
    j_dur, j_d0, j_d1, j_tie, j_class = W.j_dur, W.j_d0, W.j_d1, W.j_tie, W.j_class
    replicas, node_rack, node_speed = W.replicas, W.node_rack, W.node_speed
    c_group, c_d1, g_d0, g_first, g_off, g_size = W.c_group, W.c_d1, W.g_d0, W.g_first, W.g_off, W.g_size
    state, a_task, a_node, pending, fresh = S.state, S.a_task, S.a_node, S.pending, S.fresh
    finished, first_start, finish, end_order = S.finished, S.first_start, S.finish, S.end_order
    j_next, j_prev, built, u_work, u_tail = S.j_next, S.j_prev, S.built, S.u_work, S.u_tail
    u_use0, u_use1, u_share, u_ver, free0, free1 = S.u_use0, S.u_use1, S.u_share, S.u_ver, S.free0, S.free1
    et, es, eslot = S.et, S.es, S.eslot
    s_job, s_first, s_count, s_start, s_end, s_level = S.s_job, S.s_first, S.s_count, S.s_start, S.s_end, S.s_level
    free_slots, dirty_mark, dirty = S.free_slots, S.dirty_mark, S.dirty
    pk, pt, pu, pv, c_base, c_cap, ch_n, c_valid = S.pk, S.pt, S.pu, S.pv, S.c_base, S.c_cap, S.ch_n, S.c_valid
    top_k, top_t, top_u, tree, g_low, mark_u, mark_v = S.top_k, S.top_t, S.top_u, S.tree, S.g_low, S.mark_u, S.mark_v
    o_job, o_first, o_count, o_start, o_end, o_level = S.o_job, S.o_first, S.o_count, S.o_start, S.o_end, S.o_level
    bt, ba, be = S.bt, S.ba, S.be
    p_busy, p_row, p_touch, touched = S.p_busy, S.p_row, S.p_touch, S.touched
    rt, rk, rp, rb, rc = S.rt, S.rk, S.rp, S.rb, S.rc
    skips, offered, u_excl, xk, xt, xu, xv, xc = S.skips, S.offered, S.u_excl, S.xk, S.xt, S.xu, S.xv, S.xc
    stacks_of = L.stacks
    tot0, tot1, low0, low1, factor_rack, factor_any, idle_tie, heartbeat = (
        P[0],
        P[1],
        P[2],
        P[3],
        P[4],
        P[5],
        P[6],
        P[7],
    )
    placed, batching, n_racks, rule, e1, e2 = Q[0] != 0, Q[1] != 0, Q[2], Q[4], Q[5], Q[6]
    slots_map, slots_reduce = Q[7], Q[8]  # (the cluster's, for its utilisation rows)
    n_jobs = len(j_n)
    n_nodes = len(node_rack)
    in_flight = len(et)  # the most batches that can be running at once (the slots' number)
    width = replicas.shape[1]
    every_node = np.arange(n_nodes)
    empty = np.empty(0, np.int32)
    while R[AI] < n_jobs or R[N_EV] > 0 or F[CHECK_AT] < np.inf or F[REOFFER_AT] < np.inf:
        # a pause at the end of an instant: a look of the watch, or buffers to empty
        if (
            R[EVENTS] >= stop_events
            or R[N_ENDED] + in_flight > len(o_job)
            or R[N_BREAKS] == len(bt)
            or R[N_ROWS] + 2 + len(touched) > len(rt)
        ):
            return PAUSED
        now = et[0] if R[N_EV] > 0 else np.inf
        if R[AI] < n_jobs and submit[arrivals[R[AI]]] < now:
            now = submit[arrivals[R[AI]]]
        now = min(now, F[CHECK_AT], F[REOFFER_AT])
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
        # -- completions (class 0), in the order they were scheduled
        while R[N_EV] > 0 and et[0] == now:
            slot = eslot[0]
            R[N_EV] = ev_pop(et, es, eslot, R[N_EV])
            R[EVENTS] += 1
            if slot == R[OPEN]:  # a task of no time, ending at its start
                R[OPEN] = -1
            j = s_job[slot]
            off = j_off[j]
            k = s_count[slot]
            first = s_first[slot]
            d0 = j_d0[j]
            d1 = j_d1[j]
            for m in range(k):
                node = a_node[first + m]
                state[off + a_task[first + m]] = _DONE
                free0[node] += d0
                free1[node] += d1
                if not dirty_mark[node]:
                    dirty_mark[node] = True
                    dirty[n_dirty] = node
                    n_dirty += 1
            e = R[N_ENDED]
            o_job[e], o_first[e], o_count[e] = j, first, k
            o_start[e], o_end[e], o_level[e] = s_start[slot], s_end[slot], s_level[slot]
            R[N_ENDED] = e + 1
            free_slots[R[N_FREE]] = slot
            R[N_FREE] += 1
            # on_attempts_end: the user's share, then its new entry
            u = j_user[j]
            a = u_use0[u] + (-k) * d0
            c = u_use1[u] + (-k) * d1
            u_use0[u] = a
            u_use1[u] = c
            u_share[u] = max(a / tot0, c / tot1)
            finished[j] += k
            R[BUSY] -= k
            p = j_pool[j]
            p_busy[p] -= k
            R[N_TOUCHED] = touch(p, R[INSTANT], R[N_TOUCHED], p_touch, touched)  # (its utilisation rows)
            _push_user(
                u, -1, idle_tie, pending, j_next, u_work, j_tie, j_class, u_ver, u_share, mark_u, mark_v,
                pk, pt, pu, pv, c_base, c_cap, ch_n, c_valid, top_k, top_t, top_u, tree, g_low,
                c_group, g_first, g_off, g_size,
            )  # fmt: skip
            if finished[j] == j_n[j]:  # the stage and the job end
                finish[j] = now
                end_order[R[N_JOB_END]] = j
                R[N_JOB_END] += 1
                if built[j]:  # (its locality stacks freed)
                    stacks_of[j] = empty
                # on_job_end: out of the user's list
                p, nx = j_prev[j], j_next[j]
                if p >= 0:
                    j_next[p] = nx
                if nx >= 0:
                    j_prev[nx] = p
                else:
                    u_tail[u] = p
                if u_work[u] == j:
                    u_work[u] = nx
        # -- arrivals (class 2)
        while R[AI] < n_jobs and submit[arrivals[R[AI]]] == now:
            j = arrivals[R[AI]]
            R[AI] += 1
            R[EVENTS] += 1
            u = j_user[j]
            if u_tail[u] >= 0:
                j_next[u_tail[u]] = j
                j_prev[j] = u_tail[u]
            u_tail[u] = j
            if u_work[u] < 0:
                u_work[u] = j
            _push_user(
                u, j, idle_tie, pending, j_next, u_work, j_tie, j_class, u_ver, u_share, mark_u, mark_v,
                pk, pt, pu, pv, c_base, c_cap, ch_n, c_valid, top_k, top_t, top_u, tree, g_low,
                c_group, g_first, g_off, g_size,
            )  # fmt: skip
            R[RUNNABLE] += j_n[j]
            new_work = True
        # -- timers (class 3), in the order they were asked for (``_DrfBase.on_timer``), each then new work
        while F[CHECK_AT] == now or F[REOFFER_AT] == now:
            if F[CHECK_AT] == now and (F[REOFFER_AT] != now or R[CHECK_SEQ] < R[REOFFER_SEQ]):
                F[CHECK_AT] = np.inf  # "check": the pass after it is muted; nothing runs: a reoffer later
                F[MUTE] = now
                if R[BUSY] == 0 and F[REOFFER_AT] == np.inf:
                    F[REOFFER_AT] = now + heartbeat
                    R[REOFFER_SEQ] = R[SEQ]
                    R[SEQ] += 1
            else:
                F[REOFFER_AT] = np.inf
            R[EVENTS] += 1
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
        for i in range(n_pass):
            if R[RUNNABLE] == 0:
                break
            node = nodes[i]
            if now == F[MUTE]:  # (the pass after a check: ``_DrfBase.assign``)
                continue
            # the offer of ``node`` (``_assign_reference``): a call; the jobs offered the node in it
            # (``offered``), the users whose fitting jobs all were (``u_excl``: their class tops set aside)
            R[CALL] += 1
            call = R[CALL]
            declined = False
            n_set = 0
            while free0[node] + _ROOM_EPS >= low0 and free1[node] + _ROOM_EPS >= low1:
                # the first user in key order with a job that fits: the least top over the fitting classes
                limit0 = free0[node] + _FIT_EPS
                limit1 = free1[node] + _FIT_EPS
                best = first_fitting(
                    limit0, limit1, g_d0, g_first, g_low, c_d1, g_off, g_size, tree, top_k, top_t, top_u
                )
                if best < 0:
                    break
                u = top_u[best]
                if u_excl[u] == call:  # its fitting jobs declined or took nothing: its top set aside
                    base = c_base[best]
                    xk[n_set], xt[n_set], xu[n_set], xv[n_set], xc[n_set] = pk[base], pt[base], pu[base], pv[base], best
                    n_set += 1
                    ch_n[best] = heap_pop(pk, pt, pu, pv, base, ch_n[best])
                    refresh(
                        best, pk, pt, pu, pv, c_base, ch_n, c_valid, u_ver, top_k, top_t, top_u, tree, g_low,
                        c_group, g_first, g_off, g_size,
                    )  # fmt: skip
                    continue
                R[OFFERS] += 1
                # the user's jobs in arrival order (``_offer`` each): a launch at the level its skips
                # allow, or a decline (it fits, no task there), or no fit
                job = u_work[u]
                task = -1
                level = _NONE
                while job >= 0:
                    if pending[job] > 0 and offered[job] != call:
                        if j_d0[job] <= limit0 and j_d1[job] <= limit1:
                            allowed = _ANY
                            if rule == DDRF:
                                allowed = _ANY if skips[job] >= e2 else (_RACK if skips[job] >= e1 else _NODE)
                            elif rule == DELAY:
                                allowed = _ANY if skips[job] >= e2 else _NODE
                            off = j_off[job]
                            if placed:
                                if not built[job]:
                                    stacks_of[job] = build_stacks(replicas, off, j_n[job], node_rack, n_nodes, n_racks)
                                    built[job] = True
                                stacks = stacks_of[job]
                                task = pop_place(stacks, 2 + 2 * node, state, off)
                                if task >= 0:
                                    level = _NODE
                                elif allowed >= _RACK:
                                    task = pop_place(stacks, 2 + 2 * n_nodes + 2 * node_rack[node], state, off)
                                    if task >= 0:
                                        level = _RACK
                            if task < 0 and (allowed == _ANY or not placed):  # (``Stage.take_far``)
                                task = fresh[job]
                                while state[off + task] != _PENDING:
                                    task += 1
                                fresh[job] = task
                                level = _ANY if (placed and width > 0) else _NONE
                            if task >= 0:
                                break
                            skips[job] += 1  # declined: it fits, but no task at the level allowed
                            declined = True
                        offered[job] = call
                    job = j_next[job]
                if task < 0:
                    u_excl[u] = call
                    continue
                # launch_tasks: the task on the node
                off = j_off[job]
                state[off + task] = _RUNNING
                pending[job] -= 1
                R[RUNNABLE] -= 1
                R[BUSY] += 1
                p = j_pool[job]
                p_busy[p] += 1
                if p_row[p] < 0:  # its index in the utilisation rows: pools in the order of their first start
                    R[N_INDEXED] += 1
                    p_row[p] = R[N_INDEXED]
                R[N_TOUCHED] = touch(p, R[INSTANT], R[N_TOUCHED], p_touch, touched)
                work = j_dur[job] / node_speed[node]
                if level == _RACK:
                    work *= factor_rack
                elif level == _ANY:
                    work *= factor_any
                aid = R[NEXT_ATTEMPT]
                R[NEXT_ATTEMPT] = aid + 1
                a_task[aid] = task
                a_node[aid] = node
                b = R[OPEN]
                if b >= 0 and F[OPEN_WORK] == work and s_start[b] == now and s_job[b] == job and s_level[b] == level:
                    s_count[b] += 1  # (it joins the open batch)
                else:
                    R[N_FREE] -= 1
                    b = free_slots[R[N_FREE]]
                    s_job[b], s_first[b], s_count[b] = job, aid, 1
                    s_start[b], s_end[b], s_level[b] = now, now + work, level
                    R[N_EV] = ev_push(et, es, eslot, R[N_EV], now + work, R[SEQ], b)
                    R[SEQ] += 1
                    R[OPEN] = b if batching else -1
                    F[OPEN_WORK] = work
                free0[node] -= j_d0[job]
                free1[node] -= j_d1[job]
                if np.isnan(first_start[job]):
                    first_start[job] = now
                if rule != DELAY or level <= _NODE:  # ``_after_launch`` (delay: a local launch only)
                    skips[job] = 0
                # _add(launcher, +1), then _push(launcher)
                a = u_use0[u] + 1.0 * j_d0[job]
                c = u_use1[u] + 1.0 * j_d1[job]
                u_use0[u] = a
                u_use1[u] = c
                u_share[u] = max(a / tot0, c / tot1)
                _push_user(
                    u, -1, idle_tie, pending, j_next, u_work, j_tie, j_class, u_ver, u_share, mark_u, mark_v,
                    pk, pt, pu, pv, c_base, c_cap, ch_n, c_valid, top_k, top_t, top_u, tree, g_low,
                    c_group, g_first, g_off, g_size,
                )  # fmt: skip
                if pending[job] == 0:  # the user's entries in the job's class may have gone stale: at its top
                    refresh(
                        j_class[job], pk, pt, pu, pv, c_base, ch_n, c_valid, u_ver, top_k, top_t, top_u, tree,
                        g_low, c_group, g_first, g_off, g_size,
                    )  # fmt: skip
            # the tops set aside go back (their users' keys did not change: none of them launched)
            for x in range(n_set):
                c = xc[x]
                class_push(c, xk[x], xt[x], xu[x], xv[x], pk, pt, pu, pv, c_base, c_cap, ch_n, c_valid, u_ver)
                refresh(
                    c, pk, pt, pu, pv, c_base, ch_n, c_valid, u_ver, top_k, top_t, top_u, tree, g_low,
                    c_group, g_first, g_off, g_size,
                )  # fmt: skip
            if declined and F[CHECK_AT] == np.inf:  # ``_ask_check``: after this pass, is anything running?
                F[CHECK_AT] = now
                R[CHECK_SEQ] = R[SEQ]
                R[SEQ] += 1
        # the utilisation rows of the instant (``Recorder.flush``; :mod:`mropt.sim.compiled.rows`)
        R[N_ROWS] = emit(
            now, R[N_ROWS], R[BUSY], R[ROW_BUSY], slots_map, slots_reduce, R[N_TOUCHED], touched, p_row, p_busy,
            rt, rk, rp, rb, rc,
        )  # fmt: skip
        R[ROW_BUSY] = R[BUSY]
        R[N_TOUCHED] = 0
        R[INSTANT] += 1
    return DONE


@njit(cache=True, inline="always")
def _push_user(
    u, arriving, idle_tie, pending, j_next, u_work, j_tie, j_class, u_ver, u_share, mark_u, mark_v,
    pk, pt, pu, pv, c_base, c_cap, ch_n, c_valid, top_k, top_t, top_u, tree, g_low, c_group, g_first, g_off, g_size,
):  # fmt: skip
    """``_DrfBase._push``: the user's new entry (its share now, the tie key of its first job with work,
    ``arriving`` counted as having work), in the heap of each class of its jobs with pending tasks."""
    q = u_work[u]
    while q >= 0 and pending[q] == 0 and q != arriving:
        q = j_next[q]
    u_work[u] = q
    tie = j_tie[q] if q >= 0 else idle_tie
    ver = u_ver[u] + 1
    u_ver[u] = ver
    key = sig12(u_share[u])
    while q >= 0:
        if pending[q] > 0:
            c = j_class[q]
            if mark_u[c] != u or mark_v[c] != ver:  # (its first job of the class)
                mark_u[c] = u
                mark_v[c] = ver
                class_push(c, key, tie, u, ver, pk, pt, pu, pv, c_base, c_cap, ch_n, c_valid, u_ver)
                refresh(
                    c, pk, pt, pu, pv, c_base, ch_n, c_valid, u_ver, top_k, top_t, top_u, tree, g_low,
                    c_group, g_first, g_off, g_size,
                )  # fmt: skip
        q = j_next[q]
