"""Hadoop 1.0.3 Fair Scheduler's preemption, the part of :class:`mropt.sim.policies.fair.Fair` that kills.

Source: ``FairScheduler.updatePreemptionVariables``, ``preemptTasksIfNecessary``,
``tasksToPreempt`` and ``preemptTasks`` of Hadoop 1.0.3's ``src/contrib/fairscheduler``; the rules
are in :mod:`mropt.sim.policies.fair`'s docstring ("Preemption").
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from mropt.sim.policies.fair_fields import FairFields
from mropt.sim.state import MAP, REDUCE


class FairPreemption(FairFields):
    """Preemption methods of :class:`~mropt.sim.policies.fair.Fair` (a mixin: it uses Fair's state)."""

    if TYPE_CHECKING:

        def fair_shares(self, stype: int) -> dict[str, float]: ...

    def _update_preemption_variables(self) -> None:
        """FairScheduler.updatePreemptionVariables (isStarvedForMinShare, isStarvedForFairShare)."""
        now = self.sim.now
        for stype in (MAP, REDUCE):
            shares = self.fair_shares(stype)
            for name, pool in self.pools.items():
                pool.share[stype] = shares[name]
                demand = pool.demand(stype)
                running = pool.running[stype]
                if not running < min(pool.min[stype], demand):
                    pool.last_at_min[stype] = now
                if not running < math.floor(min(pool.share[stype] / 2.0, demand)):
                    pool.last_at_half[stype] = now

    def _preempt(self) -> None:
        """FairScheduler.preemptTasksIfNecessary, tasksToPreempt and preemptTasks."""
        sim = self.sim
        now = sim.now
        for stype in (MAP, REDUCE):
            due = 0
            for pool in self.pools.values():
                demand = pool.demand(stype)
                running = pool.running[stype]
                by_min = by_fair = 0
                if now - pool.last_at_min[stype] > self.min_share_timeout:
                    by_min = max(0, int(min(pool.min[stype], demand)) - running)
                if now - pool.last_at_half[stype] > self.fair_share_timeout:
                    by_fair = max(0, int(min(pool.share[stype], demand)) - running)
                due += max(by_min, by_fair)
            if due <= 0:
                continue
            over = {name for name, pool in self.pools.items() if pool.running[stype] > pool.share[stype]}
            victims = [
                a
                for a in sim.running.values()
                if a.type == stype and sim.jobs[a.job].pool in over and not a.speculative
            ]
            victims.sort(key=lambda a: (-a.start, -a.id))
            left = {name: self.pools[name].running[stype] for name in over}
            for attempt in victims:
                name = sim.jobs[attempt.job].pool
                if left[name] > self.pools[name].share[stype]:
                    sim.kill(attempt.id, "killed")
                    due -= 1
                    if due == 0:
                        break
                    left[name] -= 1
