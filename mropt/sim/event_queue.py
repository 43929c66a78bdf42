"""The simulator's event queue: events in the total order (time, class, push order).

The engine processes every event of an instant, then decides (``mropt.sim.engine``); events of
one instant go by *class* (completions < kills < arrivals and recoveries < timers and
heartbeats), and within a class in the order they were pushed. A trace's times are often
whole seconds, so many events share an instant (the Alibaba 2017 day under ``drf``: 7.9 million
events, and at most one instant per second of its 104,117 s makespan). The queue is therefore a
binary heap of the distinct *times* and, per time, one list per class: a push is a dictionary
look-up and an append (a heap push only for a new time), and the order of an instant's events
costs no comparisons at all. This is what a calendar queue does for equal keys (Brown, CACM
31(10), 1988), kept simple.

:class:`EventQueue` gives the instants in increasing time (:meth:`EventQueue.next_instant`);
the engine drains an instant with :func:`drain`, which yields its events class by class and
sees events pushed at that instant while it runs (a completion at the start time of a task of
no duration, a timer set for now), each in its place in the order.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

#: the number of event classes (``mropt.sim.engine``: C_DONE, C_KILL, C_ARRIVE, C_DECIDE)
N_CLASSES = 4


class EventQueue:
    """Distinct times in a heap; per time, one list of (kind, arg) per class (module docstring)."""

    __slots__ = ("_times", "_at")

    def __init__(self) -> None:
        self._times: list[float] = []
        self._at: dict[float, list[list[tuple[int, Any]]]] = {}

    def __bool__(self) -> bool:
        return bool(self._times)

    def __len__(self) -> int:
        """Events waiting (for tests and diagnostics: O(instants))."""
        return sum(len(events) for lists in self._at.values() for events in lists)

    def push(self, time: float, cls: int, kind: int, arg: Any) -> None:
        lists = self._at.get(time)
        if lists is None:
            lists = self._at[time] = [[] for _ in range(N_CLASSES)]
            heapq.heappush(self._times, time)
        lists[cls].append((kind, arg))

    def next_instant(self) -> tuple[float, list[list[tuple[int, Any]]]]:
        """The earliest time and its class lists, left in the queue (pushes at that time still go
        there) until :meth:`close` (``drain`` reads them)."""
        time = self._times[0]
        return time, self._at[time]

    def close(self, time: float) -> None:
        """Remove the instant ``time`` (drained): a later push at that time opens it again."""
        heapq.heappop(self._times)
        del self._at[time]

    def clear(self) -> None:
        self._times.clear()
        self._at.clear()


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
