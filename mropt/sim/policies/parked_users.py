"""DRF users parked by the demand of their waiting tasks (used by ``drf``).

On a saturated cluster, users whose waiting tasks are big (a lot of memory, say) can wait for
hours at dominant share 0, at the top of DRF's order (and first among equals under the
``largest-demand`` tie-break): every offer of every node would meet them first and find them
too big. ``drf`` *parks* such a user instead of putting it back in its heap: its heap entry
goes into a group of users whose waiting tasks all have the same (demand, slot type). An
offer of a node then considers the smallest entry of the heap and the smallest entry of the
parked groups that fit the node, whichever comes first in DRF's order: the same user an
offer to the whole heap would reach first, without looking at the parked users too big for
the node. Like :class:`~mropt.sim.policies.demand_index.DemandIndex`, the groups are kept
sorted by their first amount with running minima of the others, so "no parked group fits"
costs one bisection.

Entries are validated by the caller's ``valid(entry, key)`` (the user's entry is still its
current one and the user is still parked under that key); stale ones are dropped when met.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

_EPS = 1e-9
#: (demand, slot type) of the parked user's waiting tasks; the demand as the capacity vector
Key = tuple[tuple[float, ...], int]
Entry = tuple[Any, ...]


class ParkedUsers:
    """Groups of parked users' heap entries by (demand vector, slot type)."""

    def __init__(self) -> None:
        self._groups: dict[Key, list[Entry]] = {}
        self._order: list[Key] = []
        self._first: list[float] = []
        self._mins: list[list[float]] = []
        self._dirty = False

    def __len__(self) -> int:
        return len(self._groups)

    def park(self, key: Key, entry: Entry) -> None:
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = []
            self._dirty = True
        heapq.heappush(group, entry)

    def _rebuild(self) -> None:
        self._order = sorted(self._groups, key=lambda k: (k[0], k[1]))
        self._first = [k[0][0] for k in self._order]
        self._mins = []
        low: list[float] = []
        for demand, _ in self._order:
            low = list(demand[1:]) if not low else [min(a, b) for a, b in zip(low, demand[1:])]
            self._mins.append(low)
        self._dirty = False

    def best(
        self, free: Sequence[float], slot_free: Sequence[bool], valid: Callable[[Entry, Key], bool]
    ) -> tuple[Entry, Key] | None:
        """The smallest valid entry among the groups whose demand fits ``free`` (None: none).

        ``free`` is the node's free amount per resource; ``slot_free[t]`` whether slot type
        t may be used there. Stale entries met on the way are dropped; empty groups go.
        """
        if not self._groups:
            return None
        if self._dirty:
            self._rebuild()
        n = bisect_right(self._first, free[0] + _EPS) if free else len(self._order)
        if n == 0:
            return None
        if any(low > free[k + 1] + _EPS for k, low in enumerate(self._mins[n - 1])):
            return None
        found: tuple[Entry, Key] | None = None
        for key in self._order[:n]:
            demand, stype = key
            if not slot_free[stype] or any(x > free[k] + _EPS for k, x in enumerate(demand)):
                continue
            group = self._groups.get(key)
            while group and not valid(group[0], key):
                heapq.heappop(group)
            if not group:
                if group is not None:
                    del self._groups[key]
                    self._dirty = True
                continue
            if found is None or group[0] < found[0]:
                found = (group[0], key)
        return found

    def pop(self, key: Key) -> Entry:
        """Take the smallest entry of the group ``key`` (the one :meth:`best` returned)."""
        group = self._groups[key]
        entry = heapq.heappop(group)
        if not group:
            del self._groups[key]
            self._dirty = True
        return entry


__all__ = ["ParkedUsers"]
