"""Exact DRF allocations: the lexicographic max-min of weighted dominant shares.

DRF's progressive filling (DDRF sec. 3.1) approximates the allocation whose sorted
vector of weighted dominant shares ``y_i = x_i * dom_i / w_i`` is lexicographically
largest (leximin; sec. 3.1's small LP "max (x, y) s.t. x + 3y <= 9, 4x + y <= 18,
2x/9 = y/3" is its two-user continuous case). mropt computes it exactly with the
cumulative-sum method (Ogryczak and Sliwinski 2006): the sorted vector is leximin-
optimal iff the sums ``S_k`` of its k smallest entries are lexicographically largest,
and ``S_k = max_{r, d >= 0} k r - sum_i d_i`` with ``d_i >= r - y_i`` is linear. So for
k = 1..n: maximise ``S_k``, then add ``S_k >= S_k*`` and go on (n solves). That loop is
written once (:func:`mropt.fairness.leximin._leximin`) over a small back-end protocol (``_LeximinModel``:
add a level, maximise it, fix it), implemented for PuLP/CBC's LP (:class:`_PulpLeximin`) and
CP-SAT (``_CpsatLeximin``, :mod:`mropt.fairness.leximin_cpsat`). drf-milp proves its levels
by integer thresholds instead (:mod:`mropt.fairness.levels`).

* ``drf-lp``: continuous DRF (real ``x_i``; with nodes, tasks may be split across
  nodes), CBC (its LP code, CLP) through PuLP;
* ``drf-milp``: integer tasks, CBC through PuLP (``COIN_CMD`` with an explicit path,
  :func:`mropt.backends.pulp.cbc_solver`; variables by ``prob.add_variable``, so no
  PuLP deprecation warnings), asked per level k for an allocation that beats the best
  k-th smallest share so far, until CBC proves there is none (:mod:`mropt.fairness.levels`,
  :mod:`mropt.fairness.leximin_milp`); CBC runs as a subprocess, about two solves per level.
* ``drf-cpsat``: integer tasks, OR-Tools CP-SAT on integer-scaled data (exact when the
  data are decimals with a small common denominator, else demands are rounded up and
  capacities down on a 1e-6 grid, and share coefficients above 1e5 (as with Alibaba's
  9-decimal memory) put on a 1e5 grid; ``details.scaling`` says which, and a rounded
  solve reports status ``feasible``, not ``optimal``: use ``drf-milp`` there).

Constraints: ``0 <= x_i <= max_tasks``; ``sum_i x_i D_ij <= r_j``; with nodes, every
task on one node (``x_i = sum_v x_iv``) within that node's capacity. Objective of the
Solution: the minimum weighted dominant share (``S_1``).

Units and tolerances (``docs/tolerances.md``, :mod:`mropt.model.tolerance`). The answer
does not depend on the units of a resource (its capacities and demands times any
factor) or of the weights:

* the CBC model holds unit-free numbers only (:func:`_model_data`: per-task shares
  ``D_ij / r_j`` against capacity 1, share coefficients relative to the largest), so
  CBC reads the same model in any units. Its absolute and relative gaps are 0 and its
  primal (and integrality) tolerances ``OBJECTIVE_RTOL``. drf-milp's model holds no
  share level at all: a level is a whole number of tasks per user, computed and checked
  in exact fractions (:mod:`mropt.fairness.levels`), so no level is below CBC's
  tolerances whatever the magnitudes; a solution that breaks a capacity beyond
  ``CAPACITY_RTOL`` or gives up a held level is not taken (the best valid allocation
  is returned, status ``feasible``); its steering objective's coefficients are exact
  ratios of share coefficients (:meth:`~mropt.fairness.levels.ExactLevels.guide`), so where
  leximin-optimal allocations tie, CBC picks the same one in any units (a power-of-two
  unit once made it pick {u2: 2} at some weights and {u0: 1} at ten times them). drf-lp's
  level scale (:func:`_level_scale`) is a power of two of the unit-free ``c``, the same in
  any units too. drf-lp's values have CBC's 8 printed digits: its
  allocation is scaled down, by about 1e-8 at most, to fit every capacity, and its levels
  hold to a relative 1e-7 (``_LP_RTOL``) while CLP resolves every user's task count; with
  share coefficients 1e8 and more apart it may not (a user needing 2e-16 of a task left at
  0), so drf-lp is ``optimal`` only after :func:`~mropt.fairness.filling_exact.lp_certificate`
  (without nodes, the exact progressive filling; with nodes, a necessary check only).
* CP-SAT gets, per resource and for the share coefficients, the smallest proportional
  integers (:func:`integer_data`), the same in any units; the data are read to 15
  significant digits, which drops a unit conversion's float noise. A capacity ``c`` of
  those integers holds loads up to ``c + c // 10**9``, the whole-unit form of
  ``c (1 + CAPACITY_RTOL)``, as drf-milp and ``verify`` allow.

The first defect this replaced (absolute tolerances): the model held the raw weighted
shares, CBC its absolute tolerances of 1e-7, and each level, read back from CBC's 8
printed digits, was fixed with a slack of ``1e-7 * max(1, S_k)``. With cpu 3, tasks of 1
(A) and 0.8 (B) and weights of 1e7 (weighted shares 3.3e-8 and 5.3e-8 at the optimum,
2e-8 apart) level 1 was read back as 0 and drf-milp claimed {A: 0, B: 3} optimal instead
of {A: 1, B: 2}; with weights of 1e9, {A: 0, B: 0}. With B's task 0.99999997 and weights
of 1e-8, level 1 (33333333.3) was read as 33333333, and {A: 2, B: 1}, 3e-8 (relative)
lower at level 1, was claimed optimal (``tests/fairness/test_fairness_scale.py``).

The second (one scale for all levels): with weights spanning many orders of magnitude
(1e-8 and 1e8 on cpu 10) the share coefficients relative to the largest were 1e-16 and
1, every level sat below CBC's absolute tolerances and its cutoff increment (1e-5), and
drf-milp and drf-lp claimed {A: 10, B: 0} optimal with objective 0 instead of
{A: 1, B: 9}. Each level now has its own scale (:func:`_level_scale`: the power of two at or below
the k-th smallest share coefficient), its ``r_k`` and ``d_k`` count units of it, so
drf-lp solves every level at magnitude 1 whatever the spread of the weights.

The third (a level's value in a float row, for drf-milp): a scale chosen before the level
is solved can miss it. With mem 4, tasks of 3, 1 and 2 (u0, u1, u2, one each) and u1's
weight 1e6, the second smallest share is u1's 2.5e-7 (u0 and u1 placed), 6.7e-7 units of
the scale the second smallest coefficient gave; a re-solve asking for 1e-6 units more found
none and {u0: 1} (levels 0, 0) was claimed optimal. drf-milp now holds and proves levels
as task-count thresholds (:mod:`mropt.fairness.levels`); a float level reaches CBC only in
the objective, which steers the search and proves nothing.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np

from mropt.backends import cpsat as cpsat_backend
from mropt.backends.pulp import solver_record
from mropt.fairness.filling_exact import lp_certificate
from mropt.fairness.levels import ExactLevels, leximin_by_thresholds
from mropt.fairness.leximin import LevelResult, Values, _levels, _leximin, _upper_bounds
from mropt.fairness.leximin_cpsat import _leximin_cpsat, integer_data
from mropt.fairness.leximin_milp import MilpThresholds
from mropt.fairness.leximin_milp import cbc as _cbc
from mropt.fairness.metrics import allocation_solution
from mropt.model.fairness import FairnessInstance
from mropt.model.solution import Solution
from mropt.model.tolerance import OBJECTIVE_RTOL, capacity_limit, pow2_scale

__all__ = ["integer_data", "solve_cpsat", "solve_lp", "solve_milp"]

_LP_RTOL = 1e-7  # drf-lp: CBC prints 8 significant digits (and _values_pulp repairs them)
_LP_CERT_RTOL = 1e-6  # drf-lp: its sorted shares against the exact ones (lp_certificate)
_LP_ZERO = 1e-9  # drf-lp: per-node task counts below this share of the user's total are CBC's noise


# -- PuLP (LP and MILP) -----------------------------------------------------------------
def _model_data(instance: FairnessInstance) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, float]:
    """The unit-free numbers of the solver model.

    ``a[i, j] = D_ij / r_j`` (the share of resource j one task of user i takes), node
    capacities as shares of the totals (``ncap[v, j] / r_j``), so every capacity row
    reads ``sum_i a_ij x_i <= 1`` (the model allows ``capacity_limit``, ``1 + CAPACITY_RTOL``,
    so that no exact fit is lost to the 13 digits written); share coefficients ``c_i = (dom_i / w_i) / max_l
    (dom_l / w_l)``, so the largest is 1. Scaling a resource or the weights by any
    factor changes these numbers by a rounding (2**-53 relative) at most, below the 13
    digits PuLP writes to CBC: the model CBC reads is the same whatever the units. (A
    power-of-two normalisation would be exact, but would leave a factor in (1/2, 2)
    between two units, and CBC's tolerances and tie-breaking would see it.) The fourth
    value is the largest ``dom_i / w_i``, the unit of ``c``.
    """
    cap = instance.capacity
    a = instance.demands / cap
    ncap = instance.node_capacity / cap if instance.nodes is not None else None
    c = instance.dominant_demand / instance.weights
    top = float(c.max())
    return a, ncap, c / top, top


def _level_scale(c: np.ndarray, top_share: np.ndarray, k: int) -> tuple[float, float]:
    """Level k's scale ``sigma`` and the largest ``r_k`` can be, in units of ``sigma``.

    ``sigma`` is the power of two at or below the k-th smallest share coefficient among
    the users who can hold a task, counted after those who cannot (one task of that user
    is then 1 to 2 units, as it is with equal weights). ``r_k`` is at most the k-th
    smallest share of the allocation, so at most the k-th smallest of the users' largest
    shares alone (``top_share``).
    """
    able = top_share > 0
    if not able.any():
        return 1.0, 1.0
    coef, tops = np.sort(c[able]), np.sort(top_share[able])
    # the users who can hold no share take the lowest levels, at 0 (any scale serves there)
    pick = min(max(k - int((~able).sum()), 1), coef.size) - 1
    sigma = 1.0 / pow2_scale(float(coef[pick]))
    return sigma, float(tops[pick]) / sigma


class _PulpLeximin:
    """``drf-lp``'s leximin model in PuLP, solved by CBC's LP code (drf-milp: :mod:`mropt.fairness.levels`)."""

    def __init__(self, instance: FairnessInstance, *, threads: int) -> None:
        import pulp

        self.pulp, self.instance, self.threads = pulp, instance, threads
        n, m = instance.n, len(instance.resource_names)
        a, ncap, c, self.unit = _model_data(instance)
        self.c = c
        self.ub = _upper_bounds(instance)
        ub = self.ub
        cat = pulp.LpContinuous
        prob = self.prob = pulp.LpProblem("drf_leximin", pulp.LpMaximize)
        self.per_node = None
        if ncap is not None:
            v = len(instance.node_ids)
            xv = [
                [prob.add_variable(f"x_{i}_{k}", lowBound=0, upBound=int(ub[i]), cat=cat) for k in range(v)]
                for i in range(n)
            ]
            x = [pulp.lpSum(row) for row in xv]
            for i in range(n):
                prob += x[i] <= int(ub[i])
            for k in range(v):
                for j in range(m):
                    if a[:, j].any():
                        prob += pulp.lpSum(float(a[i, j]) * xv[i][k] for i in range(n) if a[i, j] > 0) <= float(
                            capacity_limit(ncap[k, j])
                        )
            self.per_node = xv
        else:
            x = [prob.add_variable(f"x_{i}", lowBound=0, upBound=int(ub[i]), cat=cat) for i in range(n)]
        for j in range(m):
            if a[:, j].any():
                prob += pulp.lpSum(float(a[i, j]) * x[i] for i in range(n) if a[i, j] > 0) <= capacity_limit(1.0)
        self.x = x
        self.top_share = c * ub  # each user's largest share alone, in the unit of c
        self.scales: list[float] = []  # each level's scale (_level_scale), in the unit of c
        # each level S_k* is computed from the allocation CBC returned (as repaired by
        # _values_pulp, which fits), so it is reachable; it is
        # fixed with a relative slack of OBJECTIVE_RTOL (PuLP writes 13 digits, and an exact
        # S_k* may round up past reach). drf-lp's values have CBC's 8 printed digits: a later
        # level may lower an earlier one by _LP_RTOL relative before it counts as given up, and
        # where those digits put an S_k* past the LP's reach (cpu 7, tasks 1, 2, 1, weights 1,
        # 3, 1 made level 3 infeasible) the level is solved again with the fixed levels
        # loosened by _LP_RTOL (maximise).
        self.slack = OBJECTIVE_RTOL
        self.fixed: list[tuple[str, Any, float]] = []  # (row name, S_k, its level in scale units)
        self.noise = _LP_RTOL

    def add_level(self, k: int) -> Any:
        """Level k's ``S_k`` in units of its own scale (:func:`_level_scale`).

        ``r_k`` and ``d_k`` count units of the scale ``sigma``, so CBC's absolute
        tolerances (and its cutoff increment) are relative to the level, whatever the
        spread of the weights.
        """
        n, prob = self.instance.n, self.prob
        sigma, _ = _level_scale(self.c, self.top_share, k)
        self.scales.append(sigma)
        coef = self.c / sigma
        r = prob.add_variable(f"r_{k}")
        dev = [prob.add_variable(f"d_{k}_{i}", lowBound=0) for i in range(n)]
        for i in range(n):
            prob += dev[i] >= r - float(coef[i]) * self.x[i]
        return k * r - self.pulp.lpSum(dev)

    def maximise(self, k: int, s_k: Any, stop_at: float | None, levels: list[float]) -> LevelResult:
        pulp, prob = self.pulp, self.prob
        prob.setObjective(s_k)
        try:
            prob.solve(_cbc(stop_at, self.threads, False))
            if prob.status == pulp.LpStatusInfeasible and self.fixed:
                self._loosen()  # an S_j* of 8 printed digits past the LP's reach (__init__)
                prob.solve(_cbc(stop_at, self.threads, False))
        except Exception as exc:  # noqa: BLE001 - a solver failure, reported, not raised
            return LevelResult("error", message=f"CBC failed: {' '.join(str(exc).split())}")
        if prob.status == pulp.LpStatusInfeasible and self.fixed:
            # the last level's allocation meets every fixed row (and any r_k, d_k with it), so
            # "infeasible" even loosened is CLP's precision (share coefficients 1e15 apart):
            # that allocation is kept, status feasible (docs/tolerances.md)
            return LevelResult("unusable", message=f"level {k}: CLP called the LP infeasible even loosened; stopped")
        proven = prob.sol_status == pulp.LpSolutionOptimal
        if not proven and prob.sol_status != pulp.LpSolutionIntegerFeasible:
            timed_out = stop_at is not None and time.perf_counter() >= stop_at - 0.05
            message = f"level {k}: CBC {pulp.LpStatus.get(prob.status, prob.status)}"
            return LevelResult("timeout" if timed_out else "error", message=message)
        found = _values_pulp(self.instance, self.x, self.per_node, self.ub.astype(float))
        sums = _levels(self.c * found[0])
        # CBC's solution, repaired, must fit the capacities and keep every fixed level
        lost = self._lost(sums, levels)
        usable = _fits(self.instance, *found) and not lost
        if not proven:
            return LevelResult(
                "unproven",
                found if usable else None,
                message=f"level {k}: CBC stopped with a feasible, unproven solution",
            )
        if not usable:
            why = f"gives up level {lost[0]}" if lost else "breaks a capacity"
            return LevelResult("unusable", message=f"level {k}: CBC's solution {why}; stopped")
        return LevelResult("proven", found, float(sums[k - 1]))

    def _lost(self, sums: np.ndarray, levels: list[float]) -> list[int]:
        """The fixed levels (1-based) that ``sums`` gives up: below each by more than twice
        the slack it was fixed with, drf-lp's noise and CBC's feasibility tolerance."""
        n = self.instance.n
        return [
            j + 1
            for j, best in enumerate(levels)
            if sums[j] < best - ((2 * self.slack + self.noise) * best + (n + 1) * OBJECTIVE_RTOL * self.scales[j])
        ]

    def fix(self, s_k: Any, level: float, values: Values) -> None:
        scaled = level / self.scales[-1]  # s_k counts units of its level's scale
        name = f"level_{len(self.fixed) + 1}"
        self._row(name, s_k, scaled - self.slack * scaled)
        self.fixed.append((name, s_k, scaled))

    def _row(self, name: str, s_k: Any, rhs: float) -> None:
        """The row ``S_k >= rhs`` named ``name``: added, or its right side changed."""
        row = self.prob.get_constraint_by_name(name)
        if row is None:
            self.prob += (s_k >= rhs, name)
        else:
            row.changeRHS(rhs)

    def _loosen(self) -> None:
        """drf-lp: every fixed level's row with a slack of _LP_RTOL instead of OBJECTIVE_RTOL
        (so a later level may lower it by that much more before it counts as given up)."""
        self.noise = 2 * _LP_RTOL
        for name, s_k, scaled in self.fixed:
            self._row(name, s_k, scaled - _LP_RTOL * scaled)


def _leximin_pulp(instance: FairnessInstance, *, integer: bool, time_limit: float | None, threads: int):
    """drf-lp's cumulative-sum loop, or drf-milp's levels as integer thresholds (:mod:`mropt.fairness.levels`)."""
    stop_at = None if time_limit is None else time.perf_counter() + time_limit
    if integer:
        data = ExactLevels(instance)
        run = leximin_by_thresholds(MilpThresholds(instance, data, threads=threads), data, stop_at)
        status, values, solves, message = run.status, run.values, run.solves, run.message
        sums = [float(sum(run.levels[: k + 1])) for k in range(len(run.levels))]  # exact, then rounded
    else:
        model = _PulpLeximin(instance, threads=threads)
        status, values, levels, solves, message = _leximin(model, instance.n, stop_at)
        sums = [level * model.unit for level in levels]
    info: dict[str, Any] = {"solves": solves, "cumulative_sums": sums}
    if message:
        info["message"] = message
    return status, values, info


def _fits(instance: FairnessInstance, tasks: np.ndarray, per_node: np.ndarray | None) -> bool:
    """The allocation fits the capacities (aggregate and per node) within CAPACITY_RTOL."""
    if np.any(tasks @ instance.demands > capacity_limit(instance.capacity)):
        return False
    return per_node is None or not np.any(per_node.T @ instance.demands > capacity_limit(instance.node_capacity))


def _values_pulp(instance: FairnessInstance, x, per_node, ub: np.ndarray):
    """drf-lp's task counts (and per-node counts) from the solved model.

    CBC writes values with 8 significant digits, so an LP
    value may pass a bound or a capacity by about 1e-8 relative: continuous values are
    clipped to [0, max_tasks] (per-node values below 1e-9 of the user's total set to 0), with nodes
    the totals are the per-node sums (rows scaled down onto the cap), and the whole
    allocation is then scaled down by the largest relative excess over a capacity, so
    that it fits within CAPACITY_RTOL as ``verify`` checks.
    """
    import pulp

    def val(e):
        return max(0.0, float(pulp.value(e) or 0.0))

    nodes = None if per_node is None else np.array([[val(e) for e in row] for row in per_node])
    if nodes is None:
        tasks = np.minimum(np.array([val(e) for e in x]), ub)
    else:
        ncap = instance.node_capacity
        # relative to the user's total: with weights far apart a user may hold 1e-9 of a task
        nodes[nodes < _LP_ZERO * nodes.sum(axis=1, keepdims=True)] = 0.0
        # a node without some resource holds no task that needs it (CBC's noise there is 0)
        nodes[(instance.demands > 0).astype(float) @ (ncap <= 0).T.astype(float) > 0] = 0.0
        total = nodes.sum(axis=1)
        over = total > ub
        nodes[over] *= (ub[over] / total[over])[:, None]
        tasks = np.minimum(nodes.sum(axis=1), ub)
    excess = [float(np.max(tasks @ instance.demands / instance.capacity))]
    if nodes is not None:
        load = nodes.T @ instance.demands
        excess.append(float(np.max(load / np.where(ncap > 0, ncap, 1.0))))
    worst = max(excess)
    if worst > 1.0:
        tasks = tasks / worst
        nodes = None if nodes is None else nodes / worst
    return tasks, nodes


def _solution(
    instance: FairnessInstance, method: str, status: str, values, info: dict, solver: dict[str, str]
) -> Solution:
    if values is None:
        return Solution(
            method=method,
            status=status if status != "optimal" else "error",
            objective=None,
            solver=solver,
            details=info,
        )
    tasks, per_node = values
    sol = allocation_solution(
        instance, tasks, method=method, status=status, solver=solver, per_node=per_node, details=info
    )
    if status == "optimal":
        sol = replace(sol, bound=sol.objective)
    elif status == "time_limit" and info.get("cumulative_sums"):  # level 1 proven: S_1* bounds the minimum share
        assert sol.objective is not None  # an allocation has a minimum share
        sol = replace(sol, bound=max(sol.objective, float(info["cumulative_sums"][0])))
    return sol


def solve_lp(
    instance: FairnessInstance, *, time_limit: float | None = None, seed: int = 0, threads: int = 1
) -> Solution:
    """Registered method ``drf-lp``: continuous DRF, the leximin of DDRF sec. 3.1's LP (module docstring).

    CBC's answer is ``optimal`` only when it passes :func:`~mropt.fairness.filling_exact.lp_certificate`
    (without nodes: within ``_LP_CERT_RTOL`` of the exact progressive filling); else ``feasible``.
    """
    status, values, info = _leximin_pulp(instance, integer=False, time_limit=time_limit, threads=int(threads))
    if status == "optimal" and values is not None:
        why = lp_certificate(instance, values[0], _LP_CERT_RTOL)
        if why is not None:
            status, info["message"] = "feasible", f"CBC's LP levels not certified: {why}"
    return _solution(instance, "drf-lp", status, values, info, solver_record("cbc"))


def solve_milp(
    instance: FairnessInstance, *, time_limit: float | None = None, seed: int = 0, threads: int = 1
) -> Solution:
    """Registered method ``drf-milp``: integer DRF (DDRF sec. 3.1), the leximin MILP by CBC (module docstring)."""
    status, values, info = _leximin_pulp(instance, integer=True, time_limit=time_limit, threads=int(threads))
    return _solution(instance, "drf-milp", status, values, info, solver_record("cbc"))


def solve_cpsat(
    instance: FairnessInstance, *, time_limit: float | None = None, seed: int = 0, threads: int = 1
) -> Solution:
    """Registered method ``drf-cpsat``: integer DRF (DDRF sec. 3.1), the leximin by CP-SAT (module docstring)."""
    status, values, info = _leximin_cpsat(instance, time_limit=time_limit, threads=int(threads), seed=seed)
    return _solution(instance, "drf-cpsat", status, values, info, cpsat_backend.record())
