"""Capacity's plain rule: Hadoop 1.0.3's ``CapacityTaskScheduler.assignTasks`` written as it reads, the
queues sorted and each queue's jobs listed afresh before every task (the accelerated part of
:class:`mropt.sim.policies.capacity.Capacity` is ``Capacity._assign_fast``, which must make the same
decisions; ``make_policy("capacity", reference=True)`` runs this one). ``user_limit`` is
``CapacitySchedulerQueue.assignSlotsToJob``'s limit, which both use.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

from mropt.sim.state import ANY, MAP, RACK, REDUCE
from mropt.sim.view import SimView

if TYPE_CHECKING:
    from mropt.sim.policies.capacity import _Queue


def user_limit(occupied: int, capacity_slots: int, active_users: int, ul_min_percent: float, factor: float) -> int:
    """CapacitySchedulerQueue.assignSlotsToJob's user limit for a one-slot task."""
    queue_cap = max(capacity_slots, 1)
    current = queue_cap if occupied < queue_cap else occupied + 1
    by_users = math.ceil(current / max(active_users, 1))
    by_min = math.ceil(ul_min_percent * current / 100.0)
    return min(max(by_users, by_min), math.floor(queue_cap * factor))


class CapacityReference:
    """The plain heartbeat of :class:`~mropt.sim.policies.capacity.Capacity` (a mixin: it uses
    Capacity's state)."""

    sim: SimView
    queues: list[_Queue]
    missed: list[int]

    if TYPE_CHECKING:

        def _order(self, stype: int, cap_slots: list[int]) -> list[_Queue]: ...
        def _queue_of(self, job: int) -> _Queue: ...
        def _locality_wait_factor(self, job: int) -> float: ...
        def _launched(self, q: _Queue, job: int, stype: int) -> None: ...

    def _assign_reference(self, node: int) -> None:
        """CapacityTaskScheduler.assignTasks (Hadoop 1.0.3), plain: the queues sorted afresh and each
        queue's jobs listed afresh before every task.

        Maps (``addMapTasks``) while the tracker has a free map slot: the first job, queue by queue
        (``_order``) and job by job (``_jobs``), within the maximum capacity and the user limit
        (``_fits``), that gets a map: each job considered has a scheduling opportunity; a node- or
        rack-local map (or one without replicas) launches and resets its missed opportunities, else
        an off-switch map launches if none went out on this heartbeat and the job missed more than
        min(unfinished maps, trackers) x localityWaitFactor; no map after an off-switch one. Then at
        most one reduce (``addReduceTask``), from the first queue and job within the limits.
        """
        sim = self.sim
        total = sim.total_slots
        caps = [[int(q.spec.capacity * total[t] / 100.0) for q in self.queues] for t in (MAP, REDUCE)]
        max_caps = [
            [
                None if q.spec.maximum_capacity is None else int(q.spec.maximum_capacity * total[t] / 100.0)
                for q in self.queues
            ]
            for t in (MAP, REDUCE)
        ]
        trackers = sum(1 for up in sim.node_up if up)
        off_switch_left = True
        while sim.free[MAP][node] > 0 and off_switch_left:
            got = -1
            for job, q in self._jobs(MAP, caps[MAP], max_caps[MAP]):
                self.missed[job] += 1  # JobInProgress.schedulingOpportunity
                got = sim.launch(job, node, MAP, RACK)
                if got >= 0:
                    self.missed[job] = 0  # resetSchedulingOpportunities (local launch)
                elif off_switch_left:
                    j = sim.jobs[job]
                    stage = j.stages[j.cur]
                    if min(stage.n - stage.finished, trackers) * self._locality_wait_factor(job) < self.missed[job]:
                        got = sim.launch(job, node, MAP, ANY)
                        off_switch_left = got < 0  # maximum-tasks-after-offswitch = 0
                if got >= 0:
                    self._launched(q, job, MAP)
                    break
            if got < 0:
                break
        if sim.free[REDUCE][node] > 0:
            for job, q in self._jobs(REDUCE, caps[REDUCE], max_caps[REDUCE]):
                if sim.launch(job, node, REDUCE, ANY) >= 0:
                    self._launched(q, job, REDUCE)
                    break

    def _jobs(self, stype: int, caps: list[int], max_caps: list[int | None]) -> Iterator[tuple[int, _Queue]]:
        """The active jobs with pending ``stype`` tasks, queue by queue (``_order``, now) and job by job
        (submit time, id; priority first where the queue supports it), that the queue's maximum
        capacity and the user limit let take one more slot, with their queue."""
        jobs = self.sim.jobs
        for q in self._order(stype, caps):
            cap, max_cap = caps[q.rank], max_caps[q.rank]
            mine = [job for job in self.sim.active if self._queue_of(job) is q and jobs[job].runnable[stype] > 0]
            prio = q.spec.supports_priority
            for job in sorted(mine, key=lambda job: (-jobs[job].priority if prio else 0, jobs[job].submit, job)):
                if self._fits(q, job, stype, cap, max_cap):
                    yield job, q

    def _fits(self, q: _Queue, job: int, stype: int, cap: int, max_cap: int | None) -> bool:
        """assignSlotsToQueue (maximum capacity) and assignSlotsToJob (user limit) for one slot."""
        occupied = q.occupied[stype]
        if max_cap is not None and occupied + 1 > max_cap:
            return False
        user = self.sim.jobs[job].user
        spec = q.spec
        limit = user_limit(occupied, cap, len(q.users), spec.minimum_user_limit_percent, spec.user_limit_factor)
        return q.by_user[stype].get(user, 0) + 1 <= limit
