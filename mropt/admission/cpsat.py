"""Exact SEQ admission with a CP-SAT master: ``cpsat``.

Formulation: the logic-based Benders decomposition of
:mod:`mropt.admission.exact_benders` with the set-selection master solved by OR-Tools
CP-SAT (why: a direct CP-SAT model of Horn's condition, tried before, proved
optimality at N = 30 only on some paper-like instances within 60 s; the master here
is a small 0-1 model, and the sequencing is left to an exact combinatorial oracle).
CP-SAT needs integer coefficients, so the energy rows are scaled by ``scale``
(default 1000, i.e. milliseconds) and rounded safely: coefficients down and right
sides up, which keeps every row a valid relaxation. Benefits are scaled the same way
(rounded to the nearest 1/scale; the reported objective is recomputed from eq. 1).
The incumbent set is given to CP-SAT as a solution hint.
"""

from __future__ import annotations

import math

import ortools
from ortools.sat.python import cp_model

from mropt.admission.exact_benders import MasterResult, benders
from mropt.admission.exact_master import MasterData
from mropt.model.admission import AdmissionInstance
from mropt.model.solution import Solution
from mropt.registry import register

_PARAMS = {
    "threads": "CP-SAT search workers (default 1)",
    "scale": "integer scale for times and benefits in the CP-SAT master (default 1000)",
}


def _master(threads: int, scale: int, seed: int):  # noqa: ANN202
    def solve_master(data: MasterData, cuts: list[list[int]], time_left: float | None, hint: list[int]) -> MasterResult:
        if not data.candidates:
            return MasterResult([], 0.0, 0.0, True)
        model = cp_model.CpModel()
        x = {j: model.NewBoolVar(f"x_{j}") for j in data.candidates}
        for coefs, rhs in data.rows:
            terms = [(int(math.floor(c * scale + 1e-9)), x[j]) for j, c in coefs.items() if j in x]
            model.Add(sum(c * v for c, v in terms if c) <= int(math.ceil(rhs * scale - 1e-9)))
        for i, j in data.conflicts:
            model.AddBoolOr([x[i].Not(), x[j].Not()])
        for cut in cuts:
            model.AddBoolOr([x[j].Not() for j in cut])
        weights = {j: int(round(data.benefits[j] * scale)) for j in data.candidates}
        model.Maximize(sum(weights[j] * x[j] for j in data.candidates))
        hint_set = set(hint)
        for j, v in x.items():
            model.AddHint(v, j in hint_set)
        solver = cp_model.CpSolver()
        solver.parameters.num_search_workers = max(1, int(threads))
        solver.parameters.random_seed = int(seed)
        if time_left is not None:
            solver.parameters.max_time_in_seconds = max(0.05, float(time_left))
        try:
            status = solver.Solve(model)
        except Exception as exc:  # noqa: BLE001 - a solver failure, reported, not raised
            return MasterResult(None, None, None, False, f"CP-SAT failed: {' '.join(str(exc).split())}")
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return MasterResult(None, None, None, False, f"CP-SAT: {solver.StatusName(status)}")
        chosen = [j for j, v in x.items() if solver.Value(v)]
        obj = float(sum(data.benefits[j] for j in chosen))
        bound = solver.BestObjectiveBound() / scale + len(data.candidates) / scale  # rounding of weights
        optimal = status == cp_model.OPTIMAL
        if optimal:
            bound = max(obj, bound) if any(w != data.benefits[j] * scale for j, w in weights.items()) else obj
        return MasterResult(chosen, obj, bound, optimal)

    return solve_master


@register("cpsat", kind="admission", exact=True, params=_PARAMS,
          summary="exact SEQ optimum: Benders with a CP-SAT master and an order oracle")
def cpsat(
    instance: AdmissionInstance, *, time_limit: float | None = None, seed: int = 0, threads: int = 1, scale: int = 1000
) -> Solution:
    solver = {"name": "OR-Tools CP-SAT", "version": ortools.__version__}
    return benders(instance, _master(int(threads), int(scale), seed), time_limit=time_limit, solver=solver)
