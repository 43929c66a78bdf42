"""Lone heartbeats, run without an instant of the engine's queue (heartbeat mode, speed only).

A SWIM day under ``fair`` is 4 million instants for 756 k tasks, nearly all of them a single
heartbeat: new work schedules every idle node's heartbeat (``HeartbeatOffers._schedule_all``),
the first ones take the work, and 2.3 M of the 3.8 M heartbeats then find no room; most of the
others launch nothing (a job waiting for a local map). Each was an instant of the engine's queue:
a push (a dictionary entry and its class lists), the engine's walk, a heap pop, the end of the
instant.

:class:`HeldBeats` keeps the heartbeats :class:`~mropt.sim.heartbeat_offers.HeartbeatOffers` schedules in a
sorted list of its own instead (``hold``: a node has at most one scheduled, so at most one per
node; the list's order is exact: :class:`HeldBeats`). At
the end of every instant (``HeartbeatOffers._after_instant_held``) it looks at the earliest held one:

* due strictly before the queue's next instant, it is *lone*: nothing else happens at its time,
  and the queue holds nothing before it. :meth:`HeldBeats.run` does there what the engine's loop
  does with such an instant, through the engine's calls for instants run outside its queue
  (``Simulation``'s section of that name): the clock moves to its time (``advance``; unless the
  heartbeat finds no room: then it only counts), the event is counted (``count_events``), the
  heartbeat runs (``HeartbeatOffers._beat_counts``' offer, inline), a run that stalled ends
  (``stall``: the queue cleared), and the instant ends (new work schedules heartbeats; the
  utilisation rows at its time: ``end_rows``);
* due at the queue's next instant (``next_time``), or next when the queue is empty (the engine
  would stop, or stop at ``until``), it is pushed into the queue (``push_heartbeat``): the
  engine runs it there, after the instant's completions, kills and arrivals and in push order
  among its timers;
* due after ``until``: it waits (the engine stops before it).

The order of the events, their count and every decision stay the engine's: a heartbeat held at
the time of a timer pushed later (a policy's ``wake_at``) is pushed into the queue first
(:attr:`mropt.sim.event_queue.EventQueue.before_decide`, :meth:`HeldBeats.release_at`), as it
was pushed first (``Simulation.before_decide``); a heartbeat scheduled at a time the queue
holds goes into it (``queued_times``); an event a lone heartbeat pushes at its own time (a
timer for now; a kill that gives its node room at once, whose next heartbeat falls at that
time) makes the rest of that instant the engine's, whose flush of the utilisation rows at the
instant before is then skipped (``defer_rows``: ``Recorder.skip_next_flush``). This module
reads no attribute of the engine's queue or recorder.

A policy may answer runs of such heartbeats in bulk (``Policy.quiet_heartbeats``; on the SWIM
day, 1.1 M of the 1.5 M heartbeats offered to the policy launch nothing): :meth:`HeldBeats._quiet`
offers it the due ones with room, in order, and does for those it answers quiet what the loop
would do for each (the clock, the count, the heartbeat held again an interval later, the ones
without room between them ended), with no call per heartbeat. A policy without the hook has each
heartbeat offered to its ``assign``; ``tests/sim/test_sim_quiet_runs.py`` requires the same
outputs of both. ``HeartbeatOffers.plain`` turns everything here off;
``tests/sim/test_sim_heartbeat_counts.py`` and ``test_sim_lone_beats.py`` require the same event
log, event count, stall, stop, final time and utilisation rows of both.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Sequence
from itertools import islice
from typing import TYPE_CHECKING

from mropt.sim.state import MAP, REDUCE

if TYPE_CHECKING:
    from mropt.sim.heartbeat_offers import HeartbeatOffers

#: after a run of quiet heartbeats all quiet, the next offers this many times more (``HeldBeats._run``)
QUIET_GROWTH = 8


class HeldBeats:
    """The heartbeats scheduled and not yet in the engine's queue (module docstring).

    They are kept as a list of their times in increasing order (``times``) and a map from each
    time to its node (``at``): the times are distinct (:meth:`hold`), so the list's order is the
    order a heap of them would pop, for every float. A node has at most one held, so the list
    holds at most a node count of times (600 on the SWIM day), and an insertion's move of the
    ones after it is a short ``memmove``. What the sorted list buys is the end of the heartbeats
    that find no room (:meth:`_run`): those due before the queue's next instant are a prefix, cut
    by one ``bisect`` and one slice, instead of a heap pop each."""

    __slots__ = ("offers", "sim", "times", "at", "open", "queued")

    def __init__(self, offers: HeartbeatOffers) -> None:
        self.offers = offers
        self.sim = offers.sim
        #: the times of the engine's queue's instants (``Simulation.queued_times``, a live view)
        self.queued = self.sim.queued_times()
        #: the held times, in increasing order; ``at``: time -> node of each (the same times)
        self.times: list[float] = []
        self.at: dict[float, int] = {}
        #: the time of the lone heartbeat running (:meth:`run`), else None
        self.open: float | None = None

    def hold(self, time: float, cls: int, kind: int, node: int) -> None:
        """Schedule ``node``'s heartbeat at ``time`` (the signature of ``EventQueue.push``).

        A heartbeat at an instant the queue holds (the one the engine is walking, among others)
        or at the lone heartbeat's running goes into the queue: it is that instant's event. Two
        nodes' heartbeats never share a time (their phases differ by a fraction of the
        interval); should they, the second goes into the queue too, in its place."""
        if time in self.queued or time in self.at or time == self.open:
            self.sim.push_heartbeat(time, node)
            return
        self.at[time] = node
        times = self.times
        if not times or time > times[-1]:  # (most: a node's next heartbeat comes after the held ones)
            times.append(time)
        else:
            insort(times, time)

    def add(self, times: list[float]) -> None:
        """Hold the ``times`` whose nodes were just entered in ``at`` (tested as :meth:`hold` tests,
        in any order): one sort, which merges their runs with the held list's (``list.sort``'s
        merge of sorted runs; a pass's times, in node order, are mostly two runs: ``_schedule_all``)."""
        if times:
            held = self.times
            held += times
            held.sort()

    def release_at(self, time: float) -> None:
        """An event of the heartbeats' class is being pushed at ``time``: a heartbeat held there was
        pushed before it, so it goes into the queue first (``EventQueue.before_decide``)."""
        node = self.at.pop(time, None)
        if node is not None:
            times = self.times
            del times[bisect_left(times, time)]
            self.sim.push_heartbeat(time, node)

    def clear(self) -> None:
        """The engine cleared its queue (a stalled run): the held heartbeats were in it."""
        self.times.clear()
        self.at.clear()

    def run(self) -> None:
        """Run the lone heartbeats due before the queue's next instant; push the one due at it (module
        docstring). Each is an instant of the engine's loop run outside its queue, through the
        engine's calls for such instants (``Simulation.next_time``, ``advance``, ``stall``,
        ``end_rows``, ``defer_rows``, ``push_heartbeat``; their events are counted on the way out,
        ``count_events``: nothing reads the count in between)."""
        if self.times[0] > self.sim.next_time():  # (most calls: the queue's next instant comes first)
            return
        self.sim.count_events(self._run())

    def _run(self) -> int:
        """:meth:`run`'s loop; the events it ran.

        The heartbeats due before the queue's next instant (and not after ``until``) are the
        prefix ``times[:due]``. Those that find no room (``_beat_counts``' first test: nothing of
        what it reads changes until one finds room) only end their node's schedule and count:
        when nothing is runnable that is the whole prefix, ended at once (one slice); else the
        ones before the first whose node has room."""
        offers = self.offers
        sim = self.sim
        times, at, queued = self.times, self.at, self.queued
        until = math.inf if sim.until is None else sim.until
        node_up = sim.node_up
        runnable = sim.runnable
        free_map, free_reduce = sim.free
        pending = offers._pending
        assign = sim.policy.assign
        interval = sim.heartbeat_interval
        stall_limit = sim.stall_limit
        next_time, advance = sim.next_time, sim.advance
        end_rows = sim.end_rows if sim.rows_live else None
        # the policy's runs of quiet heartbeats (``Policy.quiet_heartbeats``: :meth:`_quiet`), None: none.
        # Speed only (each heartbeat's effects are the same either way): ``alone``, the next heartbeat
        # with room runs alone, unoffered: the one a run found not quiet, and the one after a launch
        # (a policy's kept answer of quiet heartbeats is likely gone); ``ask``, how many to offer: 1
        # after a heartbeat run alone, then more as long as all are quiet
        quiet = sim.policy.quiet_heartbeats
        alone = False
        ask = 1
        counted = 0
        flushed = False
        nxt = next_time()  # (read again wherever the queue may have changed)
        while times:
            if nxt == math.inf:  # the engine would stop (or stop at ``until``): it runs the next heartbeat
                time = times[0]
                del times[0]
                sim.push_heartbeat(time, at.pop(time))
                return counted
            # the due ones: before ``nxt`` and not after ``until`` (the tests ``time >= nxt`` and
            # ``time > until`` of a walk in time order, as bisections)
            due = bisect_left(times, nxt) if nxt <= until else bisect_right(times, until)
            maps, reduces = runnable[MAP] > 0, runnable[REDUCE] > 0
            if maps or reduces:  # the due ones before the first whose node has room
                ended = due
                for i, time in enumerate(islice(times, due)):
                    node = at[time]
                    if node_up[node] and ((maps and free_map[node] > 0) or (reduces and free_reduce[node] > 0)):
                        ended = i
                        break
                    del at[time]
                    pending[node] = 0
            else:  # nothing runnable: every one due finds no room, whatever its node (most under fifo)
                ended = due
                for node in map(at.pop, islice(times, due)):
                    pending[node] = 0
            if ended:
                del times[:ended]
                counted += ended
            if not times:
                return counted
            time = times[0]
            if time > until:
                return counted
            if time >= nxt:
                if time == nxt:  # at the queue's next instant: the engine runs it among that instant's events
                    del times[0]
                    sim.push_heartbeat(time, at.pop(time))
                return counted
            if not flushed:  # the rows of the engine's instant, at its time, first
                if end_rows is not None:
                    end_rows(sim.now)
                flushed = True
            if quiet is not None and not alone and offers._stalled < stall_limit:
                ended, quiet_ones, offered, pushed = self._quiet(
                    quiet, nxt, until, min(ask, stall_limit - offers._stalled)
                )
                if quiet_ones:
                    counted += ended
                    offers._stalled += quiet_ones
                    if quiet_ones < offered:
                        alone = True
                    else:
                        ask *= QUIET_GROWTH
                    if pushed:
                        nxt = next_time()
                    continue
            ask = 1
            del times[0]
            node = at.pop(time)
            counted += 1
            # ``HeartbeatOffers._beat_counts`` after its test of room, inline
            pending[node] = 0
            before = sim.next_attempt
            advance(time)
            self.open = time
            assign(node)
            self.open = None
            if sim.next_attempt != before:
                offers._stalled = 0
                alone = True
            else:
                alone = False
                offers._stalled += 1
                if offers._stalled > stall_limit:  # the engine's loop clears its queue after it
                    sim.stall()
                    self.clear()
            if not sim.stalled and (
                node_up[node]
                and ((runnable[MAP] > 0 and free_map[node] > 0) or (runnable[REDUCE] > 0 and free_reduce[node] > 0))
            ):
                pending[node] = 1
                beat = time + interval  # :meth:`hold`, inline (no heartbeat runs now: ``open`` is None)
                if beat in queued or beat in at:
                    sim.push_heartbeat(beat, node)
                else:
                    at[beat] = node
                    if not times or beat > times[-1]:  # (nearly always: it comes after the held ones)
                        times.append(beat)
                    else:
                        insort(times, beat)
            nxt = next_time()
            if nxt <= time:  # it pushed an event at its own time: the engine ends that instant
                sim.defer_rows()
                return counted
            if offers.new_work:  # the end of its instant (HeartbeatOffers.after_instant, then the rows)
                offers.new_work = False
                offers._schedule_all()
                nxt = next_time()
            if end_rows is not None:
                end_rows(time)
        return counted

    def _quiet(
        self, answer: Callable[[Sequence[int], Sequence[float]], int], nxt: float, until: float, most: int
    ) -> tuple[int, int, int, bool]:
        """A run of quiet heartbeats in bulk (``Policy.quiet_heartbeats``, the policy's ``answer``), from
        ``times[0]``: due before ``nxt`` (not after ``until``), its node with room. (The heartbeats
        ended: quiet or without room; the quiet ones; the ones offered; whether a heartbeat went into
        the queue.) :meth:`_quiet_one` makes the same steps for one heartbeat: a change here is
        made there too (``tests/sim/test_sim_quiet_probes.py`` offers every run one at a time).

        The policy is offered the due heartbeats with room, in order, before ``times[0]`` plus the
        interval, at most ``most`` (:meth:`_run` asks for 1, then more while all are quiet; and never
        the ``stall_limit``-th in a row to launch nothing: that one runs alone, and may stall the
        run). It answers how many in order are quiet: they
        launch nothing and call nothing on the engine, so nothing :meth:`_run` reads changes, and
        each heartbeat without room among them stays without room. What :meth:`_run` does for each,
        done here: the clock moves to its time (``advance``: at the first, which may be the clock's
        time, a row break; the later ones' times are greater, so only the last is set), the node's
        heartbeat is held again an interval later (in time order, the held times tested at that
        point: ``hold``'s tests, inline; that time comes after every one offered, so one put into
        the queue there leaves them due), the heartbeats without room before the first one not
        quiet are ended, and the count of heartbeats in a row that launched nothing grows (by the
        caller). Its instant's end writes no rows (the rows were written before it, and it changes
        no count: ``Recorder.flush`` writes nothing) and schedules nothing (no new work)."""
        sim = self.sim
        times, at = self.times, self.at
        interval = sim.heartbeat_interval
        if most == 1:  # (the probe, 4 calls in 5 on a SWIM day: ``times[0]`` alone, the loops below without loops)
            return self._quiet_one(answer)
        runnable = sim.runnable
        maps, reduces = runnable[MAP] > 0, runnable[REDUCE] > 0
        free_map, free_reduce = sim.free
        node_up = sim.node_up
        bound = min(nxt, times[0] + interval)
        nodes: list[int] = []
        offered: list[float] = []
        where: list[int] = []  # (their places in ``times``)
        n = 0
        for i, time in enumerate(times):
            if time >= bound or time > until:
                break
            node = at[time]
            if node_up[node] and ((maps and free_map[node] > 0) or (reduces and free_reduce[node] > 0)):
                nodes.append(node)
                offered.append(time)
                where.append(i)
                n += 1
                if n == most:
                    break
        done = answer(nodes, offered)
        if not done:
            return 0, 0, n, False
        # the first ``end`` are ended: the quiet ones and those without room before the first not
        # quiet (those after the last quiet one, :meth:`_run` ends next, as it would)
        end = where[done] if done < n else where[-1] + 1
        where.append(-1)  # (after the last offered: no place; one not quiet is at ``end``, not reached)
        queued = self.queued
        pending = self.offers._pending
        pushed = False
        j = 0
        w = where[0]
        for i, time in enumerate(times[:end]):
            node = at.pop(time)
            if i != w:  # no room: its schedule ends
                pending[node] = 0
                continue
            j += 1
            w = where[j]
            beat = time + interval
            if beat in queued or beat in at:
                sim.push_heartbeat(beat, node)
                pushed = True
            else:
                at[beat] = node
                if beat > times[-1]:
                    times.append(beat)
                else:
                    insort(times, beat)
        del times[:end]
        sim.advance(offered[0])
        if done > 1:
            sim.advance(offered[done - 1])
        return end, done, len(nodes), pushed

    def _quiet_one(self, answer: Callable[[Sequence[int], Sequence[float]], int]) -> tuple[int, int, int, bool]:
        """:meth:`_quiet` offering one heartbeat: ``times[0]``, which :meth:`_run` leaves due (before the
        queue's next instant, not after ``until``) with room (it ended the ones before it without
        room), so that it is the first one :meth:`_quiet`'s loop would offer. The same steps: the
        answer, the heartbeat ended and held again an interval later (``hold``'s tests), the clock
        at its time (``advance``: a row break where it is the clock's time)."""
        times, at = self.times, self.at
        time = times[0]
        node = at[time]
        if not answer((node,), (time,)):
            return 0, 0, 1, False
        sim = self.sim
        del at[time]
        del times[0]
        beat = time + sim.heartbeat_interval
        pushed = False
        if beat in self.queued or beat in at:
            sim.push_heartbeat(beat, node)
            pushed = True
        else:
            at[beat] = node
            if not times or beat > times[-1]:
                times.append(beat)
            else:
                insort(times, beat)
        sim.advance(time)
        return 1, 1, 1, pushed


__all__ = ["HeldBeats"]
