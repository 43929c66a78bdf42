"""Integer leximin levels in exact arithmetic: each level is a set of task-count thresholds.

The integer methods (``drf-milp``) prove every leximin level by integer reasoning, never by
a solver's float value of it. A user ``i`` with ``x_i`` whole tasks has the weighted dominant
share ``y_i = c_i x_i`` with ``c_i = max_j (D_ij / r_j) / w_i`` (DDRF sec. 3.1), computed here
as an exact fraction of the data's decimal text (as :mod:`mropt.fairness.verify` reads it).
So a share level ``v`` is a whole number of tasks per user: ``y_i >= v`` iff
``x_i >= ceil(v / c_i)`` and ``y_i > v`` iff ``x_i >= floor(v / c_i) + 1``, and "the k-th
smallest share is at least ``v``" (``>`` alike) iff at least ``n - k + 1`` users pass their
threshold (:class:`Requirement`). Leximin maximises the k-th smallest share ``v_k`` for
k = 1..n in turn with the earlier ones held (sorting the vector: Bouveret and Lemaitre 2009,
"Computing leximin-optimal solutions in constraint networks", sec. 3):

* the incumbent (first the empty allocation) has a k-th smallest share ``g``, exact;
* a solver is asked for an allocation that keeps ``v_1..v_{k-1}`` and beats ``g``
  (thresholds ``floor(g / c_i) + 1``); what it returns is checked exactly (whole tasks,
  capacities within ``CAPACITY_RTOL``, the levels held, ``g`` beaten) and becomes the
  incumbent, and the question is asked again;
* level k is proven when the solver proves that question infeasible (or too few users can
  pass a threshold at all: no solve), and ``v_k = g`` is then held by the thresholds
  ``ceil(v_k / c_i)``.

The solver's model holds integer thresholds and the capacity rows normalised to 1, never a
level's value: a level of 2.5e-7 (weights 1e6 apart) is one task of one user, as visible
as any other. A question may be *steered* by an objective (:meth:`ExactLevels.guide`, the
k-th cumulative sum of Ogryczak and Sliwinski 2006, in units of the level), so that its
answer is the best one and most levels take two solves; its rows hold floats of any
magnitude, so a steered "infeasible" proves nothing (CBC called a steered question with an
obvious answer infeasible, coefficients 1e24 apart) and is asked again unsteered. Only an
unsteered question (thresholds and capacities alone) proves a level, and after an answer
that was best for its objective the next question goes unsteered at once.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

import numpy as np

from mropt.model.fairness import FairnessInstance
from mropt.model.tolerance import CAPACITY_RTOL

Values = tuple[np.ndarray, np.ndarray | None]  # (tasks per user, tasks per user and node or None)
_GUIDE_MAX = 2.0**20  # the largest r_k of a steering objective, in units of the level (ExactLevels.guide)


def _q(value: float) -> Fraction:
    """A number as its decimal text means it (what verify recomputes with)."""
    return Fraction(repr(float(value)))


def share_coefficients(instance: FairnessInstance) -> list[Fraction]:
    """Each user's weighted dominant share per task, ``c_i = max_j (D_ij / r_j) / w_i``, exactly (> 0)."""
    names = instance.resource_names
    return [
        max(_q(u.demand.get(r, 0.0)) / _q(instance.resources[r]) for r in names) / _q(u.weight) for u in instance.users
    ]


@dataclass(frozen=True)
class Requirement:
    """At least ``count`` users ``i`` hold ``x_i >= need[i]`` tasks (``None``: user i cannot)."""

    need: tuple[int | None, ...]
    count: int

    def met(self, tasks: np.ndarray) -> bool:
        """Whether whole task counts ``tasks`` meet it."""
        return sum(1 for t, k in zip(tasks, self.need) if k is not None and t >= k) >= self.count


class ExactLevels:
    """The exact data of an instance for its integer leximin: share coefficients, caps, capacities."""

    def __init__(self, instance: FairnessInstance) -> None:
        self.n, self.nodes = instance.n, len(instance.node_ids) if instance.nodes is not None else None
        self.ub = [int(b) for b in instance.task_bound()]
        names = instance.resource_names
        self.cap = [_q(instance.resources[r]) * (1 + Fraction(repr(CAPACITY_RTOL))) for r in names]
        self.demand = [[_q(u.demand.get(r, 0.0)) for r in names] for u in instance.users]
        self.node_cap = [
            [_q(nd.capacity.get(r, 0.0)) * (1 + Fraction(repr(CAPACITY_RTOL))) for r in names]
            for nd in instance.nodes or ()
        ]
        self.coef = share_coefficients(instance)  # > 0: every user asks for some resource, every weight is > 0
        self.top = sorted(c * b for c, b in zip(self.coef, self.ub))  # each user's largest share, ascending

    def empty(self) -> Values:
        """The allocation of no task (valid for every instance)."""
        return np.zeros(self.n), None if self.nodes is None else np.zeros((self.n, self.nodes))

    def shares(self, tasks: np.ndarray) -> list[Fraction]:
        """The sorted weighted dominant shares of whole task counts, exactly."""
        return sorted(c * int(t) for c, t in zip(self.coef, tasks))

    def requirement(self, level: Fraction, k: int, *, strict: bool) -> Requirement:
        """The k-th smallest share at least ``level`` (above it when ``strict``) as thresholds."""
        need: list[int | None] = []
        for c, b in zip(self.coef, self.ub):
            t = level / c
            least = math.floor(t) + 1 if strict else math.ceil(t)
            need.append(least if least <= b else None)
        return Requirement(tuple(need), self.n - k + 1)

    def possible(self, req: Requirement) -> bool:
        """Enough users could pass their thresholds on their own (else no allocation meets ``req``)."""
        return sum(k is not None for k in req.need) >= req.count

    def problem(self, values: Values, held: list[Requirement]) -> str | None:
        """Why whole task counts ``values`` are not a valid allocation meeting ``held``, or None."""
        tasks, per_node = values
        if any(t < 0 or t > b for t, b in zip(tasks, self.ub)):
            return "a task count outside [0, max tasks]"
        rows = [(self.cap, tasks)] + ([] if per_node is None else list(zip(self.node_cap, per_node.T)))
        for cap, x in rows:
            for j, limit in enumerate(cap):
                if sum((int(t) * self.demand[i][j] for i, t in enumerate(x) if t), Fraction(0)) > limit:
                    return "breaks a capacity"
        for k, req in enumerate(held, 1):
            if not req.met(tasks):
                return f"gives up a held level ({k})"
        return None

    def guide(self, req: Requirement, k: int) -> tuple[np.ndarray, float]:
        """The objective's share coefficients and the largest ``r_k``, in units of the level.

        The unit is the least share an allocation meeting ``req`` can have at rank k (the
        smallest ``c_i need_i``), so the cumulative sum ``S_k`` is at least 1 unit; a
        coefficient above twice the largest ``r_k`` (the k-th smallest of the users' largest
        shares) is capped there, which leaves ``S_k`` of every integer allocation unchanged (a
        user holding a task is then above ``r_k``). ``r_k`` is also held below ``_GUIDE_MAX``
        units (the objective then only saturates for allocations above it), so no coefficient
        exceeds 2**21 (whatever the data: weights 1e-100 and 1e100 put ratios of 1e300 apart). The
        ratios are exact fractions, capped, then rounded once to floats: the weights or
        a resource in other units (every ``c_i`` times one factor) give the same floats (or,
        where a conversion's float noise changes the data's decimal text, floats one rounding
        apart, below the 12 digits PuLP writes), so CBC reads the same model and breaks a tie
        between leximin-optimal allocations alike.
        (A unit of a power of two at or below the least share left a factor in [1, 2) that
        depended on the units: weights 2000, 1, 2000 wrote coefficients 2.048, 4.096, 1.024;
        times 10, 3.2768, 6.5536, 1.6384, and CBC returned {u2: 2} against {u0: 1}, two
        allocations with the same sorted shares.)
        """
        least = min(c * t for c, t in zip(self.coef, req.need) if t is not None and t > 0)
        # capped as fractions, then rounded (rounding is monotone: the floats of the capped values
        # are the capped floats), so no ratio beyond a float's range is ever made a float
        r = min(self.top[k - 1] / least, Fraction(_GUIDE_MAX))
        return np.array([float(min(c / least, 2 * r)) for c in self.coef]), float(r)


@dataclass
class Probe:
    """One solve: ``found`` (the solver finished with a solution of the question),
    ``infeasible`` (proven: the question has none), ``stopped`` (a limit; ``values`` if a
    solution was found) or ``error``."""

    outcome: str
    values: Values | None = None
    message: str = ""


class ThresholdModel(Protocol):
    """What :func:`leximin_by_thresholds` needs from a solver back end."""

    def solve(self, held: list[Requirement], beat: Requirement, k: int, stop_at: float | None, *, steer: bool) -> Probe:
        """An allocation meeting every ``held`` requirement and ``beat``; with ``steer``, the best
        for level k's objective (:meth:`ExactLevels.guide`), else any (the model holds no float
        of a level: its "infeasible" proves the level)."""


@dataclass
class LeximinRun:
    """The outcome: status, the best valid allocation, the proven levels ``v_1..`` (exact), solves."""

    status: str
    values: Values | None
    levels: list[Fraction]
    solves: int
    message: str = ""


def leximin_by_thresholds(model: ThresholdModel, data: ExactLevels, stop_at: float | None) -> LeximinRun:
    """Prove the leximin levels one by one (module docstring); ``optimal`` only when all are proven."""
    n = data.n
    best = data.empty()
    run = LeximinRun("optimal", None, [], 0)
    held: list[Requirement] = []
    for k in range(1, n + 1):
        level, steer = data.shares(best[0])[k - 1], True
        while True:
            beat = data.requirement(level, k, strict=True)
            if not data.possible(beat):
                break  # no allocation beats it: proven without a solve
            probe = model.solve(held, beat, k, stop_at, steer=steer)
            run.solves += int(probe.outcome != "error")
            if probe.outcome == "infeasible":
                if not steer:
                    break  # proven
                steer = False  # a steered model proves nothing: ask again without the objective
                continue
            why = None
            if probe.values is not None:
                why = data.problem(probe.values, held)
                if why is None and not beat.met(probe.values[0]):
                    why = f"does not beat level {k}"
                if why is None:
                    best = probe.values
                    level = data.shares(best[0])[k - 1]
                    steer = not steer  # after the objective's best, the next answer is likely "none"
            if probe.outcome == "found" and why is None:
                continue
            if probe.outcome == "found" and steer:
                steer = False  # the steered model's answer is not valid: ask again without the objective
                continue
            if probe.outcome == "found":
                run.status, run.message = "feasible", f"level {k}: the solver's solution {why}; stopped"
            else:
                run.status, run.message = ("time_limit" if probe.outcome == "stopped" else "error"), probe.message
            run.values = best if k > 1 or best[0].any() else None
            return run
        run.levels.append(level)
        hold = data.requirement(level, k, strict=False)
        if level > 0 and (not run.levels[:-1] or level != run.levels[-2]):
            held.append(hold)  # an equal earlier level holds more users at the same threshold
        if stop_at is not None and time.perf_counter() >= stop_at and k < n:
            run.status, run.message = "time_limit", f"stopped after level {k} of {n}"
            break
    run.values = best
    return run
