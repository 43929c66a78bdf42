"""Per-node and per-rack stacks of a stage's pending tasks, for locality (used by ``Stage.take``).

A stage whose tasks have input replicas serves a node its node-local tasks first, then its
rack-local ones (Hadoop's ``JobInProgress`` caches ``nonRunningMapCache`` per node and per
rack). :class:`PlaceStacks` holds one such stack per place (node or rack): the tasks with a
replica there, lowest task id on top, lazily cleaned (a task no longer pending is skipped
when met). All places share one flat list, sorted by place and then task id; each place has
a read pointer into it, so building the stacks of a stage is a few numpy operations and
three byte copies into C-int arrays, whatever the number of places (a stage of a
trace-sized job has replicas on every node). A task put back to pending (its attempt was
killed) is pushed on top of its places' stacks (``push``), served before the rest, most
recent first.

A small stage (at most :data:`SMALL` replica entries; many stages of a trace have a few
tasks) gets :class:`PlaceLists` instead: a Python list per place that holds a
replica, built without numpy, whose fixed cost per call is most of a small build. Both
serve the same tasks in the same order. Either form says whether a replica entry named no node
(``padded``; generated placement leaves none): ``Stage.take_far`` then reads a task's level from
its replicas, as ``Stage.level_on`` does, instead of knowing it from the empty stacks.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

import numpy as np

from mropt.sim.task_states import PENDING

#: a stage with at most this many replica entries (tasks x replicas) gets :class:`PlaceLists`
SMALL = 200


def top_pending(stack: list[int] | None, state: bytearray) -> int:
    """The top (last) pending task of a lazily cleaned ``stack``, left on it; the entries above it,
    no longer pending, are dropped. -1 if none (or no stack)."""
    while stack:
        task = stack[-1]
        if state[task] == PENDING:
            return task
        stack.pop()
    return -1


class PlaceStacks:
    """Stacks of task ids per place ``0 .. places-1`` over one flat list (module docstring)."""

    __slots__ = ("_ids", "_cur", "_end", "_pushed", "padded")

    def __init__(self, places: np.ndarray, tasks: np.ndarray, n_places: int, padded: bool = False) -> None:
        """``places[i]`` holds ``tasks[i]``; ``tasks`` is in nondecreasing order (pairs may repeat).
        ``padded``: the replicas had entries that name no node (:func:`build_stacks`)."""
        #: some task's replicas had an entry < 0 (no node), left out of the stacks
        self.padded = padded
        # a stable sort by place keeps each place's tasks in order (a radix sort for small ints)
        narrow = np.int16 if n_places < 2**15 else np.int32 if n_places < 2**31 else np.int64
        order = np.argsort(places.astype(narrow), kind="stable")
        sorted_places, ids = places[order], tasks[order]
        keep = np.ones(len(ids), dtype=bool)  # a repeated (place, task) pair is kept once
        keep[1:] = (sorted_places[1:] != sorted_places[:-1]) | (ids[1:] != ids[:-1])
        sorted_places = sorted_places[keep]
        self._ids = _ints(ids[keep])
        bounds = np.searchsorted(sorted_places, np.arange(n_places + 1, dtype=np.int64))
        self._cur = _ints(bounds[:-1])
        self._end = _ints(bounds[1:])
        self._pushed: dict[int, list[int]] | None = None

    def pop(self, place: int, state: bytearray) -> int:
        """The top pending task of ``place`` (left on its stack), or -1 if it has none."""
        pushed = self._pushed
        if pushed is not None:
            task = top_pending(pushed.get(place), state)
            if task >= 0:
                return task
        k = self._cur[place]
        end = self._end[place]
        ids = self._ids
        while k < end and state[ids[k]] != PENDING:
            k += 1
        self._cur[place] = k
        return ids[k] if k < end else -1

    def push(self, place: int, task: int) -> None:
        """Put ``task`` (pending again) on top of the place's stack."""
        if self._pushed is None:
            self._pushed = {}
        self._pushed.setdefault(place, []).append(task)


class PlaceLists:
    """The stacks of the places that hold a replica, one list each, top at the end (module docstring)."""

    __slots__ = ("_stacks", "padded")

    def __init__(self, stacks: dict[int, list[int]], padded: bool = False) -> None:
        """``stacks[place]``: the place's task ids in decreasing order (lowest on top); ``padded``
        as :class:`PlaceStacks`'s."""
        self._stacks = stacks
        self.padded = padded

    def pop(self, place: int, state: bytearray) -> int:
        """The top pending task of ``place`` (left on its stack), or -1 if it has none."""
        return top_pending(self._stacks.get(place), state)

    def push(self, place: int, task: int) -> None:
        """Put ``task`` (pending again) on top of the place's stack."""
        self._stacks.setdefault(place, []).append(task)


#: the stacks of one kind of place, either form
Stacks = PlaceStacks | PlaceLists


def _small_stacks(rows: Sequence[Sequence[int]], node_rack: Sequence[int]) -> tuple[PlaceLists, PlaceLists]:
    """:func:`build_stacks` for a small stage, in plain Python (tasks last to first, so lowest on top)."""
    by_node: dict[int, list[int]] = {}
    by_rack: dict[int, list[int]] = {}
    padded = False
    for task in range(len(rows) - 1, -1, -1):
        for node in rows[task]:
            if node < 0:
                padded = True
                continue
            stack = by_node.get(node)
            if stack is None:
                by_node[node] = [task]
            elif stack[-1] != task:  # (a task twice in one place is kept once)
                stack.append(task)
            rack = node_rack[node]
            stack = by_rack.get(rack)
            if stack is None:
                by_rack[rack] = [task]
            elif stack[-1] != task:
                stack.append(task)
    return PlaceLists(by_node, padded), PlaceLists(by_rack, padded)


def _ints(values: np.ndarray) -> array[int]:
    """``values`` as a C-int ``array``: a copy of its bytes (``tolist`` would box every element)."""
    out = array("i")
    out.frombytes(values.astype(np.intc).tobytes())
    return out


def build_stacks(replicas: np.ndarray | Sequence[tuple[int, ...]], node_rack: Sequence[int]) -> tuple[Stacks, Stacks]:
    """The per-node and per-rack stacks of a stage's tasks from their replicas.

    ``replicas`` is an int array (tasks, R) (entries < 0: none) or a tuple of node indices
    per task. A task with two replicas in one rack appears once in that rack's stack.
    """
    if isinstance(replicas, np.ndarray):
        if replicas.size <= SMALL:
            return _small_stacks(replicas.tolist(), node_rack)
        width = replicas.shape[1] if replicas.ndim == 2 else 0
        tasks = np.repeat(np.arange(len(replicas), dtype=np.int64), width)
        nodes = replicas.reshape(-1).astype(np.int64)
    else:
        if sum(map(len, replicas)) <= SMALL:
            return _small_stacks(replicas, node_rack)
        tasks = np.fromiter((t for t, nodes in enumerate(replicas) for _ in nodes), dtype=np.int64)
        nodes = np.fromiter((n for nodes in replicas for n in nodes), dtype=np.int64)
    keep = nodes >= 0
    padded = not keep.all()
    tasks, nodes = tasks[keep], nodes[keep]
    rack_of = np.asarray(node_rack, dtype=np.int64)
    n_racks = int(rack_of.max()) + 1 if len(rack_of) else 0
    return PlaceStacks(nodes, tasks, len(rack_of), padded), PlaceStacks(rack_of[nodes], tasks, n_racks, padded)


__all__ = ["SMALL", "PlaceLists", "PlaceStacks", "Stacks", "build_stacks", "top_pending"]
