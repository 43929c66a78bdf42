"""The reduce side of the compiled ``fair`` loop (:mod:`mropt.sim.compiled.fair_core`; numba, inlined where it
is called: speed only).

* :func:`open_reduces`: a job's map stage ended and it has a reduce stage: the reduces become runnable
  (``Completions._stage_done``, ``_stage_ready``; no slow-start), the job a candidate of its pool for
  reduces and the pool one of the reduce order (``FairOffers``' kept orders, here as
  :mod:`mropt.sim.compiled.fair_order` keeps the map side's);
* :func:`assign_reduces`: the reduce part of a heartbeat (``FairAssign._assign_reference`` with the slot
  type REDUCE; Hadoop 1.0.3 ``FairScheduler.assignTasks``): one reduce at a time until the heartbeat's cap
  (the free reduce slots, or ``assign_multiple_reduces``; one without ``assign_multiple``), every runnable
  reduce running, or no job launching one: the pools with a reduce candidate in key order ``(running
  reduces / weight, name)``, each pool's candidates in key order ``(running reduces / weight, submit,
  index)``; a reduce launches at level ANY, so a job launches one where the node has a free reduce slot
  and its demand fits (``Launches.launch_tasks``), the stage's lowest pending task (``Stage.take``
  without replicas: locality NONE, the stage's duration over the node's speed). A job that cannot launch
  on the node cannot later in the heartbeat (the node's free capacity only shrinks): it is passed by, as
  the map side does. The CapBasedLoadManager's verdict is the caller's.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mropt.sim.compiled.drf_index import ev_push
from mropt.sim.compiled.fair_order import fit_set, job_move, pool_move

_FIT_EPS = 1e-9  # mropt.sim.capacity.FIT_EPS
_PENDING, _RUNNING = 0, 1  # mropt.sim.task_states
_NONE = -1  # mropt.sim.state.NONE: a task without replicas
_REDUCE = 1  # mropt.sim.state.REDUCE: the stage's index and slot type


@njit(cache=True, inline="always")
def open_reduces(j, W, S, R, runnable_r, live_r, n_order_r, fit_size):
    """Job ``j``'s map stage ended: its reduces runnable, the job among its pool's reduce candidates (key 0:
    none running), its pool in the reduce order if it was not. The registers of the reduces runnable,
    live (running plus runnable) and of the pools in the reduce order are ``R[runnable_r]``, ... ."""
    n = W.j_nr[j]
    R[runnable_r] += n
    R[live_r] += n
    c = W.j_class_r[j]
    if S.c_pending_r[c] == 0:
        fit_set(S.fit_r, fit_size, c, W.c_d1[c])
    S.c_pending_r[c] += n
    p = W.j_pool[j]
    was = S.p_n_r[p]
    S.p_n_r[p] = job_move(S.ck_r, S.cs_r, S.cj_r, W.p_off[p], was, np.nan, 0.0, W.submit[j], j)
    S.j_key_r[j] = 0.0
    if was == 0:
        r = S.p_running_r[p] / 1.0
        R[n_order_r] = pool_move(S.ok_r, S.op_r, R[n_order_r], np.nan, r, p)
        S.p_key_r[p] = r


@njit(cache=True, inline="always")
def end_reduces(j, k, W, S, R, n_order_r):
    """``k`` reduces of job ``j`` ended (``Fair.on_attempts_end``): its place among its pool's reduce
    candidates and its pool's in the reduce order; whether its reduce stage, and so the job, ended."""
    S.r_finished[j] += k
    S.running_r[j] -= k
    p = W.j_pool[j]
    if S.r_pending[j] > 0:
        r = S.running_r[j] / W.j_w[j]
        S.p_n_r[p] = job_move(S.ck_r, S.cs_r, S.cj_r, W.p_off[p], S.p_n_r[p], S.j_key_r[j], r, W.submit[j], j)
        S.j_key_r[j] = r
    S.p_running_r[p] -= k
    if S.p_n_r[p] > 0:
        r = S.p_running_r[p] / 1.0
        R[n_order_r] = pool_move(S.ok_r, S.op_r, R[n_order_r], S.p_key_r[p], r, p)
        S.p_key_r[p] = r
    return S.r_finished[j] == W.j_nr[j]


@njit(cache=True, inline="always")
def assign_reduces(node, now, hb, most, batching, fit_size, W, S, R, F, regs, fregs):
    """The reduces of a heartbeat of ``node`` (module docstring), at most ``most``; how many launched.
    ``regs`` are the indices of the registers it uses: runnable reduces, running reduces, pools in the
    reduce order, next attempt, open batch, free batch slots, event heap size, sequence; ``fregs`` those of
    the reduce total update() computed and of the open batch's running time."""
    runnable_r, busy_r, n_order_r, next_attempt, open_, n_free, n_ev, seq = regs
    total_r, open_work = fregs
    state, rslot, free0, free1 = S.state, S.rslot, S.free0, S.free1
    j_d0r, j_d1r = W.j_d0r, W.j_d1r
    assigned = 0
    start = 0  # the order's first pools, each with every candidate passed by at this heartbeat
    while assigned != most and R[busy_r] != F[total_r]:
        chosen = -1
        p = -1
        i = start
        while i < R[n_order_r]:
            p = S.op_r[i]
            if S.p_fail_r[p] != hb:
                base = W.p_off[p]
                for x in range(S.p_n_r[p]):
                    j = S.cj_r[base + x]
                    if S.j_fail_r[j] == hb:
                        continue
                    if rslot[node] > 0 and j_d0r[j] <= free0[node] + _FIT_EPS and j_d1r[j] <= free1[node] + _FIT_EPS:
                        chosen = j
                        break
                    S.j_fail_r[j] = hb  # it cannot launch here at this heartbeat
                if chosen >= 0:
                    break
                S.p_fail_r[p] = hb  # every candidate of the pool passed by
            if i == start:
                start += 1
            i += 1
        if chosen < 0:
            break
        # the launch (``launch_tasks``): the stage's lowest pending task, at locality NONE
        j = chosen
        off = W.j_off_r[j]
        task = S.r_fresh[j]
        while state[off + task] != _PENDING:
            task += 1
        S.r_fresh[j] = task
        state[off + task] = _RUNNING
        S.r_pending[j] -= 1
        R[runnable_r] -= 1
        R[busy_r] += 1
        c = W.j_class_r[j]
        S.c_pending_r[c] -= 1
        if S.c_pending_r[c] == 0:
            fit_set(S.fit_r, fit_size, c, np.inf)
        work = W.j_dur_r[j] / W.node_speed[node]
        aid = R[next_attempt]
        R[next_attempt] = aid + 1
        S.a_task[aid] = task
        S.a_node[aid] = node
        b = R[open_]
        if (
            b >= 0
            and F[open_work] == work
            and S.s_start[b] == now
            and S.s_job[b] == j
            and S.s_stage[b] == _REDUCE
            and S.s_level[b] == _NONE
        ):
            S.s_count[b] += 1  # (it joins the open batch)
        else:
            R[n_free] -= 1
            b = S.free_slots[R[n_free]]
            S.s_job[b], S.s_first[b], S.s_count[b], S.s_stage[b] = j, aid, 1, _REDUCE
            S.s_start[b], S.s_end[b], S.s_level[b] = now, now + work, _NONE
            R[n_ev] = ev_push(S.et, S.es, S.eslot, R[n_ev], now + work, R[seq], b)
            R[seq] += 1
            R[open_] = b if batching else -1
            F[open_work] = work
        free0[node] -= j_d0r[j]
        free1[node] -= j_d1r[j]
        rslot[node] -= 1
        if np.isnan(S.first_start[j]):
            S.first_start[j] = now
        assigned += 1
        # ``_launched``: the job's place among its pool's reduce candidates, the pool's in the reduce order
        S.running_r[j] += 1
        r = S.running_r[j] / W.j_w[j] if S.r_pending[j] > 0 else np.nan
        S.p_n_r[p] = job_move(S.ck_r, S.cs_r, S.cj_r, W.p_off[p], S.p_n_r[p], S.j_key_r[j], r, W.submit[j], j)
        S.j_key_r[j] = r
        S.p_running_r[p] += 1
        r = S.p_running_r[p] / 1.0 if S.p_n_r[p] > 0 else np.nan
        R[n_order_r] = pool_move(S.ok_r, S.op_r, R[n_order_r], S.p_key_r[p], r, p)
        S.p_key_r[p] = r
    return assigned
