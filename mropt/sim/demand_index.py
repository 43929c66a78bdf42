"""Which task demands are wanted now, and does any of them fit a node? (``drf``; the engine in heartbeat mode).

On a saturated multi-resource cluster, most offers of a node end with every waiting job
found too big for what the node has free; finding that out job by job costs one check per
waiting job. :class:`DemandIndex` groups the jobs that may have pending tasks by the demand
(and slot type) of those tasks, so the answer costs one check per distinct demand.

The index is told (:meth:`DemandIndex.note`) of every job that may have gained pending
tasks or changed the demand of its next tasks (an arrival, a new stage, a task put back to
pending, reduces opened by slow-start); it reads the job at the next query, once the engine
has made its tasks runnable. Entries are checked lazily at a query: a job that no longer
has pending tasks of that demand leaves its group. So :meth:`any_fits` may answer True for
nothing (the caller then looks and finds nothing) but never answers False while some
pending task fits.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict

from mropt.sim.state import ACTIVE, MAP, REDUCE
from mropt.sim.view import SimView

_EPS = 1e-9
Key = tuple[tuple[float, ...] | None, int]


class DemandIndex:
    """Jobs with pending tasks, grouped by (demand, slot type) of those tasks (module docstring).

    For each slot type the demands are kept sorted by their first resource, with the running
    minimum of every other resource over that order: a node whose free amounts are below the
    minimum of some resource over all demands small enough in the first fits none of them,
    which one bisection and a few comparisons tell (the usual answer on a saturated cluster).
    With two resources the answer is exact the other way too (the demand holding the minimum
    fits), so only that demand's jobs are checked; with more, the candidate demands are
    checked one by one. Stale jobs are dropped on the way.
    """

    def __init__(self, sim: SimView) -> None:
        self.sim = sim
        self._slots = sim.workload.uses_slots
        self._groups: dict[Key, OrderedDict[int, None]] = {}
        self._noted: list[int] = []
        # per slot type: demands sorted by their first amount, those first amounts, and the
        # running minimum of each other amount; rebuilt when a group appears or goes
        self._order: list[list[tuple[float, ...]]] = [[], []]
        self._first: list[list[float]] = [[], []]
        self._mins: list[list[list[float]]] = [[], []]
        self._where: list[list[int]] = [[], []]
        self._bare: list[bool] = [False, False]  # a group of tasks without demand exists
        self._dirty = False

    def note(self, job: int) -> None:
        """``job`` may have gained pending tasks or a new next demand: index it at the next query."""
        self._noted.append(job)

    def wanted(self, job: int) -> list[Key]:
        """The (demand, type) pairs of the job's pending launchable tasks (all demands of their stages)."""
        sim = self.sim
        j = sim.jobs[job]
        if j.status != ACTIVE:
            return []
        keys: list[Key] = []
        for stype in (MAP, REDUCE):
            stage = j.launchable(stype, sim.slowstart)
            if stage is not None:
                keys += [(demand, stype) for demand in dict.fromkeys(stage.demands)]
        return keys

    def _live(self, key: Key) -> bool:
        """Whether the group has a job that still wants it: an active job with pending launchable tasks
        of this (demand, type). Its stale jobs are dropped; an empty group goes."""
        jobs = self._groups[key]
        sim_jobs = self.sim.jobs
        slowstart = self.sim.slowstart
        demand, stype = key
        while jobs:
            job = next(iter(jobs))  # (an OrderedDict: its first key in O(1) however many went)
            j = sim_jobs[job]
            if j.status == ACTIVE:
                stage = j.launchable(stype, slowstart)
                if stage is not None and demand in stage.demands:
                    return True
            del jobs[job]
        del self._groups[key]
        self._dirty = True
        return False

    def _rebuild(self) -> None:
        for stype in (MAP, REDUCE):
            order = sorted(d for d, t in self._groups if t == stype and d is not None)
            self._order[stype] = order
            self._first[stype] = [d[0] for d in order]
            mins: list[list[float]] = []
            where: list[int] = []  # with two resources: the demand holding the running minimum of the second
            low = [float("inf")] * (len(order[0]) if order else 0)
            at = -1
            for i, d in enumerate(order):
                if len(d) == 2 and d[1] < low[1]:
                    at = i
                low = [min(a, b) for a, b in zip(low, d)]
                mins.append(low)
                where.append(at)
            self._mins[stype] = mins
            self._where[stype] = where
            self._bare[stype] = (None, stype) in self._groups
        self._dirty = False

    def any_fits(self, node: int) -> bool:
        """Whether some pending task of an active job may fit ``node`` now (never False when one does)."""
        sim = self.sim
        if not sim.node_up[node]:
            return False
        if self._noted:
            groups = self._groups
            for job in self._noted:
                for key in self.wanted(job):
                    if key not in groups:
                        groups[key] = OrderedDict()
                        self._dirty = True
                    groups[key][job] = None
            self._noted.clear()
        free = sim.free_resources[node]
        two = len(free) == 2
        for stype in (MAP, REDUCE):
            if self._slots and sim.free[stype][node] <= 0:
                continue
            while True:
                if self._dirty:
                    self._rebuild()
                if self._bare[stype] and self._live((None, stype)):
                    return True
                if self._dirty:
                    continue
                n = bisect_right(self._first[stype], free[0] + _EPS) if free else 0
                if n == 0:
                    break
                mins = self._mins[stype][n - 1]
                if two:
                    if mins[1] > free[1] + _EPS:
                        break  # every demand small enough in the first resource is too big in the second
                elif any(low > free[k] + _EPS for k, low in enumerate(mins)):
                    break  # ... too big in another
                if two:
                    # two resources: the demand holding the minimum of the second fits; is it wanted?
                    if self._live((self._order[stype][self._where[stype][n - 1]], stype)):
                        return True
                    continue  # it went stale: look again with the index rebuilt
                for demand in self._order[stype][:n]:
                    if all(x <= free[k] + _EPS for k, x in enumerate(demand)) and self._live((demand, stype)):
                        return True
                if not self._dirty:
                    break  # (the candidates were all too big)
                # stale groups went: look again with the index rebuilt
        return False


class NoDemandIndex(DemandIndex):
    """No index (``drf`` without its ``index`` acceleration): any task may fit any node; the caller looks."""

    def note(self, job: int) -> None:
        return

    def any_fits(self, node: int) -> bool:
        return True


__all__ = ["DemandIndex", "NoDemandIndex"]
