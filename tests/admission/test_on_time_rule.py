"""The admission methods never call on time a job ``verify`` finds late.

The rule (docs/tolerances.md) is ``C <= d * (1 + 1e-9)`` in exact arithmetic, where
``verify`` checks it. A job with deadline 105.999999894 whose phases end at exactly
106 s is late by it (the limit is 1.7e-15 below 106), though the old float limit
``d + 1e-9 * |d|`` rounded up to 106.0, so every method accepted the job, the exact
ones "proved" 10, and ``verify`` rejected all of those answers. Every admission method
of the registry runs here; the answers are hand-known: the job cannot be accepted.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

import mropt  # noqa: F401  (registers the methods)
from mropt.model.admission import AdmissionInstance
from mropt.registry import methods, solve, verify_solution

D = 105.999999894
METHODS = [m.name for m in methods("admission")]


def _instance(jobs: list[dict]) -> AdmissionInstance:
    return AdmissionInstance.from_dict(
        {"kind": "admission", "cluster": {"map_slots": 1, "reduce_slots": 1}, "jobs": jobs}
    )


ONE_JOB = _instance([{"id": "a", "deadline": D, "benefit": 10, "map_phase_time": 100, "reduce_phase_time": 6}])
# a zero-benefit job at the limit next to one that fits: the heuristics took the first too
ZERO_BENEFIT = _instance(
    [
        {"id": "z", "deadline": D, "benefit": 0, "map_phase_time": 100, "reduce_phase_time": 6},
        {"id": "b", "deadline": 300, "benefit": 5, "map_phase_time": 10, "reduce_phase_time": 10},
    ]
)


def test_the_job_is_late_in_exact_arithmetic() -> None:
    assert Fraction(100) + Fraction(6) > Fraction(D) * (1 + Fraction(1, 10**9))


@pytest.mark.parametrize("method", METHODS)
def test_no_method_accepts_a_job_late_by_the_exact_rule(method: str) -> None:
    sol = solve(ONE_JOB, method, time_limit=10)
    verdict = verify_solution(ONE_JOB, sol)
    assert verdict.ok, (method, verdict.problems)
    assert "a" not in sol.accepted
    if sol.status != "bound":  # Ideal's fractional knapsack ignores deadlines beyond Max_time
        assert sol.objective == 0.0


@pytest.mark.parametrize("method", METHODS)
def test_a_zero_benefit_job_at_the_limit_is_left_out(method: str) -> None:
    sol = solve(ZERO_BENEFIT, method, time_limit=10)
    verdict = verify_solution(ZERO_BENEFIT, sol)
    assert verdict.ok, (method, verdict.problems)
    assert "z" not in sol.accepted
    if sol.status != "bound":
        assert sol.objective == 5.0 and sol.accepted == ("b",)
