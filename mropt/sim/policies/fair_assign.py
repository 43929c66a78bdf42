"""Hadoop 1.0.3 Fair Scheduler's heartbeat written plain, its comparators and delay scheduling: the
rule of :class:`mropt.sim.policies.fair.Fair`'s heartbeat.

Source: ``FairScheduler.assignTasks``, ``getAllowedLocalityLevel``, ``SchedulingAlgorithms``
(``FairShareComparator``, ``FifoComparator``), ``CapBasedLoadManager`` and
``JobInProgress.nonLocalMaps`` of Hadoop 1.0.3 (``src/contrib/fairscheduler``, ``mapred``); the rules
are in :mod:`mropt.sim.policies.fair`'s docstring ("Ordering", "Heartbeat", "Delay scheduling").
``_assign_reference`` (the pools and their jobs sorted afresh before every task: ``_launch_first``)
is what ``make_policy(..., reference=True)`` runs; the comparators' keys (``_pool_key``,
``_job_key``) and delay scheduling (``_allowed_level``, ``_no_locality``) are shared with the
heartbeat on kept orders (:mod:`~mropt.sim.policies.fair_offers`, :mod:`~mropt.sim.policies.fair_quiet`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from mropt.sim.policies.fair_fields import FairFields
from mropt.sim.policies.fair_shares import _Pool
from mropt.sim.state import ANY, MAP, NODE, NONE, RACK, REDUCE


class FairAssign(FairFields):
    """The plain heartbeat, the comparators and delay scheduling of :class:`~mropt.sim.policies.fair.Fair`
    (a mixin: it uses Fair's state)."""

    if TYPE_CHECKING:

        def _update(self) -> None: ...

    def _job_key(self, pool: _Pool, job: int, stype: int) -> tuple[Any, ...]:
        # (spelled out in ``FairOffers._assign_fast`` and ``_refresh_keys`` too: ``Fair.inline_launched``)
        j = self.sim.jobs[job]
        if pool.fifo:  # SchedulingAlgorithms.FifoComparator
            return (-j.priority, j.submit, job)
        # FairShareComparator for jobs: minShare 0, so never needy
        return (j.running[stype] / self.weight[job], j.submit, job)

    def _pool_key(self, pool: _Pool, stype: int) -> tuple[Any, ...]:
        """The pool's FairShareComparator key (pool start time 0 for every pool, then name)."""
        running = pool.running[stype]
        min_share = min(pool.min[stype], pool.demand(stype))
        if running < min_share:
            return (0, running / max(min_share, 1.0), pool.name)
        if self.additive:
            return (1, (running - min_share) / pool.weight, pool.name)
        return (1, running / pool.weight, pool.name)

    def _assign_reference(self, node: int) -> None:
        """FairScheduler.assignTasks (Hadoop 1.0.3), plain: the pools and their jobs sorted afresh
        before every task.

        update() when it is due; updateLocalityWaitTimes (the jobs skipped at the last heartbeat
        waited the time since it). Per slot type, the tasks this heartbeat may take (assignmultiple:
        its cap, -1 the tracker's free slots; else 1) and the CapBasedLoadManager's verdict on the
        tracker's reported running tasks. Loop: a type is rejected when its cap is reached, when
        every runnable task of it runs or the load manager refuses it; MAP when the tracker reported
        no more maps than reduces; one task of the first pool and job that launch one
        (``_launch_first``), or the type is rejected. The jobs visited for a map that launched none
        are skipped.
        """
        sim = self.sim
        if self.force_update or sim.now >= self.next_update:
            self._update()
        self.dirty.clear()  # (the marks of the kept orders: unread here)
        since = 0.0 if self.last_heartbeat is None else sim.now - self.last_heartbeat
        self.last_heartbeat = sim.now
        for job in self.skipped:
            self.waited[job] += since
        self.skipped = []
        reported = [sim.slots[t][node] - sim.free[t][node] for t in (MAP, REDUCE)]
        capacity = [self.caps[t] if self.caps[t] != -1 else sim.free[t][node] for t in (MAP, REDUCE)]
        if not self.assign_multiple:
            capacity = [1, 1]
        total = sim.total_slots
        load = [min(1.0, self.runnable_total[t] / total[t]) if total[t] > 0 else 0.0 for t in (MAP, REDUCE)]
        allowed = [reported[t] < math.ceil(sim.slots[t][node] * load[t]) for t in (MAP, REDUCE)]
        assigned, rejected = [0, 0], [False, False]
        visited: set[int] = set()
        launched_map: set[int] = set()
        while True:
            for t in (MAP, REDUCE):
                if assigned[t] == capacity[t] or self.running_total[t] == self.runnable_total[t] or not allowed[t]:
                    rejected[t] = True
            if (rejected[MAP] and rejected[REDUCE]) or (not self.assign_multiple and sum(assigned) > 0):
                break
            if rejected[MAP] or rejected[REDUCE]:
                stype = REDUCE if rejected[MAP] else MAP
            else:
                stype = MAP if reported[MAP] <= reported[REDUCE] else REDUCE
            job = self._launch_first(node, stype, visited)
            if job < 0:
                rejected[stype] = True
                continue
            assigned[stype] += 1
            if stype == MAP:
                launched_map.add(job)
        self.skipped = sorted(visited - launched_map)

    def _launch_first(self, node: int, stype: int, visited: set[int]) -> int:
        """Launch one ``stype`` task on ``node`` from the first pool (FairShareComparator, under its max
        slots) and job (the pool's comparator) that launch one; its job, or -1. A map launches at the
        level delay scheduling allows (its job is ``visited``); the job's level becomes the map's."""
        sim = self.sim
        jobs = sim.jobs
        candidates = {
            name: [job for _, _, job in pool.members if self.is_runnable[job] and jobs[job].runnable[stype] > 0]
            for name, pool in self.pools.items()
        }
        pools = sorted(
            (pool for pool in self.pools.values() if candidates[pool.name]), key=lambda p: self._pool_key(p, stype)
        )
        for pool in pools:
            if pool.running[stype] >= pool.max[stype]:
                continue
            for job in sorted(candidates[pool.name], key=lambda job: self._job_key(pool, job, stype)):
                if stype == MAP:
                    visited.add(job)
                level = self._allowed_level(job, pool) if stype == MAP else ANY
                aid = sim.launch(job, node, stype, level)
                if aid < 0:
                    continue
                if stype == MAP:
                    got = sim.running[aid].level
                    self.last_level[job] = ANY if got == NONE else got  # LocalityLevel.fromTask
                    self.waited[job] = 0.0
                pool.running[stype] += 1
                self.running_total[stype] += 1
                return job
        return -1

    def _allowed_level(self, job: int, pool: _Pool) -> int:
        """FairScheduler.getAllowedLocalityLevel."""
        sim = self.sim
        j = sim.jobs[job]
        stage = j.stages[j.cur]
        if self._no_locality(job, stage.index):
            return ANY
        if self.preemption:
            now = sim.now
            if (
                now - pool.last_at_min[MAP] > self.min_share_timeout
                or now - pool.last_at_half[MAP] > self.fair_share_timeout
            ):
                return ANY
        level = self.last_level[job]
        waited = self.waited[job]
        if level == NODE:
            if waited >= self.node_delay + self.rack_delay:
                return ANY
            return RACK if waited >= self.node_delay else NODE
        if level == RACK:
            return ANY if waited >= self.rack_delay else RACK
        return ANY

    def _no_locality(self, job: int, stage_index: int) -> bool:
        """Whether the map stage has tasks without input replicas (JobInProgress.nonLocalMaps)."""
        key = (job, stage_index)
        got = self.no_locality.get(key)
        if got is None:
            stage = self.sim.jobs[job].stages[stage_index]
            reps = stage.replicas
            if reps is None:
                got = True
            elif isinstance(reps, list):
                got = any(not r for r in reps)
            else:  # generated placement: an array (tasks, R)
                got = reps.shape[1] == 0
            self.no_locality[key] = got
        return got
