"""Exact DRF: drf-lp, drf-milp and drf-cpsat against a brute-force leximin and progressive filling."""

from __future__ import annotations

import copy
import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings

from mropt.fairness.metrics import gaps, lex_compare, weighted_shares
from mropt.fairness.verify import verify
from mropt.model import instance_from_dict
from mropt.registry import solve

from conftest import PAPER_EXAMPLE
from strategies import fairness_instances


def sorted_shares(inst, sol):
    return np.sort(weighted_shares(inst, np.array([sol.decision["allocation"][u] for u in inst.ids], dtype=float)))


def brute_force_leximin(inst) -> list[Fraction]:
    """Sorted weighted shares of the leximin allocation, by enumerating every allocation."""
    q = lambda x: Fraction(repr(float(x)))  # noqa: E731
    dom = [max(q(u.demand.get(r, 0)) / q(c) for r, c in inst.resources.items()) / q(u.weight) for u in inst.users]
    ranges = [range(int(b) + 1) for b in inst.task_bound()]
    best = None
    for x in itertools.product(*ranges):
        if all(
            sum(x[i] * q(inst.users[i].demand.get(r, 0)) for i in range(inst.n)) <= q(c)
            for r, c in inst.resources.items()
        ):
            vec = sorted(x[i] * dom[i] for i in range(inst.n))
            if best is None or vec > best:
                best = vec
    return best


def test_paper_example_all_exact_methods():
    inst = instance_from_dict(copy.deepcopy(PAPER_EXAMPLE))
    for method in ("drf-lp", "drf-milp", "drf-cpsat"):
        sol = solve(inst, method, time_limit=30)
        assert sol.status == "optimal", sol.details
        assert sol.decision["allocation"]["A"] == pytest.approx(3, abs=1e-5)
        assert sol.decision["allocation"]["B"] == pytest.approx(2, abs=1e-5)
        assert sol.objective == pytest.approx(2 / 3, abs=1e-6)
        assert verify(inst, sol).ok, verify(inst, sol).problems


@settings(max_examples=25, deadline=None)
@given(fairness_instances(max_users=4, max_caps=5))
def test_milp_cpsat_brute_force_agree_and_beat_progressive_filling(inst):
    milp = solve(inst, "drf-milp", time_limit=20)
    cpsat = solve(inst, "drf-cpsat", time_limit=20)
    drf = solve(inst, "drf")
    assert milp.status == cpsat.status == "optimal"
    for sol in (milp, cpsat, drf):
        assert verify(inst, sol).ok, (sol.method, verify(inst, sol).problems)
    brute = np.array([float(v) for v in brute_force_leximin(inst)])
    assert np.allclose(sorted_shares(inst, milp), brute, atol=1e-7)
    assert np.allclose(sorted_shares(inst, cpsat), brute, atol=1e-9)
    assert lex_compare(sorted_shares(inst, milp), sorted_shares(inst, drf)) >= 0
    g = gaps(inst, drf, cpsat)
    assert g["min_share_gap"] >= -1e-9 and g["lex"] >= 0


@settings(max_examples=15, deadline=None)
@given(fairness_instances(max_users=3, max_caps=4, with_nodes=True))
def test_with_nodes_milp_and_cpsat_agree_and_beat_first_and_best_fit(inst):
    milp = solve(inst, "drf-milp", time_limit=20)
    cpsat = solve(inst, "drf-cpsat", time_limit=20)
    assert milp.status == cpsat.status == "optimal"
    assert np.allclose(sorted_shares(inst, milp), sorted_shares(inst, cpsat), atol=1e-7)
    for sol in (milp, cpsat):
        assert verify(inst, sol).ok, verify(inst, sol).problems
    for rule in ("first-fit", "best-fit"):
        drf = solve(inst, "drf", placement=rule)
        assert lex_compare(sorted_shares(inst, cpsat), sorted_shares(inst, drf)) >= 0


LP_LEVEL_OVER_REACH = {  # CBC's 8 digits put S_2* above the LP optimum: level 3 was infeasible
    "kind": "fairness",
    "schema_version": 1,
    "resources": {"cpu": 7},
    "users": [
        {"id": "u0", "demand": {"cpu": 1}, "weight": 1, "max_tasks": 2},
        {"id": "u1", "demand": {"cpu": 2}, "weight": 3, "max_tasks": 2},
        {"id": "u2", "demand": {"cpu": 1}, "weight": 1, "max_tasks": 2},
    ],
}


@settings(max_examples=15, deadline=None)
@given(fairness_instances(max_users=4, max_caps=5))
@example(instance_from_dict(LP_LEVEL_OVER_REACH))
def test_continuous_drf_is_at_least_the_integer_optimum(inst):
    lp = solve(inst, "drf-lp", time_limit=20)
    cpsat = solve(inst, "drf-cpsat", time_limit=20)
    assert lp.status == "optimal" and verify(inst, lp).ok, verify(inst, lp).problems
    assert lp.objective >= cpsat.objective - 1e-6


def test_envy_is_reported():
    inst = instance_from_dict(
        {
            "kind": "fairness",
            "schema_version": 1,
            "resources": {"cpu": 10},
            "users": [{"id": "A", "demand": {"cpu": 1}, "max_tasks": 2}, {"id": "B", "demand": {"cpu": 1}}],
        }
    )
    sol = solve(inst, "drf-cpsat")
    assert sol.decision["allocation"] == {"A": 2, "B": 8}
    assert sol.details["envy"] == []  # A is at its cap: it wants no more


def test_cpsat_with_rounded_shares_says_feasible_and_milp_is_exact():
    # Alibaba-like 9-decimal memory requests: CP-SAT puts the shares on a 1e5 grid
    inst = instance_from_dict(
        {
            "kind": "fairness",
            "schema_version": 1,
            "resources": {"cpu": 8, "mem": 1},
            "users": [
                {"id": "a", "demand": {"cpu": 0.5, "mem": 0.011981772}, "max_tasks": 30},
                {"id": "b", "demand": {"cpu": 1, "mem": 0.002754123}, "max_tasks": 30},
                {"id": "c", "demand": {"cpu": 0.5, "mem": 0.123456789}, "max_tasks": 30},
            ],
        }
    )
    cpsat = solve(inst, "drf-cpsat", time_limit=20)
    milp = solve(inst, "drf-milp", time_limit=20)
    assert cpsat.status == "feasible" and cpsat.details["scaling"] == "rounded"
    assert milp.status == "optimal"
    assert verify(inst, cpsat).ok and verify(inst, milp).ok
    assert lex_compare(sorted_shares(inst, milp), sorted_shares(inst, cpsat)) >= 0
