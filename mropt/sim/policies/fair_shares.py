"""Hadoop 1.0.3 Fair Scheduler's fair shares and pool schedulables, for :mod:`mropt.sim.policies.fair`.

Source: ``SchedulingAlgorithms.computeFairShares``, ``FairScheduler.getPriorityFactor`` and
``PoolSchedulable`` of Hadoop 1.0.3's ``src/contrib/fairscheduler`` (the
post-MAPREDUCE-706 rewrite); the rules are in
:mod:`mropt.sim.policies.fair`'s docstring ("Job weight", "Fair shares").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from mropt.model.workload import PoolSpec

#: SchedulingAlgorithms.COMPUTE_FAIR_SHARES_ITERATIONS
FAIR_SHARE_ITERATIONS = 25
_INF = math.inf


def priority_factor(priority: int) -> float:
    """FairScheduler.getPriorityFactor: VERY_HIGH 4, HIGH 2, NORMAL 1, LOW 0.5, VERY_LOW 0.25 (priority 2..-2)."""
    return 2.0 ** max(-2, min(2, priority))


def compute_fair_shares(
    demands: Sequence[float],
    min_shares: Sequence[float],
    weights: Sequence[float],
    total_slots: float,
    *,
    additive: bool = False,
) -> list[float]:
    """SchedulingAlgorithms.computeFairShares (Hadoop 1.0.3), exactly.

    share_i(R) = min(demand_i, max(minShare_i, R weight_i)); R is bracketed by doubling from
    1 until sum_i share_i(R) >= min(total demand, total slots), then bisected 25 times; the
    shares are taken at the bracket's right end. ``additive`` (HEI sec. 2.3, step 2: the
    slots left after the minShares are split by weight): share_i(R) = min(demand_i,
    minShare_i + R weight_i), found the same way.
    """
    n = len(demands)

    def share(i: int, ratio: float) -> float:
        if additive:
            return min(demands[i], min_shares[i] + ratio * weights[i])
        return min(demands[i], max(min_shares[i], ratio * weights[i]))

    def used(ratio: float) -> float:
        return sum(share(i, ratio) for i in range(n))

    cap = min(float(sum(demands)), float(total_slots))
    r_max = 1.0
    while used(r_max) < cap:
        r_max *= 2.0
    left, right = 0.0, r_max
    for _ in range(FAIR_SHARE_ITERATIONS):
        mid = (left + right) / 2.0
        if used(mid) < cap:
            left = mid
        else:
            right = mid
    return [share(i, right) for i in range(n)]


class _Pool:
    """A pool's settings and its two schedulables' counters (PoolSchedulable)."""

    __slots__ = (
        "name",
        "min",
        "max",
        "weight",
        "max_running",
        "fifo",
        "running",
        "demand_raw",
        "cand",
        "members",
        "last_at_min",
        "last_at_half",
        "share",
    )

    def __init__(self, spec: PoolSpec, now: float) -> None:
        self.name = spec.id
        self.min = (spec.min_maps, spec.min_reduces)
        self.max = (
            spec.max_maps if spec.max_maps is not None else _INF,
            spec.max_reduces if spec.max_reduces is not None else _INF,
        )
        self.weight = spec.weight
        self.max_running = spec.max_running
        self.fifo = spec.mode == "fifo"
        self.running = [0, 0]  # live running attempts per type
        self.demand_raw = [0, 0]  # sum of the jobs' demands at the last update
        # per type: the sorted keys of the runnable jobs with pending tasks of the type
        self.cand: tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]] = ([], [])
        self.members: list[tuple[int, float, int]] = []  # (-priority, submit, job): FIFO order
        self.last_at_min = [now, now]
        self.last_at_half = [now, now]
        self.share = [0.0, 0.0]

    def demand(self, stype: int) -> float:
        return min(self.demand_raw[stype], self.max[stype])
