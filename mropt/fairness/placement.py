"""Placing tasks on nodes: first-fit and best-fit, by locality level.

:func:`choose_node` is the node choice of progressive filling with nodes
(:mod:`mropt.fairness.drf`): among the nodes whose free capacity holds the task's
demand, the first in instance order (``first-fit``) or the one left with the least
free capacity, summed over resources normalised by the cluster totals (``best-fit``;
ties, within ``CAPACITY_RTOL`` of the totals, to the first). With ``preferred``
locality levels (node-local: the nodes that hold the task's input; rack-local: the
other nodes of their racks; then any node, DDRF sec. 4), the first level with a
fitting node wins.

A task fits a node when each resource's use stays within
:func:`~mropt.model.tolerance.capacity_limit` of the node's capacity (``CAPACITY_RTOL``,
relative; ``docs/tolerances.md``): the choice is the same in any units.

The exact placement of one scheduling round (a Quincy-style min-cost flow) is in
:mod:`mropt.fairness.flow`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mropt.model.fairness import FairnessInstance
from mropt.model.tolerance import CAPACITY_RTOL

PLACEMENT_RULES = ("first-fit", "best-fit")
LEVELS = ("node", "rack", "any")

#: Node indices (into the instance's node order): a list, or an array for "any node".
NodeIndices = Sequence[int] | np.ndarray


class LocalityMap:
    """Node indices of each locality level for the k-th task of each user."""

    def __init__(self, instance: FairnessInstance) -> None:
        self.instance = instance
        col = {v: k for k, v in enumerate(instance.node_ids)}
        self.col = col
        self.rack_of = [n.rack for n in instance.nodes or ()]
        self.rack_nodes: dict[str, list[int]] = {}
        for k, rack in enumerate(self.rack_of):
            self.rack_nodes.setdefault(rack, []).append(k)
        self.all_nodes = np.arange(len(col))

    def levels(self, user: int, k: int) -> list[tuple[str, NodeIndices]] | None:
        """[("node", idx), ("rack", idx), ("any", idx)] for task k of ``user``; None: no input known."""
        inputs = self.instance.users[user].task_inputs
        if inputs is None or k >= len(inputs) or not inputs[k]:
            return None
        local = sorted({self.col[v] for v in inputs[k]})
        racks = {self.rack_of[v] for v in local}
        rack = sorted({w for r in racks for w in self.rack_nodes[r]} - set(local))
        return [("node", local), ("rack", rack), ("any", self.all_nodes)]


def choose_node(
    free: np.ndarray,
    demand: np.ndarray,
    total: np.ndarray,
    rule: str,
    preferred: list[tuple[str, NodeIndices]] | None = None,
    capacity: np.ndarray | None = None,
) -> tuple[int, str] | None:
    """(node index, locality level) for a task of ``demand``, or None when no node holds it.

    ``free`` (v, m) is what is left on each node, ``total`` (m,) the cluster totals and
    ``capacity`` (v, m) the nodes' capacities, whose ``CAPACITY_RTOL`` a task may pass
    (without it, that of the totals).
    """
    levels = preferred if preferred is not None else [("any", np.arange(free.shape[0]))]
    for level, nodes in levels:
        nodes = np.asarray(nodes, dtype=int)
        if nodes.size == 0:
            continue
        left = free[nodes] - demand
        room = total if capacity is None else capacity[nodes]
        ok = np.all(left >= -CAPACITY_RTOL * room, axis=1)
        if not ok.any():
            continue
        if rule == "first-fit":
            return int(nodes[np.argmax(ok)]), level
        slack = np.where(ok, (left / total).sum(axis=1), np.inf)  # fractions of the totals (unit-free)
        best = int(np.argmax(slack <= slack.min() + CAPACITY_RTOL * len(total)))
        return int(nodes[best]), level
    return None
