"""Exact SEQ admission with a CP-SAT master: ``cpsat``.

Formulation: the logic-based Benders decomposition of
:mod:`mropt.admission.exact_benders` with the set-selection master solved by OR-Tools
CP-SAT (why: a direct CP-SAT model of Horn's condition, tried before, proved
optimality at N = 30 only on some paper-like instances within 60 s; the master here
is a small 0-1 model, and the sequencing is left to an exact combinatorial oracle).
CP-SAT needs integer coefficients. Each energy row is put on an integer grid of about
``2**30`` units (a power of two, :func:`mropt.model.tolerance.integer_grid`) and rounded
safely, coefficients down and right sides up, which keeps every row a valid
relaxation. Benefits go on a grid of about ``2**weight_bits`` units for the largest
(default 40): integer and binary-fraction benefits are then exact; otherwise each
weight is off by at most half a unit, and the bound handed back adds that slack for
every candidate, so a proof never rests on rounding (with 40 bits the slack stays
below ``OBJECTIVE_RTOL`` of the optimum up to about 2,000 candidates, since the
optimum is at least the largest candidate benefit). The model is the same in any unit
of time or benefit. The reported objective is recomputed from eq. 1. The incumbent
set is given to CP-SAT as a solution hint.
"""

from __future__ import annotations

import math
import time

from ortools.sat.python import cp_model

from mropt.admission.exact_benders import MasterResult, benders
from mropt.admission.exact_master import MasterData, MasterOutOfTime, out_of_time
from mropt.backends import cpsat as cpsat_backend
from mropt.model.admission import AdmissionInstance
from mropt.model.solution import Solution
from mropt.model.tolerance import integer_grid


def integer_rows(data: MasterData, start: int = 0) -> list[tuple[list[int], list[int], int]]:
    """The energy rows from ``start`` on their integer grids (module docstring): (jobs, coefficients, right side)."""
    out = []
    candidates = set(data.candidates)
    for coefs, rhs in data.rows[start:]:
        s, _ = integer_grid([*coefs.values(), rhs], 30)
        terms = [(j, math.floor(c * s)) for j, c in coefs.items() if j in candidates]
        terms = [(j, c) for j, c in terms if c]
        out.append(([j for j, _ in terms], [c for _, c in terms], math.ceil(rhs * s)))
    return out


def _rows(
    rows: list[tuple[list[int], list[int], int]],
    x: dict[int, cp_model.IntVar],
    model: cp_model.CpModel,
    deadline: float | None,
) -> None:
    """Add the integer rows to ``model``; :class:`MasterOutOfTime` when ``deadline`` passes."""
    for k, (jobs, coefs, rhs) in enumerate(rows):
        if k % 16 == 0:
            out_of_time(deadline)
        model.add(cp_model.LinearExpr.weighted_sum([x[j] for j in jobs], coefs) <= rhs)


def cp_master(threads: int, weight_bits: int, seed: int, budget: cpsat_backend.DtimeBudget | None = None):  # noqa: ANN202
    """The CP-SAT master; with ``budget`` every solve is capped by, and spends, its deterministic time."""
    cache: dict[int, tuple[MasterData, list]] = {}  # the integer rows of the master data in use (rows only grow)

    def solve_master(data: MasterData, cuts: list[list[int]], time_left: float | None, hint: list[int]) -> MasterResult:
        if not data.candidates:
            return MasterResult([], 0.0, 0.0, True)
        deadline = None if time_left is None else time.perf_counter() + time_left
        if id(data) not in cache or cache[id(data)][0] is not data:
            cache.clear()
            cache[id(data)] = (data, [])
        int_rows = cache[id(data)][1]
        int_rows.extend(integer_rows(data, len(int_rows)))  # the Benders run's lifted cuts since the last solve
        model = cp_model.CpModel()
        x = {j: model.new_bool_var(f"x_{j}") for j in data.candidates}
        try:
            _rows(cache[id(data)][1], x, model, deadline)
        except MasterOutOfTime:
            return MasterResult(None, None, None, False, "out of time while building the master")
        for i, j in data.conflicts:
            model.add_bool_or([x[i].Not(), x[j].Not()])
        for j, i in data.dominance:
            model.add_implication(x[j], x[i])
        for cut in cuts:
            model.add_bool_or([x[j].Not() for j in cut])
        unit, exact = integer_grid([data.benefits[j] for j in data.candidates], weight_bits)
        weights = {j: round(data.benefits[j] * unit) for j in data.candidates}
        slack = 0.0 if exact else 0.5 * len(data.candidates)  # rounding of the weights, in grid units
        model.maximize(sum(weights[j] * x[j] for j in data.candidates))
        hint_set = set(hint)
        for j, v in x.items():
            model.add_hint(v, j in hint_set)
        left = None if deadline is None else deadline - time.perf_counter()
        dtime = None if budget is None else budget.left()
        res = cpsat_backend.solve(model, threads=threads, seed=seed, time_limit=left, min_time=0.05, dtime_limit=dtime)
        if budget is not None:
            budget.spend(res.dtime)
        # only a bound CP-SAT proved (status optimal or feasible; mropt.backends.cpsat)
        bound = None if res.proven_bound is None else (res.proven_bound + slack) / unit
        if not res.has_solution:  # stopped before a first solution: no solution, no bound
            return MasterResult(None, None, bound, False, res.message)
        chosen = [j for j, v in x.items() if res.solver.value(v)]
        obj = float(sum(data.benefits[j] for j in chosen))
        return MasterResult(chosen, obj, None if bound is None else max(obj, bound), res.status == "optimal")

    return solve_master


def cpsat(
    instance: AdmissionInstance,
    *,
    time_limit: float | None = None,
    seed: int = 0,
    threads: int = 1,
    weight_bits: int = 40,
    dominance: bool = True,
) -> Solution:
    """Registered method ``cpsat`` (AMB eq. 1 under SEQ, sec. 4.1; see the module docstring)."""
    return benders(
        instance,
        cp_master(int(threads), int(weight_bits), seed),
        time_limit=time_limit,
        solver=cpsat_backend.record(),
        dominance=bool(dominance),
    )
