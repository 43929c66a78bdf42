"""MPSA's slots on kept counts: the accelerated part of :class:`mropt.sim.policies.mpsa.Mpsa`.

The rule is ``Mpsa.choose``, Algorithm 2 for one slot written plain (MPSA paper sec. 4.4): each
queue's ``mAssigned_i`` summed over its jobs, its wish for the slot found by a scan of its jobs, the
order by :func:`~mropt.sim.policies.mpsa_order.algorithm2_order`, a launch tried on every job in
turn. ``MpsaSlots._choose_fast`` makes the same decisions: ``held``, each queue's running attempts,
is kept (+1 at each of the policy's launches, -count at each end the engine reports; summed afresh
after a job's end, a node event or a speculation rule's backup, ``_recount``), one queue's wish is
the run's runnable count (its jobs are every active job), and a map at NODE (RACK) level is not
tried on a node (rack) holding none of its stage's input
(:class:`~mropt.sim.policies.input_places.InputPlaces`). With one queue (the SWIM day's jobs share
one priority) a heartbeat's slots go in runs of ``launch_tasks`` (``_slots_one_queue``). Under
``self_check`` the kept counts and order are compared with the plain ones at every slot;
``tests/sim/test_sim_mpsa_fast.py`` requires the same event log of both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mropt.sim.policies.input_places import InputPlaces
from mropt.sim.policies.mpsa_order import algorithm2_order
from mropt.sim.state import ANY, MAP, REDUCE
from mropt.sim.view import SimView


class MpsaSlots:
    """The accelerated heartbeat of :class:`~mropt.sim.policies.mpsa.Mpsa` (a mixin: it uses Mpsa's state)."""

    sim: SimView
    self_check: bool
    members: list[list[int]]
    reserved: list[list[int]]
    held: list[list[int]]
    stale: bool
    version: int
    declined: list[tuple[int, ...] | None]
    memo: bool
    lend: bool
    liveness: bool
    level: int
    input_places: InputPlaces

    if TYPE_CHECKING:

        def assigned(self, stype: int) -> list[int]: ...

    def _assign_fast(self, node: int) -> None:
        sim = self.sim
        free, runnable = sim.free, sim.runnable
        for stype in (MAP, REDUCE):
            if len(self.members) == 1:
                self._slots_one_queue(node, stype)
                continue
            while free[stype][node] > 0 and runnable[stype] > 0:
                if not self._choose_fast(node, stype):
                    break

    def _slots_one_queue(self, node: int, stype: int) -> None:
        """``_assign_reference``'s slots of ``stype`` on ``node`` with one queue, the same launches in
        runs: with one queue, Algorithm 2's order is [0] or empty, and while it stays [0] each slot
        goes to the first job (submit order) with a local task on the node, else to the first job
        with any task. A heartbeat only launches (no task becomes pending), so a job passed by for
        one slot is passed by for the next: ``k`` slots in a row are ``launch_tasks(..., k)`` on
        each job in turn, a local run on each, then an off-node run on each. ``k`` is the free
        slots when the order stays [0] for all of them (the queue's count grows by one a slot, and
        the order's test is monotone in it), else 1: one ``choose``. The declined-slot memo and
        ``version`` move as ``choose`` moves them."""
        sim = self.sim
        free, runnable, busy = sim.free[stype], sim.runnable, sim.busy
        jobs = sim.jobs
        members = self.members[0]
        launch_tasks = sim.launch_tasks
        while free[node] > 0 and runnable[stype] > 0:
            key = (self.version, busy[MAP], busy[REDUCE], runnable[stype], sim.total_slots[stype])
            if self.memo and self.declined[stype] == key:
                return
            if self.stale:
                self._recount()
            held = self.held[stype]
            a, s = held[0], self.reserved[stype][0]
            total = sim.total_slots[stype]
            k = free[node]
            last = a + k - 1  # the count before the run's last slot
            if not (last < s or total - max(last, s) > 0 or self.lend):
                k = 1
                if not (a < s or total - max(a, s) > 0 or self.lend or (self.liveness and busy[stype] == 0)):
                    self.declined[stype] = key  # (choose: the order is empty)
                    return
            if self.self_check:
                assert held == self.assigned(stype), (held, self.assigned(stype))
                assert self._plain_order(held, stype) == [0]
                assert k == 1 or self._plain_order([last], stype) == [0]
            left = k
            if stype == MAP:  # local runs first, job by job
                level = self.level
                rack = sim.node_rack[node]
                none_at = self.input_places.none_at
                for j in members:
                    jj = jobs[j]
                    if not jj.runnable[MAP] or none_at(j, jj.cur, level, node, rack):
                        continue
                    left -= launch_tasks(j, node, MAP, level, left)[1]
                    if not left:
                        break
            if left:
                for j in members:
                    if jobs[j].runnable[stype]:
                        left -= launch_tasks(j, node, stype, ANY, left)[1]
                        if not left:
                            break
            started = k - left
            held[0] += started
            self.version += started  # (choose bumps it once a slot whose order is not empty)
            if left:  # a slot found no task: choose returned False there (when the loop got to it)
                if free[node] > 0 and runnable[stype] > 0:
                    self.version += 1
                return

    def _plain_order(self, held: list[int], stype: int) -> list[int]:
        """``choose``'s order for the counts ``held`` (``self_check``: the kept one against it)."""
        sim = self.sim
        jobs = sim.jobs
        reserved, total = self.reserved[stype], sim.total_slots[stype]
        wants = [any(jobs[j].runnable[stype] for j in m) for m in self.members]
        order = algorithm2_order(held, reserved, total, wants)
        if not order and (self.lend or (self.liveness and sim.busy[stype] == 0)) and any(wants):
            order = algorithm2_order(held, reserved, total, wants, liveness_open=True)
        return order

    def _recount(self) -> None:
        """``held`` summed afresh: each queue's running attempts (``assigned``)."""
        self.held = [self.assigned(MAP), self.assigned(REDUCE)]
        self.stale = False

    def _choose_fast(self, node: int, stype: int) -> bool:
        """``choose`` on the kept counts (module docstring): the same launch, or False where it declines."""
        sim = self.sim
        busy = sim.busy
        key = (self.version, busy[MAP], busy[REDUCE], sim.runnable[stype], sim.total_slots[stype])
        if self.memo and self.declined[stype] == key:
            return False
        if self.stale:
            self._recount()
        held = self.held[stype]
        members = self.members
        jobs = sim.jobs
        order = self._plain_order(held, stype)  # (several queues: one queue runs _slots_one_queue)
        if self.self_check:
            assert held == self.assigned(stype), (held, self.assigned(stype))
        if not order:
            self.declined[stype] = key
            return False
        self.version += 1
        launch = sim.launch
        if stype == MAP:  # first the hungriest queue with a local task
            level = self.level
            rack = sim.node_rack[node]
            none_at = self.input_places.none_at
            for q in order:
                for j in members[q]:
                    jj = jobs[j]
                    if not jj.runnable[MAP] or none_at(j, jj.cur, level, node, rack):
                        continue  # no input on the node (its rack): the launch would find no task
                    if launch(j, node, MAP, level) >= 0:
                        held[q] += 1
                        return True
        q = order[0]
        for j in members[q]:
            if jobs[j].runnable[stype] and launch(j, node, stype, ANY) >= 0:
                held[q] += 1
                return True
        return False


__all__ = ["MpsaSlots"]
