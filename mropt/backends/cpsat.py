"""OR-Tools CP-SAT, set up once for every problem package (current snake_case API).

:func:`solve` runs a model with ``threads`` search workers (``num_workers``), a seed
and a time limit, and maps CP-SAT's status to mropt's words; :func:`record` is the
solver record every CP-SAT method reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

from ortools.sat.python import cp_model

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
    """One CP-SAT solve: mropt's status word, the solver (for values and bounds), a message."""

    status: str
    solver: cp_model.CpSolver
    message: str = ""

    @property
    def has_solution(self) -> bool:
        return self.status in ("optimal", "feasible")


def record() -> dict[str, str]:
    """The solver record of CP-SAT methods."""
    return {"name": "OR-Tools CP-SAT", "version": metadata.version("ortools")}


def solve(
    model: cp_model.CpModel, *, threads: int = 1, seed: int = 0, time_limit: float | None = None, min_time: float = 0.01
) -> CpResult:
    """Solve ``model``; never raises for a solver failure (status ``error`` with a message)."""
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = max(1, int(threads))
    solver.parameters.random_seed = int(seed)
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(min_time, float(time_limit))
    try:
        code = solver.solve(model)
    except Exception as exc:  # noqa: BLE001 - a solver failure, reported, not raised
        return CpResult("error", solver, f"CP-SAT failed: {' '.join(str(exc).split())}")
    status = STATUS.get(code, "unknown")
    message = "" if status in ("optimal", "feasible") else f"CP-SAT: {solver.status_name(code)}"
    return CpResult(status, solver, message)
