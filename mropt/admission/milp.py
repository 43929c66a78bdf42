"""Exact SEQ admission with a MILP master through PuLP: ``milp-cbc`` and ``milp-highs``.

Formulation: the logic-based Benders decomposition of
:mod:`mropt.admission.exact_benders` (why: a direct MILP of Horn's condition needs
ordering variables and O(n^3) big-M rows; the decomposition keeps the MILP a small
set-selection problem over ``x_j`` with energy-window valid inequalities and no-good
cuts, and leaves the sequencing to an exact combinatorial oracle). The master is
rebuilt and re-solved each iteration with CBC (PuLP's bundled ``PULP_CBC_CMD``) or
HiGHS (highspy, in the worker process of :mod:`mropt.admission.exact_highs`, because
OR-Tools' bundled libhighs clashes with highspy in one process), with ``threads``
threads and the time left. Solver failures are caught here and reported in ``details`` (status
``time_limit`` with the best order found), never as a traceback.
"""

from __future__ import annotations

try:  # load OR-Tools before PuLP: PuLP imports highspy, which then breaks OR-Tools (exact_highs)
    from ortools.sat.python import cp_model as _cp_model  # noqa: F401
except ImportError:  # pragma: no cover
    pass
import pulp

from mropt.admission import exact_highs
from mropt.admission.exact_benders import MasterResult, benders
from mropt.admission.exact_master import MasterData
from mropt.model.admission import AdmissionInstance
from mropt.model.solution import Solution
from mropt.registry import register

_PARAMS = {"threads": "solver threads for the master MILP (default 1)"}


def build_pulp_model(data: MasterData, cuts: list[list[int]], *, relax: bool = False) -> tuple[pulp.LpProblem, dict]:
    """The master of :mod:`mropt.admission.exact_master` as a PuLP problem (LP if ``relax``)."""
    prob = pulp.LpProblem("seq_admission_master", pulp.LpMaximize)
    cat = pulp.LpContinuous if relax else pulp.LpBinary
    x = {j: pulp.LpVariable(f"x_{j}", lowBound=0, upBound=1, cat=cat) for j in data.candidates}
    prob += pulp.lpSum(data.benefits[j] * x[j] for j in data.candidates)
    for k, (coefs, rhs) in enumerate(data.rows):
        prob += pulp.lpSum(c * x[j] for j, c in coefs.items() if j in x) <= rhs, f"energy_{k}"
    for k, (i, j) in enumerate(data.conflicts):
        prob += x[i] + x[j] <= 1, f"pair_{k}"
    for k, cut in enumerate(cuts):
        prob += pulp.lpSum(x[j] for j in cut) <= len(cut) - 1, f"cut_{k}"
    return prob, x


def master_arrays(data: MasterData, cuts: list[list[int]]) -> tuple[list[int], list[float], list]:
    """The master as (columns, objective, rows of (column positions, coefficients, rhs))."""
    cols = list(data.candidates)
    pos = {j: k for k, j in enumerate(cols)}
    objective = [data.benefits[j] for j in cols]
    rows = []
    for coefs, rhs in data.rows:
        items = [(pos[j], c) for j, c in coefs.items() if j in pos]
        rows.append(([k for k, _ in items], [c for _, c in items], rhs))
    for i, j in data.conflicts:
        rows.append(([pos[i], pos[j]], [1.0, 1.0], 1.0))
    for cut in cuts:
        rows.append(([pos[j] for j in cut], [1.0] * len(cut), len(cut) - 1.0))
    return cols, objective, rows


def highs_master(data: MasterData, cuts: list[list[int]], *, integer: bool, time_limit: float | None,
                 threads: int) -> dict:
    """Solve the master with HiGHS in the worker; result keys as :func:`exact_highs.solve`."""
    cols, objective, rows = master_arrays(data, cuts)
    res = exact_highs.solve(len(cols), objective, rows, integer=integer, time_limit=time_limit, threads=threads)
    if res.get("x") is not None:
        res["chosen"] = [j for j, v in zip(cols, res["x"]) if v > 0.5]
    return res


def solver_record(backend: str) -> dict[str, str]:
    if backend == "cbc":
        try:
            version = pulp.PULP_CBC_CMD().version() or ""
        except Exception:  # noqa: BLE001
            version = ""
        return {"name": "CBC (PuLP)", "version": f"pulp {pulp.__version__}; {version}".strip("; ")}
    return {"name": "HiGHS (highspy worker)", "version": exact_highs.highs_version()}


def _master(backend: str, threads: int):  # noqa: ANN202
    def solve_master(data: MasterData, cuts: list[list[int]], time_left: float | None, hint: list[int]) -> MasterResult:
        if not data.candidates:
            return MasterResult([], 0.0, 0.0, True)
        if backend == "highs":
            try:
                res = highs_master(data, cuts, integer=True, time_limit=time_left, threads=threads)
            except exact_highs.HighsError as exc:
                return MasterResult(None, None, None, False, str(exc))
            if res.get("chosen") is None:
                return MasterResult(None, None, res.get("bound"), False, res.get("message", ""))
            obj = float(sum(data.benefits[j] for j in res["chosen"]))
            optimal = res["status"] == "optimal"
            bound = obj if optimal else res.get("bound")
            return MasterResult(res["chosen"], obj, bound, optimal, res.get("message", ""))
        prob, x = build_pulp_model(data, cuts)
        limit = None if time_left is None else max(0.05, float(time_left))
        try:
            prob.solve(pulp.PULP_CBC_CMD(msg=False, timeLimit=limit, threads=threads))
        except Exception as exc:  # noqa: BLE001 - a solver failure, reported, not raised
            return MasterResult(None, None, None, False, f"{backend} failed: {' '.join(str(exc).split())}")
        has_solution = prob.sol_status in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible)
        if not has_solution:
            return MasterResult(None, None, None, False, f"{backend}: {pulp.LpStatus.get(prob.status, prob.status)}")
        chosen = [j for j, v in x.items() if (v.value() or 0.0) > 0.5]
        obj = float(sum(data.benefits[j] for j in chosen))
        optimal = prob.sol_status == pulp.LpSolutionOptimal
        return MasterResult(chosen, obj, obj if optimal else None, optimal)

    return solve_master


def _run(instance: AdmissionInstance, backend: str, time_limit: float | None, threads: int) -> Solution:
    return benders(instance, _master(backend, int(threads)), time_limit=time_limit, solver=solver_record(backend))


@register("milp-cbc", kind="admission", exact=True, params=_PARAMS,
          summary="exact SEQ optimum: Benders with a CBC master MILP and an order oracle")
def milp_cbc(instance: AdmissionInstance, *, time_limit: float | None = None, seed: int = 0, threads: int = 1) -> Solution:
    return _run(instance, "cbc", time_limit, threads)


@register("milp-highs", kind="admission", exact=True, params=_PARAMS,
          summary="exact SEQ optimum: Benders with a HiGHS master MILP and an order oracle")
def milp_highs(instance: AdmissionInstance, *, time_limit: float | None = None, seed: int = 0, threads: int = 1) -> Solution:
    return _run(instance, "highs", time_limit, threads)
