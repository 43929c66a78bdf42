"""What a solution claims besides its decision, checked alike by every kind's ``verify``.

Each problem package's independent ``verify`` recomputes the objective from the decision
alone. The rules here tie the solution's other claims (status, objective, bound) to that
value, the same for every kind, in the objective sense the instance declares (``SENSE``,
:mod:`mropt.model.sense`); they share nothing with the methods:

* **No decision.** Status ``bound`` is a bound-only result (``ideal``, ``bound-lp``: a
  relaxation's value, not a plan): its objective must be a finite number, and nothing is
  recomputed. Status ``error``, ``infeasible`` or ``time_limit`` decided nothing: an
  objective, if one is claimed, must be the value of the empty decision (0 for every kind
  so far: nothing accepted, allocated or reserved). ``optimal`` and ``feasible`` claim a
  plan: each kind's ``verify`` checks its decision (admission's empty decision, accepting
  nothing, is a plan worth 0).
* **A decision.** The claimed objective is compared with the value recomputed from it,
  whatever the status (a ``bound``-status solution that carries a decision claims its
  value too; the bound goes in ``bound``). A ``bound`` must lie on its side of that value:
  at or above it when maximising, at or below it when minimising; under status ``optimal``
  it must equal it. Both within ``OBJECTIVE_RTOL`` relative, plus the kind's absolute
  floor ``atol`` derived from the data (docs/tolerances.md).
"""

from __future__ import annotations

import math

from mropt.model.sense import MAXIMISE, check_sense
from mropt.model.solution import Solution
from mropt.model.tolerance import OBJECTIVE_RTOL

#: statuses that decide nothing when the solution carries no decision
UNDECIDED_STATUSES = ("error", "infeasible", "time_limit")


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _slack(a: float, b: float, atol: float) -> float:
    return OBJECTIVE_RTOL * max(abs(a), abs(b)) + atol


def without_decision(solution: Solution, *, empty_value: float = 0.0, atol: float = 0.0) -> list[str] | None:
    """Problems of a solution that carries no decision, or None when its status claims a plan.

    ``empty_value`` is what the kind's empty decision is worth; ``atol`` the kind's
    absolute floor for comparing objectives (see the module docstring).
    """
    status, objective, bound = solution.status, solution.objective, solution.bound
    problems: list[str] = []
    if bound is not None and not _finite(bound):
        problems.append(f"bound must be a finite number, got {bound!r}")
    if status == "bound":
        if not _finite(objective):
            problems.append(f"status 'bound' (a bound-only result) needs a finite objective, got {objective!r}")
        return problems
    if status not in UNDECIDED_STATUSES:
        return None
    if objective is not None and not (
        _finite(objective) and abs(objective - empty_value) <= _slack(objective, empty_value, atol)
    ):
        problems.append(
            f"objective {objective!r} claimed with no decision (status {status!r}); "
            f"an empty decision gives {empty_value:g}"
        )
    return problems


def bound_problems(sense: str, solution: Solution, value: float, *, atol: float = 0.0) -> list[str]:
    """Problems of ``solution.bound`` against ``value``, the objective recomputed from its decision."""
    bound = solution.bound
    if bound is None:
        return []
    if not _finite(bound):
        return [f"bound must be a finite number, got {bound!r}"]
    slack = _slack(value, bound, atol)
    if check_sense(sense) == MAXIMISE and value - bound > slack:
        return [f"bound {bound:g} is below the objective {value:g} recomputed from the decision (maximisation)"]
    if sense != MAXIMISE and bound - value > slack:
        return [f"bound {bound:g} is above the objective {value:g} recomputed from the decision (minimisation)"]
    if solution.status == "optimal" and abs(bound - value) > slack:
        return [f"status 'optimal' but bound {bound:g} is not the objective {value:g} recomputed from the decision"]
    return []
