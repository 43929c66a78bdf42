"""Admission answers do not depend on the units of the data (docs/tolerances.md).

An instance with every benefit times 10**k and every time (phase times, deadlines,
submit times) times 10**m is the same problem. Exact methods must give the same
status and accepted set and an objective scaled by 10**k; bounds stay at or above
the optimum; AMB, its online part and edf-greedy make the same decisions; ``verify``
accepts every solution and rejects tampered objectives at every scale.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mropt.admission.verify import verify
from mropt.model import AdmissionInstance, Cluster, Job
from mropt.model.solution import Solution
from mropt.registry import methods, solve

from brute_force import brute_force
from exact_methods import seq_exact_methods

#: every exact admission method of the registry (slots-cpsat too: these instances are on one slot per phase)
EXACT = tuple(m.name for m in methods("admission") if m.exact)
BOUNDS = tuple(m.name for m in methods("admission") if m.role == "bound")
HEURISTICS = tuple(m.name for m in methods("admission") if m.role == "heuristic")
RTOL = 1e-9


def _job(k: int, a: float, b: float, d: float, w: float, r: float) -> Job:
    return Job(id=f"j{k}", map_phase_time=a, reduce_phase_time=b, deadline=d, benefit=w, submit_time=r)


def scaled(inst: AdmissionInstance, k: int, m: int) -> AdmissionInstance:
    """Benefits times 10**k, times times 10**m (each value rounded once, as a user's file would be)."""
    fb, ft = 10.0**k, 10.0**m
    jobs = tuple(
        _job(i, j.map_phase_time * ft, j.reduce_phase_time * ft, j.deadline * ft, j.benefit * fb, j.submit_time * ft)
        for i, j in enumerate(inst.jobs)
    )
    return AdmissionInstance(inst.cluster, jobs)


@st.composite
def instances(draw: st.DrawFn, unique_sums: bool) -> AdmissionInstance:
    """Small integer instances on one slot per phase, deadlines tight enough to matter.

    With ``unique_sums`` the benefits are distinct powers of two, so every subset has
    its own total and the optimal set is unique in every model.
    """
    n = draw(st.integers(3, 5))
    a = draw(st.lists(st.integers(1, 9), min_size=n, max_size=n))
    b = draw(st.lists(st.integers(1, 9), min_size=n, max_size=n))
    r = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)) if draw(st.booleans()) else [0] * n
    total = sum(a) + sum(b)
    d = [max(r[i] + 1, draw(st.integers(total * 4 // 10, total * 8 // 10))) for i in range(n)]
    if unique_sums:
        w = [2.0**e for e in draw(st.permutations(range(n)))]
    else:
        w = draw(st.lists(st.sampled_from([1, 3, 7, 7, 10, 25]), min_size=n, max_size=n))
    return AdmissionInstance(Cluster(1, 1), tuple(_job(i, a[i], b[i], d[i], w[i], r[i]) for i in range(n)))


def _tampered(sol: Solution, value: float) -> Solution:
    return Solution(
        method=sol.method,
        status=sol.status,
        objective=value,
        bound=sol.bound,
        accepted=sol.accepted,
        sequence=sol.sequence,
        solver=sol.solver,
        details=dict(sol.details),
    )


def _check_verify(inst: AdmissionInstance, sol: Solution) -> None:
    assert verify(inst, sol).ok, (sol.method, verify(inst, sol).problems)
    obj = sol.objective
    for wrong in (obj * (1 + 1e-6) + 1e-300, obj * 2 + 1e-300, obj * (1 - 1e-6) - 1e-300):
        assert not verify(inst, _tampered(sol, wrong)).ok, (sol.method, obj, wrong)
    if obj != 0:
        assert not verify(inst, _tampered(sol, 0.0)).ok, (sol.method, obj)


_SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
_EXPONENTS = st.integers(-8, 9)


@pytest.mark.slow
@_SETTINGS
@given(instances(unique_sums=True), _EXPONENTS, _EXPONENTS)
def test_same_decisions_in_every_unit(inst: AdmissionInstance, k: int, m: int) -> None:
    big = scaled(inst, k, m)
    optimum, _ = brute_force(inst)
    for method in EXACT + HEURISTICS:
        base, other = solve(inst, method), solve(big, method)
        assert base.status == other.status, (method, base.status, other.status, dict(other.details))
        assert set(base.accepted) == set(other.accepted), (method, base.accepted, other.accepted)
        if method in HEURISTICS:
            assert base.sequence == other.sequence, method
        assert math.isclose(other.objective, base.objective * 10.0**k, rel_tol=RTOL), method
        _check_verify(big, other)
    for method in BOUNDS:
        base, other = solve(inst, method), solve(big, method)
        assert base.objective >= optimum * (1 - RTOL), method
        assert other.objective >= optimum * 10.0**k * (1 - RTOL), (method, other.objective, optimum * 10.0**k)


@pytest.mark.slow
@_SETTINGS
@given(instances(unique_sums=False), _EXPONENTS, _EXPONENTS)
def test_same_optimum_with_ties_in_every_unit(inst: AdmissionInstance, k: int, m: int) -> None:
    """Equal benefits (several optimal sets): the same status and optimum at every scale."""
    big = scaled(inst, k, m)
    optimum, _ = brute_force(inst)
    for method in seq_exact_methods():
        sol = solve(big, method)
        assert sol.status == "optimal", (method, dict(sol.details))
        assert math.isclose(sol.objective, optimum * 10.0**k, rel_tol=RTOL), (method, sol.objective, optimum)
        assert math.isclose(sol.bound, sol.objective, rel_tol=RTOL), method
        _check_verify(big, sol)


def test_tiny_benefits_are_not_a_zero_optimum() -> None:
    """Benefits of about 1e-8: the exact methods once proved "optimal 0" (absolute tolerances)."""
    inst = AdmissionInstance(
        Cluster(1, 1),
        tuple(
            _job(i, a, b, 20, w, 0)
            for i, (a, b, w) in enumerate([(6, 4, 1.3e-8), (5, 5, 2.2e-8), (4, 3, 0.7e-8), (7, 2, 1.1e-8)])
        ),
    )
    best, _ = brute_force(inst)
    assert best > 0
    for method in EXACT:
        sol = solve(inst, method)
        assert sol.status == "optimal" and math.isclose(sol.objective, best, rel_tol=RTOL), (method, sol.objective)
        assert verify(inst, sol).ok
    energy = solve(inst, "bound-energy").objective
    assert energy >= best * (1 - RTOL)


def test_times_beyond_2_to_the_53() -> None:
    """Times of about 1e16 s: the exact methods agree with an exact-arithmetic brute force."""
    base = AdmissionInstance(
        Cluster(1, 1),
        tuple(
            _job(i, a, b, d, w, 0)
            for i, (a, b, d, w) in enumerate([(3, 5, 14, 5), (4, 2, 14, 4), (2, 6, 11, 6), (5, 1, 16, 3), (1, 4, 9, 2)])
        ),
    )
    big = scaled(base, 0, 16)
    best, _ = brute_force(big)  # exact fractions of the scaled floats
    assert best == brute_force(base)[0]
    for method in EXACT:
        sol = solve(big, method)
        assert (sol.status, sol.objective) == ("optimal", best), method
        assert verify(big, sol).ok


def test_tiny_times_late_plans_are_late() -> None:
    """Times of about 1e-7 s: a plan late by 1e-8 s (10 % of the deadline) is late for everyone."""
    inst = AdmissionInstance(Cluster(1, 1), (_job(0, 6e-8, 5e-8, 1.0e-7, 1, 0),))
    for method in (*EXACT, "amb", "edf-greedy"):
        sol = solve(inst, method)
        assert sol.accepted == () and sol.objective == 0, method
    late = Solution(method="", status="feasible", objective=1.0, bound=None, accepted=("j0",), sequence=("j0",))
    assert not verify(inst, late).ok
