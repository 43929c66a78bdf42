"""Exact SEQ admission with a MILP master through PuLP: ``milp-cbc`` and ``milp-highs``.

Formulation: the logic-based Benders decomposition of
:mod:`mropt.admission.exact_benders` (why: a direct MILP of Horn's condition needs
ordering variables and O(n^3) big-M rows; the decomposition keeps the MILP a small
set-selection problem over ``x_j`` with energy-window valid inequalities and no-good
cuts, and leaves the sequencing to an exact combinatorial oracle). The master is one
PuLP model, rebuilt each iteration and solved in this process by CBC or HiGHS through
:mod:`mropt.backends.pulp` (gaps 0, ``threads`` threads, the time left). Solver
failures are reported in ``details`` (status ``time_limit`` with the best order
found), never as a traceback.
"""

from __future__ import annotations

import time

from mropt.admission.exact_benders import MasterResult, benders
from mropt.admission.exact_master import MasterData, MasterOutOfTime, build_pulp_model
from mropt.backends.pulp import solve_pulp, solver_record
from mropt.model.admission import AdmissionInstance
from mropt.model.solution import Solution


def _master(backend: str, threads: int):  # noqa: ANN202
    def solve_master(data: MasterData, cuts: list[list[int]], time_left: float | None, hint: list[int]) -> MasterResult:
        if not data.candidates:
            return MasterResult([], 0.0, 0.0, True)
        deadline = None if time_left is None else time.perf_counter() + time_left
        try:
            prob, x = build_pulp_model(data, cuts, deadline=deadline)
        except MasterOutOfTime:
            return MasterResult(None, None, None, False, "out of time while building the master")
        left = None if deadline is None else deadline - time.perf_counter()
        has_solution, optimal, bound, message = solve_pulp(prob, backend, time_limit=left, threads=threads)
        if bound is not None:
            bound /= data.benefit_unit
        if not has_solution:
            return MasterResult(None, None, bound, False, message)
        chosen = [j for j, v in x.items() if (v.value() or 0.0) > 0.5]
        obj = float(sum(data.benefits[j] for j in chosen))
        return MasterResult(chosen, obj, None if bound is None else max(obj, bound), optimal, message)

    return solve_master


def _run(
    instance: AdmissionInstance, backend: str, time_limit: float | None, threads: int, dominance: bool
) -> Solution:
    return benders(
        instance,
        _master(backend, int(threads)),
        time_limit=time_limit,
        solver=solver_record(backend),
        dominance=bool(dominance),
    )


def milp_cbc(
    instance: AdmissionInstance,
    *,
    time_limit: float | None = None,
    seed: int = 0,
    threads: int = 1,
    dominance: bool = True,
) -> Solution:
    """Registered method ``milp-cbc``: the SEQ optimum of AMB eq. 1 (sec. 4.1), CBC master."""
    return _run(instance, "cbc", time_limit, threads, dominance)


def milp_highs(
    instance: AdmissionInstance,
    *,
    time_limit: float | None = None,
    seed: int = 0,
    threads: int = 1,
    dominance: bool = True,
) -> Solution:
    """Registered method ``milp-highs``: the SEQ optimum of AMB eq. 1 (sec. 4.1), HiGHS master."""
    return _run(instance, "highs", time_limit, threads, dominance)
