"""Test-only: run a method with each of its solver calls stopped at once, one at a time.

:func:`starved_runs` counts the solver calls of an unstarved run
(:func:`mropt.backends.starve.starved` with no selection), then reruns the method with
call k stopped at once, for every k. :func:`false_claims` checks each result against an
outside optimum (a brute force or a hand computation): a result is ``optimal`` only if
its objective is the optimum, and its bound is never past the optimum (below it when
maximising, above when minimising; ``mropt.model.sense``). Shared by the kinds'
``test_starved_*.py``.
"""

from __future__ import annotations

import re
from typing import Any

from mropt.backends.starve import starved
from mropt.model.io import objective_sense
from mropt.model.sense import MAXIMISE
from mropt.model.solution import Solution
from mropt.model.tolerance import same_value, within
from mropt.registry import methods, solve

#: the time limit of every run: far above what the small instances need, so only the
#: injected stops cut a run short
TIME_LIMIT = 60.0


def checked_methods(kind: str) -> list[str]:
    """The registry's exact methods and bounds of ``kind``: every method that claims a proof."""
    return [m.name for m in methods(kind) if m.exact or m.bound]


def starved_runs(instance: Any, method: str, **params: Any) -> list[tuple[str, Solution]]:
    """(label, solution) of the unstarved run, then of the run with call k stopped, k = 1, 2, ..."""
    with starved() as counted:
        runs = [("no call stopped", solve(instance, method, time_limit=TIME_LIMIT, **params))]
    for k in range(1, counted.calls + 1):
        with starved({k}) as run:
            sol = solve(instance, method, time_limit=TIME_LIMIT, **params)
        assert run.starved, f"{method}: call {k} of {counted.calls} never made (the calls are not deterministic)"
        runs.append((f"call {k} of {counted.calls} ({run.starved[0][1]}) stopped", sol))
    return runs


def bound_holds(sense: str, bound: float, optimum: float) -> bool:
    """``bound`` is not past ``optimum`` (within OBJECTIVE_RTOL, relative)."""
    return within(bound, optimum) if sense == MAXIMISE else within(optimum, bound)


def false_claims(instance: Any, runs: list[tuple[str, Solution]], optimum: float) -> list[str]:
    """One line per false claim of ``runs`` (empty: none): an optimum that is not, a bound past the optimum."""
    sense = objective_sense(instance.kind)
    problems = []
    for label, sol in runs:
        if sol.status == "error" and re.match(r"[A-Z]\w*: ", str(sol.details.get("error", ""))):
            problems.append(f"{sol.method}, {label}: raised {sol.details['error']}")  # mropt.registry.solve caught it
        if sol.status == "optimal" and not (sol.objective is not None and same_value(sol.objective, optimum)):
            problems.append(f"{sol.method}, {label}: optimal {sol.objective}, but the optimum is {optimum}")
        if sol.bound is not None and not bound_holds(sense, sol.bound, optimum):
            problems.append(f"{sol.method}, {label}: bound {sol.bound} past the optimum {optimum} ({sol.status})")
    return problems
