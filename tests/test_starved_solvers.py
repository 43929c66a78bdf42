"""The back ends' proven bounds, and the fault injection of mropt.backends.starve.

A back end is the one place that turns a solver's outcome into (solution?, proven
bound?): CP-SAT's bound counts only under OPTIMAL or FEASIBLE, HiGHS's only under a
status that proves it, CBC's only at a proven optimum. The kinds' ``test_starved_*.py``
stop every solver call of every exact method in turn; this file checks the back ends
and the injection themselves, and that no problem package reads a raw solver bound.
"""

from __future__ import annotations

import re
from pathlib import Path

import pulp
import pytest
from ortools.sat.python import cp_model

from mropt.backends import cpsat
from mropt.backends.pulp import _bound_past, cbc_solver, highs_solver, solve_pulp
from mropt.backends.starve import starved
from mropt.registry import kinds

from starved_runs import checked_methods

ROOT = Path(__file__).resolve().parents[1]


def knapsack_cp() -> cp_model.CpModel:
    """max 5a + 4b + 3c, 2a + 3b + c <= 4 (binary): optimum 8 (a, c)."""
    m = cp_model.CpModel()
    a, b, c = (m.new_bool_var(n) for n in "abc")
    m.add(2 * a + 3 * b + c <= 4)
    m.maximize(5 * a + 4 * b + 3 * c)
    return m


def knapsack_lp(sense: int = pulp.LpMaximize) -> pulp.LpProblem:
    """The same knapsack in PuLP (minimising: min -5a - 4b - 3c, optimum -8)."""
    prob = pulp.LpProblem("knapsack", sense)
    a, b, c = (prob.add_variable(n, cat=pulp.LpBinary) for n in "abc")
    sign = 1 if sense == pulp.LpMaximize else -1
    prob += sign * (5 * a + 4 * b + 3 * c)
    prob += 2 * a + 3 * b + c <= 4
    return prob


def test_cpsat_stopped_before_its_search_proves_no_bound() -> None:
    """The trap: CP-SAT stopped at once reports a "best bound" of 0 (below the
    optimum of 8 of this maximisation); the back end hands back none."""
    with starved({1}) as run:
        res = cpsat.solve(knapsack_cp())
    assert run.starved == [(1, "cpsat")]
    assert res.status == "unknown" and not res.has_solution
    assert res.solver.best_objective_bound == 0.0  # unproven
    assert res.proven_bound is None


def test_cpsat_optimum_is_its_own_proven_bound() -> None:
    res = cpsat.solve(knapsack_cp())
    assert res.status == "optimal" and res.proven_bound == 8.0


@pytest.mark.parametrize("sense", [pulp.LpMaximize, pulp.LpMinimize])
@pytest.mark.parametrize("backend", ["highs", "cbc"])
def test_pulp_stopped_at_once_has_no_solution_and_no_bound(backend: str, sense: int) -> None:
    with starved({1}) as run:
        has_solution, optimal, bound, message = solve_pulp(knapsack_lp(sense), backend, time_limit=None, threads=1)
    assert run.starved == [(1, backend)]
    assert (has_solution, optimal, bound) == (False, False, None), message
    assert ("Time limit" in message) if backend == "highs" else ("Not Solved" in message)


@pytest.mark.parametrize("sense,optimum", [(pulp.LpMaximize, 8.0), (pulp.LpMinimize, -8.0)])
@pytest.mark.parametrize("backend", ["highs", "cbc"])
def test_pulp_optimum_is_its_own_proven_bound(backend: str, sense: int, optimum: float) -> None:
    assert solve_pulp(knapsack_lp(sense), backend, time_limit=None, threads=1) == (True, True, optimum, "")


def test_a_bound_that_cuts_off_the_solution_found_proves_nothing() -> None:
    """HiGHS's bound is kept only on the right side of its incumbent (within OBJECTIVE_RTOL)."""
    assert _bound_past(10.0, 8.0, maximise=True) == 10.0
    assert _bound_past(8.0 - 1e-12, 8.0, maximise=True) == 8.0  # float noise: moved onto the solution
    assert _bound_past(0.0, 8.0, maximise=True) is None
    assert _bound_past(6.0, 8.0, maximise=False) == 6.0
    assert _bound_past(9.0, 8.0, maximise=False) is None


def test_starved_counts_every_back_end_and_costs_nothing_outside_a_block() -> None:
    with starved() as run:
        cpsat.solve(knapsack_cp())
        solve_pulp(knapsack_lp(), "highs", time_limit=None, threads=1)
        solve_pulp(knapsack_lp(), "cbc", time_limit=None, threads=1)
        cpsat.solve(knapsack_cp())
    assert run.calls == 4 and run.starved == []
    with starved(lambda k: k % 2 == 0) as run:
        first = cpsat.solve(knapsack_cp())
        second = cpsat.solve(knapsack_cp())
    assert first.status == "optimal" and second.status == "unknown" and run.starved == [(2, "cpsat")]
    with starved(), pytest.raises(RuntimeError, match="do not nest"), starved():
        pass
    for solver in (cbc_solver(time_limit=None, threads=1), highs_solver(time_limit=None, threads=1)):
        assert "actualSolve" not in vars(solver)  # the solver's own method: no wrapper outside a block


def test_no_problem_package_reads_a_raw_solver_bound() -> None:
    """Bounds come from the back ends only (CpResult.proven_bound, solve_pulp)."""
    raw = re.compile(r"best_objective_bound|objective_value|mip_dual_bound|getInfo\(|highs_mip_bound")
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "mropt").rglob("*.py"))
        if "backends" not in path.parts
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if raw.search(line)
    ]
    assert not found


def test_every_kind_with_exact_methods_has_a_starved_test() -> None:
    """The kinds' tests read their methods from the registry; a new kind needs one too."""
    for kind in kinds():
        if checked_methods(kind):
            assert (ROOT / "tests" / kind / f"test_starved_{kind}.py").is_file(), kind
