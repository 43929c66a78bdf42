"""Exact DRF (drf-lp, drf-milp, drf-cpsat) with each solver call stopped at once.

Every solve of the leximin loop (one per level) is stopped in turn
(:mod:`mropt.backends.starve`): no result may be ``optimal`` unless it is the leximin
allocation, and no bound may fall below the optimal minimum weighted dominant share.
Optima: the brute-force leximin of tests/fairness/test_fairness_exact.py for the integer
methods, computed by hand for the continuous ``drf-lp`` (a relaxation: its optimum is
the continuous one).
"""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest

from mropt.model import instance_from_dict
from mropt.registry import get_method

from conftest import PAPER_EXAMPLE
from starved_runs import checked_methods, false_claims, starved_runs
from test_fairness_exact import brute_force_leximin, sorted_shares


def _instance(resources: dict, users: list[dict]) -> object:
    return instance_from_dict({"kind": "fairness", "schema_version": 1, "resources": resources, "users": users})


#: (name, instance, continuous optimum of the minimum weighted dominant share, by hand)
CASES = [
    # DDRF sec. 3.1: x + 3y <= 9, 4x + y <= 18, 2x/9 = y/3 gives (3, 2), shares 2/3 (integer too)
    ("paper example", instance_from_dict(copy.deepcopy(PAPER_EXAMPLE)), Fraction(2, 3)),
    # cpu 10, two users of 3 cpu: 5/3 tasks each continuously (1/2); whole tasks (2, 1): 3/10
    (
        "equal users",
        _instance({"cpu": 10}, [{"id": "A", "demand": {"cpu": 3}}, {"id": "B", "demand": {"cpu": 3}}]),
        Fraction(1, 2),
    ),
    # cpu 9, A capped at 1 task: A 1/9, B and C 4 tasks each (three levels)
    (
        "capped user",
        _instance(
            {"cpu": 9},
            [
                {"id": "A", "demand": {"cpu": 1}, "max_tasks": 1},
                {"id": "B", "demand": {"cpu": 1}},
                {"id": "C", "demand": {"cpu": 1}},
            ],
        ),
        Fraction(1, 9),
    ),
    # cpu 12, A (1 cpu, weight 2, at most 5 tasks): weighted share x/24, at most 5/24; B (2 cpu): x/6
    (
        "weights",
        _instance(
            {"cpu": 12},
            [{"id": "A", "demand": {"cpu": 1}, "weight": 2, "max_tasks": 5}, {"id": "B", "demand": {"cpu": 2}}],
        ),
        Fraction(5, 24),
    ),
]


@pytest.mark.parametrize("method", checked_methods("fairness"))
def test_no_false_optimum_or_bound_when_any_solver_call_stops(method: str) -> None:
    continuous = get_method(method).relaxation
    for name, inst, lp_optimum in CASES:
        leximin = [float(v) for v in brute_force_leximin(inst)]
        optimum = float(lp_optimum) if continuous else leximin[0]
        runs = starved_runs(inst, method)
        assert not false_claims(inst, runs, optimum), name
        assert runs[0][1].status == "optimal", (name, runs[0][1].details)  # unstarved: proven
        for label, sol in runs:  # an integer optimum is the whole leximin vector, not only its minimum
            if sol.status == "optimal" and not continuous:
                assert sorted_shares(inst, sol) == pytest.approx(leximin, rel=1e-9), (name, label)
