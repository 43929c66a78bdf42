"""Upper bounds: Ideal (eq. 4), LP relaxation, energy bound."""

from __future__ import annotations

import pytest

from mropt.admission.bounds import ideal_value
from mropt.admission.verify import verify
from mropt.instances.admission_gen import generate_admission
from mropt.registry import methods, solve

from brute_force import brute_force
from test_exact import random_instance, table1

#: every bound method of the registry
BOUNDS = tuple(m.name for m in methods("admission") if m.role == "bound")


def test_ideal_of_table1_is_2606_3() -> None:
    """Papers' ERRATA: 2430 + 400 x 82/186 = 2606.3."""
    assert ideal_value(table1()) == pytest.approx(2430 + 400 * 82 / 186)
    sol = solve(table1(), "ideal")
    assert sol.status == "bound" and sol.objective == pytest.approx(2606.344, abs=1e-3)
    assert sol.bound == sol.objective and sol.accepted == () and sol.sequence is None
    assert verify(table1(), sol).ok


def test_table1_energy_bound_is_tight() -> None:
    """Table 1's optimum is 1470 (AMB's set); the energy bound proves it."""
    assert solve(table1(), "bound-energy").objective == pytest.approx(1470.0)


@pytest.mark.parametrize("seed", range(16))
def test_every_bound_at_least_optimum_and_never_weaker_than_ideal(seed: int) -> None:
    inst = random_instance(200 + seed, 3 + seed % 6, releases=seed % 4 == 1)
    best, _ = brute_force(inst)
    values = {m: solve(inst, m).objective for m in BOUNDS}
    for m, v in values.items():
        assert v >= best - 1e-6, (m, v, best)
    assert values["bound-energy"] <= values["bound-lp"] + 1e-6
    assert values["bound-lp"] <= values["ideal"] + 1e-6


@pytest.mark.parametrize("seed", range(3))
def test_bounds_on_paper_instances(seed: int) -> None:
    inst = generate_admission(seed, jobs=30)
    values = {m: solve(inst, m) for m in BOUNDS}
    assert all(s.status == "bound" for s in values.values())
    heuristic = solve(inst, "edf-greedy").objective
    assert heuristic <= values["bound-energy"].objective + 1e-6
    assert values["bound-energy"].objective <= values["bound-lp"].objective + 1e-6 <= values["ideal"].objective + 2e-6
