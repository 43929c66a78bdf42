"""Nodes that no waiting task fits, with what they had free then (used by ``drf``).

``drf`` blocks a node when an offer ends with every job that has work either too big for
what the node has free or declining it (``mropt.sim.policies.drf``, ``assign``). Until the
node's capacity grows, only jobs that gained work since (the policy's ``fresh`` list from
the position kept here, its *epoch*) and the jobs that declined can take it. When work
appears, :meth:`BlockedNodes.worth_offering` picks in one vectorised comparison the nodes
where one of the new tasks fits, so a saturated cluster of a thousand nodes is not offered
node by node at every arrival.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

import numpy as np

_EPS = 1e-9


class BlockedNodes:
    """Per node: blocked or not, its free capacity when blocked, its epoch and the jobs that declined it.

    ``flag``, ``epoch`` and ``free`` are numpy views of Python buffers: :meth:`block` and :meth:`take`
    (a few million calls on a saturated day, one per offer) read and write the buffers item by item
    without numpy's per-item cost, and :meth:`worth_offering` compares all nodes at once through
    the views. A blocked capacity is copied into ``free`` only when :meth:`worth_offering` needs it.
    """

    def __init__(self, n_nodes: int, width: int) -> None:
        self._flag = bytearray(n_nodes)
        self._epoch = array("q", bytes(8 * n_nodes))
        self.flag = np.frombuffer(self._flag, dtype=bool)
        # (read item by item by ``drf``'s offers: a node not blocked needs no ``take``; one whose capacity
        # grew is unblocked there as ``take`` would, its flag cleared and its decliners dropped)
        self.flag_bytes = self._flag
        self.epoch = np.frombuffer(self._epoch, dtype=np.int64)
        self.free = np.zeros((n_nodes, width))
        self._free_list: list[list[float]] = [[] for _ in range(n_nodes)]
        self._unsynced: set[int] = set()  # blocked nodes whose row of ``free`` is out of date
        self._decliners: dict[int, tuple[int, ...]] = {}
        self.free_rows = self._free_list  # (the same lists, read by ``drf``'s offers)
        self.decliners = self._decliners

    def block(self, node: int, free: list[float], epoch: int, decliners: tuple[int, ...]) -> None:
        self._flag[node] = 1
        self._free_list[node] = free
        self._unsynced.add(node)
        self._epoch[node] = epoch
        if decliners:
            self._decliners[node] = decliners
        elif self._decliners:
            self._decliners.pop(node, None)

    def take(self, node: int) -> tuple[list[float], int, tuple[int, ...]] | None:
        """Unblock ``node``; its (free capacity, epoch, decliners) when it was blocked, else None."""
        if not self._flag[node]:
            return None
        self._flag[node] = 0
        decliners = self._decliners.pop(node, ()) if self._decliners else ()
        return self._free_list[node], self._epoch[node], decliners

    def worth_offering(self, needs: Sequence[Sequence[float]], epoch: int) -> list[int]:
        """The nodes to offer now that tasks needing ``needs`` (capacity vectors) may wait.

        Every node not blocked, every blocked node that has decliners (they are offered it
        again) or where one of ``needs`` fits; the other blocked nodes move their epoch to
        ``epoch``: the jobs before it were just found too big for them.
        """
        if self._unsynced:
            nodes = list(self._unsynced)
            self._unsynced.clear()
            self.free[nodes] = [self._free_list[node] for node in nodes]
        offer = ~self.flag
        for node in self._decliners:
            offer[node] = True
        for need in needs:
            offer |= (self.free + _EPS >= np.asarray(need)).all(axis=1)
        self.epoch[~offer] = epoch
        return np.flatnonzero(offer).tolist()


class NeverBlocked(BlockedNodes):
    """No node is ever blocked (``drf`` without its ``blocked`` acceleration: every offer goes to every job)."""

    def block(self, node: int, free: list[float], epoch: int, decliners: tuple[int, ...]) -> None:
        return


__all__ = ["BlockedNodes", "NeverBlocked"]
