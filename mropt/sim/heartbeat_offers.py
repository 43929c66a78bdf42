"""Heartbeat mode (``Simulation(mode="heartbeat")``): when the policy is offered a node.

Hadoop 1.x trackers report every ``max(3 s, ceil(nodes / 100) s)`` (JobTracker 1.0.3:
``getNextHeartbeatInterval`` with 100 heartbeats per second); node i's heartbeats fall at
``i / nodes`` of an interval plus whole intervals (or now, where that sum rounds below it). Only
a node with free capacity while work of that type is pending has its next heartbeat scheduled; with task demands, only while some
pending task fits its free resources (:class:`~mropt.sim.demand_index.DemandIndex`; capacity
freeing on it, or new work, schedules it again). A run whose policy declines work at
``stall_limit`` heartbeats in a row while nothing else happens stops (``Simulation.stalled``).
Under a speculation rule the rule is offered each heartbeat after the policy (Hadoop's
``obtainNewMapTask`` tries a speculative task when it has no new task to give).

The interface the engine sees is :class:`mropt.sim.offers.Offers`' (event mode beside it there).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from itertools import compress, islice
from operator import or_
from typing import TYPE_CHECKING

from mropt.sim.demand_index import DemandIndex
from mropt.sim.lone_beats import HeldBeats
from mropt.sim.offers import C_DECIDE, EV_HEARTBEAT, Offers
from mropt.sim.state import MAP, REDUCE

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from mropt.sim.engine import Simulation


class HeartbeatOffers(Offers):
    """Heartbeat mode (module docstring)."""

    def __init__(self, sim: Simulation) -> None:
        super().__init__(sim)
        # whether the node's next heartbeat is scheduled (1) or not (0); a list, not a bytearray: a list's
        # item read and write are the interpreter's specialised ones (millions a SWIM day: speed only)
        self._pending = [0] * sim.n_nodes
        self._stalled = 0  # heartbeats in a row that launched nothing
        # with task demands, a node beats only while some waiting task fits it
        has_demands = any(d is not None for j in sim.jobs for st in j.stages for d in st.demands)
        self._fit_index = DemandIndex(sim) if has_demands else None
        self.freed = self._schedule
        interval = sim.heartbeat_interval
        self._phase = [interval * node / sim.n_nodes for node in range(sim.n_nodes)]  # (``_next_beat``)
        # (``Simulation.push``; the held heartbeats' ``hold`` on the counts-only path)
        self._push: Callable[[float, int, int, int], None] = sim.push
        # slots, no task demands, no rule: ``_room`` is a test of counts, inlined in ``_schedule_all``
        # and in ``_beat_counts``, which is then ``beat`` (speed only: ``plain`` turns both off)
        self._counts_only = sim.uses_slots and self._fit_index is None and self.spec is None
        # there too, the heartbeats wait in a heap of their own and the lone ones run without an
        # instant of the queue (:mod:`mropt.sim.lone_beats`; speed only, ``plain`` turns it off)
        self._held: HeldBeats | None = None
        if self._counts_only:
            self.beat = self._beat_counts  # type: ignore[method-assign]
            self.freed = self._schedule_counts
            self.after_instant = self._after_instant_held  # type: ignore[method-assign]
            self._held = HeldBeats(self)
            self._push = self._held.hold
            sim.before_decide(self._held.release_at)

    def plain(self) -> None:
        """Run the plain rules only (``beat``, ``_schedule``, ``_room``; every heartbeat an event of
        the queue), as the equivalence test does."""
        self._counts_only = False
        self.beat = type(self).beat.__get__(self)  # type: ignore[method-assign]
        self.after_instant = type(self).after_instant.__get__(self)  # type: ignore[method-assign]
        self.freed = self.sim.capacity.freed = self._schedule
        self._held = None
        self._push = self.sim.push
        self.sim.before_decide(None)

    def work_appeared(self, job: int | None) -> None:
        self.new_work = True
        if job is not None and self._fit_index is not None:
            self._fit_index.note(job)

    def after_instant(self) -> None:
        """The end of an instant: new work schedules heartbeats (held ones: :meth:`_after_instant_held`)."""
        if self.new_work:
            self.new_work = False
            self._schedule_all()

    def _after_instant_held(self) -> None:
        """:meth:`after_instant` with held heartbeats (``_counts_only``): the held ones looked at only
        when the earliest is due by the queue's next instant (at most instants it is not)."""
        held = self._held
        assert held is not None
        sim = self.sim
        if sim.stalled:  # the engine cleared its queue: the held heartbeats were in it
            held.clear()
        if self.new_work:
            self.new_work = False
            self._schedule_all()
        times = held.times
        if times and times[0] <= sim.next_time():
            held.run()

    def _schedule_all(self) -> None:
        """New work: ``_schedule`` every node whose heartbeat is not scheduled, in node order.

        On slots without task demands or a rule (``_counts_only``) the test is ``_room``'s,
        inlined, with what it reads taken once: nothing here changes the runnable counts, the
        free slots or the nodes up (only heartbeats are pushed). A SWIM day under ``fair``
        makes thousands of these passes over its 600 nodes; each looks only at the nodes with a
        free slot of a type with work (picked with ``itertools.compress``, in node order), and computes
        the nodes' times by steps of ``k`` (``_phase`` grows with the node: so must any phases a test
        sets).
        """
        sim = self.sim
        pending = self._pending
        if not self._counts_only:
            for node in range(sim.n_nodes):
                if not pending[node]:
                    self._schedule(node)
            return
        maps, reduces = sim.runnable
        if maps <= 0 and reduces <= 0:
            return
        free_map, free_reduce = sim.free
        node_up = sim.node_up
        interval = sim.heartbeat_interval
        now = sim.now
        ceil = math.ceil
        held = self._held
        if held is not None:  # held together (``HeldBeats.add``), not pushed one by one
            # the nodes with a free slot of a type with work (a superset: a count other than 0),
            # picked in C, in node order; a busy cluster has few
            room: Iterator[int]
            if maps > 0 and reduces > 0:
                room = map(or_, free_map, free_reduce)
            else:
                room = iter(free_map if maps > 0 else free_reduce)
            phases = self._phase
            # ``HeldBeats.hold`` inline: a time the queue holds, or held already, goes into the queue;
            # one held already may be this pass's: what the pass held so far is added to the held
            # list first (the push's ``release_at`` takes it from there; a time the queue holds is
            # not this pass's: it was not held, or the queue got it by such a push)
            queued, at = held.queued, held.at
            assert held.open is None  # (no lone heartbeat runs: the pass comes at an instant's end)
            times: list[float] = []
            # ``_next_beat``'s ``phase + max(k, 0) * interval``, ``k = ceil((now - phase) / interval)``:
            # the phases grow with the node, so k falls (weakly) with it, in steps; each step's
            # product is computed once, its first node found by bisection (a pass has one step or
            # two, as the phases span one interval)
            n = len(phases)
            start = 0
            while start < n:
                k = ceil((now - phases[start]) / interval)
                end = bisect_right(range(n), -k, lo=start, key=lambda node: -ceil((now - phases[node]) / interval))
                base = (k if k > 0 else 0) * interval
                for node in compress(range(start, end), islice(room, end - start)):
                    if pending[node] or not node_up[node]:
                        continue
                    if (maps > 0 and free_map[node] > 0) or (reduces > 0 and free_reduce[node] > 0):
                        pending[node] = 1
                        time = phases[node] + base
                        if time < now:  # (``_next_beat``'s rounding below now)
                            time = now
                        if time in queued:
                            sim.push_heartbeat(time, node)
                        elif time in at:
                            held.add(times)
                            times = []
                            sim.push_heartbeat(time, node)
                        else:
                            at[time] = node
                            times.append(time)
                start = end
            held.add(times)
            return
        push = self._push
        for node, phase in enumerate(self._phase):
            if pending[node] or not node_up[node]:
                continue
            if (maps > 0 and free_map[node] > 0) or (reduces > 0 and free_reduce[node] > 0):
                pending[node] = 1
                time = phase + max(ceil((now - phase) / interval), 0) * interval
                push(time if time >= now else now, C_DECIDE, EV_HEARTBEAT, node)

    def _room(self, node: int) -> bool:
        """Whether ``node`` may take pending work: it is up, with a free slot of a type that has
        pending tasks and (tasks with demands) free resources that some pending task fits."""
        sim = self.sim
        runnable = sim.runnable
        if not sim.node_up[node]:
            return False
        if sim.uses_slots:
            room = (runnable[MAP] > 0 and sim.free[MAP][node] > 0) or (
                runnable[REDUCE] > 0 and sim.free[REDUCE][node] > 0
            )
        else:
            room = runnable[MAP] + runnable[REDUCE] > 0
        return room and (self._fit_index is None or self._fit_index.any_fits(node))

    def _next_beat(self, node: int) -> float:
        """The node's first heartbeat at or after now: its phase ``interval * node / nodes`` plus whole
        intervals, or now where that sum rounds below now (it is now in exact arithmetic: with a 0.3 s
        interval on 2 nodes at 3.75 s, node 1's sum is 3.7499999999999996; near 2**52 s, whole seconds
        off). A heartbeat before now would start a task before the clock, or before its job came."""
        interval = self.sim.heartbeat_interval
        phase = self._phase[node]
        now = self.sim.now
        time = phase + max(math.ceil((now - phase) / interval), 0) * interval
        return time if time >= now else now

    def _schedule(self, node: int) -> None:
        if not self._pending[node] and (self._room(node) or (self.spec is not None and self.spec_room(node))):
            self._pending[node] = 1
            self._push(self._next_beat(node), C_DECIDE, EV_HEARTBEAT, node)

    def _schedule_counts(self, node: int) -> None:
        """:meth:`_schedule` on slots without task demands or a rule (``_counts_only``), ``_room`` and
        ``_next_beat`` inlined: the capacity of an ending attempt's node freed (a SWIM day: 756 k)."""
        if self._pending[node]:
            return
        sim = self.sim
        runnable = sim.runnable
        free_map, free_reduce = sim.free
        if sim.node_up[node] and (
            (runnable[MAP] > 0 and free_map[node] > 0) or (runnable[REDUCE] > 0 and free_reduce[node] > 0)
        ):
            self._pending[node] = 1
            interval = sim.heartbeat_interval
            phase = self._phase[node]
            now = sim.now
            time = phase + max(math.ceil((now - phase) / interval), 0) * interval
            self._push(time if time >= now else now, C_DECIDE, EV_HEARTBEAT, node)

    def beat(self, node: int) -> None:
        """Node ``node``'s heartbeat: the policy is offered it (then the rule, under one)."""
        self._pending[node] = 0
        sim = self.sim
        speculating = self.spec is not None
        pending = self._room(node)
        if not pending and not (speculating and self.spec_room(node)):
            return
        before = sim.next_attempt
        if pending:
            sim.policy.assign(node)
        launched = sim.next_attempt != before
        if speculating and self.spec_room(node):
            self.spec.offer(node)  # type: ignore[union-attr]
        # a heartbeat only the rule was offered never counts as stalled
        if pending and not launched:
            self._stalled += 1
            if self._stalled > sim.stall_limit:
                sim.stalled = True
                return
        elif launched:
            self._stalled = 0
        if self._room(node) or (speculating and self.spec_room(node)):
            self._pending[node] = 1
            sim.push(sim.now + sim.heartbeat_interval, C_DECIDE, EV_HEARTBEAT, node)

    def _beat_counts(self, node: int) -> None:
        """:meth:`beat` on slots without task demands or a rule (``_counts_only``), ``_room`` inlined.

        Most heartbeats of a trace's day find no room (work appeared, every idle node was
        scheduled, the first ones took it): this one returns after a test of four counts.
        """
        self._pending[node] = 0
        sim = self.sim
        runnable = sim.runnable
        up = sim.node_up
        free_map, free_reduce = sim.free
        if not (
            up[node]
            and ((runnable[MAP] > 0 and free_map[node] > 0) or (runnable[REDUCE] > 0 and free_reduce[node] > 0))
        ):
            return
        before = sim.next_attempt
        sim.policy.assign(node)
        if sim.next_attempt == before:
            self._stalled += 1
            if self._stalled > sim.stall_limit:
                sim.stalled = True
                return
        else:
            self._stalled = 0
        if up[node] and (
            (runnable[MAP] > 0 and free_map[node] > 0) or (runnable[REDUCE] > 0 and free_reduce[node] > 0)
        ):
            self._pending[node] = 1
            self._push(sim.now + sim.heartbeat_interval, C_DECIDE, EV_HEARTBEAT, node)
