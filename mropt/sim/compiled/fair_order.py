"""The compiled ``fair`` loop's kept orders (numba; :mod:`mropt.sim.compiled.fair_core` uses them; speed only).

The plain rule (``FairAssign._assign_reference``) sorts the pools with a candidate job, and each pool's
candidate jobs, before every task. As :class:`~mropt.sim.policies.fair_offers.FairOffers` does in Python,
the loop keeps both orders sorted between heartbeats instead, and moves an item when an input of its key
changes (a launch, an end of attempts, an arrival):

* **the pools** with a candidate, by the FairShareComparator key of a pool without a minShare,
  ``(running / weight, name)``: a key array and a pool array, the pool's number being its name's rank;
* **each pool's candidate jobs** by the job key ``(running / weight, submit, index)``: three arrays,
  the pool's jobs in one segment of them (its length the pool's job count, so it never overflows).

A move is a bisection and a shift of the items between the old place and the new, as ``insort`` and
``del`` do on Python's lists. **The fit test** of heartbeat mode (``DemandIndex.any_fits``: does some
pending task fit the node?) is a min-tree over the demand classes, sorted by (cpu, mem): a leaf holds its
class's mem demand while the class has pending tasks, else infinity; the classes whose cpu fits are a
prefix, and the least mem demand over it says whether one fits.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

_untyped_njit: Any = njit
_plain = _untyped_njit(cache=True, _nrt=False)


@_plain
def job_less(r1, s1, j1, r2, s2, j2):
    """(ratio, submit, job) < (ratio, submit, job): Python's tuple order."""
    if r1 != r2:
        return r1 < r2
    if s1 != s2:
        return s1 < s2
    return j1 < j2


@_plain
def job_place(ck, cs, cj, base, n, r, s, j):
    """The first position of the segment ``[base, base + n)`` whose key is not less than (r, s, j)."""
    lo, hi = base, base + n
    while lo < hi:
        mid = (lo + hi) >> 1
        if job_less(ck[mid], cs[mid], cj[mid], r, s, j):
            lo = mid + 1
        else:
            hi = mid
    return lo


@_plain
def job_move(ck, cs, cj, base, n, old, r, s, j):
    """Job ``j`` (submit ``s``) of the sorted segment of ``n`` at ``base``: out of it from its key ratio
    ``old`` (NaN: it was not in it), into it at ratio ``r`` (NaN: it leaves); the new length. The items
    between its old place and its new one shift by one, as ``del`` then ``insort`` leave them."""
    if old != old:  # (NaN) it comes in
        p = job_place(ck, cs, cj, base, n, r, s, j)
        for q in range(base + n, p, -1):
            ck[q], cs[q], cj[q] = ck[q - 1], cs[q - 1], cj[q - 1]
        ck[p], cs[p], cj[p] = r, s, j
        return n + 1
    i = job_place(ck, cs, cj, base, n, old, s, j)
    if r != r:  # it leaves
        for q in range(i, base + n - 1):
            ck[q], cs[q], cj[q] = ck[q + 1], cs[q + 1], cj[q + 1]
        return n - 1
    if r > old:  # later: the items up to its new place one back
        q = i
        while q + 1 < base + n and job_less(ck[q + 1], cs[q + 1], cj[q + 1], r, s, j):
            ck[q], cs[q], cj[q] = ck[q + 1], cs[q + 1], cj[q + 1]
            q += 1
    else:  # earlier (or the same): the items down to its new place one on
        q = i
        while q > base and job_less(r, s, j, ck[q - 1], cs[q - 1], cj[q - 1]):
            ck[q], cs[q], cj[q] = ck[q - 1], cs[q - 1], cj[q - 1]
            q -= 1
    ck[q], cs[q], cj[q] = r, s, j
    return n


@_plain
def pool_place(ok, op, n, k, p):
    """The first position of the order (``n`` pools) whose key is not less than (k, p)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) >> 1
        if ok[mid] < k or (ok[mid] == k and op[mid] < p):
            lo = mid + 1
        else:
            hi = mid
    return lo


@_plain
def pool_move(ok, op, n, old, k, p):
    """Pool ``p`` of the order of ``n``: out of it from key ``old`` (NaN: it was not in it), into it at
    key ``k`` (NaN: it leaves); the new length (the items between its places shift by one)."""
    if old != old:
        i = pool_place(ok, op, n, k, p)
        for q in range(n, i, -1):
            ok[q], op[q] = ok[q - 1], op[q - 1]
        ok[i], op[i] = k, p
        return n + 1
    i = pool_place(ok, op, n, old, p)
    if k != k:
        for q in range(i, n - 1):
            ok[q], op[q] = ok[q + 1], op[q + 1]
        return n - 1
    if k > old:
        while i + 1 < n and (ok[i + 1] < k or (ok[i + 1] == k and op[i + 1] < p)):
            ok[i], op[i] = ok[i + 1], op[i + 1]
            i += 1
    else:
        while i > 0 and (k < ok[i - 1] or (k == ok[i - 1] and p < op[i - 1])):
            ok[i], op[i] = ok[i - 1], op[i - 1]
            i -= 1
    ok[i], op[i] = k, p
    return n


@_plain
def fit_set(tree, size, c, value):
    """Leaf ``c`` of the min-tree (``size`` leaves) holds ``value``; its ancestors the least below them."""
    p = size + c
    tree[p] = value
    p >>= 1
    while p >= 1:
        a = tree[2 * p]
        b = tree[2 * p + 1]
        tree[p] = a if a <= b else b
        p >>= 1


@_plain
def fit_prefix(tree, size, count):
    """The least value among leaves 0 .. count - 1 (infinity: none)."""
    best = np.inf
    lo = size
    hi = size + count
    while lo < hi:
        if lo & 1:
            if tree[lo] < best:
                best = tree[lo]
            lo += 1
        if hi & 1:
            hi -= 1
            if tree[hi] < best:
                best = tree[hi]
        lo >>= 1
        hi >>= 1
    return best


@_plain
def any_fits(c_d0, tree, size, limit0, limit1):
    """Whether some class with pending tasks has cpu demand <= ``limit0`` and mem demand <= ``limit1``
    (``DemandIndex.any_fits``, the free amounts plus its epsilon)."""
    lo, hi = 0, len(c_d0)
    while lo < hi:  # (bisect_right: the classes of cpu demand <= limit0)
        mid = (lo + hi) >> 1
        if c_d0[mid] <= limit0:
            lo = mid + 1
        else:
            hi = mid
    return lo > 0 and fit_prefix(tree, size, lo) <= limit1
