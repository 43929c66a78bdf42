"""Independent check of a fairness solution (DESIGN.md: ``verify``).

Shares no code with the methods or with :mod:`mropt.fairness.metrics`: it reads the
decision (``allocation``, optional ``placement`` and ``order``) from the Solution,
recomputes everything from the raw instance fields in exact rational arithmetic
(:class:`fractions.Fraction` of the decimal text of each number), and reports:
unknown or missing users, negative or (for integer methods) fractional task counts,
caps (``max_tasks``) exceeded, aggregate capacity exceeded (sec. 3.1: ``C <= R``),
with nodes a placement that does not add up to the allocation or exceeds a node's
capacity, an ``order`` that does not launch exactly the allocation, and claimed
``dominant_shares``, ``utilisation`` and objective (minimum weighted dominant share)
that differ from the recomputed ones.

Continuous DRF (``drf-lp``) may allocate fractions of tasks.

Tolerances: the documented ones (``docs/tolerances.md``; the methods read them from
:mod:`mropt.model.tolerance`), written here separately as exact fractions and all
relative, so the verdict is the same when a resource's capacities and demands, or the
weights, are expressed in other units. A use fits a capacity ``c`` when it is at most
``c * (1 + 1e-9)`` (``CAPACITY_RTOL``; aggregate and per node, integer and continuous
alike); a claimed share, utilisation or objective ``v`` matches the recomputed ``e``
when ``|v - e| <= 1e-9 * max(|v|, |e|)`` (``OBJECTIVE_RTOL``; so a recomputed 0 must
be claimed as 0). Task counts are unit-free: a placement must add up to the allocation
within 1e-9 of the count (at least of one task).

What the solution claims besides its decision follows :mod:`mropt.model.claims`, as for
every kind: without an allocation, ``error``, ``infeasible`` and ``time_limit`` may claim
no objective or 0 (no tasks: every share is 0) and ``bound`` only a finite number; with
one, the claimed objective is the recomputed minimum whatever the status, and a bound
lies at or above it (maximisation), equal under ``optimal``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from mropt.model.claims import bound_problems, without_decision
from mropt.model.fairness import FairnessInstance, FairNode, User
from mropt.model.solution import Solution, Verdict

_CONTINUOUS = ("drf-lp",)
_CAPACITY_RTOL = Fraction(1, 10**9)  # docs/tolerances.md: CAPACITY_RTOL
_OBJECTIVE_RTOL = Fraction(1, 10**9)  # docs/tolerances.md: OBJECTIVE_RTOL


@dataclass
class FairnessVerdict(Verdict):
    """What ``verify`` found: the common fields and the recomputed weighted dominant shares."""

    shares: dict[str, float] = field(default_factory=dict)


def _q(value: Any) -> Fraction:
    return Fraction(repr(float(value)))


def _close(claimed: Any, exact: Fraction) -> bool:
    """A claimed number equals the exact one within the relative OBJECTIVE_RTOL."""
    if isinstance(claimed, bool) or not isinstance(claimed, (int, float)) or not math.isfinite(claimed):
        return False
    value = _q(claimed)
    return abs(value - exact) <= _OBJECTIVE_RTOL * max(abs(value), abs(exact))


def _fits(amount: Fraction, capacity: Fraction) -> bool:
    return amount <= capacity * (1 + _CAPACITY_RTOL)


def _number(value: Any) -> bool:
    """A finite JSON number (not a boolean): what a claimed count, share or utilisation must be."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _f(value: Fraction) -> float:
    """A Fraction as a float for messages and verdicts: +-inf beyond the float range, never OverflowError."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def verify(instance: FairnessInstance, solution: Solution, *, continuous: bool | None = None) -> FairnessVerdict:
    """Recompute the allocation's feasibility, shares and objective; see the module docstring."""
    verdict = FairnessVerdict()
    if not solution.decision.get("allocation"):  # none, or {} (a solution file read without one)
        undecided = without_decision(solution, empty_value=0.0)
        if undecided is not None:  # a bound-only result, or nothing decided: nothing to recompute
            verdict.problems.extend(undecided)
            return verdict
    if continuous is None:
        continuous = solution.method in _CONTINUOUS
    problems = verdict.problems
    alloc = solution.decision.get("allocation")
    if not isinstance(alloc, Mapping):
        problems.append("solution has no 'allocation' object (user -> tasks)")
        return verdict
    users = {u.id: u for u in instance.users}
    tasks = _task_counts(alloc, users, continuous, problems)
    if problems:
        return verdict
    _check_capacity(instance, users, tasks, problems)
    if instance.nodes is not None and any(tasks.values()):
        _check_placement(instance, solution.decision.get("placement"), users, tasks, continuous, problems)
    _check_order(solution.decision.get("order"), users, tasks, problems)
    weighted = _check_shares(instance, solution.decision.get("dominant_shares") or {}, users, tasks, verdict)
    _check_utilisation(instance, solution.decision.get("utilisation") or {}, users, tasks, problems)
    _check_objective(instance, solution, min(weighted), verdict)
    return verdict


def _task_counts(
    alloc: Mapping[Any, Any], users: Mapping[str, User], continuous: bool, problems: list[str]
) -> dict[str, Fraction]:
    """Each user's allocated task count, exact: known users only, every user present, a number >= 0,
    whole unless continuous, within ``max_tasks`` (DDRF sec. 3.1's allocation x_i)."""
    for uid in alloc:
        if uid not in users:
            problems.append(f"allocation names unknown user {uid!r}")
    tasks: dict[str, Fraction] = {}
    for uid, user in users.items():
        raw = alloc.get(uid)
        if raw is None:
            problems.append(f"allocation misses user {uid!r}")
            continue
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw) or raw < 0:
            problems.append(f"user {uid!r}: allocation must be a number >= 0, got {raw!r}")
            continue
        count = _q(raw)
        if not continuous and count.denominator != 1:
            problems.append(f"user {uid!r}: allocation must be a whole number of tasks, got {raw!r}")
        if user.max_tasks is not None and count > user.max_tasks:
            problems.append(f"user {uid!r}: {raw} tasks exceed max_tasks {user.max_tasks}")
        tasks[uid] = count
    return tasks


def _use(resource: str, users: Mapping[str, User], tasks: Mapping[str, Fraction]) -> Fraction:
    """The exact amount of ``resource`` the allocation uses: sum over users of x_i D_ir (DDRF sec. 3.1)."""
    return sum((tasks[u] * _q(users[u].demand.get(resource, 0)) for u in users), Fraction(0))


def _check_capacity(
    instance: FairnessInstance, users: Mapping[str, User], tasks: Mapping[str, Fraction], problems: list[str]
) -> None:
    """The aggregate capacity constraint C <= R of DDRF sec. 3.1, per resource, within CAPACITY_RTOL."""
    for r, total in instance.resources.items():
        need = _use(r, users, tasks)
        if not _fits(need, _q(total)):
            problems.append(f"resource {r!r}: allocation uses {_f(need):g} of capacity {total:g}")


def _check_placement(
    instance: FairnessInstance,
    placement: Any,
    users: Mapping[str, User],
    tasks: Mapping[str, Fraction],
    continuous: bool,
    problems: list[str],
) -> None:
    """With nodes (DDRF sec. 2, fine-grained allocation): the placement adds up to each user's
    allocation and fits every node's capacity."""
    if not isinstance(placement, dict):
        problems.append("instance has nodes but the solution gives no 'placement' (user -> node -> tasks)")
        return
    assert instance.nodes is not None
    nodes = {nd.id: nd for nd in instance.nodes}
    load: dict[str, dict[str, Fraction]] = {v: {} for v in nodes}
    for uid, where in placement.items():
        if uid not in users or not isinstance(where, dict):
            problems.append(f"placement names unknown user {uid!r} or is not an object")
            continue
        placed = _place_user(uid, where, users[uid], nodes, load, continuous, problems)
        if abs(placed - tasks[uid]) > _CAPACITY_RTOL * max(Fraction(1), tasks[uid]):
            problems.append(f"user {uid!r}: placement holds {_f(placed):g} tasks, allocation says {_f(tasks[uid]):g}")
    for uid in users:
        if tasks[uid] > 0 and uid not in placement:
            problems.append(f"user {uid!r}: {_f(tasks[uid]):g} tasks allocated but none placed")
    for v, node_load in load.items():
        for r, node_use in node_load.items():
            cap = _q(nodes[v].capacity.get(r, 0))
            if not _fits(node_use, cap):
                problems.append(f"node {v!r}: resource {r!r} used {_f(node_use):g} over capacity {_f(cap):g}")


def _place_user(
    uid: str,
    where: Mapping[Any, Any],
    user: User,
    nodes: Mapping[str, FairNode],
    load: dict[str, dict[str, Fraction]],
    continuous: bool,
    problems: list[str],
) -> Fraction:
    """One user's placement (node -> tasks): known nodes, whole counts >= 0 unless continuous; adds
    its demand to ``load`` and returns the tasks placed (DDRF sec. 2)."""
    placed = Fraction(0)
    for v, raw in where.items():
        if v not in nodes:
            problems.append(f"user {uid!r}: placement names unknown node {v!r}")
            continue
        if not _number(raw):
            problems.append(f"user {uid!r}: placement on node {v!r} must be a number, got {raw!r:.40}")
            continue
        count = _q(raw)
        if count < 0 or (not continuous and count.denominator != 1):
            problems.append(f"user {uid!r}: placement on node {v!r} must be a whole number >= 0, got {raw!r}")
        placed += count
        for r, amount in user.demand.items():
            load[v][r] = load[v].get(r, Fraction(0)) + count * _q(amount)
    return placed


def _check_order(order: Any, users: Mapping[str, User], tasks: Mapping[str, Fraction], problems: list[str]) -> None:
    """A launch ``order`` (DDRF sec. 3.1, Table 1) launches exactly each user's allocation."""
    if order is not None and (not isinstance(order, (list, tuple)) or not all(isinstance(u, str) for u in order)):
        problems.append(f"'order' must be a list of user ids, got {order!r:.60}")
    elif order is not None:
        launched = Counter(order)
        for uid in users:
            if launched.get(uid, 0) != tasks[uid]:
                problems.append(
                    f"user {uid!r}: order launches {launched.get(uid, 0)} tasks, allocation says {_f(tasks[uid]):g}"
                )


def _check_shares(
    instance: FairnessInstance,
    claimed: Any,
    users: Mapping[str, User],
    tasks: Mapping[str, Fraction],
    verdict: FairnessVerdict,
) -> list[Fraction]:
    """Recompute each user's dominant share max_r x_i D_ir / R_r (DDRF sec. 3.1) into the verdict,
    check the claimed ``dominant_shares``, and return the weighted shares."""
    problems = verdict.problems
    weighted = []
    if not isinstance(claimed, Mapping):
        problems.append(f"'dominant_shares' must be an object user -> share, got {claimed!r:.40}")
        claimed = {}
    for uid, user in users.items():
        share = max(tasks[uid] * _q(user.demand.get(r, 0)) / _q(total) for r, total in instance.resources.items())
        verdict.shares[uid] = _f(share)
        weighted.append(share / _q(user.weight))
        if uid in claimed and not _close(claimed[uid], share):
            problems.append(f"user {uid!r}: dominant share {claimed[uid]} claimed, {_f(share):.12g} recomputed")
    return weighted


def _check_utilisation(
    instance: FairnessInstance,
    util: Any,
    users: Mapping[str, User],
    tasks: Mapping[str, Fraction],
    problems: list[str],
) -> None:
    """The claimed ``utilisation`` per resource is the recomputed used fraction C_r / R_r (DDRF sec. 3.1)."""
    if not isinstance(util, Mapping):
        problems.append(f"'utilisation' must be an object resource -> fraction, got {util!r:.40}")
        util = {}
    for r, total in instance.resources.items():
        fraction = _use(r, users, tasks) / _q(total)
        if r in util and not _close(util[r], fraction):
            problems.append(f"resource {r!r}: utilisation {util[r]} claimed, {_f(fraction):.12g} recomputed")


def _check_objective(
    instance: FairnessInstance, solution: Solution, lowest: Fraction, verdict: FairnessVerdict
) -> None:
    """The claimed objective is the recomputed minimum weighted dominant share (DDRF sec. 3.1's
    leximin, first level), and the bound claims follow :mod:`mropt.model.claims`."""
    problems = verdict.problems
    verdict.objective = _f(lowest)
    verdict.checked_schedule = True
    if solution.objective is None:
        problems.append(f"solution gives no objective; recomputed {verdict.objective:g}")
    elif not _close(solution.objective, lowest):
        problems.append(
            f"objective {solution.objective:g} claimed, {verdict.objective:g} recomputed (min weighted dominant share)"
        )
    problems.extend(bound_problems(instance.SENSE, solution, verdict.objective))
