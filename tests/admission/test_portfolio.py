"""``cpsat-portfolio``.

The registry-driven tests (``test_exact.py``, ``test_exact_properties.py``,
``test_starved_admission.py``) run the portfolio with its defaults, where the Benders
probe proves their small instances alone; here its direct-model phase runs (a probe of
0 or 1 master solves), with the probe's cuts and bound shared, against the brute force.
"""

from __future__ import annotations

import pytest

from mropt.admission.verify import verify
from mropt.instances.admission_gen import generate_admission
from mropt.registry import solve

from brute_force import brute_force
from starved_runs import false_claims, starved_runs
from test_cpsat_direct import released_instance, tied_instance
from test_exact import irrational_instance, random_instance

#: small instances of every family the exact tests use: submit times, tied deadlines, off-grid times
FAMILIES = {
    "tight": lambda s: random_instance(s, 7, releases=s % 2 == 1),
    "released": lambda s: released_instance(s, 6),
    "tied": tied_instance,
    "off-grid": lambda s: irrational_instance(300 + s, 6),
}


def phase_names(sol) -> list[str]:  # noqa: ANN001
    return [p["phase"] for p in sol.details["phases"]]


@pytest.mark.parametrize("probe", [0, 1])
def test_direct_phase_with_shared_cuts_and_bound_proves_the_brute_force_optimum(probe: int) -> None:
    """The direct model, given the probe's no-good cuts as clauses and its bound as an objective cap,
    proves the optimum of every small instance; runs reach it with cuts to share, and off the time
    grid through its relaxation."""
    reached = shared = 0
    passes: set[str] = set()
    for family, make in FAMILIES.items():
        for seed in range(6):
            inst = make(seed)
            best, _ = brute_force(inst)
            sol = solve(inst, "cpsat-portfolio", probe_iterations=probe)
            label = (family, seed, sol.details["phases"])
            assert (sol.status, sol.objective, sol.bound) == ("optimal", best, best), label
            assert verify(inst, sol).ok, label
            direct = [p for p in sol.details["phases"] if p["phase"] == "direct model"]
            reached += bool(direct)
            shared += bool(direct and direct[0]["shared_cuts"])
            passes.update(status.split(":")[0] for p in direct for status in p["cp_status"])
    assert reached >= 6 and {"exact", "relaxed"} <= passes if probe == 0 else shared >= 2, (reached, shared, passes)


def test_no_false_claim_when_a_direct_phase_call_stops() -> None:
    """Every solver call of runs that reach the direct phase, stopped in turn (tests/starved_runs.py)."""
    for seed in (8, 12):
        inst = random_instance(seed, 8)
        best, _ = brute_force(inst)
        runs = starved_runs(inst, "cpsat-portfolio", probe_iterations=1)
        assert "direct model" in phase_names(runs[0][1]), runs[0][1].details
        assert not false_claims(inst, runs, best), seed


def test_same_answer_twice_under_a_deterministic_budget() -> None:
    """AMB Table 2, N = 40, seed 2 (the Benders master stalls there): a run cut short by its
    deterministic budget (``max_dtime``) ends at the same point every time: plan, bound, details."""
    inst = generate_admission(2, jobs=40)
    params = {"probe_iterations": 3, "direct_dtime": 0.02, "max_dtime": 0.08}
    first, second = (solve(inst, "cpsat-portfolio", time_limit=60, **params) for _ in range(2))
    assert first.status == "time_limit" and first.details["stopped_early"], first.details
    assert phase_names(first) == ["benders probe", "direct model", "benders"]
    assert (first.objective, first.bound, first.accepted, first.sequence) == (
        second.objective,
        second.bound,
        second.accepted,
        second.sequence,
    )
    assert first.details == second.details
    assert verify(inst, first).ok and first.objective < first.bound
