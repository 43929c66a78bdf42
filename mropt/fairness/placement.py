"""Placing tasks on nodes: first-fit and best-fit, by locality level.

:func:`choose_node` is the node choice of progressive filling with nodes
(:mod:`mropt.fairness.drf`): among the nodes whose free capacity holds the task's
demand, the first in instance order (``first-fit``) or the one left with the least
free capacity, summed over resources normalised by the cluster totals (``best-fit``,
ties to the first). With ``preferred`` locality levels (node-local: the nodes that
hold the task's input; rack-local: the other nodes of their racks; then any node,
DDRF sec. 4), the first level with a fitting node wins.

The exact placement of one scheduling round (a Quincy-style min-cost flow) is in
:mod:`mropt.fairness.flow`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mropt.model.fairness import FairnessInstance

PLACEMENT_RULES = ("first-fit", "best-fit")
LEVELS = ("node", "rack", "any")
_TOL = 1e-9


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

    def levels(self, user: int, k: int) -> list[tuple[str, Sequence[int]]] | None:
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
    preferred: list[tuple[str, Sequence[int]]] | None = None,
) -> tuple[int, str] | None:
    """(node index, locality level) for a task of ``demand``, or None when no node holds it."""
    levels = preferred if preferred is not None else [("any", np.arange(free.shape[0]))]
    for level, nodes in levels:
        nodes = np.asarray(nodes, dtype=int)
        if nodes.size == 0:
            continue
        left = free[nodes] - demand
        ok = np.all(left >= -_TOL * total, axis=1)  # relative to the resource's total, never absolute
        if not ok.any():
            continue
        if rule == "first-fit":
            return int(nodes[np.argmax(ok)]), level
        slack = np.where(ok, (left / total).sum(axis=1), np.inf)
        return int(nodes[int(np.argmin(slack))]), level
    return None
