"""The simulator's event queue: events in the total order (time, class, push order).

The engine processes every event of an instant, then decides (``mropt.sim.engine``); events of
one instant go by *class* (completions < kills < arrivals and recoveries < timers and
heartbeats), and within a class in the order they were pushed. A trace's times are often
whole seconds, so many events share an instant (the Alibaba 2017 day under ``drf``: 7.9 million
events, and at most one instant per second of its 104,117 s makespan). The queue is therefore a
binary heap of the distinct *times* and, per time, one list per class: a push is a dictionary
look-up and an append (a heap push only for a new time), and the order of an instant's events
costs no comparisons at all. This is what a calendar queue does for equal keys (Brown, CACM
31(10), 1988), kept simple. A class's list is made at its first push at that time (until then
it is the empty tuple): most instants of a heartbeat run hold a single heartbeat.

:class:`EventQueue` gives the instants in increasing time (:meth:`EventQueue.next_instant`);
:func:`drain` yields the events of an instant class by class and sees events pushed at that
instant while it runs (a completion at the start time of a task of no duration, a timer set for
now), each in its place in the order.

**The engine's loop** (``Simulation._run``) does what ``next_instant``, ``drain`` and ``close``
do, without their calls: a SWIM day in heartbeat mode is 4 million instants, most holding a
single heartbeat, so a call or a generator per instant is a visible share of the run. It reads
:attr:`EventQueue.times` and :attr:`EventQueue.at` (the instant is ``at[times[0]]``), walks the
four class lists with one index each (reading each list again after every event, as a push may
have made it), going back to the lowest class after every event as ``drain`` does, and closes
the instant with a heap pop and a dictionary delete. ``drain`` is the rule;
``tests/sim/test_sim_event_queue.py`` checks the engine's walk against it.

Heartbeat mode keeps its heartbeats out of the queue until their instant is due
(``mropt.sim.lone_beats``); :attr:`EventQueue.before_decide` lets it put a heartbeat held at a
time into the queue before a timer pushed later at that time, in the order of their pushes.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from typing import Any

#: the number of event classes (``mropt.sim.engine``: C_DONE, C_KILL, C_ARRIVE, C_DECIDE)
N_CLASSES = 4
#: a class without events at a time (most instants hold one event): its list is made at its first push
_NONE: Any = ()


class EventQueue:
    """Distinct times in a heap; per time, one list of (kind, arg) per class (module docstring)."""

    __slots__ = ("times", "at", "before_decide")

    def __init__(self) -> None:
        #: the distinct times waiting, a binary heap (read by the engine's loop: module docstring)
        self.times: list[float] = []
        #: per time, its N_CLASSES lists of (kind, arg) (a class without events: the empty tuple)
        self.at: dict[float, list[list[tuple[int, Any]]]] = {}
        #: called with the time before an event of the last class (timers, heartbeats) is pushed:
        #: heartbeats held outside the queue (``mropt.sim.lone_beats``) pushed before it go in first
        self.before_decide: Callable[[float], None] | None = None

    def __bool__(self) -> bool:
        return bool(self.times)

    def __len__(self) -> int:
        """Events waiting (for tests and diagnostics: O(instants))."""
        return sum(len(events) for lists in self.at.values() for events in lists)

    def push(self, time: float, cls: int, kind: int, arg: Any) -> None:
        if cls == 3 and self.before_decide is not None:  # (the last class, N_CLASSES - 1)
            self.before_decide(time)
        lists = self.at.get(time)
        if lists is None:
            lists = self.at[time] = [_NONE, _NONE, _NONE, _NONE]  # (N_CLASSES)
            heapq.heappush(self.times, time)
        events = lists[cls]
        if events:
            events.append((kind, arg))
        else:
            lists[cls] = [(kind, arg)]

    def next_instant(self) -> tuple[float, list[list[tuple[int, Any]]]]:
        """The earliest time and its class lists, left in the queue (pushes at that time still go
        there) until :meth:`close` (``drain`` reads them)."""
        time = self.times[0]
        return time, self.at[time]

    def close(self, time: float) -> None:
        """Remove the instant ``time`` (drained): a later push at that time opens it again."""
        heapq.heappop(self.times)
        del self.at[time]

    def clear(self) -> None:
        self.times.clear()
        self.at.clear()


def drain(lists: list[list[tuple[int, Any]]]) -> Iterator[tuple[int, Any]]:
    """The events of one instant in class order, push order within a class, including those
    pushed while it runs (a push of a lower class comes before the rest of a higher one)."""
    pos = [0] * N_CLASSES
    cls = 0
    while cls < N_CLASSES:
        events = lists[cls]
        k = pos[cls]
        if k == len(events):
            cls += 1
            continue
        pos[cls] = k + 1
        yield events[k]
        cls = 0


__all__ = ["N_CLASSES", "EventQueue", "drain"]
