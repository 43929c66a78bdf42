"""The cluster's capacity at run time: slots and resources per node, what is free, nodes up or down.

A node gives map and reduce slots, resources (``cpu``, ``mem``, ...; a task's ``demand`` holds
some), or both (``mropt.model.workload``). An attempt holds one slot of its type (when the
nodes give slots) and its demand on its node from its start (``Launches._start``, the one place
an attempt starts) to its end (:meth:`Capacity.release_one`; :meth:`Capacity.release`, a whole batch). A node that goes down has no capacity until it comes back (whole
again: its attempts were killed). A demand fits a node when each amount is at most the free
amount plus 1e-9 (``docs/tolerances.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mropt.model.workload import WorkloadInstance
from mropt.sim.state import MAP, REDUCE

#: the float slack of a resource fit (``docs/tolerances.md``, CAPACITY_RTOL's absolute cousin)
FIT_EPS = 1e-9


def _nobody(node: int) -> None:
    """No one to tell (until the engine sets ``Capacity.freed``)."""


class Capacity:
    """Slots and resources per node of one run (module docstring); the engine's ``free``,
    ``slots``, ``total_slots``, ``free_resources`` and ``node_up`` are these lists."""

    __slots__ = (
        "_freed",
        "_freed_all",
        "_all_up",
        "uses_slots",
        "resources",
        "node_up",
        "slots",
        "free",
        "total_slots",
        "free_resources",
        "_full",
        "_res",
    )

    def __init__(self, workload: WorkloadInstance) -> None:
        self.freed = _nobody
        self.uses_slots = workload.uses_slots
        self.resources: list[str] = sorted({r for spec in workload.nodes for r in spec.resources})
        full: list[list[int]] = [[], []]
        res: list[list[float]] = []
        for spec in workload.nodes:
            for _ in range(spec.count):
                full[MAP].append(spec.map_slots if spec.map_slots is not None else 0)
                full[REDUCE].append(spec.reduce_slots if spec.reduce_slots is not None else 0)
                res.append([spec.resources.get(r, 0.0) for r in self.resources])
        self._full = full  # each node's slots when up
        self._res = res  # each node's resources when up
        self.node_up = [True] * len(res)
        self._all_up = True  # (no node is down: :meth:`release`'s common case)
        self.slots = [list(full[MAP]), list(full[REDUCE])]
        self.free = [list(full[MAP]), list(full[REDUCE])]
        self.total_slots = [sum(full[MAP]), sum(full[REDUCE])]
        self.free_resources = [list(c) for c in res]

    @property
    def freed(self) -> Callable[[int], None]:
        """Told of each node whose capacity an ending attempt freed (the engine's assignment mode).
        Where it is a set's ``add`` (the event mode's nodes to offer), :meth:`release` hands a
        batch's nodes to the set's ``update`` in one call (the same set: the same nodes added in
        the same order)."""
        return self._freed

    @freed.setter
    def freed(self, tell: Callable[[int], None]) -> None:
        self._freed = tell
        owner = getattr(tell, "__self__", None)  # (a set's ``update``, or None)
        self._freed_all = owner.update if type(owner) is set and tell == owner.add else None

    @property
    def initial_slots(self) -> tuple[int, int]:
        """The cluster's map and reduce slots with every node up (before any went down)."""
        return sum(self._full[MAP]), sum(self._full[REDUCE])

    def fits(self, node: int, demand: tuple[float, ...]) -> bool:
        """Whether ``demand`` fits the node's free resources."""
        free = self.free_resources[node]
        if len(demand) == 2:  # (cpu, mem): the common case, spelled out
            return demand[0] <= free[0] + FIT_EPS and demand[1] <= free[1] + FIT_EPS
        return all(amount <= free[k] + FIT_EPS for k, amount in enumerate(demand))

    def release(self, stype: int, nodes: Sequence[int], demand: tuple[float, ...] | None) -> None:
        """Attempts of slot type ``stype`` and ``demand``, one on each of ``nodes``, ended (a batch):
        :meth:`release_one` of each node in order. A batch without a demand on slots while no node
        is down (its common case) skips those tests, and tells a set's ``add`` (``freed``) of the
        nodes in one ``update`` call. Engine bookkeeping, not a rule: ``plain()`` and the policies'
        switches leave it on (``tests/sim/test_sim_capacity_release.py`` compares it with
        :meth:`release_one`, node by node)."""
        if demand is None and self._all_up and self.uses_slots:
            slots = self.free[stype]
            tell_all = self._freed_all
            if tell_all is None:
                freed = self._freed
                for node in nodes:
                    slots[node] += 1
                    freed(node)
            else:
                for node in nodes:
                    slots[node] += 1
                tell_all(nodes)
            return
        node_up = self.node_up
        free = self.free[stype] if self.uses_slots else None
        freed = self._freed
        for node in nodes:  # (``release_one`` of each, inline: a batch of demands is the Alibaba day's end)
            if node_up[node]:
                if free is not None:
                    free[node] += 1
                if demand is not None:
                    res = self.free_resources[node]
                    if len(demand) == 2:  # (cpu, mem): the common case, spelled out
                        res[0] += demand[0]
                        res[1] += demand[1]
                    else:
                        for k, amount in enumerate(demand):
                            res[k] += amount
                freed(node)

    def release_one(self, stype: int, node: int, demand: tuple[float, ...] | None) -> None:
        """An attempt of slot type ``stype`` and ``demand`` on ``node`` ended: its slot and demand
        are free again, and ``freed`` hears of the node. Nothing is freed on a node that is down:
        its capacity comes back whole with it."""
        if self.node_up[node]:
            if self.uses_slots:
                self.free[stype][node] += 1
            if demand is not None:
                res = self.free_resources[node]
                if len(demand) == 2:  # (cpu, mem): the common case, spelled out
                    res[0] += demand[0]
                    res[1] += demand[1]
                else:
                    for k, amount in enumerate(demand):
                        res[k] += amount
            self._freed(node)

    def down(self, node: int) -> None:
        """The node went down (its attempts were ended first): no capacity until :meth:`up`."""
        self.node_up[node] = False
        self._all_up = False
        for stype in (MAP, REDUCE):
            self.total_slots[stype] -= self.slots[stype][node]
            self.slots[stype][node] = 0
            self.free[stype][node] = 0
        self.free_resources[node] = [0.0] * len(self.resources)

    def up(self, node: int) -> None:
        """The node came back, all of its capacity free."""
        self.node_up[node] = True
        self._all_up = all(self.node_up)
        for stype in (MAP, REDUCE):
            self.slots[stype][node] = self._full[stype][node]
            self.free[stype][node] = self._full[stype][node]
            self.total_slots[stype] += self._full[stype][node]
        self.free_resources[node] = list(self._res[node])
