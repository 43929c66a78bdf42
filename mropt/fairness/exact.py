"""Exact DRF allocations: the lexicographic max-min of weighted dominant shares.

DRF's progressive filling (DDRF sec. 3.1) approximates the allocation whose sorted
vector of weighted dominant shares ``y_i = x_i * dom_i / w_i`` is lexicographically
largest (leximin; sec. 3.1's small LP "max (x, y) s.t. x + 3y <= 9, 4x + y <= 18,
2x/9 = y/3" is its two-user continuous case). mropt computes it exactly with the
cumulative-sum method (Ogryczak and Sliwinski 2006): the sorted vector is leximin-
optimal iff the sums ``S_k`` of its k smallest entries are lexicographically largest,
and ``S_k = max_{r, d >= 0} k r - sum_i d_i`` with ``d_i >= r - y_i`` is linear. So for
k = 1..n: maximise ``S_k``, then add ``S_k >= S_k*`` and go on (n solves).

* ``drf-lp``: continuous DRF (real ``x_i``; with nodes, tasks may be split across
  nodes), CBC (its LP code, CLP) through PuLP;
* ``drf-milp``: integer tasks, CBC through PuLP (``COIN_CMD`` with an explicit path,
  :func:`mropt.backends.pulp.cbc_solver`; variables by ``prob.add_variable``, so no
  PuLP deprecation warnings). CBC runs as a subprocess, one solve per level k.
* ``drf-cpsat``: integer tasks, OR-Tools CP-SAT on integer-scaled data (exact when the
  data are decimals with a small common denominator, else demands are rounded up and
  capacities down on a 1e-6 grid, and share coefficients above 1e5 (as with Alibaba's
  9-decimal memory) put on a 1e5 grid; ``details.scaling`` says which, and a rounded
  solve reports status ``feasible``, not ``optimal``: use ``drf-milp`` there).

Constraints: ``0 <= x_i <= max_tasks``; ``sum_i x_i D_ij <= r_j``; with nodes, every
task on one node (``x_i = sum_v x_iv``) within that node's capacity. Objective of the
Solution: the minimum weighted dominant share (``S_1``).
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np

from mropt.backends.pulp import cbc_solver
from mropt.fairness.metrics import allocation_solution
from mropt.model.errors import InputError
from mropt.model.fairness import FairnessInstance
from mropt.model.solution import Solution
from mropt.registry import THREADS, register

_FIX_RTOL = 1e-7
_COEF_LIMIT = 10**5


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.01, deadline - time.perf_counter())


def _upper_bounds(instance: FairnessInstance) -> np.ndarray:
    return instance.task_bound()


# -- PuLP (LP and MILP) -----------------------------------------------------------------
def _leximin_pulp(instance: FairnessInstance, *, integer: bool, time_limit: float | None, threads: int):
    import pulp

    n, m = instance.n, len(instance.resource_names)
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    d, cap = instance.demands, instance.capacity
    c = instance.dominant_demand / instance.weights
    ub = _upper_bounds(instance)
    cat = pulp.LpInteger if integer else pulp.LpContinuous
    prob = pulp.LpProblem("drf_leximin", pulp.LpMaximize)
    per_node = None
    if instance.nodes is not None:
        v = len(instance.node_ids)
        ncap = instance.node_capacity
        xv = [[prob.add_variable(f"x_{i}_{k}", lowBound=0, upBound=int(ub[i]), cat=cat) for k in range(v)] for i in range(n)]
        x = [pulp.lpSum(row) for row in xv]
        for i in range(n):
            prob += x[i] <= int(ub[i])
        for k in range(v):
            for j in range(m):
                if d[:, j].any():
                    prob += pulp.lpSum(float(d[i, j]) * xv[i][k] for i in range(n) if d[i, j] > 0) <= float(ncap[k, j])
        per_node = xv
    else:
        x = [prob.add_variable(f"x_{i}", lowBound=0, upBound=int(ub[i]), cat=cat) for i in range(n)]
    for j in range(m):
        prob += pulp.lpSum(float(d[i, j]) * x[i] for i in range(n) if d[i, j] > 0) <= float(cap[j])
    y = [float(c[i]) * x[i] for i in range(n)]

    def make_solver():
        return cbc_solver(time_limit=_remaining(deadline), threads=threads)

    status, levels, solves, message = "optimal", [], 0, ""
    values = None
    for k in range(1, n + 1):
        r = prob.add_variable(f"r_{k}")
        dev = [prob.add_variable(f"d_{k}_{i}", lowBound=0) for i in range(n)]
        for i in range(n):
            prob += dev[i] >= r - y[i]
        s_k = k * r - pulp.lpSum(dev)
        prob.setObjective(s_k)
        try:
            prob.solve(make_solver())
        except Exception as exc:  # noqa: BLE001 - a solver failure, reported, not raised
            status, message = "error", f"CBC failed: {' '.join(str(exc).split())}"
            break
        solves += 1
        # sol_status, not status: PuLP reports a time-limited CBC run with an incumbent as
        # status "Optimal" but sol_status IntegerFeasible (not proven)
        if prob.sol_status == pulp.LpSolutionIntegerFeasible:
            values = _values_pulp(x, per_node, integer, ub.astype(float))  # feasible, this level not proven
            status, message = "time_limit", f"level {k}: CBC stopped with a feasible, unproven solution"
            break
        if prob.sol_status != pulp.LpSolutionOptimal:
            timed_out = deadline is not None and time.perf_counter() >= deadline - 0.05
            status = "time_limit" if timed_out else "error"
            message = f"level {k}: CBC {pulp.LpStatus.get(prob.status, prob.status)}"
            break
        values = _values_pulp(x, per_node, integer, ub.astype(float))
        best = float(pulp.value(s_k))
        levels.append(best)
        prob += s_k >= best - _FIX_RTOL * max(1.0, abs(best))
        if deadline is not None and time.perf_counter() >= deadline and k < n:
            status, message = "time_limit", f"stopped after level {k} of {n}"
            break
    info: dict[str, Any] = {"solves": solves, "cumulative_sums": levels}
    if message:
        info["message"] = message
    return status, values, info


def _values_pulp(x, per_node, integer: bool, ub: np.ndarray):
    """Task counts (and per-node counts) from the solved model.

    CBC writes values with about 8 significant digits, so an LP value may pass its bound
    by 1e-8 relative: continuous values are clipped to [0, max_tasks] and, with nodes,
    the totals are the per-node sums (rows scaled down onto the cap), so they agree.
    """
    import pulp

    def val(e):
        v = float(pulp.value(e) or 0.0)
        return float(round(v)) if integer else max(0.0, v)

    nodes = None if per_node is None else np.array([[val(e) for e in row] for row in per_node])
    if integer:
        tasks = np.array([val(e) for e in x])
    elif nodes is None:
        tasks = np.minimum(np.array([val(e) for e in x]), ub)
    else:
        total = nodes.sum(axis=1)
        over = total > ub
        nodes[over] *= (ub[over] / total[over])[:, None]
        tasks = np.minimum(total, ub)
    return tasks, nodes


# -- CP-SAT -----------------------------------------------------------------------------
def _exact(value: float) -> Fraction:
    return Fraction(repr(float(value)))


def _scale_column(values: list[Fraction], bound: int) -> tuple[list[int], str]:
    """Integers proportional to ``values`` (exact when the common denominator is small)."""
    den = 1
    for v in values:
        den = math.lcm(den, v.denominator)
    if max((abs(v) for v in values), default=0) * den * max(bound, 1) < 2**50:
        return [int(v * den) for v in values], "exact"
    return [], "rounded"


def integer_data(instance: FairnessInstance) -> dict[str, Any]:
    """Demands, capacities (aggregate and per node) and share coefficients as integers for CP-SAT."""
    n, m = instance.n, len(instance.resource_names)
    bound = int(_upper_bounds(instance).sum()) + 1
    d = [[0] * m for _ in range(n)]
    cap, ncap, scaling = [0] * m, [[0] * m for _ in instance.node_ids], "exact"
    for j, name in enumerate(instance.resource_names):
        col = [_exact(u.demand.get(name, 0.0)) for u in instance.users]
        caps = [_exact(instance.resources[name])] + [_exact(nd.capacity.get(name, 0.0)) for nd in instance.nodes or ()]
        ints, how = _scale_column(col + caps, bound)
        if how == "exact":
            for i in range(n):
                d[i][j] = ints[i]
            cap[j] = ints[n]
            for k in range(len(instance.node_ids)):
                ncap[k][j] = ints[n + 1 + k]
        else:  # demands up, capacities down: every scaled-feasible allocation is feasible
            scaling = "rounded"
            q = 1e6 / float(caps[0])
            for i in range(n):
                d[i][j] = math.ceil(float(col[i]) * q - 1e-9)
            cap[j] = math.floor(float(caps[0]) * q + 1e-9)
            for k in range(len(instance.node_ids)):
                ncap[k][j] = math.floor(float(caps[1 + k]) * q + 1e-9)
    coef = []
    for i, u in enumerate(instance.users):
        coef.append(max(_exact(u.demand.get(r, 0.0)) / _exact(instance.resources[r]) for r in instance.resource_names) / _exact(u.weight))
    ints, how = _scale_column(coef, bound)
    if how != "exact" or max(ints) > _COEF_LIMIT:
        # CP-SAT 9.15 was seen to ignore its time limit and grow to gigabytes on the last
        # leximin levels with share coefficients of 1e6 and more (Alibaba's 9-decimal
        # memory requests); such instances get shares on a 1e5 grid and status feasible
        scaling = "rounded"
        top = float(max(coef))
        ints = [max(1, round(float(cf) / top * _COEF_LIMIT)) for cf in coef]
    return {"demand": d, "capacity": cap, "node_capacity": ncap, "coef": ints, "scaling": scaling}


def _leximin_cpsat(instance: FairnessInstance, *, time_limit: float | None, threads: int, seed: int):
    from ortools.sat.python import cp_model

    n, m = instance.n, len(instance.resource_names)
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    data = integer_data(instance)
    ub = _upper_bounds(instance)
    model = cp_model.CpModel()
    per_node = None
    if instance.nodes is not None:
        v = len(instance.node_ids)
        xv = [[model.NewIntVar(0, int(ub[i]), f"x_{i}_{k}") for k in range(v)] for i in range(n)]
        x = [model.NewIntVar(0, int(ub[i]), f"x_{i}") for i in range(n)]
        for i in range(n):
            model.Add(x[i] == sum(xv[i]))
        for k in range(v):
            for j in range(m):
                terms = [data["demand"][i][j] * xv[i][k] for i in range(n) if data["demand"][i][j] > 0]
                if terms:
                    model.Add(sum(terms) <= data["node_capacity"][k][j])
        per_node = xv
    else:
        x = [model.NewIntVar(0, int(ub[i]), f"x_{i}") for i in range(n)]
    for j in range(m):
        terms = [data["demand"][i][j] * x[i] for i in range(n) if data["demand"][i][j] > 0]
        if terms:
            model.Add(sum(terms) <= data["capacity"][j])
    coef = data["coef"]
    ymax = max(coef[i] * int(ub[i]) for i in range(n))
    y = [coef[i] * x[i] for i in range(n)]
    status, levels, values = "optimal", [], None
    for k in range(1, n + 1):
        r = model.NewIntVar(0, ymax, f"r_{k}")
        dev = [model.NewIntVar(0, ymax, f"d_{k}_{i}") for i in range(n)]
        for i in range(n):
            model.Add(dev[i] >= r - y[i])
        s_k = k * r - sum(dev)
        model.Maximize(s_k)
        solver = cp_model.CpSolver()
        solver.parameters.num_search_workers = max(1, threads)
        solver.parameters.random_seed = seed
        limit = _remaining(deadline)
        if limit is not None:
            solver.parameters.max_time_in_seconds = limit
        code = solver.Solve(model)
        if code != cp_model.OPTIMAL:
            status = "time_limit" if code == cp_model.FEASIBLE or code == cp_model.UNKNOWN else "error"
            break
        values = (
            np.array([float(solver.Value(e)) for e in x]),
            None if per_node is None else np.array([[float(solver.Value(e)) for e in row] for row in per_node]),
        )
        best = int(solver.ObjectiveValue())
        levels.append(best)
        model.Add(s_k >= best)
        model.ClearHints()
        for i in range(n):
            model.AddHint(x[i], int(values[0][i]))
        if deadline is not None and time.perf_counter() >= deadline and k < n:
            status = "time_limit"
            break
    info: dict[str, Any] = {"solves": len(levels), "scaling": data["scaling"]}
    if status == "optimal" and data["scaling"] == "rounded":
        # optimal for the rounded data only: a feasible allocation of the real one
        status, info["message"] = "feasible", "data or share coefficients rounded to integers: optimal for the rounded data only"
    return status, values, info


def _solution(instance: FairnessInstance, method: str, status: str, values, info: dict, solver: dict[str, str]) -> Solution:
    if values is None:
        return Solution(method=method, status=status if status != "optimal" else "error", objective=None, solver=solver, details=info)
    tasks, per_node = values
    sol = allocation_solution(instance, tasks, method=method, status=status, solver=solver, per_node=per_node, details=info)
    if status == "optimal":
        sol = replace(sol, bound=sol.objective)
    elif status == "time_limit" and info.get("cumulative_sums"):  # level 1 proven: S_1* bounds the minimum share
        sol = replace(sol, bound=max(sol.objective, float(info["cumulative_sums"][0])))
    return sol


def _pulp_solver_record() -> dict[str, str]:
    import pulp

    return {"name": "CBC (PuLP COIN_CMD)", "version": pulp.__version__}


@register("drf-lp", kind="fairness", summary="continuous DRF: leximin LP of weighted dominant shares (PuLP, CBC/CLP)", exact=True, relaxation=True, params={"threads": THREADS})
def solve_lp(instance: FairnessInstance, *, time_limit: float | None = None, seed: int = 0, threads: int = 1) -> Solution:
    status, values, info = _leximin_pulp(instance, integer=False, time_limit=time_limit, threads=int(threads))
    return _solution(instance, "drf-lp", status, values, info, _pulp_solver_record())


@register("drf-milp", kind="fairness", summary="integer DRF: leximin MILP of weighted dominant shares (PuLP, CBC)", exact=True, params={"threads": THREADS})
def solve_milp(instance: FairnessInstance, *, time_limit: float | None = None, seed: int = 0, threads: int = 1) -> Solution:
    status, values, info = _leximin_pulp(instance, integer=True, time_limit=time_limit, threads=int(threads))
    return _solution(instance, "drf-milp", status, values, info, _pulp_solver_record())


@register("drf-cpsat", kind="fairness", summary="integer DRF: leximin of weighted dominant shares (OR-Tools CP-SAT)", exact=True, params={"threads": THREADS})
def solve_cpsat(instance: FairnessInstance, *, time_limit: float | None = None, seed: int = 0, threads: int = 1) -> Solution:
    import ortools

    status, values, info = _leximin_cpsat(instance, time_limit=time_limit, threads=int(threads), seed=seed)
    return _solution(instance, "drf-cpsat", status, values, info, {"name": "OR-Tools CP-SAT", "version": ortools.__version__})
