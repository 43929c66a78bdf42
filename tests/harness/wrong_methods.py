"""Wrong "exact" methods for the tests of refuted bounds; registered when imported.

Each returns a plan that ``verify`` accepts, claimed ``optimal`` with its own objective as
the bound, although a heuristic verifies a better plan of the same instance: the proof is
wrong. The test that imports this module (an experiment's ``imports``, so the worker
processes register the methods too) removes them from the registry afterwards.
"""

from __future__ import annotations

from mropt.model.solution import Solution
from mropt.registry import mropt_solver, register

EMPTY_OPTIMAL = "test-empty-optimal"
ONE_SLOT_MORE = "test-one-slot-more"


@register(EMPTY_OPTIMAL, kind="admission", exact=True, summary="the empty plan claimed optimal with bound 0 (wrong)")
def empty_optimal(instance, *, time_limit=None, seed=0):
    return Solution(
        method=EMPTY_OPTIMAL,
        status="optimal",
        objective=0.0,
        bound=0.0,
        accepted=(),
        sequence=(),
        solver=mropt_solver(),
    )


@register(
    ONE_SLOT_MORE,
    kind="priority",
    exact=True,
    summary="mpsa's allocation plus one map slot for the first priority, claimed optimal (wrong)",
)
def one_slot_more(instance, *, time_limit=None, seed=0):
    """More slots only shorten sojourns (MPSA eq. 16), so the plan stays valid, one slot worse than mpsa's."""
    from mropt.priority.forecast import planning_load
    from mropt.priority.mpsa import allocation_solution, mpsa_slots
    from mropt.priority.queueing import routing_of

    xs, ys, _ = mpsa_slots(instance)
    xs = [xs[0] + 1, *xs[1:]]
    total = float(sum(xs) + sum(ys))
    return allocation_solution(
        instance, routing_of(instance), planning_load(instance), xs, ys, status_if_feasible="optimal", bound=total
    )
