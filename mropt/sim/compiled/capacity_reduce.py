"""The reduce side of the compiled ``capacity`` loop (:mod:`mropt.sim.compiled.capacity_core`; numba, inlined
where it is called: speed only).

The plain rule (``CapacityReference._assign_reference``; Hadoop 1.0.3 ``CapacityTaskScheduler.addReduceTask``)
gives a heartbeat at most one reduce, after its maps, where the tracker has a free reduce slot: the first
job of the default queue (its jobs in the order (submit time, job), their **rank**) with a pending reduce
whose launch succeeds (``Launches.launch_tasks``: a free reduce slot, then the demand fits the tracker's
free resources). The user limit holds no job back (one queue at 100 %: ``Capacity._limit``) and a reduce
asks for no locality, so the first job of a reduce candidate whose demand fits launches.

* the **reduce candidates** (``_set_key`` with REDUCE): a tree over the ranks (:func:`rq_set`), each leaf
  the candidate's reduce demand (cpu, mem; 0, 0 without demands; infinity: no candidate), each inner node
  the least cpu and the least mem below it; :func:`first_fit` finds the least rank whose demand fits, a
  descent that leaves a subtree whose least cpu or least mem does not fit;
* :func:`open_reduces`: a job's map stage ended and it has a reduce stage (``Completions._stage_done``,
  ``_stage_ready``; no slow-start): its reduces runnable, the job a reduce candidate at its rank;
* :func:`assign_reduce`: the heartbeat's reduce: the stage's lowest pending task (``Stage.take`` without
  replicas: locality NONE, the stage's duration over the node's speed), batches joined as the maps'.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mropt.sim.compiled.drf_index import ev_push
from mropt.sim.compiled.fair_order import fit_set

_FIT_EPS = 1e-9  # mropt.sim.capacity.FIT_EPS
_PENDING, _RUNNING = 0, 1  # mropt.sim.task_states
_NONE = -1  # mropt.sim.state.NONE: a task without replicas
_REDUCE = 1  # mropt.sim.state.REDUCE: the stage's index and slot type


@njit(cache=True, inline="always")
def rq_set(q0, q1, size, rank, d0, d1):
    """The reduce candidates' tree: leaf ``rank`` holds (``d0``, ``d1``) (infinity: no candidate), its
    ancestors the least of each below."""
    p = size + rank
    q0[p] = d0
    q1[p] = d1
    p >>= 1
    while p >= 1:
        a, b = q0[2 * p], q0[2 * p + 1]
        q0[p] = a if a <= b else b
        a, b = q1[2 * p], q1[2 * p + 1]
        q1[p] = a if a <= b else b
        p >>= 1


@njit(cache=True, inline="always")
def first_fit(q0, q1, size, lim0, lim1):
    """The least rank of a reduce candidate whose demand is at most (``lim0``, ``lim1``), or -1."""
    if q0[1] > lim0 or q1[1] > lim1:
        return -1
    p = 1
    while True:
        if p >= size:
            return p - size  # (a leaf within both limits: one candidate's demand fits)
        c = 2 * p
        if q0[c] <= lim0 and q1[c] <= lim1:
            p = c
            continue
        c += 1
        if q0[c] <= lim0 and q1[c] <= lim1:
            p = c
            continue
        while True:  # no child of p fits: back to the nearest right sibling not yet tried that may
            if p == 1:
                return -1
            if p & 1 == 0 and q0[p + 1] <= lim0 and q1[p + 1] <= lim1:
                p += 1
                break
            p >>= 1


@njit(cache=True, inline="always")
def open_reduces(j, W, S, R, runnable_r, fit_size):
    """Job ``j``'s map stage ended: its reduces runnable (``R[runnable_r]``), its demand class among those
    with pending reduces (the room test's fit tree), the job a reduce candidate at its rank."""
    n = W.j_nr[j]
    R[runnable_r] += n
    c = W.j_class_r[j]
    if S.c_pending_r[c] == 0:
        fit_set(S.fit_r, fit_size, c, W.c_d1[c])
    S.c_pending_r[c] += n
    rq_set(S.rq0, S.rq1, len(S.rq0) >> 1, W.rank[j], W.j_d0r[j], W.j_d1r[j])


@njit(cache=True, inline="always")
def assign_reduce(node, now, batching, fit_size, W, S, R, F, regs, fregs):
    """The heartbeat's reduce on ``node`` (module docstring): whether one launched. ``regs`` are the
    indices of the registers it uses: runnable reduces, running reduces, next attempt, open batch, free
    batch slots, event heap size, sequence; ``fregs`` that of the open batch's running time."""
    runnable_r, busy_r, next_attempt, open_, n_free, n_ev, seq = regs
    (open_work,) = fregs
    state, rslot, free0, free1 = S.state, S.rslot, S.free0, S.free1
    size = len(S.rq0) >> 1
    r = first_fit(S.rq0, S.rq1, size, free0[node] + _FIT_EPS, free1[node] + _FIT_EPS)
    if r < 0:
        return False
    j = W.arrivals[r]
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
    if S.r_pending[j] == 0:  # ``_launched``: no pending reduce, no longer a candidate
        rq_set(S.rq0, S.rq1, size, r, np.inf, np.inf)
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
    free0[node] -= W.j_d0r[j]
    free1[node] -= W.j_d1r[j]
    rslot[node] -= 1
    if np.isnan(S.first_start[j]):
        S.first_start[j] = now
    return True
