"""The utilisation rows of a compiled loop's instant, as ``Recorder.flush`` writes them (numba; speed only).

At the end of an instant that changed a count (:mod:`mropt.sim.recorder`): a row for the whole cluster
(pool ``*``, index 0) per slot type whose busy count or capacity changed since its last row (both types
at the run's first instant), then a row per (pool, slot type) *touched* at the instant (a task of it
started or ended there), in (pool index, type) order, a pool's index being the order of its first
attempt's start. The compiled loops run map tasks only and no node fails, so only the map type's busy
count moves and the capacities are the cluster's. A loop notes a pool with :func:`touch` at each launch
and end, and calls :func:`emit` at the end of each instant; the driver moves the rows to a
:class:`~mropt.sim.spilled_rows.SpilledRows` file at its pauses.
"""

from __future__ import annotations

from typing import Any

from numba import njit

_untyped_njit: Any = njit
_plain = _untyped_njit(cache=True, _nrt=False)


@_plain
def touch(p, stamp, n, p_touch, touched):
    """Note pool ``p`` touched at the instant ``stamp`` (once); the count of pools touched."""
    if p_touch[p] != stamp:
        p_touch[p] = stamp
        touched[n] = p
        return n + 1
    return n


@_plain
def _sort(touched, n, p_row):
    """``touched[:n]`` in increasing ``p_row`` (the indices are distinct): insertion sort, or a heap
    sort for long lists (an instant where many tasks end together), without allocating."""
    if n <= 32:
        for i in range(1, n):
            p = touched[i]
            key = p_row[p]
            k = i
            while k > 0 and p_row[touched[k - 1]] > key:
                touched[k] = touched[k - 1]
                k -= 1
            touched[k] = p
        return
    for start in range(n // 2 - 1, -1, -1):
        _sift(touched, start, n, p_row)
    for end in range(n - 1, 0, -1):
        touched[0], touched[end] = touched[end], touched[0]
        _sift(touched, 0, end, p_row)


@_plain
def _sift(touched, i, n, p_row):
    p = touched[i]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and p_row[touched[c + 1]] > p_row[touched[c]]:
            c += 1
        if p_row[touched[c]] > p_row[p]:
            touched[i] = touched[c]
            i = c
        else:
            break
    touched[i] = p


@_plain
def emit(now, r, busy, last_busy, slots_map, slots_reduce, n, touched, p_row, p_busy, rt, rk, rp, rb, rc):
    """The instant's rows (module docstring) from position ``r`` of the buffer: the cluster's when the
    busy maps moved from ``last_busy`` (-1: the first instant, a reduce row too), then the ``n`` pools
    touched, sorted here; the new position."""
    if busy != last_busy:
        rt[r], rk[r], rp[r], rb[r], rc[r] = now, 0, 0, busy, slots_map
        r += 1
        if last_busy < 0:
            rt[r], rk[r], rp[r], rb[r], rc[r] = now, 1, 0, 0, slots_reduce
            r += 1
    if n > 1:
        _sort(touched, n, p_row)
    for x in range(n):
        p = touched[x]
        rt[r], rk[r], rp[r], rb[r], rc[r] = now, 0, p_row[p], p_busy[p], slots_map
        r += 1
    return r
