"""``verify`` rejects self-contradictory solutions, for every kind.

Each case below was accepted before (exit 0, "ok ... recomputed" though nothing was
recomputed): a ``bound``-status admission answer claiming ten times its plan's value plus
100, an ``infeasible`` or ``error`` answer with nothing decided and a non-zero objective,
``optimal`` with a bound below the verified objective, a priority ``time_limit`` with an
empty allocation and objective 1. The rules (``mropt.model.claims``): a claimed objective
is always the decision's value (0 for an empty one); a bound lies on its side of it in the
kind's sense (``SENSE``: admission and fairness maximise, priority minimises) and equals
it under ``optimal``; only a bound-only result with no decision keeps an objective that
nothing recomputes. Every rejection is checked in the library and through ``mropt verify``
(exit 1, one line); "recomputed" is printed only when an objective was.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import mropt
from mropt.model.solution import Solution

from cli_capture import run_cli

ADMISSION = mropt.generate_admission(seed=1, jobs=8)
FAIRNESS = mropt.generate_fairness(seed=1, users=4)
PRIORITY = mropt.generate_priority(seed=1, workload_scale=0.1)
INSTANCES = {"admission": ADMISSION, "fairness": FAIRNESS, "priority": PRIORITY}
# a valid plan of each kind, with a positive verified value (checked in test_the_plans_verify)
PLANS = {
    "admission": mropt.solve(ADMISSION, "edf-greedy"),
    "fairness": mropt.solve(FAIRNESS, "drf"),
    "priority": mropt.solve(PRIORITY, "mpsa"),
}

Tamper = Callable[[Solution], Solution]


def _set(**changes: Any) -> Tamper:
    return lambda s: dataclasses.replace(s, **changes)


def _undecided(status: str, objective: float | None) -> Tamper:
    """The plan's decision removed (no accepted jobs, no allocation), with this status and objective."""
    return lambda s: dataclasses.replace(s, status=status, objective=objective, accepted=(), sequence=None, decision={})


def _scaled(status: str) -> Tamper:
    return lambda s: dataclasses.replace(s, status=status, objective=10 * s.objective + 100)


def _bound(status: str, offset: float) -> Tamper:
    return lambda s: dataclasses.replace(s, status=status, bound=s.objective + offset)


REJECTED: list[tuple[str, str, Tamper, str]] = [
    # (kind, case, tamper, phrase of the one problem)
    ("admission", "bound status, x10 + 100, plan left in place", _scaled("bound"), "objective"),
    ("admission", "infeasible, nothing accepted, objective 5", _undecided("infeasible", 5.0), "no decision"),
    ("admission", "error, nothing accepted, objective 5", _undecided("error", 5.0), "no decision"),
    ("admission", "time_limit, nothing accepted, objective 1", _undecided("time_limit", 1.0), "no decision"),
    ("admission", "optimal, bound below the objective", _bound("optimal", -100.0), "below"),
    ("admission", "feasible, bound below the objective", _bound("feasible", -100.0), "below"),
    ("admission", "optimal, bound above the objective", _bound("optimal", 100.0), "optimal"),
    ("admission", "bound status without a number", _undecided("bound", None), "finite objective"),
    ("fairness", "bound status, x10 + 100, allocation left", _scaled("bound"), "objective"),
    ("fairness", "infeasible, no allocation, objective 0.5", _undecided("infeasible", 0.5), "no decision"),
    ("fairness", "error, no allocation, objective 0.5", _undecided("error", 0.5), "no decision"),
    ("fairness", "optimal, bound below the objective", _bound("optimal", -0.05), "below"),
    ("fairness", "time_limit, bound below the objective", _bound("time_limit", -0.05), "below"),
    ("priority", "time_limit, empty allocation, objective 1", _undecided("time_limit", 1.0), "no decision"),
    ("priority", "bound status, x10 + 100, allocation left", _scaled("bound"), "objective"),
    ("priority", "feasible, bound above the objective", _bound("feasible", 5.0), "above"),
    ("priority", "optimal, bound below the objective", _bound("optimal", -5.0), "optimal"),
]

ACCEPTED: list[tuple[str, str, Tamper, bool]] = [
    # (kind, case, tamper, recomputed?)
    ("admission", "bound-only result with no decision", _undecided("bound", 1234.5), False),
    ("admission", "error with nothing claimed", _undecided("error", None), False),
    ("admission", "infeasible claiming 0", _undecided("infeasible", 0.0), False),
    ("admission", "feasible, bound above", _bound("feasible", 100.0), True),
    ("admission", "optimal, bound equal", _bound("optimal", 0.0), True),
    ("fairness", "time_limit with nothing claimed", _undecided("time_limit", None), False),
    ("fairness", "time_limit, bound above", _bound("time_limit", 0.05), True),
    ("priority", "error with nothing claimed", _undecided("error", None), False),
    ("priority", "feasible, bound below (a lower bound)", _bound("feasible", -5.0), True),
]


def test_the_plans_verify() -> None:
    for kind, sol in PLANS.items():
        verdict = mropt.verify(INSTANCES[kind], sol)
        assert verdict.ok and verdict.checked_schedule and sol.objective > 0, (kind, verdict.problems)


def _files(tmp_path: Path, kind: str, sol: Solution) -> tuple[Path, Path]:
    inst_path, sol_path = tmp_path / "instance.json", tmp_path / "solution.json"
    inst_path.write_text(json.dumps(INSTANCES[kind].to_dict()))
    data = sol.to_dict()
    if kind == "priority" and not sol.decision.json_fields().get("allocation"):
        data["allocation"] = {}  # the case: an empty allocation written out
    sol_path.write_text(json.dumps(data))
    return inst_path, sol_path


@pytest.mark.parametrize("kind, case, tamper, phrase", REJECTED, ids=[f"{k}: {c}" for k, c, _, _ in REJECTED])
def test_a_self_contradictory_solution_is_rejected(tmp_path, kind, case, tamper, phrase) -> None:
    sol = tamper(PLANS[kind])
    verdict = mropt.verify(INSTANCES[kind], sol)
    assert not verdict.ok and len(verdict.problems) == 1 and phrase in verdict.problems[0], verdict.problems
    result = run_cli("verify", *_files(tmp_path, kind, sol))
    assert result.code == 1 and result.out == "", (result.out, result.err)
    assert result.err_lines == [f"mropt verify: {verdict.problems[0]}"]


@pytest.mark.parametrize("kind, case, tamper, recomputed", ACCEPTED, ids=[f"{k}: {c}" for k, c, _, _ in ACCEPTED])
def test_a_consistent_solution_is_accepted_and_recomputed_only_when_it_was(
    tmp_path, kind, case, tamper, recomputed
) -> None:
    sol = tamper(PLANS[kind])
    verdict = mropt.verify(INSTANCES[kind], sol)
    assert verdict.ok, verdict.problems
    assert verdict.checked_schedule == recomputed and (verdict.objective is not None) == recomputed
    result = run_cli("verify", *_files(tmp_path, kind, sol))
    assert result.code == 0 and result.err == "", result.err
    assert ("recomputed" in result.out) == recomputed, result.out
    if not recomputed:
        assert "nothing to recompute" in result.out, result.out
