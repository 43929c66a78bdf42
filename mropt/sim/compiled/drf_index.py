"""The compiled loop's structures (numba; ``drf``, ``ddrf``, ``delay``): heaps, the per-class user heaps
and their trees, the locality stacks (:mod:`mropt.sim.compiled.drf_core` uses them; speed only).

**Who is offered a node first.** The plain rule (``_DrfBase._assign_reference``) walks the users
in increasing key and gives the node to the first with a job whose task fits. Here every *demand
class* (a distinct task demand, cpu and mem) keeps a heap of the users that have a job of that
class with pending tasks, each under its last key; the first user of the walk is the least of the
heap tops over the classes that fit the node. The classes are grouped by their cpu demand (the
``groups``), each group sorted by mem demand, so the classes of a group that fit a node are a
prefix of it: a min-tree over each group's heap tops answers for the prefix in a logarithmic
number of steps. A heap's top is kept valid: an entry is valid while its user's version is the
last (each push of the user gives it a new version and new entries, in the classes of its jobs with
pending tasks then), and stale entries are dropped when they come to the top (``refresh``). Under a
delay rule a user whose fitting jobs all declined in an offer call is set aside for the rest of the
call: its tops are popped (``heap_pop``) and pushed back, the same entries, at the call's end.

**Locality stacks** (``Stage.take``, :mod:`mropt.sim.locality_stacks`): per job, per node and per
rack, its tasks with a replica there in increasing order, each place read from a cursor that
skips the tasks no longer pending.

**No reference counting in the helpers.** Every helper here but :func:`build_stacks` allocates
nothing and is compiled with numba's ``_nrt=False``: a call that hands arrays to a function
compiled with numba's runtime costs two atomic reference-count steps per array, which on the
Alibaba day was a fifth of the run, and up to 42 % before other fixes (``benchmarks/RESULTS.md``,
"the compiled core").
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

#: numba's decorator for the helpers that allocate nothing: without its runtime (module docstring);
#: ``_nrt`` is an option numba's stubs do not list, hence the untyped alias
_untyped_njit: Any = njit
_plain = _untyped_njit(cache=True, _nrt=False)


@_plain
def less(k1, t1, u1, k2, t2, u2):
    """(key, tie, user) < (key, tie, user): Python's tuple order."""
    if k1 != k2:
        return k1 < k2
    if t1 != t2:
        return t1 < t2
    return u1 < u2


# -- heaps of (key, tie, user, version), each a segment of four pooled arrays -------------------------
@_plain
def heap_push(hk, ht, hu, hv, base, n, key, tie, u, ver):
    """Push an entry on the heap of ``n`` entries at ``base`` (the segment has room); the new size."""
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if less(key, tie, u, hk[base + p], ht[base + p], hu[base + p]):
            q = base + i
            r = base + p
            hk[q], ht[q], hu[q], hv[q] = hk[r], ht[r], hu[r], hv[r]
            i = p
        else:
            break
    q = base + i
    hk[q], ht[q], hu[q], hv[q] = key, tie, u, ver
    return n + 1


@_plain
def sift_down(hk, ht, hu, hv, base, n, i):
    """Move entry ``i`` of the heap of ``n`` entries at ``base`` down to its place."""
    q = base + i
    key, tie, u, ver = hk[q], ht[q], hu[q], hv[q]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        a = base + c
        if c + 1 < n and less(hk[a + 1], ht[a + 1], hu[a + 1], hk[a], ht[a], hu[a]):
            c += 1
            a += 1
        if less(hk[a], ht[a], hu[a], key, tie, u):
            q = base + i
            hk[q], ht[q], hu[q], hv[q] = hk[a], ht[a], hu[a], hv[a]
            i = c
        else:
            break
    q = base + i
    hk[q], ht[q], hu[q], hv[q] = key, tie, u, ver


@_plain
def heap_pop(hk, ht, hu, hv, base, n):
    """Remove the top of the heap of ``n`` entries at ``base``; the new size."""
    n -= 1
    if n > 0:
        q = base + n
        hk[base], ht[base], hu[base], hv[base] = hk[q], ht[q], hu[q], hv[q]
        sift_down(hk, ht, hu, hv, base, n, 0)
    return n


# -- the event heap: completions by (time, sequence number) -------------------------------------------
@_plain
def ev_push(et, es, eslot, n, time, seq, slot):
    """Push completion (time, seq) of batch ``slot``; the new size."""
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if time < et[p] or (time == et[p] and seq < es[p]):
            et[i], es[i], eslot[i] = et[p], es[p], eslot[p]
            i = p
        else:
            break
    et[i], es[i], eslot[i] = time, seq, slot
    return n + 1


@_plain
def ev_pop(et, es, eslot, n):
    """Remove the top completion; the new size."""
    n -= 1
    if n == 0:
        return 0
    time, seq, slot = et[n], es[n], eslot[n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and (et[c + 1] < et[c] or (et[c + 1] == et[c] and es[c + 1] < es[c])):
            c += 1
        if et[c] < time or (et[c] == time and es[c] < seq):
            et[i], es[i], eslot[i] = et[c], es[c], eslot[c]
            i = c
        else:
            break
    et[i], es[i], eslot[i] = time, seq, slot
    return n


# -- the class heaps' trees ---------------------------------------------------------------------------
@_plain
def tree_set(tree, off, size, i, c, top_k, top_t, top_u):
    """Leaf ``i`` of the min-tree at ``off`` (``size`` leaves) holds class ``c`` (-1: none); its ancestors
    the least top of their leaves."""
    p = size + i
    tree[off + p] = c
    p >>= 1
    while p >= 1:
        a = tree[off + 2 * p]
        b = tree[off + 2 * p + 1]
        if a < 0:
            best = b
        elif b < 0:
            best = a
        elif less(top_k[b], top_t[b], top_u[b], top_k[a], top_t[a], top_u[a]):
            best = b
        else:
            best = a
        tree[off + p] = best
        p >>= 1


@_plain
def tree_prefix(tree, off, size, count, top_k, top_t, top_u):
    """The class of least top among leaves 0 .. count - 1 (-1: none)."""
    best = -1
    lo = size
    hi = size + count  # half-open [lo, hi) over the leaf positions
    while lo < hi:
        if lo & 1:
            c = tree[off + lo]
            if c >= 0 and (best < 0 or less(top_k[c], top_t[c], top_u[c], top_k[best], top_t[best], top_u[best])):
                best = c
            lo += 1
        if hi & 1:
            hi -= 1
            c = tree[off + hi]
            if c >= 0 and (best < 0 or less(top_k[c], top_t[c], top_u[c], top_k[best], top_t[best], top_u[best])):
                best = c
        lo >>= 1
        hi >>= 1
    return best


@_plain
def compact(c, pk, pt, pu, pv, c_base, ch_n, c_valid, u_ver):
    """Class ``c``'s heap with its valid entries only (each user's at its last key, ``u_ver``); its
    size. A class's segment holds twice the users with jobs of the class, and more: room after this."""
    base = c_base[c]
    m = 0
    for p in range(ch_n[c]):
        q = base + p
        if pv[q] == u_ver[pu[q]]:
            r = base + m
            pk[r], pt[r], pu[r], pv[r] = pk[q], pt[q], pu[q], pv[q]
            m += 1
    c_valid[c] = m
    for p in range((m >> 1) - 1, -1, -1):
        sift_down(pk, pt, pu, pv, base, m, p)
    ch_n[c] = m
    return m


@_plain
def class_push(c, key, tie, u, ver, pk, pt, pu, pv, c_base, c_cap, ch_n, c_valid, u_ver):
    """Push (key, tie, u, ver) on class ``c``'s heap (compacted first when its segment is full)."""
    n = ch_n[c]
    if n == c_cap[c]:
        n = compact(c, pk, pt, pu, pv, c_base, ch_n, c_valid, u_ver)
    ch_n[c] = heap_push(pk, pt, pu, pv, c_base[c], n, key, tie, u, ver)


@_plain
def refresh(
    c, pk, pt, pu, pv, c_base, ch_n, c_valid, u_ver, top_k, top_t, top_u, tree, g_low, c_group, g_first, g_off, g_size
):  # noqa: E501
    """Class ``c``'s heap without stale entries at its top (compacted when they are most of it), its top
    in its group's min-tree, and the group's first class with users (``g_low``)."""
    base = c_base[c]
    n = ch_n[c]
    if n > 2 * c_valid[c] + 32:
        n = compact(c, pk, pt, pu, pv, c_base, ch_n, c_valid, u_ver)
    while n > 0 and pv[base] != u_ver[pu[base]]:
        n = heap_pop(pk, pt, pu, pv, base, n)
    ch_n[c] = n
    g = c_group[c]
    leaf = c - g_first[g]
    if n > 0:
        top_k[c], top_t[c], top_u[c] = pk[base], pt[base], pu[base]
        tree_set(tree, g_off[g], g_size[g], leaf, c, top_k, top_t, top_u)
        if g_low[g] < 0 or c < g_low[g]:
            g_low[g] = c
    else:
        tree_set(tree, g_off[g], g_size[g], leaf, -1, top_k, top_t, top_u)
        if g_low[g] == c:  # the group's next class with users
            g_low[g] = -1
            for c2 in range(c + 1, g_first[g + 1]):
                if ch_n[c2] > 0:
                    g_low[g] = c2
                    break


@_plain
def first_fitting(limit0, limit1, g_d0, g_first, g_low, c_d1, g_off, g_size, tree, top_k, top_t, top_u):  # noqa: E501
    """The class whose heap top is least among the classes of demand at most (``limit0``, ``limit1``)
    with users; -1 when none. Groups in increasing demand 0, a group's classes in increasing demand 1."""
    best = -1
    for g in range(len(g_d0)):
        if g_d0[g] > limit0:
            break
        low = g_low[g]
        if low < 0 or c_d1[low] > limit1:  # no class of the group with users fits
            continue
        lo, hi = g_first[g], g_first[g + 1]
        if c_d1[hi - 1] <= limit1:  # every class of the group fits: the tree's root
            c = tree[g_off[g] + 1]
        else:
            a, b = lo, hi  # (a bisection by hand: a slice would cost two atomic reference counts)
            while a < b:
                mid = (a + b) >> 1
                if c_d1[mid] <= limit1:
                    a = mid + 1
                else:
                    b = mid
            c = tree_prefix(tree, g_off[g], g_size[g], a - lo, top_k, top_t, top_u)
        if c >= 0 and (best < 0 or less(top_k[c], top_t[c], top_u[c], top_k[best], top_t[best], top_u[best])):
            best = c
    return best


# -- locality stacks --------------------------------------------------------------------------------
@njit(cache=True)
def build_stacks(replicas, off, n, node_rack, n_nodes, n_racks):
    """A job's per-node and per-rack stacks of task ids (each place's tasks in increasing order, a task
    once per place), as one int32 array (one reference to hold, not six): ``[2 + n_nodes * 2 + n_racks
    * 2]`` header of the node ids' length and the rack ids' length, then each node's cursor and end,
    each rack's cursor and end (positions in the array), then the node ids and the rack ids."""
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
    head = 2 + 2 * n_nodes + 2 * n_racks
    nbase = head
    rbase = head + ncount[n_nodes]
    out = np.empty(rbase + rcount[n_racks], np.int32)
    out[0], out[1] = ncount[n_nodes], rcount[n_racks]
    for i in range(n_nodes):  # cursor and end: the place's first position, its end grows as it fills
        out[2 + 2 * i] = out[3 + 2 * i] = nbase + ncount[i]
    rh = 2 + 2 * n_nodes
    for i in range(n_racks):
        out[rh + 2 * i] = out[rh + 2 * i + 1] = rbase + rcount[i]
    for t in range(n):
        for r in range(width):
            node = replicas[off + t, r]
            if node < 0:
                continue
            e = out[3 + 2 * node]
            if e == out[2 + 2 * node] or out[e - 1] != t:
                out[e] = t
                out[3 + 2 * node] = e + 1
            rack = node_rack[node]
            e = out[rh + 2 * rack + 1]
            if e == out[rh + 2 * rack] or out[e - 1] != t:
                out[e] = t
                out[rh + 2 * rack + 1] = e + 1
    return out


@_plain
def pop_place(stacks, at, state, off):
    """The lowest pending task of the place whose (cursor, end) pair is at ``stacks[at]`` (left on its
    stack: the cursor moves past the tasks no longer pending), or -1."""
    k = stacks[at]
    e = stacks[at + 1]
    while k < e and state[off + stacks[k]] != 0:
        k += 1
    stacks[at] = k
    return stacks[k] if k < e else -1
