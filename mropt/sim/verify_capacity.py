"""The capacity rule of :mod:`mropt.sim.verify`: at no instant does a node run more attempts of a
slot type than it has slots, or more demand of a resource than it has.

A sweep per node over the starts and ends of its attempts in time order, an end before a start
at the same instant (an end at t frees its slot for a start at t), then the attempts in table
order: running counts per slot type and running sums per resource (``np.cumsum``, which adds in
that order, as a loop over the points would), compared with the node's slots and capacity
(relative and absolute 1e-9) at every start. Python only words the problems found. Reads the
workload's arrays (:mod:`mropt.sim.verify_tables`) and the attempt table alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from mropt.sim.verify_tables import Attempts, Layout

_RTOL = 1e-9


def check_capacity(
    a: Attempts,
    w: Layout,
    rows: np.ndarray,
    node: np.ndarray,
    stage: np.ndarray,
    nodes: Sequence[str],
    slots: np.ndarray,
    capacity: np.ndarray,
    slotted: bool,
    fail: Callable[[str], None],
    room: Callable[[], bool],
) -> None:
    """Sweep each node in turn (nodes in the order of their first attempt) over the attempts ``rows``
    (those of a known task on a known node); ``node`` and ``stage`` give each row's node number and
    flat stage, ``slots[k]`` node k's (map, reduce) slots, ``capacity[k]`` its amount of each of
    ``w.resources`` (0 for one it lacks). Each problem goes to ``fail`` while ``room()``."""
    if not len(rows):
        return
    first = np.full(len(nodes), a.n, dtype=np.int64)
    np.minimum.at(first, node[rows], rows)
    sweep_rank = np.empty(len(nodes), dtype=np.int64)
    sweep_rank[np.argsort(first, kind="stable")] = np.arange(len(nodes))
    # the points: point q < m is the start of attempt rows[q], point m + q its end; sorted by node (in
    # sweep order), time, an end before a start, then table order (_sweep_order)
    m = len(rows)
    time = np.concatenate([np.take(a.start, rows), np.take(a.end, rows)])
    row_node = np.take(node, rows)
    order = _sweep_order(time, np.take(sweep_rank, row_node), len(nodes))
    attempt = order % m  # each point's attempt: rows[attempt]
    row_of_point, point_node = np.take(rows, attempt), np.take(row_node, attempt)
    is_start, time = order < m, np.take(time, order)
    sign = np.where(is_start, 1, -1)
    lo = np.r_[0, np.flatnonzero(np.diff(point_node)) + 1]  # where each node's points begin
    hi = np.r_[lo[1:], len(order)]
    # slots: the attempts of the point's slot type running on its node just after the point
    point_stage = np.take(stage, row_of_point)
    is_map = np.take(w.is_map, point_stage)
    in_use = np.where(is_map, _running_sum(sign * is_map, lo, hi), _running_sum(sign * ~is_map, lo, hi))
    limit = np.where(is_map, np.take(slots[:, 0], point_node), np.take(slots[:, 1], point_node))
    over_slots = is_start & (in_use > limit) & slotted
    # resources: each one's demand running on the node just after the point, summed point after point
    group, amounts = np.zeros(0, np.int64), np.zeros((len(order), 0))
    if w.resources:
        group = w.group_of(np.take(w.task0, point_stage) + np.take(a.task_no, row_of_point))
        amounts = _running_sum(sign[:, None] * np.take(w.demand, group, axis=0), lo, hi)
    over = is_start[:, None] & (amounts > np.take(capacity, point_node, axis=0) * (1 + _RTOL) + _RTOL)
    bad = np.flatnonzero(over_slots | over.any(axis=1)).tolist()
    for p in bad:
        if not room():
            break
        k, at = int(point_node[p]), time[p]
        if over_slots[p]:
            kind = w.stage_type[point_stage[p]]
            fail(f"node {nodes[k]!r}: {in_use[p]} {kind} attempts at {at:g}, it has {limit[p]} slots")
        if over[p].any():
            first_point = int(lo[np.searchsorted(lo, p, side="right") - 1])
            for name in _names_in_use(w, group[first_point : p + 1]):
                r = w.resources.index(name)
                if over[p, r]:
                    fail(f"node {nodes[k]!r}: {amounts[p, r]:g} {name} in use at {at:g}, it has {capacity[k, r]:g}")


def _sweep_order(time: np.ndarray, rank: np.ndarray, n_nodes: int) -> np.ndarray:
    """The points (``time``: the m starts, then the m ends) in sweep order: by their attempt's node's
    ``rank``, then time, an end before a start, then table order. What ``np.lexsort((is_start, time,
    rank))`` gives, done as lexsort does it, one stable sort per key from the last: the ends then the
    starts (the points stably sorted by ``is_start``), stably sorted by time, then by rank, which is
    sorted as a 16-bit integer where the nodes are fewer than 2^15 (numpy's stable sort of such
    integers is a radix sort: the SWIM day's 1.5 M points in half the time of the lexsort)."""
    m = len(rank)
    points = np.concatenate([np.arange(m, 2 * m), np.arange(m)])
    points = points[np.argsort(np.take(time, points), kind="stable")]
    ranks = rank.astype(np.int16) if n_nodes < 2**15 else rank
    return points[np.argsort(np.take(np.tile(ranks, 2), points), kind="stable")]


def _running_sum(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The running sum of ``values`` within each segment ``lo[k]:hi[k]`` (a node's points), added one
    value after another from the segment's start, as a sweep does (integers: exact in one pass)."""
    if values.dtype.kind in "iub":
        total = np.cumsum(values, dtype=np.int64)
        return total - np.repeat(total[lo] - values[lo], hi - lo)
    out = np.empty_like(values)
    for b, e in zip(lo.tolist(), hi.tolist(), strict=True):
        np.cumsum(values[b:e], axis=0, out=out[b:e])
    return out


def _names_in_use(w: Layout, group: np.ndarray) -> list[str]:
    """The resource names the attempts of the points of ``group`` (a node's, from its first) have
    demanded, in the order first demanded (the order its problems are worded in)."""
    seen: dict[str, None] = {}
    for g in group.tolist():
        seen.update(dict.fromkeys(w.groups[g].demand))
    return list(seen)
