"""``drf`` in event mode as one compiled loop (numba): the plain rules of :mod:`mropt.sim.policies.drf`
and of the engine, over arrays (issue 32).

What it runs, and nothing else (:mod:`mropt.sim.compiled.drf_engine` checks a run qualifies and
falls back to the Python engine otherwise): the policy ``drf`` (no delay: every launch at any
level), event mode, a cluster of two resources and no slots, jobs of one map stage of one
duration and one demand, no speculation, no node faults, no straggler draws, no ``until``, no
watch. The rules are those of the Python engine and policy, step for step:

* **the event order** (:mod:`mropt.sim.engine`): an instant runs the completions due at its time
  (in the order they were scheduled: a batch's id is its order), then the arrivals (in
  (submit, index) order), then the pass of :class:`mropt.sim.offers.EventOffers`: every node in
  order after new work, else the nodes whose capacity freed, in order, each offered while a task
  is runnable; a completion scheduled at the instant's own time by the pass is a new instant;
* **the offer of a node** (``_DrfBase._assign_reference``): while the node has room for the
  workload's smallest demand, the users in increasing key (dominant share rounded to 12
  significant digits, tie key of the next task at the user's last push, user index), each
  user's jobs in arrival order; the first job whose task fits launches one task, the user is
  pushed again (its share grew) and the order is taken again;
* **the task** (``Stage.take``): the lowest pending task with a replica on the node, else in its
  rack, else the lowest pending task (levels node, rack, any; none without replicas);
* **batches** (:mod:`mropt.sim.attempts`): a launch joins the batch opened last at this instant
  when its stage, level and running time are the same; a batch ends in one completion, and the
  user's share falls by the batch's count times its task's vector in one addition, as
  ``_DrfBase.on_attempts_end`` does;
* **shares** (``_DrfBase._add``): ``use_k + count x vec_k``, the share ``max(use_0 / R_0, use_1 / R_1)``.

Equality with the Python engine is tested on random workloads (``tests/sim/test_compiled_drf.py``):
the same event-log hash, tables and job outcomes.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.typed import List

from mropt.sim.compiled.rounding import sig12

_FIT_EPS = 1e-9  # mropt.sim.capacity.FIT_EPS
_ROOM_EPS = 1e-9  # mropt.sim.policies.drf_runs._EPS (``_DrfBase._room``)
_PENDING, _RUNNING, _DONE = 0, 1, 2  # mropt.sim.task_states
_NODE, _RACK, _ANY, _NONE = 0, 1, 2, -1  # mropt.sim.state


@njit(cache=True)
def _less(k1: float, t1: float, u1: int, k2: float, t2: float, u2: int) -> bool:
    """(key, tie, user) < (key, tie, user): Python's tuple order."""
    if k1 != k2:
        return k1 < k2
    if t1 != t2:
        return t1 < t2
    return u1 < u2


@njit(cache=True)
def _heap_push(hk, ht, hu, hv, n, key, tie, u, ver):  # type: ignore[no-untyped-def]
    """Push (key, tie, u, ver) on the user heap of ``n`` entries (arrays large enough); the new size."""
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if _less(key, tie, u, hk[p], ht[p], hu[p]):
            hk[i], ht[i], hu[i], hv[i] = hk[p], ht[p], hu[p], hv[p]
            i = p
        else:
            break
    hk[i], ht[i], hu[i], hv[i] = key, tie, u, ver
    return n + 1


@njit(cache=True)
def _sift_down(hk, ht, hu, hv, n, i):  # type: ignore[no-untyped-def]
    key, tie, u, ver = hk[i], ht[i], hu[i], hv[i]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and _less(hk[c + 1], ht[c + 1], hu[c + 1], hk[c], ht[c], hu[c]):
            c += 1
        if _less(hk[c], ht[c], hu[c], key, tie, u):
            hk[i], ht[i], hu[i], hv[i] = hk[c], ht[c], hu[c], hv[c]
            i = c
        else:
            break
    hk[i], ht[i], hu[i], hv[i] = key, tie, u, ver


@njit(cache=True)
def _ev_push(et, eb, n, time, batch):  # type: ignore[no-untyped-def]
    """Push completion (time, batch) on the event heap (ordered by time, then batch id)."""
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if time < et[p] or (time == et[p] and batch < eb[p]):
            et[i], eb[i] = et[p], eb[p]
            i = p
        else:
            break
    et[i], eb[i] = time, batch
    return n + 1


@njit(cache=True)
def _ev_pop(et, eb, n):  # type: ignore[no-untyped-def]
    """Remove the top of the event heap of ``n`` entries; the new size."""
    n -= 1
    if n == 0:
        return 0
    time, batch = et[n], eb[n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and (et[c + 1] < et[c] or (et[c + 1] == et[c] and eb[c + 1] < eb[c])):
            c += 1
        if et[c] < time or (et[c] == time and eb[c] < batch):
            et[i], eb[i] = et[c], eb[c]
            i = c
        else:
            break
    et[i], eb[i] = time, batch
    return n


@njit(cache=True)
def _build_stacks(replicas, off, n, node_rack, n_nodes, n_racks):  # type: ignore[no-untyped-def]
    """A job's per-node and per-rack stacks of task ids (each place's tasks in increasing order, a
    task once per place): (node ids, node starts, node ends, rack ids, rack starts, rack ends)."""
    width = replicas.shape[1]
    ncount = np.zeros(n_nodes + 1, np.int64)
    rcount = np.zeros(n_racks + 1, np.int64)
    for t in range(n):
        for r in range(width):
            node = replicas[off + t, r]
            if node >= 0:
                ncount[node + 1] += 1
                rcount[node_rack[node] + 1] += 1
    for i in range(n_nodes):
        ncount[i + 1] += ncount[i]
    for i in range(n_racks):
        rcount[i + 1] += rcount[i]
    nids = np.empty(ncount[n_nodes], np.int32)
    rids = np.empty(rcount[n_racks], np.int32)
    nend = ncount[:n_nodes].copy()
    rend = rcount[:n_racks].copy()
    for t in range(n):
        for r in range(width):
            node = replicas[off + t, r]
            if node < 0:
                continue
            e = nend[node]
            if e == ncount[node] or nids[e - 1] != t:
                nids[e] = t
                nend[node] = e + 1
            rack = node_rack[node]
            e = rend[rack]
            if e == rcount[rack] or rids[e - 1] != t:
                rids[e] = t
                rend[rack] = e + 1
    return nids, ncount[:n_nodes].copy(), nend, rids, rcount[:n_racks].copy(), rend


@njit(cache=True)
def run_drf(  # type: ignore[no-untyped-def]
    arrivals,  # int32[jobs]: job indices in (submit, index) order
    submit,  # float64[jobs]
    j_user,  # int32[jobs]: the user's index (users numbered in order of first arrival)
    j_n,  # int32[jobs]: tasks
    j_off,  # int64[jobs]: the first task's row in the task arrays and in ``replicas``
    j_dur,  # float64[jobs]: the tasks' base duration
    j_d0,  # float64[jobs]: demand of resource 0 (and the DRF vector's member 0)
    j_d1,  # float64[jobs]
    j_tie,  # float64[jobs]: tie key of a task (``tie_key`` of its dominant share)
    replicas,  # int[tasks, R] (R may be 0: no replicas)
    placed,  # bool: the tasks have replicas
    node_rack,  # int32[nodes]
    node_speed,  # float64[nodes]
    free0,  # float64[nodes]: free resource 0 (changed in place)
    free1,  # float64[nodes]
    tot0,  # float: the cluster's total of resource 0
    tot1,
    low0,  # float: the smallest demand of any task, resource 0
    low1,
    rack_factor,
    remote_factor,
    n_users,
    n_racks,
    idle_tie,  # float: the tie key of a user with no work
    batching,  # bool: batches on
    j_class,  # int32[jobs]: the job's demand class (classes sorted by demand 0, then demand 1)
    c_group,  # int32[classes]: the class's group (the classes of one demand 0)
    c_d1,  # float64[classes]: the class's demand 1
    g_d0,  # float64[groups]: the group's demand 0
    g_first,  # int32[groups + 1]: the group's classes are g_first[g] .. g_first[g + 1] - 1
):
    """Run the whole workload (module docstring). Returns the per-attempt columns (task, node, in
    launch order), the batches (job, first attempt, count, start, end, level), the batch ids in
    the order they ended, the jobs' first start and finish, the job ids in the order they ended,
    the event count, the breaks of the utilisation rows (time, next attempt, ended entries), and
    the first instant's time."""
    n_jobs = len(j_n)
    n_nodes = len(node_rack)
    n_tasks = 0
    for j in range(n_jobs):
        n_tasks += j_n[j]
    # tasks and attempts
    state = np.zeros(n_tasks, np.int8)
    a_task = np.empty(n_tasks, np.int32)
    a_node = np.empty(n_tasks, np.int32)
    # batches (the most there can be: one per attempt)
    cap_b = max(1024, n_tasks // 4)
    b_job = np.empty(cap_b, np.int32)
    b_first = np.empty(cap_b, np.int64)
    b_count = np.empty(cap_b, np.int32)
    b_start = np.empty(cap_b, np.float64)
    b_end = np.empty(cap_b, np.float64)
    b_level = np.empty(cap_b, np.int8)
    n_b = 0
    ended = np.empty(cap_b, np.int64)  # batch ids in the order they ended
    n_ended = 0
    # events: completions only (arrivals are read from ``arrivals`` in order)
    et = np.empty(1024, np.float64)
    eb = np.empty(1024, np.int64)
    n_ev = 0
    # jobs
    pending = j_n.copy()
    fresh = np.zeros(n_jobs, np.int64)
    finished = np.zeros(n_jobs, np.int64)
    first_start = np.full(n_jobs, np.nan)
    finish = np.full(n_jobs, np.nan)
    end_order = np.empty(n_jobs, np.int32)
    n_end = 0
    j_next = np.full(n_jobs, -1, np.int32)  # the user's next job in arrival order
    j_prev = np.full(n_jobs, -1, np.int32)
    empty = np.empty(0, np.int32)
    empty64 = np.empty(0, np.int64)
    s_nids = List()
    s_nstart = List()
    s_nend = List()
    s_rids = List()
    s_rstart = List()
    s_rend = List()
    built = np.zeros(n_jobs, np.bool_)
    for j in range(n_jobs):
        s_nids.append(empty)
        s_nstart.append(empty64)
        s_nend.append(empty64)
        s_rids.append(empty)
        s_rstart.append(empty64)
        s_rend.append(empty64)
    # users
    u_head = np.full(n_users, -1, np.int32)
    u_tail = np.full(n_users, -1, np.int32)
    u_work = np.full(n_users, -1, np.int32)  # no job before it in the list has pending tasks
    u_use0 = np.zeros(n_users)
    u_use1 = np.zeros(n_users)
    u_share = np.zeros(n_users)
    u_ver = np.zeros(n_users, np.int64)
    u_live = np.zeros(n_users, np.bool_)  # its last entry is in the heap and may have work
    n_live = 0
    cap_h = 1024
    hk = np.empty(cap_h)
    ht = np.empty(cap_h)
    hu = np.empty(cap_h, np.int32)
    hv = np.empty(cap_h, np.int64)
    n_h = 0
    aux = np.empty(64, np.int64)  # the walk's heap of positions in the user heap
    # nodes freed at this instant
    dirty_mark = np.zeros(n_nodes, np.bool_)
    dirty = np.empty(n_nodes, np.int64)
    n_dirty = 0
    all_nodes = np.arange(n_nodes)
    # pending tasks per demand class; per group, its first class (least demand 1) with some (-1: none)
    n_groups = len(g_d0)
    c_pend = np.zeros(len(c_d1), np.int64)
    g_low = np.full(n_groups, -1, np.int64)
    walked = 0
    offers = 0
    # the run
    runnable = 0
    next_attempt = 0
    open_b = -1  # the batch a launch may join
    open_work = 0.0
    events = 0
    breaks_t = np.empty(16, np.float64)
    breaks_a = np.empty(16, np.int64)
    breaks_e = np.empty(16, np.int64)
    n_breaks = 0
    ai = 0  # next arrival
    last = -np.inf
    first_time = np.nan
    arriving = -1
    factor_rack = rack_factor
    factor_any = remote_factor
    while ai < n_jobs or n_ev > 0:
        now = et[0] if n_ev > 0 else np.inf
        if ai < n_jobs and submit[arrivals[ai]] < now:
            now = submit[arrivals[ai]]
        if np.isnan(first_time):
            first_time = now
        if now == last:  # the instant before wrote its rows at this time
            if n_breaks == len(breaks_t):
                breaks_t = np.concatenate((breaks_t, np.empty(n_breaks, np.float64)))
                breaks_a = np.concatenate((breaks_a, np.empty(n_breaks, np.int64)))
                breaks_e = np.concatenate((breaks_e, np.empty(n_breaks, np.int64)))
            breaks_t[n_breaks] = now
            breaks_a[n_breaks] = next_attempt
            breaks_e[n_breaks] = n_ended
            n_breaks += 1
        last = now
        new_work = False
        # -- completions (class 0), in the order they were scheduled
        while n_ev > 0 and et[0] == now:
            b = eb[0]
            n_ev = _ev_pop(et, eb, n_ev)
            events += 1
            if b == open_b:  # a task of no time, ending at its start
                open_b = -1
            j = b_job[b]
            off = j_off[j]
            k = b_count[b]
            first = b_first[b]
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
            ended[n_ended] = b
            n_ended += 1
            # on_attempts_end: the user's share, and its new entry
            u = j_user[j]
            a = u_use0[u] + (-k) * d0
            c = u_use1[u] + (-k) * d1
            u_use0[u] = a
            u_use1[u] = c
            u_share[u] = max(a / tot0, c / tot1)
            finished[j] += k
            # _push(u): the tie of the user's first job with work
            tie = idle_tie
            q = u_work[u]
            while q >= 0 and pending[q] == 0:
                q = j_next[q]
            u_work[u] = q
            if q >= 0:
                tie = j_tie[q]
            u_ver[u] += 1
            if not u_live[u]:
                u_live[u] = True
                n_live += 1
            if n_h == cap_h:
                cap_h *= 2
                hk = np.concatenate((hk, np.empty(n_h)))
                ht = np.concatenate((ht, np.empty(n_h)))
                hu = np.concatenate((hu, np.empty(n_h, np.int32)))
                hv = np.concatenate((hv, np.empty(n_h, np.int64)))
            n_h = _heap_push(hk, ht, hu, hv, n_h, sig12(u_share[u]), tie, u, u_ver[u])
            if finished[j] == j_n[j]:  # the stage and the job end
                finish[j] = now
                end_order[n_end] = j
                n_end += 1
                if built[j]:
                    s_nids[j] = empty
                    s_nstart[j] = empty64
                    s_nend[j] = empty64
                    s_rids[j] = empty
                    s_rstart[j] = empty64
                    s_rend[j] = empty64
                # on_job_end: out of the user's list
                p, nx = j_prev[j], j_next[j]
                if p >= 0:
                    j_next[p] = nx
                else:
                    u_head[u] = nx
                if nx >= 0:
                    j_prev[nx] = p
                else:
                    u_tail[u] = p
                if u_work[u] == j:
                    u_work[u] = nx
        # -- arrivals (class 2)
        while ai < n_jobs and submit[arrivals[ai]] == now:
            j = arrivals[ai]
            ai += 1
            events += 1
            u = j_user[j]
            if u_tail[u] >= 0:
                j_next[u_tail[u]] = j
                j_prev[j] = u_tail[u]
            else:
                u_head[u] = j
            u_tail[u] = j
            if u_work[u] < 0:
                u_work[u] = j
            # _push(u), the arriving job counted as having work
            arriving = j
            tie = idle_tie
            q = u_work[u]
            while q >= 0 and pending[q] == 0 and q != arriving:
                q = j_next[q]
            u_work[u] = q
            if q >= 0:
                tie = j_tie[q]
            arriving = -1
            u_ver[u] += 1
            if not u_live[u]:
                u_live[u] = True
                n_live += 1
            if n_h == cap_h:
                cap_h *= 2
                hk = np.concatenate((hk, np.empty(n_h)))
                ht = np.concatenate((ht, np.empty(n_h)))
                hu = np.concatenate((hu, np.empty(n_h, np.int32)))
                hv = np.concatenate((hv, np.empty(n_h, np.int64)))
            n_h = _heap_push(hk, ht, hu, hv, n_h, sig12(u_share[u]), tie, u, u_ver[u])
            runnable += j_n[j]
            new_work = True
            c = j_class[j]
            c_pend[c] += j_n[j]
            g = c_group[c]
            if g_low[g] < 0 or c < g_low[g]:
                g_low[g] = c
        # -- the pass
        if new_work:
            nodes = all_nodes
            n_pass = n_nodes
        else:
            nodes = np.sort(dirty[:n_dirty])
            n_pass = n_dirty
        for i in range(n_dirty):
            dirty_mark[dirty[i]] = False
        n_dirty = 0
        for i in range(n_pass):
            if runnable == 0:
                break
            node = nodes[i]
            rack = node_rack[node]
            # the offer of ``node`` (``_assign_reference``)
            while free0[node] + _ROOM_EPS >= low0 and free1[node] + _ROOM_EPS >= low1:
                # compact the heap when stale entries are most of it
                if n_h > 2 * n_live + 64:
                    m = 0
                    for p in range(n_h):
                        u = hu[p]
                        if u_live[u] and hv[p] == u_ver[u]:
                            hk[m], ht[m], hu[m], hv[m] = hk[p], ht[p], hu[p], hv[p]
                            m += 1
                    n_h = m
                    for p in range((n_h >> 1) - 1, -1, -1):
                        _sift_down(hk, ht, hu, hv, n_h, p)
                # does any pending task fit? (else no user can launch: the walk would find none)
                fits = False
                for g in range(n_groups):
                    if g_d0[g] <= free0[node] + _FIT_EPS and g_low[g] >= 0 and c_d1[g_low[g]] <= free1[node] + _FIT_EPS:
                        fits = True
                        break
                if not fits:
                    break
                offers += 1
                # walk the heap in key order (a heap of positions), to the first user with a job that fits
                launcher = -1
                job = -1
                n_aux = 0
                if n_h > 0:
                    aux[0] = 0
                    n_aux = 1
                while n_aux > 0:
                    p = aux[0]
                    walked += 1
                    # pop aux
                    n_aux -= 1
                    if n_aux > 0:
                        x = aux[n_aux]
                        r = 0
                        while True:
                            c = 2 * r + 1
                            if c >= n_aux:
                                break
                            if c + 1 < n_aux and _less(
                                hk[aux[c + 1]], ht[aux[c + 1]], hu[aux[c + 1]], hk[aux[c]], ht[aux[c]], hu[aux[c]]
                            ):
                                c += 1
                            if _less(hk[aux[c]], ht[aux[c]], hu[aux[c]], hk[x], ht[x], hu[x]):
                                aux[r] = aux[c]
                                r = c
                            else:
                                break
                        aux[r] = x
                    u = hu[p]
                    if u_live[u] and hv[p] == u_ver[u]:
                        q = u_work[u]
                        while q >= 0 and pending[q] == 0:
                            q = j_next[q]
                        u_work[u] = q
                        if q < 0:  # no work: out of the heap until its next push
                            u_live[u] = False
                            n_live -= 1
                        else:
                            while q >= 0:
                                if pending[q] > 0 and j_d0[q] <= free0[node] + _FIT_EPS and j_d1[q] <= free1[node] + _FIT_EPS:
                                    break
                                q = j_next[q]
                            if q >= 0:
                                launcher = u
                                job = q
                                break
                    # the children of p
                    for c in (2 * p + 1, 2 * p + 2):
                        if c < n_h:
                            if n_aux + 1 > len(aux):
                                aux = np.concatenate((aux, np.empty(len(aux), np.int64)))
                            r = n_aux
                            while r > 0:
                                pr = (r - 1) >> 1
                                if _less(hk[c], ht[c], hu[c], hk[aux[pr]], ht[aux[pr]], hu[aux[pr]]):
                                    aux[r] = aux[pr]
                                    r = pr
                                else:
                                    break
                            aux[r] = c
                            n_aux += 1
                if launcher < 0:
                    break
                # launch one task of ``job`` on ``node`` (``Launches.launch_tasks``, count 1, level any)
                off = j_off[job]
                n = j_n[job]
                task = -1
                level = _NONE
                if placed:
                    if not built[job]:
                        nids, nst, nen, rids, rst, ren = _build_stacks(replicas, off, n, node_rack, n_nodes, n_racks)
                        s_nids[job] = nids
                        s_nstart[job] = nst
                        s_nend[job] = nen
                        s_rids[job] = rids
                        s_rstart[job] = rst
                        s_rend[job] = ren
                        built[job] = True
                    ids = s_nids[job]
                    cur = s_nstart[job]
                    e = s_nend[job][node]
                    k = cur[node]
                    while k < e and state[off + ids[k]] != _PENDING:
                        k += 1
                    cur[node] = k
                    if k < e:
                        task = ids[k]
                        level = _NODE
                    else:
                        ids = s_rids[job]
                        cur = s_rstart[job]
                        e = s_rend[job][rack]
                        k = cur[rack]
                        while k < e and state[off + ids[k]] != _PENDING:
                            k += 1
                        cur[rack] = k
                        if k < e:
                            task = ids[k]
                            level = _RACK
                if task < 0:
                    k = fresh[job]
                    while k < n and state[off + k] != _PENDING:
                        k += 1
                    fresh[job] = k
                    task = k
                    level = _ANY if (placed and replicas.shape[1] > 0) else _NONE
                state[off + task] = _RUNNING
                pending[job] -= 1
                runnable -= 1
                c = j_class[job]
                c_pend[c] -= 1
                if c_pend[c] == 0 and g_low[c_group[c]] == c:
                    g = c_group[c]
                    g_low[g] = -1
                    for c2 in range(c + 1, g_first[g + 1]):
                        if c_pend[c2] > 0:
                            g_low[g] = c2
                            break
                work = j_dur[job] / node_speed[node]
                if level == _RACK:
                    work *= factor_rack
                elif level == _ANY:
                    work *= factor_any
                aid = next_attempt
                next_attempt += 1
                a_task[aid] = task
                a_node[aid] = node
                if (
                    open_b >= 0
                    and open_work == work
                    and b_start[open_b] == now
                    and b_job[open_b] == job
                    and b_level[open_b] == level
                ):
                    b_count[open_b] += 1
                else:
                    if n_b == len(b_job):
                        grow = len(b_job)
                        b_job = np.concatenate((b_job, np.empty(grow, np.int32)))
                        b_first = np.concatenate((b_first, np.empty(grow, np.int64)))
                        b_count = np.concatenate((b_count, np.empty(grow, np.int32)))
                        b_start = np.concatenate((b_start, np.empty(grow, np.float64)))
                        b_end = np.concatenate((b_end, np.empty(grow, np.float64)))
                        b_level = np.concatenate((b_level, np.empty(grow, np.int8)))
                        ended = np.concatenate((ended, np.empty(grow, np.int64)))
                    b = n_b
                    n_b += 1
                    b_job[b] = job
                    b_first[b] = aid
                    b_count[b] = 1
                    b_start[b] = now
                    b_end[b] = now + work
                    b_level[b] = level
                    if n_ev == len(et):
                        et = np.concatenate((et, np.empty(n_ev, np.float64)))
                        eb = np.concatenate((eb, np.empty(n_ev, np.int64)))
                    n_ev = _ev_push(et, eb, n_ev, now + work, b)
                    if batching:
                        open_b = b
                        open_work = work
                    else:
                        open_b = -1
                free0[node] -= j_d0[job]
                free1[node] -= j_d1[job]
                if np.isnan(first_start[job]):
                    first_start[job] = now
                # _add(launcher, +1) and _push(launcher)
                u = launcher
                a = u_use0[u] + 1.0 * j_d0[job]
                c = u_use1[u] + 1.0 * j_d1[job]
                u_use0[u] = a
                u_use1[u] = c
                u_share[u] = max(a / tot0, c / tot1)
                tie = idle_tie
                q = u_work[u]
                while q >= 0 and pending[q] == 0:
                    q = j_next[q]
                u_work[u] = q
                if q >= 0:
                    tie = j_tie[q]
                u_ver[u] += 1
                if n_h == cap_h:
                    cap_h *= 2
                    hk = np.concatenate((hk, np.empty(n_h)))
                    ht = np.concatenate((ht, np.empty(n_h)))
                    hu = np.concatenate((hu, np.empty(n_h, np.int32)))
                    hv = np.concatenate((hv, np.empty(n_h, np.int64)))
                n_h = _heap_push(hk, ht, hu, hv, n_h, sig12(u_share[u]), tie, u, u_ver[u])
    return (
        a_task[:next_attempt],
        a_node[:next_attempt],
        b_job[:n_b],
        b_first[:n_b],
        b_count[:n_b],
        b_start[:n_b],
        b_end[:n_b],
        b_level[:n_b],
        ended[:n_ended],
        first_start,
        finish,
        end_order[:n_end],
        events,
        breaks_t[:n_breaks],
        breaks_a[:n_breaks],
        breaks_e[:n_breaks],
        first_time,
        last,
        walked,
        offers,
    )
