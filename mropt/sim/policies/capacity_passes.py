"""Capacity's heartbeat without walking its backlog: missed opportunities counted in bulk, and
only the candidate jobs whose map may fit the tracker visited.

Hadoop 1.0.3's ``CapacityTaskScheduler.addMapTasks`` walks a queue's jobs in order until one gets
a map, and every job it passes gets a scheduling opportunity
(``JobInProgress.schedulingOpportunity``, the count ``scheduleOffSwitch`` tests). On the Alibaba
day at 64 slots a machine a heartbeat's last walk passes the whole backlog (thousands of jobs):
most of them cannot launch on the tracker at all, their tasks' CPU or memory requests do not fit
what is left of it (``Capacity.fits`` fails before any task is looked for: ``launch`` returns -1
and changes nothing). Such a job's only change is its one missed opportunity. Two structures
make that change without visiting the job:

* :class:`PassCounts` counts the passes of a walk in bulk: the walk that stops at the job of rank
  ``r`` (its queue's jobs ranked once, in the order ``(priority, submit time, job)`` the queue's
  candidates keep) gives one pass to every rank below ``r``: one update of a Fenwick tree. A
  job's missed opportunities are then its own count plus the passes at its rank since it became
  a candidate (``Capacity.missed``, ``Capacity.base``); they are read only when an off-switch test
  or a local launch (which resets them) needs them.
* :class:`DemandClasses` groups the queue's map candidates by the demand of their launchable
  stage, and lists, in rank order, those of the classes that fit the tracker's free resources
  (and every job of several demands or none, which the walk must ask), so that a walk visits only
  jobs whose launch may succeed.

``Capacity._assign_reference`` stays the plain rule; ``tests/sim/test_sim_capacity_bulk.py``
requires its event log of the fast path on backlogs of jobs that do not fit, or have no local map
and cross their off-switch thresholds at different heartbeats.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterator, Sequence

import numpy as np

from mropt.sim.capacity import FIT_EPS

#: the empty class's head: beyond every rank
_BEYOND = 1 << 62


class PassCounts:
    """Scheduling opportunities (``JobInProgress.schedulingOpportunity``) given in bulk to the jobs
    of one queue ranked ``0 .. n-1``: :meth:`pass_below` gives one to every rank below a bound,
    :meth:`at` says how many a rank got so far (a Fenwick tree of the bounds; bound ``n``, a walk
    that passed every candidate, is a plain counter)."""

    __slots__ = ("n", "tree", "every", "some")

    def __init__(self, n: int) -> None:
        self.n = n
        self.tree = [0] * (n + 1)  # tree[b]: (Fenwick) the walks that stopped at rank b, 0 < b < n
        self.every = 0  # walks that passed every rank
        self.some = 0  # walks that stopped at a rank 0 < b < n

    def pass_below(self, bound: int) -> None:
        """One pass to each rank below ``bound``."""
        if bound >= self.n:
            self.every += 1
            return
        if bound <= 0:
            return
        self.some += 1
        tree, n, i = self.tree, self.n, bound
        while i <= n:
            tree[i] += 1
            i += i & -i

    def at(self, rank: int) -> int:
        """The passes ``rank`` got: the walks whose bound is above it."""
        got = self.every + self.some
        if self.some:
            tree, i = self.tree, rank
            while i > 0:  # minus the walks that stopped at or below it
                got -= tree[i]
                i &= i - 1
        return got


class DemandClasses:
    """A queue's map candidates (their ranks) by the demand of their launchable stage: slot 0 holds
    those of several demands or none (``None``: always asked), each slot ``1 .. len(self) - 1`` the
    candidates of one demand, ``demand[slot]``. A demand's slot is made when its first candidate
    joins and dropped when its last one leaves (the last slot moves into its place), so a walk
    (:meth:`fitting`) scans the demands that have candidates now, not every demand the run has
    seen (the Alibaba day under ``capacity``: 986 demands over the day, 170 with candidates at a
    walk on average in its first 2 hours, at most 356). :meth:`fitting` lists the candidates a
    tracker's free resources may take."""

    __slots__ = ("slot", "lists", "keys", "demand", "columns", "heads", "one_demand")

    def __init__(self, n_resources: int) -> None:
        self.slot: dict[tuple[float, ...], int] = {}  # a demand with candidates -> its slot
        self.lists: list[list[int]] = [[]]  # each slot's ranks, ascending
        self.keys: list[tuple[float, ...] | None] = [None]  # each slot's demand
        self.one_demand = 0  # candidates of one demand (in slots > 0)
        self.demand = np.full((8, n_resources), np.inf)  # (rows past the last slot: inf, never fit)
        self.demand[0] = -np.inf
        self.columns = list(self.demand.T)  # (views of each resource's demands)
        self.heads = np.full(8, _BEYOND, dtype=np.int64)  # each slot's first rank

    def __len__(self) -> int:
        """The slots: 1 (the candidates always asked) plus the demands that have candidates."""
        return len(self.lists)

    def add(self, demand: tuple[float, ...] | None, rank: int) -> None:
        """Rank ``rank`` joins as a candidate of ``demand`` (None: several demands or none)."""
        if demand is None:
            c = 0
        else:
            c = self.slot.get(demand, -1)
            if c < 0:
                c = self.slot[demand] = len(self.lists)
                self.lists.append([])
                self.keys.append(demand)
                if c == len(self.heads):  # room for twice as many slots
                    self.demand = np.concatenate([self.demand, np.full_like(self.demand, np.inf)])
                    self.columns = list(self.demand.T)
                    self.heads = np.concatenate([self.heads, np.full_like(self.heads, _BEYOND)])
                self.demand[c] = demand
            self.one_demand += 1
        ranks = self.lists[c]
        insort(ranks, rank)
        if ranks[0] == rank:
            self.heads[c] = rank

    def remove(self, demand: tuple[float, ...] | None, rank: int) -> None:
        """Rank ``rank``, a candidate of ``demand``, leaves; its demand's slot goes with its last one."""
        c = 0 if demand is None else self.slot[demand]
        ranks = self.lists[c]
        i = bisect_left(ranks, rank)
        del ranks[i]
        if i == 0:
            self.heads[c] = ranks[0] if ranks else _BEYOND
        if demand is None:
            return
        self.one_demand -= 1
        if ranks:
            return
        del self.slot[demand]
        last = len(self.lists) - 1
        if c != last:  # the last slot moves into the emptied one
            moved = self.keys[last]
            assert moved is not None
            self.lists[c] = self.lists[last]
            self.keys[c] = moved
            self.slot[moved] = c
            self.demand[c] = self.demand[last]
            self.heads[c] = self.heads[last]
        self.lists.pop()
        self.keys.pop()
        self.demand[last] = np.inf
        self.heads[last] = _BEYOND

    def fitting(self, free: Sequence[float]) -> Iterator[int]:
        """The ranks, ascending, of the candidates of slot 0 and of the demands that fit ``free``
        (``Capacity.fits``: each amount at most the free amount plus ``FIT_EPS``)."""
        n = len(self.lists)
        fits: np.ndarray
        if len(free) == 2:
            first, second = self.columns
            fits = (first[:n] <= free[0] + FIT_EPS) & (second[:n] <= free[1] + FIT_EPS)
        else:
            fits = np.all(self.demand[:n] <= np.asarray(free, dtype=float) + FIT_EPS, axis=1)
        heads = np.where(fits, self.heads[:n], _BEYOND)
        lists = self.lists
        at: dict[int, int] = {}
        c = int(heads.argmin())
        rank = int(heads[c])
        while rank != _BEYOND:
            yield rank
            ranks = lists[c]
            i = at.get(c, 0) + 1
            at[c] = i
            heads[c] = ranks[i] if i < len(ranks) else _BEYOND
            c = int(heads.argmin())
            rank = int(heads[c])
