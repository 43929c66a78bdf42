"""Fair's heartbeat on kept orders: the accelerated part of :class:`mropt.sim.policies.fair.Fair`.

The rule is ``Fair._assign_reference`` (Hadoop 1.0.3's ``FairScheduler.assignTasks`` written plain:
the pools and their jobs sorted afresh at every task). ``FairOffers._assign_fast`` makes the same
decisions without sorting: each pool keeps its candidate jobs (runnable, with pending tasks of the
type) sorted by their comparator keys (``_set_key``, refreshed for the jobs marked ``dirty``:
``_refresh_keys``), and the pools with a candidate are kept sorted by their ``FairShareComparator``
keys between heartbeats (``_reorder``: a pool moves when an input of its key changed, ``repool``).
A replay with a pool per user has thousands of idle pools; Hadoop sorts them all at every task.
Under ``self_check`` the kept pool order is compared with a sort at every heartbeat;
``tests/sim/test_sim_heartbeat_reference.py`` requires the same event log of both heartbeats.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from typing import TYPE_CHECKING, Any

from mropt.sim.policies.fair_shares import _Pool
from mropt.sim.state import ACTIVE, ANY, MAP, NONE, REDUCE
from mropt.sim.view import SimView


class FairOffers:
    """The kept orders and the accelerated heartbeat of :class:`~mropt.sim.policies.fair.Fair` (a mixin:
    it uses Fair's state)."""

    sim: SimView
    self_check: bool
    pools: dict[str, _Pool]
    order: tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]
    placed: tuple[dict[str, tuple[Any, ...]], dict[str, tuple[Any, ...]]]
    repool: set[str]
    dirty: set[int]
    is_runnable: bytearray
    key: list[list[tuple[Any, ...] | None]]
    force_update: bool
    next_update: float
    last_heartbeat: float | None
    skipped: list[int]
    waited: list[float]
    last_level: list[int]
    assign_multiple: bool
    caps: tuple[int, int]
    running_total: list[int]
    runnable_total: list[float]

    if TYPE_CHECKING:

        def _update(self) -> None: ...
        def _job_key(self, pool: _Pool, job: int, stype: int) -> tuple[Any, ...]: ...
        def _pool_key(self, pool: _Pool, stype: int) -> tuple[Any, ...]: ...
        def _allowed_level(self, job: int, pool: _Pool) -> int: ...

    def _refresh_keys(self) -> None:
        """Place the changed jobs in their pools' candidate lists (live running counts)."""
        jobs = self.sim.jobs
        for job in self.dirty:
            j = jobs[job]
            pool = self.pools[j.pool]
            ok = self.is_runnable[job] and j.status == ACTIVE
            for stype in (MAP, REDUCE):
                if ok and j.runnable[stype] > 0:
                    self._set_key(pool, job, stype, self._job_key(pool, job, stype))
                else:
                    self._set_key(pool, job, stype, None)
        self.dirty.clear()

    def _set_key(self, pool: _Pool, job: int, stype: int, key: tuple[Any, ...] | None) -> None:
        old = self.key[job][stype]
        if old == key:
            return
        cand = pool.cand[stype]
        had = bool(cand)
        if old is not None:
            del cand[bisect_left(cand, old)]
        if key is not None:
            insort(cand, key)
        self.key[job][stype] = key
        if bool(cand) != had:  # the pool enters or leaves the order
            self.repool.add(pool.name)

    def pools_changed(self) -> None:
        """Every pool's key may have changed (its minShare or weight was set: ``hei``)."""
        self.repool.update(self.pools)

    def _reorder(self) -> None:
        """Bring ``order`` up to date for the pools in ``repool`` (their running counts, demands,
        minShares, weights or candidate jobs changed): each moves to its new key's place."""
        for name in self.repool:
            pool = self.pools[name]
            for stype in (MAP, REDUCE):
                placed = self.placed[stype]
                new = self._pool_key(pool, stype) if pool.cand[stype] else None
                old = placed.get(name)
                if new == old:
                    continue
                order = self.order[stype]
                if old is not None:
                    del order[bisect_left(order, old)]
                    del placed[name]
                if new is not None:
                    insort(order, new)
                    placed[name] = new
        self.repool.clear()
        if self.self_check:
            for stype in (MAP, REDUCE):
                want = sorted(self._pool_key(pool, stype) for pool in self.pools.values() if pool.cand[stype])
                assert self.order[stype] == want, "fair: the kept pool order differs from a sort"

    def _pool_order(self, stype: int) -> list[_Pool]:
        """Pools with a candidate job, sorted by FairShareComparator (pool start time 0, then name)."""
        self._reorder()
        return [self.pools[key[-1]] for key in self.order[stype]]

    def _assign_fast(self, node: int) -> None:
        """The heartbeat of ``Fair._assign_reference`` (the same decisions) on the kept orders of the
        class docstring; a job that could not launch a task of a type on the node is not asked
        again in the same heartbeat (``failed``)."""
        sim = self.sim
        now = sim.now
        if self.force_update or now >= self.next_update:
            self._update()
        if self.dirty:
            self._refresh_keys()
        # updateLocalityWaitTimes
        since = 0.0 if self.last_heartbeat is None else now - self.last_heartbeat
        self.last_heartbeat = now
        if self.skipped:
            waited = self.waited
            for job in self.skipped:
                waited[job] += since
            self.skipped = []

        slots = sim.slots
        free = sim.free
        reported = (slots[MAP][node] - free[MAP][node], slots[REDUCE][node] - free[REDUCE][node])
        capacity = [0, 0]
        allowed = [False, False]
        for stype in (MAP, REDUCE):
            if not self.assign_multiple:
                capacity[stype] = 1
            elif self.caps[stype] == -1:
                capacity[stype] = free[stype][node]
            else:
                capacity[stype] = self.caps[stype]
            total = sim.total_slots[stype]
            load = min(1.0, self.runnable_total[stype] / total) if total > 0 else 0.0
            allowed[stype] = reported[stype] < math.ceil(slots[stype][node] * load)  # CapBasedLoadManager
        assigned = [0, 0]
        rejected = [False, False]
        # jobs that could not launch a task of the type on this node at this heartbeat: they
        # cannot later in it either (the node's free capacity only shrinks, and a job's allowed
        # level and pending tasks change only when it launches), so later loops pass them by
        failed: tuple[set[int], set[int]] = (set(), set())
        pools = self.pools
        visited: set[int] = set()
        launched_map: set[int] = set()
        launched = 0
        while True:
            for stype in (MAP, REDUCE):
                if not rejected[stype] and (
                    assigned[stype] == capacity[stype]
                    or self.running_total[stype] == self.runnable_total[stype]
                    or not allowed[stype]
                ):
                    rejected[stype] = True
            if (rejected[MAP] and rejected[REDUCE]) or (not self.assign_multiple and launched > 0):
                break
            if rejected[MAP]:
                stype = REDUCE
            elif rejected[REDUCE]:
                stype = MAP
            else:
                stype = MAP if reported[MAP] <= reported[REDUCE] else REDUCE
            found = False
            self._reorder()
            for pkey in self.order[stype]:
                pool = pools[pkey[-1]]
                if pool.running[stype] >= pool.max[stype]:
                    continue
                cannot = failed[stype]
                for key in pool.cand[stype]:
                    job = key[-1]
                    if job in cannot:
                        continue
                    if stype == MAP:
                        visited.add(job)
                        aid = sim.launch(job, node, MAP, self._allowed_level(job, pool))
                    else:
                        aid = sim.launch(job, node, REDUCE, ANY)
                    if aid < 0:
                        cannot.add(job)
                        continue
                    found = True
                    if stype == MAP:
                        launched_map.add(job)
                        level = sim.running[aid].level
                        self.last_level[job] = ANY if level == NONE else level  # LocalityLevel.fromTask
                        self.waited[job] = 0.0
                    self._launched(pool, job, stype)
                    break
                if found:
                    break
            if found:
                assigned[stype] += 1
                launched += 1
            else:
                rejected[stype] = True
        if visited:
            self.skipped = sorted(visited - launched_map)

    def _launched(self, pool: _Pool, job: int, stype: int) -> None:
        pool.running[stype] += 1
        self.running_total[stype] += 1
        self.repool.add(pool.name)
        j = self.sim.jobs[job]
        if j.runnable[stype] > 0:
            self._set_key(pool, job, stype, self._job_key(pool, job, stype))
        else:
            self._set_key(pool, job, stype, None)
