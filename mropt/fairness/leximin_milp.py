"""``drf-milp``'s model: CBC through PuLP, asked one question of :mod:`mropt.fairness.levels` per solve.

Each solve builds a fresh MILP (CBC runs as a subprocess and reads the whole model anyway):
whole task counts ``x_i`` (with nodes, ``x_iv`` per node, ``x_i = sum_v x_iv``) within their
caps, the capacity rows as shares of the totals (``sum_i (D_ij / r_j) x_i <= 1``, allowed to
``1 + CAPACITY_RTOL``, so every row reads the same in any units), the held levels and the
level to beat as integer thresholds (:class:`~mropt.fairness.levels.Requirement`: a binary
``z_i`` per user with ``x_i >= need_i z_i`` and ``sum_i z_i >= count``, or plain bounds when
every user who can must), and the k-th cumulative sum as objective
(:meth:`~mropt.fairness.levels.ExactLevels.guide`). No row holds a share level, so nothing
in the model is below CBC's tolerances or its cutoff increment whatever the weights.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from mropt.backends.pulp import cbc_solver
from mropt.fairness.levels import ExactLevels, Probe, Requirement
from mropt.fairness.leximin import _remaining
from mropt.model.fairness import FairnessInstance
from mropt.model.tolerance import OBJECTIVE_RTOL, capacity_limit


def cbc(stop_at: float | None, threads: int, integer: bool):
    """CBC with both gaps 0 (:func:`mropt.backends.pulp.cbc_solver`) and feasibility
    tolerances of ``OBJECTIVE_RTOL`` on the unit-free model.

    CBC's defaults (primal and integrality 1e-7, absolute) would let a row or a task count
    drift by 1e-7; the answers are checked exactly anyway (:mod:`mropt.fairness.levels`,
    and drf-lp's :func:`mropt.fairness.exact._values_pulp`).
    """
    options = [f"primalT {OBJECTIVE_RTOL:g}"]
    if integer:
        options.append(f"integerT {OBJECTIVE_RTOL:g}")
    return cbc_solver(time_limit=_remaining(stop_at), threads=threads, options=options)


class MilpThresholds:
    """The integer leximin questions of :func:`mropt.fairness.levels.leximin_by_thresholds`, by CBC."""

    def __init__(self, instance: FairnessInstance, data: ExactLevels, *, threads: int) -> None:
        self.instance, self.data, self.threads = instance, data, threads
        self.a = instance.demands / instance.capacity
        self.ncap = instance.node_capacity / instance.capacity if instance.nodes is not None else None

    def _variables(self, prob: Any) -> tuple[list[Any], list[list[Any]] | None]:
        """Task counts (and per node) within their caps and the capacities."""
        import pulp

        n, ub, a = self.instance.n, self.data.ub, self.a
        per_node = None
        if self.ncap is not None:
            per_node = [
                [
                    prob.add_variable(f"x_{i}_{v}", lowBound=0, upBound=ub[i], cat=pulp.LpInteger)
                    for v in range(len(self.ncap))
                ]
                for i in range(n)
            ]
            x = [pulp.lpSum(row) for row in per_node]
            for i in range(n):
                prob += x[i] <= ub[i]
            for v, caps in enumerate(self.ncap):
                for j in range(a.shape[1]):
                    if a[:, j].any():
                        prob += pulp.lpSum(float(a[i, j]) * per_node[i][v] for i in range(n) if a[i, j] > 0) <= float(
                            capacity_limit(caps[j])
                        )
        else:
            x = [prob.add_variable(f"x_{i}", lowBound=0, upBound=ub[i], cat=pulp.LpInteger) for i in range(n)]
        for j in range(a.shape[1]):
            if a[:, j].any():
                prob += pulp.lpSum(float(a[i, j]) * x[i] for i in range(n) if a[i, j] > 0) <= capacity_limit(1.0)
        return x, per_node

    @staticmethod
    def _require(prob: Any, x: list[Any], req: Requirement, name: str) -> None:
        """At least ``req.count`` users at their thresholds, as integer rows."""
        import pulp

        users = [(i, t) for i, t in enumerate(req.need) if t]
        left = req.count - sum(1 for t in req.need if t == 0)  # a threshold of 0 is always met
        if left <= 0:
            return
        if left == len(users):  # every user who can must: plain bounds
            for i, t in users:
                prob += x[i] >= t
            return
        z = [prob.add_variable(f"z_{name}_{i}", cat=pulp.LpBinary) for i, _ in users]
        for zi, (i, t) in zip(z, users):
            prob += x[i] - t * zi >= 0
        prob += pulp.lpSum(z) >= left

    def solve(self, held: list[Requirement], beat: Requirement, k: int, stop_at: float | None, *, steer: bool) -> Probe:
        import pulp

        prob = pulp.LpProblem("drf_leximin_level", pulp.LpMaximize)
        x, per_node = self._variables(prob)
        for j, req in enumerate(held, 1):
            self._require(prob, x, req, f"held{j}")
        self._require(prob, x, beat, "beat")
        if steer:
            coef, r_max = self.data.guide(beat, k)
            r = prob.add_variable("r", lowBound=0, upBound=r_max)
            dev = [prob.add_variable(f"d_{i}", lowBound=0) for i in range(len(x))]
            for i, xi in enumerate(x):
                prob += dev[i] >= r - float(coef[i]) * xi
            prob.setObjective(k * r - pulp.lpSum(dev))
        else:
            prob.setObjective(pulp.lpSum([]))  # a question of feasibility only
        try:
            prob.solve(cbc(stop_at, self.threads, True))
        except Exception as exc:  # noqa: BLE001 - a solver failure, reported, not raised
            return Probe("error", message=f"CBC failed: {' '.join(str(exc).split())}")
        if prob.status == pulp.LpStatusInfeasible:
            return Probe("infeasible")
        # sol_status, not status: PuLP reports a time-limited CBC run with an incumbent as
        # status "Optimal" but sol_status IntegerFeasible (not proven)
        if prob.sol_status in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
            nodes = None if per_node is None else np.array([[_whole(e) for e in row] for row in per_node])
            tasks = nodes.sum(axis=1) if nodes is not None else np.array([_whole(e) for e in x])
            if prob.sol_status == pulp.LpSolutionOptimal:
                return Probe("found", (tasks, nodes))
            return Probe("stopped", (tasks, nodes), f"level {k}: CBC stopped with a feasible, unproven solution")
        timed_out = stop_at is not None and time.perf_counter() >= stop_at - 0.05
        message = f"level {k}: CBC {pulp.LpStatus.get(prob.status, prob.status)}"
        return Probe("stopped" if timed_out else "error", message=message)


def _whole(var: Any) -> float:
    import pulp

    return float(round(float(pulp.value(var) or 0.0)))
