"""Hadoop 1.0.3 Fair Scheduler's update(), the part of :class:`mropt.sim.policies.fair.Fair` that
recomputes runnability and demands.

Source: ``FairScheduler.update``, ``updateRunnability`` and ``JobSchedulable.updateDemand`` /
``PoolSchedulable.updateDemand`` of Hadoop 1.0.3's ``src/contrib/fairscheduler``; the rules are in
:mod:`mropt.sim.policies.fair`'s docstring ("Runnable jobs", "Demand", "update()"). The plain rule is
``_update_reference`` (every pool and job afresh); ``_update`` recomputes only what changed (the same
values), and ``_idle_update`` is the update that recomputes nothing
(:mod:`~mropt.sim.policies.fair_quiet`'s runs of quiet heartbeats).
"""

from __future__ import annotations

import math

from mropt.sim.policies.fair_fields import FairFields
from mropt.sim.state import ACTIVE, MAP, REDUCE


class FairUpdate(FairFields):
    """update() of :class:`~mropt.sim.policies.fair.Fair` (a mixin: it uses Fair's state)."""

    def _next_tick(self, now: float) -> float:
        return (math.floor(now / self.update_interval + 1e-9) + 1) * self.update_interval

    def _update(self) -> None:
        """FairScheduler.update(): runnability (updateRunnability), then demands (updateDemand).

        Under ``reference`` every pool and job afresh (``_update_reference``); else only the pools
        whose members changed and the jobs whose demand may have (``members_changed``,
        ``demand_dirty``: a launch moves a task from pending to running and leaves the demand)."""
        if self.reference:
            self._update_reference()
            return
        sim = self.sim
        self.force_update = False
        self.next_update = self._next_tick(sim.now)
        for name in sorted(self.members_changed):
            pool = self.pools[name]
            if pool.max_running is None:
                continue
            for rank, (_, _, job) in enumerate(pool.members):
                flag = 1 if rank < pool.max_running else 0
                if self.is_runnable[job] != flag:
                    self.is_runnable[job] = flag
                    self.dirty.add(job)
                    self.demand_dirty.add(job)
        self.members_changed.clear()
        jobs = sim.jobs
        before: dict[str, tuple[float, float]] = {}  # pools whose demand changes: their demand before
        for job in self.demand_dirty:
            j = jobs[job]
            pool = self.pools[j.pool]
            if pool.name not in before:
                before[pool.name] = (pool.demand(MAP), pool.demand(REDUCE))
            old = self.demand[job]
            if self.is_runnable[job] and j.status == ACTIVE:
                new = [j.running[MAP] + j.runnable[MAP], j.running[REDUCE] + j.runnable[REDUCE]]
            else:
                new = [0, 0]
            pool.demand_raw[MAP] += new[MAP] - old[MAP]
            pool.demand_raw[REDUCE] += new[REDUCE] - old[REDUCE]
            self.demand[job] = new
        self.demand_dirty.clear()
        # the sum over every pool of its demand, kept up to date pool by pool (whole numbers: exact)
        for name, was in before.items():
            pool = self.pools[name]
            for stype in (MAP, REDUCE):
                self.runnable_total[stype] += pool.demand(stype) - was[stype]
        self.repool.update(before)  # a pool's demand is in its key (min(minShare, demand))
        self.total_slots_at_update = list(sim.total_slots)

    def _idle_update(self, now: float) -> bool:
        """update() at ``now`` where it recomputes nothing (no pool's members and no job's demand marked
        since the last: then :meth:`_update` only sets when the next is due and the slots it saw), for
        a heartbeat run in bulk without moving the clock (``FairQuiet._quiet_heartbeats``). False, and
        nothing done, where it would recompute something or where update() is not this class's
        (``hei`` also sets the hour's minShares)."""
        if self.reference or self.members_changed or self.demand_dirty or type(self)._update is not FairUpdate._update:
            return False
        self.force_update = False
        self.next_update = self._next_tick(now)
        self.total_slots_at_update = list(self.sim.total_slots)
        return True

    def _update_reference(self) -> None:
        """FairScheduler.update(), plain: each pool's first ``max_running`` jobs in FIFO order are
        runnable (updateRunnability); a job's demand is its running plus pending runnable tasks, 0
        if it is not runnable (updateDemand); a pool's is the sum, capped at its max slots."""
        sim = self.sim
        self.force_update = False
        self.next_update = self._next_tick(sim.now)
        jobs = sim.jobs
        for pool in self.pools.values():
            pool.demand_raw = [0, 0]
            for rank, (_, _, job) in enumerate(pool.members):
                j = jobs[job]
                self.is_runnable[job] = pool.max_running is None or rank < pool.max_running
                ok = self.is_runnable[job] and j.status == ACTIVE
                self.demand[job] = [j.running[t] + j.runnable[t] if ok else 0 for t in (MAP, REDUCE)]
                for t in (MAP, REDUCE):
                    pool.demand_raw[t] += self.demand[job][t]
                self.dirty.add(job)  # (its keys may have changed: ``hei`` reads this)
        self.runnable_total = [float(sum(pool.demand(t) for pool in self.pools.values())) for t in (MAP, REDUCE)]
        self.members_changed.clear()
        self.demand_dirty.clear()
        self.total_slots_at_update = list(sim.total_slots)
