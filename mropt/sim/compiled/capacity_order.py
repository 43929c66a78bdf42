"""The compiled ``capacity`` loop's kept structures (numba; :mod:`mropt.sim.compiled.capacity_core` uses
them; speed only).

The plain rule (``CapacityReference._assign_reference``) walks the queue's map candidates (the active
jobs with pending maps, in the order (submit time, job): a job's **rank**, its place in the arrivals)
before every map, and gives each job it passes a scheduling opportunity. As
:mod:`mropt.sim.policies.capacity_passes` does in Python, the loop visits only the candidates whose
demand fits the tracker's free resources and counts the others' opportunities in bulk:

* **the passes** (``PassCounts``): a walk that stops at rank ``r`` gives one to every rank below
  ``r`` (a Fenwick tree over the ranks, ``tree[1 .. n - 1]``), a walk that passes every candidate one
  to all (``pc[0]``; ``pc[1]`` counts the walks in the tree); a rank's passes are the walks whose
  bound is above it (:func:`passes_at`);
* **the candidates by demand class** (``DemandClasses``): each class (a distinct (cpu, mem) demand) keeps
  its jobs' ranks in one segment, appended at their arrival (arrivals come in rank order, so a segment
  is sorted); a job that stops being a candidate is marked dead there (``nxt[pos] = pos + 1``) and
  :func:`alive_at` finds the first live position at or after one, compressing the path it follows;
* **the walk's merge**: each class's leaf holds the rank of its first live candidate (``NOT_A_RANK``:
  none), in one min-tree per group of classes of one cpu demand, sorted by mem demand (as
  :mod:`mropt.sim.compiled.drf_index` groups its classes): the classes of a group that fit a tracker are
  a prefix of it, so the least rank among those that fit is a prefix query per group
  (:func:`group_least`). A walk moves a visited class's leaf to its next candidate, and puts the leaves
  back at its end, so that it visits the fitting candidates in rank order.
"""

from __future__ import annotations

from typing import Any

from numba import njit

_untyped_njit: Any = njit
_plain = _untyped_njit(cache=True, _nrt=False)
#: a leaf of a class without candidates: beyond every rank
NOT_A_RANK = 1 << 62


@_plain
def pass_below(tree, pc, n, bound):
    """``PassCounts.pass_below``: one pass to every rank below ``bound`` (``n``: the ranks)."""
    if bound >= n:
        pc[0] += 1
        return
    if bound <= 0:
        return
    pc[1] += 1
    i = bound
    while i <= n:
        tree[i] += 1
        i += i & -i


@_plain
def passes_at(tree, pc, rank):
    """``PassCounts.at``: the passes rank ``rank`` got so far (the walks whose bound is above it)."""
    got = pc[0] + pc[1]
    if pc[1]:
        i = rank
        while i > 0:
            got -= tree[i]
            i &= i - 1
    return got


@_plain
def alive_at(nxt, pos, end):
    """The first live position at or after ``pos`` of a class segment that ends at ``end`` (``end``:
    none); the positions passed point to it afterwards (a live one points to itself)."""
    p = pos
    while p < end and nxt[p] != p:
        p = nxt[p]
    q = pos
    while q < p:
        t = nxt[q]
        nxt[q] = p
        q = t
    return p


@_plain
def leaf_set(mt, off, size, i, value):
    """Leaf ``i`` of the min-tree at ``off`` (``size`` leaves) holds ``value``; its ancestors the least below."""
    p = size + i
    mt[off + p] = value
    p >>= 1
    while p >= 1:
        a = mt[off + 2 * p]
        b = mt[off + 2 * p + 1]
        mt[off + p] = a if a <= b else b
        p >>= 1


@_plain
def group_least(mt, g_off, g_size, g_first, c_d1, g, limit1):
    """The least rank held by the classes of group ``g`` (one cpu demand, sorted by mem demand) whose mem
    demand is at most ``limit1``: the root when all are, else the prefix of the tree that is (NOT_A_RANK:
    none)."""
    lo, hi = g_first[g], g_first[g + 1]
    if c_d1[lo] > limit1:
        return NOT_A_RANK
    off = g_off[g]
    if c_d1[hi - 1] <= limit1:
        return mt[off + 1]
    a, b = lo, hi  # (bisect_right by hand: the classes that fit)
    while a < b:
        mid = (a + b) >> 1
        if c_d1[mid] <= limit1:
            a = mid + 1
        else:
            b = mid
    best = NOT_A_RANK
    size = g_size[g]
    x = size
    y = size + a - lo
    while x < y:
        if x & 1:
            if mt[off + x] < best:
                best = mt[off + x]
            x += 1
        if y & 1:
            y -= 1
            if mt[off + y] < best:
                best = mt[off + y]
        x >>= 1
        y >>= 1
    return best


@_plain
def wait_factor(replicas, off, n, mark, stamp, n_nodes):
    """``Capacity._locality_wait_factor`` without the parameter: the hosts holding the job's input (the
    distinct nodes of its tasks' replicas; ``mark`` holds ``stamp`` for a node counted) over the
    cluster's hosts, at most 1."""
    hosts = 0
    for t in range(n):
        for r in range(replicas.shape[1]):
            node = replicas[off + t, r]
            if node >= 0 and mark[node] != stamp:
                mark[node] = stamp
                hosts += 1
    got = hosts / max(n_nodes, 1)
    return got if got < 1.0 else 1.0
