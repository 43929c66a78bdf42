"""Measures of an allocation and the Solution every fairness method returns.

An allocation is ``tasks`` (n,) integers (or reals, continuous DRF) and, with nodes,
``per_node`` (n, v). From it (DDRF paper sec. 3.1):

* dominant share ``s_i = max_j x_i D_ij / r_j``; weighted share ``s_i / w_i``;
* utilisation of resource j: ``sum_i x_i D_ij / r_j``;
* envy (DRF's envy-freeness, Ghodsi et al. 2011): user i envies j when i could run
  more tasks with j's bundle ``x_j D_j`` than it runs now (capped by i's max_tasks);
* the objective of every fairness method: the minimum weighted dominant share
  ``min_i s_i / w_i`` (the first entry of the leximin vector).

Tolerances (``docs/tolerances.md``, :mod:`mropt.model.tolerance`): shares are compared
relatively (:func:`lex_compare`, ``OBJECTIVE_RTOL``) and reported to 12 significant
digits (:func:`significant`), never to a fixed number of decimals, so that weights or
resources in other units give the same comparisons. Task counts are unit-free: the
envy test and the placement listing round them with an absolute 1e-9 of a task.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mropt.model.fairness import FairnessInstance
from mropt.model.solution import Solution
from mropt.model.tolerance import OBJECTIVE_RTOL

_EPS = 1e-9  # of a task (task counts are unit-free)


def dominant_shares(instance: FairnessInstance, tasks: np.ndarray) -> np.ndarray:
    return np.asarray(tasks, dtype=float) * instance.dominant_demand


def weighted_shares(instance: FairnessInstance, tasks: np.ndarray) -> np.ndarray:
    return dominant_shares(instance, tasks) / instance.weights


def utilisation(instance: FairnessInstance, tasks: np.ndarray) -> np.ndarray:
    return (np.asarray(tasks, dtype=float) @ instance.demands) / instance.capacity


def envy_pairs(instance: FairnessInstance, tasks: np.ndarray) -> list[tuple[str, str]]:
    """Pairs (i, j): i would run more tasks with j's bundle than with its own."""
    x = np.asarray(tasks, dtype=float)
    d = instance.demands
    pairs = []
    for i in range(instance.n):
        positive = d[i] > 0
        for j in range(instance.n):
            if i == j or x[j] <= 0:
                continue
            could = math.floor(float(np.min(x[j] * d[j][positive] / d[i][positive])) + _EPS)
            could = min(could, instance.task_caps[i])
            if could > x[i] + _EPS:
                pairs.append((instance.ids[i], instance.ids[j]))
    return pairs


def lex_compare(a: np.ndarray, b: np.ndarray, rtol: float = OBJECTIVE_RTOL) -> int:
    """Compare the sorted (ascending) vectors of a and b: -1 if a is lexicographically smaller, 0 equal, 1 greater.

    Entries within ``rtol`` relative of each other (``rtol * max(|x|, |y|)``) are equal.
    """
    for x, y in zip(np.sort(a), np.sort(b)):
        tol = rtol * max(abs(float(x)), abs(float(y)))
        if x < y - tol:
            return -1
        if x > y + tol:
            return 1
    return 0


def significant(x: float, digits: int = 12) -> float:
    """``x`` rounded to ``digits`` significant digits: the same digits in any units
    (equal fractions computed two ways, 2/3 and 2/3, become the same number)."""
    return float(format(float(x), ".12g" if digits == 12 else f".{digits}g"))


def _num(x: float) -> float | int:
    """A task count (unit-free) to 12 significant digits, an int when whole.

    Significant digits, not decimals: drf-lp may give a user 2e-16 of a task (weights 1e16
    apart), whose share must match the count written.
    """
    x = significant(x)
    return int(x) if x.is_integer() else x


def allocation_solution(
    instance: FairnessInstance,
    tasks: np.ndarray,
    *,
    method: str,
    status: str,
    solver: dict[str, str],
    per_node: np.ndarray | None = None,
    order: list[int] | None = None,
    bound: float | None = None,
    details: dict[str, Any] | None = None,
) -> Solution:
    """The Solution of a fairness method: decision keys ``allocation``, ``dominant_shares``,
    ``utilisation``, ``order`` (launch order, progressive filling) and ``placement``
    (user -> node -> tasks, with nodes); objective = min weighted dominant share."""
    tasks = np.asarray(tasks, dtype=float)
    shares = dominant_shares(instance, tasks)
    wshares = shares / instance.weights
    decision: dict[str, Any] = {
        "allocation": {u: _num(t) for u, t in zip(instance.ids, tasks)},
        "dominant_shares": {u: significant(s) for u, s in zip(instance.ids, shares)},
        "utilisation": {r: significant(f) for r, f in zip(instance.resource_names, utilisation(instance, tasks))},
    }
    if order is not None:
        decision["order"] = [instance.ids[i] for i in order]
    if per_node is not None and instance.nodes is not None:
        decision["placement"] = {
            u: {instance.node_ids[v]: _num(per_node[i, v]) for v in np.flatnonzero(per_node[i] > _EPS)}
            for i, u in enumerate(instance.ids)
        }
    info = {
        "sorted_weighted_shares": [significant(s) for s in np.sort(wshares)],
        "envy": [list(p) for p in envy_pairs(instance, tasks)],
    }
    info.update(details or {})
    return Solution(
        method=method,
        status=status,
        objective=float(wshares.min()) if len(wshares) else 0.0,
        bound=bound,
        solver=solver,
        details=info,
        decision=decision,
    )


def allocation_from_solution(instance: FairnessInstance, solution: Solution) -> tuple[np.ndarray, np.ndarray | None]:
    """(tasks, per_node) arrays back from a Solution's decision (for gap tables)."""
    alloc = solution.decision.get("allocation", {})
    tasks = np.array([float(alloc.get(u, 0)) for u in instance.ids])
    per_node = None
    placement = solution.decision.get("placement")
    if placement is not None and instance.nodes is not None:
        col = {v: k for k, v in enumerate(instance.node_ids)}
        per_node = np.zeros((instance.n, len(instance.node_ids)))
        for i, u in enumerate(instance.ids):
            for node, count in (placement.get(u) or {}).items():
                per_node[i, col[node]] = float(count)
    return tasks, per_node


def gaps(instance: FairnessInstance, heuristic: Solution, exact: Solution) -> dict[str, Any]:
    """How far ``heuristic`` is from ``exact``: min share, sorted share vector, utilisation, envy."""
    h, _ = allocation_from_solution(instance, heuristic)
    e, _ = allocation_from_solution(instance, exact)
    hw, ew = np.sort(weighted_shares(instance, h)), np.sort(weighted_shares(instance, e))
    hu, eu = utilisation(instance, h), utilisation(instance, e)
    return {
        "min_share_heuristic": float(hw[0]),
        "min_share_exact": float(ew[0]),
        "min_share_gap": float(ew[0] - hw[0]),
        "lex": lex_compare(ew, hw),  # 1: exact lexicographically better, 0: equal
        "max_sorted_share_gap": float(np.max(ew - hw)),
        "utilisation_gap": {r: float(a - b) for r, a, b in zip(instance.resource_names, eu, hu)},
        "envy_heuristic": len(envy_pairs(instance, h)),
        "envy_exact": len(envy_pairs(instance, e)),
    }
