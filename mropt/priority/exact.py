"""Exact slot allocation for MPSA's problem, eq. 17 (method ``mpsa-exact``).

Eq. 17 without sec. 4.3's fixed ratio s_i2 = k s_i1: integer slots (x_i, y_i) per
priority minimising the total reserved slots sum_i (x_i + y_i) subject to every
sojourn constraint T_i(x_i, y_i) <= T_i^target (eq. 16, tested as Algorithm 1 does:
T_i <= deadline_limit(target), relative tolerance TIME_RTOL) and both slot totals
sum x_i <= S_map, sum y_i <= S_reduce.

How it is solved, exactly:

1. T_i is non-increasing in each of x and y (eq. 16 is a sum of two decreasing terms),
   so for every x the feasible y form an interval [y_i(x), S_reduce]; y_i(x) is read
   off the table of T_i over all integer (x, y) (:func:`sojourn_table`). The points
   (x, y_i(x)) contain every Pareto-optimal choice for priority i.
2. The choice of one point per priority is a two-resource multiple-choice knapsack
   whose cost is x + y. A dynamic programme over priorities with state "map slots used
   so far = m" keeping the least reduce slots used is exact: for a fixed m, fewer reduce
   slots is better both for the cost (m + reduce) and for the reduce total, so no other
   state can be dominant. O(n S_map^2) time, O(n S_map) memory; no solver and no time
   limit are needed, and the result is proven optimal (``bound`` = ``objective``). It is
   cross-checked against brute force in the tests. A MILP over the same points would
   prove the same optimum more slowly.

When no allocation meets every deadline, mpsa-exact minimises the worst
sojourn-to-deadline ratio r = max_i T_i / T_i^target, then (second) the total reserved
slots at that r. r* is found exactly: it is one of the finite values T_i(x, y) / T_i^target
of the tables, and "some allocation has every T_i <= r T_i^target" is monotone in r, so a
binary search over those sorted values, each step the DP above with deadlines r T_i^target,
finds the least feasible one. If no finite r exists (the stations cannot all be made
stable together), the priority with the largest offered load lambda_i (a W_map + b W_reduce)
is given no slots and reported infeasible, and so on until the rest can be stabilised;
offered loads equal within OBJECTIVE_RTOL (:func:`~mropt.model.tolerance.same_value`)
count as a tie, which goes to the later priority in the file.
The status is then ``infeasible``; ``details.worst_ratio`` holds r*.

Resources. The tables hold (S_map + 1)(S_reduce + 1) floats per
priority and the search over r copies them once more (sorted), so before allocating
anything :func:`memory_estimate` is compared with :data:`MAX_MEMORY_BYTES` (1 GiB): an
instance above it is refused with an InputError saying how much it would need (a
1.2 KB file asking for 20,000 x 10,000 slots took 5 GB). ``time_limit`` is checked while
the tables are built, in the dynamic programme (every few hundred map-slot counts)
and at every step of the search over r: out of time before any allocation is known,
the status is ``time_limit`` with no allocation; during the search over r (no
allocation meets every deadline, which is then proven), the best allocation found so
far is returned with ``details.proven`` false.

Tolerances (relative, unit-free; ``docs/tolerances.md``): the deadline test
deadline_limit (TIME_RTOL) and the stability test rho < 1 - TIME_RTOL of
:mod:`~mropt.priority.queueing`; every other comparison is between integers (slot
counts) or between unit-free ratios T_i / T_i^target. Offered loads are unit-free too,
but two that are equal in exact arithmetic (lambda = 0.1, W = 9 and lambda = 0.3, W = 3)
need not be equal once rounded in other units: compared exactly (as mropt once did),
the tie went to whichever product rounded up, so the priority left without slots
depended on the time unit (tests/priority/test_priority_scale.py keeps the case).
"""

from __future__ import annotations

import math
import time

import numpy as np

from mropt.model.errors import InputError
from mropt.model.priority import PriorityInstance
from mropt.model.solution import Solution
from mropt.model.tolerance import deadline_limit, same_value
from mropt.priority.forecast import planning_load
from mropt.priority.mpsa import allocation_solution
from mropt.priority.queueing import routing_of, sojourn_table
from mropt.registry import mropt_solver, register

_NONE = np.iinfo(np.int64).max // 4  # "no feasible y" in the frontier and the DP
#: the most memory mpsa-exact may plan to use (its estimate, :func:`memory_estimate`)
MAX_MEMORY_BYTES = 1 << 30
#: map-slot counts handled by the dynamic programme between two looks at the clock
_CLOCK_EVERY = 256


class _OutOfTime(Exception):
    """The time limit passed inside the computation."""


class _Clock:
    """The time limit: ``check()`` raises :class:`_OutOfTime` once it has passed."""

    def __init__(self, time_limit: float | None) -> None:
        self.end = None if time_limit is None else time.perf_counter() + time_limit

    def check(self) -> None:
        if self.end is not None and time.perf_counter() >= self.end:
            raise _OutOfTime


def memory_estimate(instance: PriorityInstance) -> int:
    """Bytes mpsa-exact needs at most: the tables (8 bytes a cell), their sorted copy, the DP's choices."""
    cells = (instance.map_slots + 1) * (instance.reduce_slots + 1)
    return instance.n * (3 * 8 * cells + 8 * (instance.map_slots + 1))


def check_memory(instance: PriorityInstance) -> None:
    """InputError, before anything is allocated, when :func:`memory_estimate` exceeds :data:`MAX_MEMORY_BYTES`."""
    need = memory_estimate(instance)
    if need > MAX_MEMORY_BYTES:
        raise InputError(
            f"mpsa-exact: {instance.n} priorities over {instance.map_slots} x {instance.reduce_slots} slots need "
            f"about {need / (1 << 30):.3g} GiB for the sojourn tables, more than the "
            f"{MAX_MEMORY_BYTES >> 30} GiB cap of mpsa-exact; use mpsa, or fewer slots"
        )


def reduce_frontier(table: np.ndarray, limit: float) -> np.ndarray:
    """y_i(x): least y with T_i(x, y) <= deadline_limit(limit) (eq. 16 against eq. 17's target), per x; _NONE if none."""
    ok = table <= deadline_limit(limit)
    first = np.argmax(ok, axis=1).astype(np.int64)
    return np.where(ok.any(axis=1), first, _NONE)


def knapsack(
    frontiers: list[np.ndarray], map_total: int, reduce_total: int, clock: _Clock | None = None
) -> tuple[list[int], list[int]] | None:
    """Least x + y total choosing one frontier point per priority under eq. 17's slot totals; None if none fits.

    dp[m] = least reduce slots used with exactly m map slots used (see the module
    docstring for why this state is enough); ties go to the smaller map use.
    ``clock`` is looked at every few hundred map-slot counts (:class:`_OutOfTime`).
    """
    dp = np.full(map_total + 1, _NONE, dtype=np.int64)
    dp[0] = 0
    choices: list[np.ndarray] = []
    for ymin in frontiers:
        new = np.full(map_total + 1, _NONE, dtype=np.int64)
        pick = np.full(map_total + 1, -1, dtype=np.int64)
        for k, x in enumerate(np.flatnonzero(ymin[: map_total + 1] <= reduce_total)):
            if clock is not None and k % _CLOCK_EVERY == 0:
                clock.check()
            cand = dp[: map_total + 1 - x] + ymin[x]
            cand[dp[: map_total + 1 - x] >= _NONE] = _NONE
            target = new[x:]
            better = cand < target
            target[better] = cand[better]
            pick[x:][better] = x
        new[new > reduce_total] = _NONE
        dp = new
        choices.append(pick)
    totals = np.where(dp < _NONE, np.arange(map_total + 1) + dp, _NONE)
    m = int(np.argmin(totals))
    if totals[m] >= _NONE:
        return None
    xs, ys = [0] * len(frontiers), [0] * len(frontiers)
    for i in range(len(frontiers) - 1, -1, -1):
        chosen = int(choices[i][m])
        xs[i], ys[i] = chosen, int(frontiers[i][chosen])
        m -= chosen
    return xs, ys


def _most_offered(active: list[int], offered: np.ndarray) -> int:
    """The active priority with the largest offered load; loads within OBJECTIVE_RTOL tie, the later one wins."""
    top = max(float(offered[i]) for i in active)
    return max(i for i in active if same_value(float(offered[i]), top))


def exact_slots(instance: PriorityInstance, time_limit: float | None = None) -> tuple[list[int], list[int], dict]:
    """Optimal (x_i, y_i) per priority for eq. 17 (or min worst T_i / deadline) and how they were found.

    Raises InputError when the instance needs more than :data:`MAX_MEMORY_BYTES`, and
    :class:`_OutOfTime` when ``time_limit`` passes before any allocation is known.
    """
    check_memory(instance)
    clock = _Clock(time_limit)
    routing = routing_of(instance)
    load = planning_load(instance)
    big_m, big_r = instance.map_slots, instance.reduce_slots
    deadlines = instance.deadlines
    tables = []
    for i in range(instance.n):
        clock.check()
        tables.append(sojourn_table(routing, load.arrival_rate[i], load.map_work[i], load.reduce_work[i], big_m, big_r))
    best = knapsack([reduce_frontier(t, d) for t, d in zip(tables, deadlines)], big_m, big_r, clock)
    if best is not None:
        return best[0], best[1], {"proven": True, "worst_ratio": None, "saturated": []}

    active = list(range(instance.n))
    saturated: list[int] = []
    offered = load.arrival_rate * (routing.a * load.map_work + routing.b * load.reduce_work)
    while active:
        ratios = np.unique(np.concatenate([(tables[i] / deadlines[i]).ravel() for i in active]))
        ratios = ratios[np.isfinite(ratios)]

        def solve_at(r: float) -> tuple[list[int], list[int]] | None:
            return knapsack([reduce_frontier(tables[i], r * deadlines[i]) for i in active], big_m, big_r, clock)

        found = solve_at(float(ratios[-1])) if ratios.size else None
        if found is not None:
            lo, hi = 0, ratios.size - 1  # ratios[hi] is feasible; find the first feasible index
            proven = True
            try:
                while lo < hi:
                    mid = (lo + hi) // 2
                    at_mid = solve_at(float(ratios[mid]))
                    if at_mid is not None:
                        hi, found = mid, at_mid
                    else:
                        lo = mid + 1
            except _OutOfTime:
                proven = False  # ratios[hi] is the best found; a smaller one may exist
            r_star = float(ratios[hi])
            xs_a, ys_a = found
            xs, ys = [0] * instance.n, [0] * instance.n
            for j, i in enumerate(active):
                xs[i], ys[i] = xs_a[j], ys_a[j]
            record = {"proven": proven, "worst_ratio": r_star, "saturated": [instance.ids[i] for i in saturated]}
            return xs, ys, record
        drop = _most_offered(active, offered)
        active.remove(drop)
        saturated.append(drop)
    return (
        [0] * instance.n,
        [0] * instance.n,
        {"proven": True, "worst_ratio": math.inf, "saturated": list(instance.ids)},
    )


@register(
    "mpsa-exact",
    kind="priority",
    summary="exact eq. 17: min total slots meeting every sojourn deadline (frontier + DP); else min worst T/deadline",
    exact=True,
)
def mpsa_exact(instance: PriorityInstance, *, time_limit: float | None = None, seed: int = 0) -> Solution:
    """Exact allocation for MPSA eq. 17 (sec. 4.3) without the fixed ratio; see the module docstring."""
    try:
        xs, ys, record = exact_slots(instance, time_limit)
    except _OutOfTime:
        return Solution(
            method="mpsa-exact",
            status="time_limit",
            objective=None,
            solver=mropt_solver(),
            details={
                "algorithm": "Pareto frontier per priority + multiple-choice knapsack DP",
                "stopped": f"time limit {time_limit:g} s reached before any allocation was found",
            },
        )
    feasible = record["worst_ratio"] is None
    total = float(sum(xs) + sum(ys))
    worst = record["worst_ratio"]
    return allocation_solution(
        instance,
        routing_of(instance),
        planning_load(instance),
        xs,
        ys,
        status_if_feasible="optimal",
        bound=total if feasible else None,
        details={
            "algorithm": "Pareto frontier per priority + multiple-choice knapsack DP",
            "worst_ratio": None if worst is None or not math.isfinite(worst) else worst,
            "saturated": record["saturated"],
            **(
                {}
                if record["proven"]
                else {"proven": False, "stopped": f"time limit {time_limit:g} s: worst_ratio not proven least"}
            ),
        },
    )
