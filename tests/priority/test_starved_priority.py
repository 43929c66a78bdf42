"""mpsa-exact with each solver call stopped at once.

``mpsa-exact`` proves its optimum with its own dynamic programme and calls no solver
(mropt/priority/exact.py): a run counts no solver call, so no stopped solve can turn
into a claim; its bound (a minimisation: a lower bound) is checked against the optimum
computed by hand in tests/priority/test_methods.py.
"""

from __future__ import annotations

import pytest

from mropt.model.priority import Priority, PriorityInstance

from starved_runs import checked_methods, false_claims, starved_runs

#: M = 10, R = 5, lambda = 0, T = 100/x + 50/y <= 45: 7 slots at best ((4, 3) or (5, 2); test_methods.py)
INSTANCE = PriorityInstance(
    10,
    5,
    (Priority("P", 45, arrival_rate=0, map_work=100, reduce_work=50),),
    routing={"q11": 0.0, "q12": 1.0, "q21": 0.0},
)


@pytest.mark.parametrize("method", checked_methods("priority"))
def test_no_false_optimum_or_bound_when_any_solver_call_stops(method: str) -> None:
    runs = starved_runs(INSTANCE, method)
    assert not false_claims(INSTANCE, runs, 7.0)
    assert runs[0][1].status == "optimal" and runs[0][1].bound == 7.0
