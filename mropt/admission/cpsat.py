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

from ortools.sat.python import cp_model

from mropt.admission.exact_benders import MasterResult, benders
from mropt.admission.exact_master import MasterData
from mropt.backends import cpsat as cpsat_backend
from mropt.model.admission import AdmissionInstance
from mropt.model.solution import Solution
from mropt.model.tolerance import integer_grid
from mropt.registry import THREADS, Param, register

_PARAMS = {
    "threads": THREADS,
    "weight_bits": Param(
        int,
        40,
        "benefit grid of the CP-SAT master: the largest benefit is about 2**weight_bits units",
        minimum=8,
        maximum=52,
    ),
}


def _rows(data: MasterData, x: dict[int, cp_model.IntVar], model: cp_model.CpModel) -> None:
    for coefs, rhs in data.rows:
        s, _ = integer_grid([*coefs.values(), rhs], 30)
        terms = [(math.floor(c * s), x[j]) for j, c in coefs.items() if j in x]
        model.add(sum(c * v for c, v in terms if c) <= math.ceil(rhs * s))


def _master(threads: int, weight_bits: int, seed: int):  # noqa: ANN202
    def solve_master(data: MasterData, cuts: list[list[int]], time_left: float | None, hint: list[int]) -> MasterResult:
        if not data.candidates:
            return MasterResult([], 0.0, 0.0, True)
        model = cp_model.CpModel()
        x = {j: model.new_bool_var(f"x_{j}") for j in data.candidates}
        _rows(data, x, model)
        for i, j in data.conflicts:
            model.add_bool_or([x[i].Not(), x[j].Not()])
        for cut in cuts:
            model.add_bool_or([x[j].Not() for j in cut])
        unit, exact = integer_grid([data.benefits[j] for j in data.candidates], weight_bits)
        weights = {j: round(data.benefits[j] * unit) for j in data.candidates}
        slack = 0.0 if exact else 0.5 * len(data.candidates)  # rounding of the weights, in grid units
        model.maximize(sum(weights[j] * x[j] for j in data.candidates))
        hint_set = set(hint)
        for j, v in x.items():
            model.add_hint(v, j in hint_set)
        res = cpsat_backend.solve(model, threads=threads, seed=seed, time_limit=time_left, min_time=0.05)
        # only a bound CP-SAT proved (status optimal or feasible; issue 27)
        bound = None if res.proven_bound is None else (res.proven_bound + slack) / unit
        if not res.has_solution:  # stopped before a first solution: no solution, no bound
            return MasterResult(None, None, bound, False, res.message)
        chosen = [j for j, v in x.items() if res.solver.value(v)]
        obj = float(sum(data.benefits[j] for j in chosen))
        return MasterResult(chosen, obj, None if bound is None else max(obj, bound), res.status == "optimal")

    return solve_master


@register(
    "cpsat",
    kind="admission",
    exact=True,
    params=_PARAMS,
    summary="exact SEQ optimum: Benders with a CP-SAT master and an order oracle",
)
def cpsat(
    instance: AdmissionInstance,
    *,
    time_limit: float | None = None,
    seed: int = 0,
    threads: int = 1,
    weight_bits: int = 40,
) -> Solution:
    """Registered method ``cpsat`` (AMB eq. 1 under SEQ, sec. 4.1; see the module docstring)."""
    return benders(
        instance, _master(int(threads), int(weight_bits), seed), time_limit=time_limit, solver=cpsat_backend.record()
    )
