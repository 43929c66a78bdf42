"""OR-Tools CP-SAT, set up once for every problem package (current snake_case API).

:func:`solve` runs a model with ``threads`` search workers (``num_workers``), a seed
and a time limit, and maps CP-SAT's status to mropt's words; :func:`record` is the
solver record every CP-SAT method reports.

Deterministic budgets. ``dtime_limit`` caps CP-SAT's deterministic time
(``max_deterministic_time``: a count of work that CP-SAT scales to about a second on
its reference machine, whatever the load; a unit took 3-10 s of wall time on a loaded
2-core machine), while ``time_limit`` stays the wall-clock limit (the outer
safety). With one worker the search is a fixed sequence, so a solve that
stops on its deterministic budget gives the same answer on every run; with more
workers the solve is made deterministic by ``interleave_search`` (CP-SAT's
deterministic parallel loop, set only when a deterministic budget is asked for, since
it searches less per second). A solve the wall clock stops is not reproducible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import metadata

from ortools.sat.python import cp_model

from mropt.backends.starve import starve_call

#: CP-SAT status -> mropt's word for it
STATUS = {
    cp_model.OPTIMAL: "optimal",
    cp_model.FEASIBLE: "feasible",
    cp_model.INFEASIBLE: "infeasible",
    cp_model.UNKNOWN: "unknown",
    cp_model.MODEL_INVALID: "error",
}


@dataclass
class CpResult:
    """One CP-SAT solve: mropt's status word, the solver (for values), a message, the proven bound.

    ``proven_bound``: a bound on the objective in the model's own sense and units,
    proven by CP-SAT (None when it proved none: no objective, or a status other than
    ``optimal`` and ``feasible``); ``optimal`` gives the objective itself.
    """

    status: str
    solver: cp_model.CpSolver
    message: str = ""
    proven_bound: float | None = None
    dtime: float = 0.0  # deterministic time the solve used (CP-SAT's work count, module docstring)

    @property
    def has_solution(self) -> bool:
        return self.status in ("optimal", "feasible")


@dataclass
class DtimeBudget:
    """A deterministic time budget shared by several solves (module docstring): pass
    :meth:`left` as ``dtime_limit`` and :meth:`spend` each result's ``dtime``."""

    total: float
    used: float = 0.0

    def left(self) -> float:
        return max(0.0, self.total - self.used)

    def spend(self, dtime: float) -> None:
        self.used += max(0.0, float(dtime))

    def exhausted(self) -> bool:
        return self.used >= self.total


def record() -> dict[str, str]:
    """The solver record of CP-SAT methods."""
    return {"name": "OR-Tools CP-SAT", "version": metadata.version("ortools")}


def solve(
    model: cp_model.CpModel,
    *,
    threads: int = 1,
    seed: int = 0,
    time_limit: float | None = None,
    min_time: float = 0.01,
    dtime_limit: float | None = None,
) -> CpResult:
    """Solve ``model``; never raises for a solver failure (status ``error`` with a message).

    ``dtime_limit``: a deterministic time budget as well (module docstring).
    """
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = max(1, int(threads))
    solver.parameters.random_seed = int(seed)
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(min_time, float(time_limit))
    if dtime_limit is not None:
        solver.parameters.max_deterministic_time = max(0.0, float(dtime_limit))
        if threads > 1:
            solver.parameters.interleave_search = True
    if starve_call("cpsat"):  # test support (mropt.backends.starve): stop before the search
        solver.parameters.max_time_in_seconds = 0.0
        solver.parameters.max_deterministic_time = 0.0
    try:
        code = solver.solve(model)
    except Exception as exc:  # noqa: BLE001 - a solver failure, reported, not raised
        return CpResult("error", solver, f"CP-SAT failed: {' '.join(str(exc).split())}")
    status = STATUS.get(code, "unknown")
    message = "" if status in ("optimal", "feasible") else f"CP-SAT: {solver.status_name(code)}"
    return CpResult(status, solver, message, _proven_bound(model, solver, status), float(solver.deterministic_time))


def _proven_bound(model: cp_model.CpModel, solver: cp_model.CpSolver, status: str) -> float | None:
    """CP-SAT's bound where its status proves one (module docstring), else None."""
    proto = model.proto
    if status not in ("optimal", "feasible") or not (proto.has_objective() or proto.has_floating_point_objective()):
        return None
    value = float(solver.objective_value)
    if status == "optimal":
        return value
    bound = float(solver.best_objective_bound)
    if proto.has_floating_point_objective():
        maximise = bool(proto.floating_point_objective.maximize)
    else:
        maximise = proto.objective.scaling_factor < 0
    if not math.isfinite(bound) or (bound < value if maximise else bound > value):
        return None
    return bound
