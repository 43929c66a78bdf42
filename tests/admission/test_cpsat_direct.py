"""``cpsat-direct``: its time grid, its rounding, its time limit.

The brute-force, tie, scale, time-limit and starved-solver tests of every exact method
(``test_exact.py``, ``test_exact_properties.py``, ``test_admission_scale.py``,
``test_starved_admission.py``) read it from the registry; this file tests what is its
own: the grid on which the model is exact, the relaxation/restriction pair where it is
not, and the time limit at N = 1000.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
import pytest
from ortools.sat.python import cp_model

from mropt.admission.amb import amb_static
from mropt.admission.cpsat_direct import DirectModel, benefit_weights, time_grid
from mropt.admission.exact_oracle import SubsetOracle
from mropt.admission.verify import verify
from mropt.backends import cpsat as cpsat_backend
from mropt.instances.admission_gen import generate_admission
from mropt.model import AdmissionInstance, Cluster, Job
from mropt.registry import solve

from brute_force import brute_force
from small_jobs import job
from starved_runs import false_claims, starved_runs
from test_exact import irrational_instance


def released_instance(seed: int, n: int) -> AdmissionInstance:
    """Small integer jobs on one slot per phase with submit times and deadlines 0-30 above their work."""
    rng = np.random.default_rng(seed)
    jobs = []
    for k in range(n):
        a, b, r = int(rng.integers(1, 10)), int(rng.integers(1, 10)), int(rng.integers(0, 15))
        jobs.append(job(k, a, b, r + a + b + int(rng.integers(0, 30)), int(rng.integers(1, 20)), r))
    return AdmissionInstance(Cluster(1, 1), tuple(jobs))


def tied_instance(seed: int) -> AdmissionInstance:
    """Equal submit times, two or three deadline values, some map-only jobs (TCr = 0)."""
    rng = np.random.default_rng(seed)
    n = 4 + seed % 4
    a, b = rng.integers(1, 10, n), rng.integers(0, 10, n) * (rng.random(n) < 0.8)
    values = rng.integers(int(a.sum() + b.sum()) * 4 // 10, int(a.sum() + b.sum()) * 8 // 10 + 1, 1 + seed % 3)
    rows = zip(a, b, rng.choice(values, n), rng.integers(1, 20, n), strict=True)
    return AdmissionInstance(Cluster(1, 1), tuple(job(k, *map(int, row)) for k, row in enumerate(rows)))


def model_optimum(inst: AdmissionInstance) -> float:
    """The direct model's own proven optimum, without the warm start and the LP bound that may spare it."""
    oracle = SubsetOracle(inst)
    grid = time_grid(inst)
    assert grid.exact
    jobs = [j for j in range(inst.n) if oracle.alone_ok[j]]
    weights, unit, _ = benefit_weights(inst.benefits, jobs)
    dominates = oracle.dominates if oracle.equal_release else None
    model = DirectModel(grid, grid.relaxed, jobs, weights, dominates, lambda finish: None)
    res = cpsat_backend.solve(model.model)
    assert res.status == "optimal" and res.proven_bound is not None
    return res.proven_bound / unit


#: seeds 119, 122, 405, 543, 662, 1033: the model once skipped Horn rows by the earliest map end
#: of the release point (submit + TCm) instead of its latest, and accepted sets with no valid order
@pytest.mark.parametrize("seed", [*range(20), 119, 122, 405, 543, 662, 1033])
def test_model_optimum_is_the_brute_force_optimum(seed: int) -> None:
    """On the exact grid the model is exact: its optimum is the brute force's (submit times; ties)."""
    inst = released_instance(seed, 4 + seed % 4)
    assert model_optimum(inst) == brute_force(inst)[0]
    tied = tied_instance(seed)
    assert model_optimum(tied) == brute_force(tied)[0]


def test_table2_data_are_exact_on_tenths_of_a_second() -> None:
    """AMB Table 2 defaults: task times rounded to 0.1 s, integer deadlines: the model is exact on u = 0.1 s."""
    inst = generate_admission(2, jobs=60)
    grid = time_grid(inst)
    assert grid.unit == Fraction(1, 10) and grid.exact
    assert grid.tcm == [round(10 * x) for x in inst.tcm] and grid.tcr == [round(10 * x) for x in inst.tcr]
    assert grid.relaxed == [round(10 * d) for d in inst.deadlines]  # the limit's 5e-10 slack is below a unit


@pytest.mark.parametrize("k", [-7, 0, 3])
def test_integer_data_are_exact_in_any_decimal_unit(k: int) -> None:
    """Integer times times 10**k (each product rounded once to a float): exact on the unit 10**k."""
    rows = [(3, 5, 14, 2), (4, 2, 14, 0), (2, 6, 11, 1), (5, 1, 16, 3), (1, 4, 9, 0)]  # TCm, TCr, deadline, submit
    jobs = tuple(
        Job(
            id=f"j{i}",
            map_phase_time=a * 10.0**k,
            reduce_phase_time=b * 10.0**k,
            deadline=d * 10.0**k,
            benefit=1,
            submit_time=r * 10.0**k,
        )
        for i, (a, b, d, r) in enumerate(rows)
    )
    grid = time_grid(AdmissionInstance(Cluster(1, 1), jobs))
    assert grid.exact and grid.unit == Fraction(10) ** k
    assert (grid.tcm, grid.tcr, grid.submit) == tuple([row[c] for row in rows] for c in (0, 1, 3))
    assert grid.relaxed == [row[2] for row in rows]


def test_off_grid_data_use_a_relaxation_and_a_restriction() -> None:
    """Times off every decimal grid: the binary grid, deadlines rounded both ways, the relaxation's the larger."""
    grid = time_grid(irrational_instance(300, 6))
    assert not grid.exact and grid.unit.numerator == 1 and math.log2(grid.unit.denominator).is_integer()
    assert all(lo <= hi for lo, hi in zip(grid.restricted, grid.relaxed, strict=True))


@pytest.mark.parametrize("seed", [2, 3, 4, 6])
def test_off_grid_optimum_is_proven_through_the_relaxation(seed: int) -> None:
    """Off the grid the relaxation's bound and the oracle's order of its set prove the brute-force optimum
    (seeds on which the warm start and the LP bound leave the proof to CP-SAT)."""
    inst = irrational_instance(300 + seed, 6)
    best, _ = brute_force(inst)
    sol = solve(inst, "cpsat-direct")
    assert (sol.status, sol.objective, sol.bound) == ("optimal", best, best), dict(sol.details)
    assert sol.details["cp_status"] == ["relaxed: optimal"] and not sol.details["times_exact"]
    assert verify(inst, sol).ok


def rounding_trap() -> AdmissionInstance:
    """Two jobs of TCm = TCr = 1/3 on one slot per phase, a common deadline whose on-time limit is
    1 - 5e-13: together they end at 1 (float) or 1 - 5.6e-17 (exact), late; on the 2**40 grid the
    relaxation rounds the deadline up by more than the 5e-13 and accepts both."""
    d = (1 - 5e-13) / (1 + 5e-10)
    jobs = tuple(
        Job(id=f"j{k}", map_phase_time=1 / 3, reduce_phase_time=1 / 3, deadline=d, benefit=w)
        for k, w in enumerate((5, 3))
    )
    return AdmissionInstance(Cluster(1, 1), jobs)


def test_a_set_the_rounding_admits_is_no_proof() -> None:
    """The relaxation's optimum {j0, j1} has no valid order: the restriction gives the plan, the status
    says ``feasible`` with the relaxation's bound, never ``optimal`` 8."""
    inst = rounding_trap()
    assert brute_force(inst)[0] == 5
    sol = solve(inst, "cpsat-direct")
    assert sol.details["cp_status"] == ["relaxed: optimal", "restricted: optimal"]
    assert (sol.status, sol.objective, sol.bound) == ("feasible", 5, 8) and verify(inst, sol).ok
    runs = starved_runs(inst, "cpsat-direct")
    assert not false_claims(inst, runs, 5.0)


def test_time_limit_is_honoured_at_1000_jobs() -> None:
    """N = 1000, 1 s: the model (about 500,000 order literals) cannot be built in
    time; the run stops within 1 s of the limit with the warm start and its LP bound."""
    inst = generate_admission(2, jobs=1000)
    sol = solve(inst, "cpsat-direct", time_limit=1.0)  # how soon it stops: benchmarks/bench_time_claims.py
    assert sol.status == "time_limit" and verify(inst, sol).ok
    assert sol.details["model"].endswith("model not built: out of time"), sol.details
    assert sol.details["bound_from"] == "LP relaxation of the energy rows"
    assert sol.objective < sol.bound < sum(inst.benefits)


def test_agrees_with_the_benders_cpsat() -> None:
    """AMB Table 2 defaults, N = 30: the two CP-SAT methods prove the same optimum."""
    inst = generate_admission(1, jobs=30)
    direct, benders = solve(inst, "cpsat-direct"), solve(inst, "cpsat")
    assert direct.status == benders.status == "optimal" and direct.objective == benders.objective
    assert direct.details["times_exact"] and direct.details["cp_status"] == ["exact: optimal"]


@pytest.mark.parametrize("case", ["table2", "released", "tied"])
def test_the_hint_is_a_complete_solution_of_the_model(case: str) -> None:
    """A valid plan hinted names every variable (order literals, map starts, every chain
    sum) and CP-SAT takes it as a solution with nothing left to search; with equal submit times the
    plan is first put in the dominance rule's order. A partial hint (the chain sums left out) once
    sent CP-SAT into a search to complete it that found no plan in 20 s at N = 150."""
    inst = {"table2": lambda: generate_admission(2, jobs=40), "released": lambda: released_instance(3, 7)}.get(
        case, lambda: tied_instance(5)
    )()
    oracle, grid = SubsetOracle(inst), time_grid(inst)
    jobs = [j for j in range(inst.n) if oracle.alone_ok[j]]
    weights, unit, _ = benefit_weights(inst.benefits, jobs)
    plan = [int(j) for j in amb_static(inst, beam=16).order]
    assert plan and oracle.valid(plan)
    model = DirectModel(
        grid, grid.relaxed, jobs, weights, oracle.dominates if oracle.equal_release else None, lambda finish: None
    )
    model.hint(plan)
    proto = model.model.proto
    assert sorted(proto.solution_hint.vars) == list(range(len(proto.variables)))
    solver = cp_model.CpSolver()
    solver.parameters.fix_variables_to_their_hinted_value = True
    assert solver.solve(model.model) == cp_model.OPTIMAL
    assert solver.objective_value == sum(weights[j] for j in plan)


def test_the_build_projects_its_end_to_stop() -> None:
    """The pair loop hands ``stop`` the projected end of the build (a run gives up a build
    that cannot end before its limit): once projected, every end lies after the moment of
    the projection, and the last one no earlier than the first half of the build took."""
    inst = generate_admission(1, jobs=120)
    oracle = SubsetOracle(inst)
    grid = time_grid(inst)
    jobs = [j for j in range(inst.n) if oracle.alone_ok[j]]
    weights, _, _ = benefit_weights(inst.benefits, jobs)
    seen: list[tuple[float, float]] = []

    def stop(finish: float | None) -> None:
        if finish is not None:
            seen.append((time.perf_counter(), finish))

    started = time.perf_counter()
    DirectModel(grid, grid.relaxed, jobs, weights, None, stop)
    ended = time.perf_counter()
    assert len(seen) > 5
    assert all(started < now <= finish for now, finish in seen)
    assert seen[-1][1] >= started + (ended - started) / 2
