"""DRF users parked by the demand of their waiting tasks (used by ``drf``).

On a saturated cluster, users whose waiting tasks are big (a lot of memory, say) can wait for
hours at dominant share 0, at the top of DRF's order (and first among equals under the
``largest-demand`` tie-break): every offer of every node would meet them first and find them
too big. ``drf`` *parks* such a user instead of putting it back in its heap: its heap entry
goes into a group of users whose waiting tasks all have the same (demand, slot type). An
offer of a node then considers the smallest entry of the heap and the smallest entry of the
parked groups that fit the node, whichever comes first in DRF's order: the same user an
offer to the whole heap would reach first, without looking at the parked users too big for
the node.

Each group is a heap of entries; the groups' smallest entries (their *tops*) are kept in one
sorted list, so :meth:`ParkedUsers.best` walks the groups in DRF's order and stops at the
first that fits the node: it looks only at the groups whose top comes before the answer.
Each item of that list carries its group's first two demand amounts and slot type beside
(top, key), so the walk's fit test on a two-resource cluster reads no nested tuple.
A node below the smallest first or second amount over all groups (kept, recomputed only when a
group holding one of them goes) fits none of them: ``best`` says so without the walk (on the Alibaba day, most of
its None answers). Entries are validated by the caller's ``valid(entry, key)`` (the user's entry is still its
current one and the user is still parked under that key); a stale top met on the way is
dropped and its group takes its next entry.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from collections.abc import Callable, Sequence
from operator import le
from typing import Any

_EPS = 1e-9
#: (demand, slot type) of the parked user's waiting tasks; the demand as the capacity vector
Key = tuple[tuple[float, ...], int]
Entry = tuple[Any, ...]


class ParkedUsers:
    """Groups of parked users' heap entries by (demand vector, slot type)."""

    def __init__(self) -> None:
        self._groups: dict[Key, list[Entry]] = {}
        #: (top entry, key, first amount, second amount, slot type) of every group, in increasing
        #: entry order (entries are unique, so the order is the (top, key) order); read, never written,
        #: by ``drf``'s offers: ``tops[0][0]`` is :meth:`lowest` without a call
        self.tops: list[tuple[Entry, Key, float, float, int]] = []
        #: the smallest first and second demand amounts over the groups (a node below either fits
        #: none: :meth:`best` answers None without a walk); recomputed when a group holding one goes
        self._min0 = self._min1 = float("inf")
        self._mins_stale = False

    def __len__(self) -> int:
        return len(self._groups)

    def lowest(self) -> Entry | None:
        """The smallest top entry of all groups, valid or not, fitting or not (None: no group):
        no entry :meth:`best` can return comes before it."""
        return self.tops[0][0] if self.tops else None

    def park(self, key: Key, entry: Entry) -> None:
        group = self._groups.get(key)
        if group is None:
            self._groups[key] = [entry]
            item = _item(entry, key)
            insort(self.tops, item)
            self._min0 = min(self._min0, item[2])
            self._min1 = min(self._min1, item[3])
            return
        if entry < group[0]:
            self._untop(group[0], key)
            insort(self.tops, _item(entry, key))
        heapq.heappush(group, entry)

    def _untop(self, entry: Entry, key: Key) -> None:
        tops = self.tops
        i = bisect_left(tops, (entry, key))  # (a prefix of its item: sorts just before it)
        del tops[i]

    def _pop_top(self, key: Key) -> Entry:
        """Take the group's top entry; its next entry (if any) becomes its top."""
        group = self._groups[key]
        entry = heapq.heappop(group)
        self._untop(entry, key)
        if group:
            insort(self.tops, _item(group[0], key))
        else:
            del self._groups[key]
            demand = key[0]
            if demand[0] <= self._min0 or (demand[1] if len(demand) > 1 else 0.0) <= self._min1:
                self._mins_stale = True  # (a group above both minima leaves them as they are)
        return entry

    def best(
        self, free: Sequence[float], slot_free: Sequence[bool], valid: Callable[[Entry, Key], bool]
    ) -> tuple[Entry, Key] | None:
        """The smallest valid entry among the groups whose demand fits ``free`` (None: none).

        ``free`` is the node's free amount per resource; ``slot_free[t]`` whether slot type
        t may be used there. Stale tops met on the way are dropped.
        """
        tops = self.tops
        two = len(free) == 2
        if self._mins_stale:
            self._min0 = min((item[2] for item in tops), default=float("inf"))
            self._min1 = min((item[3] for item in tops), default=float("inf"))
            self._mins_stale = False
        if two:
            c0, c1 = free[0] + _EPS, free[1] + _EPS
            if c0 < self._min0 or c1 < self._min1:
                return None  # (no group's demand fits: what the walk would find, dropping nothing)
        else:
            cap = [x + _EPS for x in free]
        i = 0
        while True:  # one pass per stale top met
            if two:
                for k in range(i, len(tops)):  # (from where the last pass stopped)
                    entry, key, d0, d1, stype = tops[k]
                    if d0 <= c0 and d1 <= c1 and slot_free[stype]:
                        break
                else:
                    return None
            else:
                for k in range(i, len(tops)):
                    entry, key, _, _, stype = tops[k]
                    if slot_free[stype] and all(map(le, key[0], cap)):
                        break
                else:
                    return None
            if valid(entry, key):
                return entry, key
            i = k
            self._pop_top(key)  # the next top of the group sorts at k or later

    def pop(self, key: Key) -> Entry:
        """Take the smallest entry of the group ``key`` (the one :meth:`best` returned)."""
        return self._pop_top(key)


def _item(entry: Entry, key: Key) -> tuple[Entry, Key, float, float, int]:
    """The ``tops`` item of a group's top: (top, key) and the fit test's operands."""
    demand = key[0]
    return (entry, key, demand[0], demand[1] if len(demand) > 1 else 0.0, key[1])


__all__ = ["ParkedUsers"]
