"""MPSA's slot allocation, Algorithm 1 of sec. 4.3 (method ``mpsa``).

For each priority in turn, a binary search over its map slots s_i1 in [1, mapIdle]
with the reduce slots tied to them, s_i2 = k * s_i1 (the listing's direction; k =
S_reduce / S_map, see the errata), evaluating T_i by eq. 16 and keeping the smallest
s_i1 that meets the deadline (eq. 18). Choices where the listing is silent:

* **Rounding of s_i2**: ``s_i2 = min(ceil(k * s_i1), reduceIdle)``, computed in integers
  as ``ceil(s_i1 * S_reduce / S_map)``. Rounding up never gives the reduce station
  less than its proportional share, so a priority whose (fractional) proportional
  allocation meets its deadline still does; capping at the reduce slots left keeps
  both slot totals of eq. 17. T_i stays non-increasing in s_i1, so binary search is valid.
* **The bounded loop**: the listing runs ``while (Tcha > Yu)``, which never ends when no
  s_i1 meets the deadline (or when no integer lands within Yu of it). mropt keeps the
  invariant "mapMin fails, mapMax is the best candidate", starts at mapMin = 0 (zero
  slots always fail; the listing's 1 would make s_i1 = 1 unreachable) and stops when
  mapMax - mapMin <= 1 or, for Yu > 0 (parameter ``threshold``, default 0), when
  ``Tcha <= Yu``: at most ceil(log2(mapIdle + 1)) evaluations per priority. The result
  is s_i1 = mapMax, the smallest feasible count when one exists (with Yu = 0). Tcha is
  the slack to the deadline's tolerance limit, deadline_limit(T_i) - T, never negative
  for a feasible probe. (Stopping at Tcha <= 0 with the slack measured from T_i itself,
  as mropt once did, ended the search at the first probe inside the tolerance band,
  and whether a probe fell inside it, i.e. whether T - T_i was a rounding error above
  or below 0, depended on the units: tests/priority/test_priority_scale.py keeps
  the case.)
* **A priority that cannot meet its deadline** within what is left: as the bounded
  listing does, it keeps mapMax = mapIdle, i.e. all remaining map slots (and the
  matching reduce slots), and is reported in ``infeasible``. Later priorities then
  find mapIdle = 0 and get nothing (sec. 4.3: the cluster must be extended).
* **Order**: priorities by increasing deadline (the most urgent first; ties in file
  order), or file order with ``order="file"``. Deadlines that differ by at most
  TIME_RTOL relative (each from the previous one in deadline order) are ties: exact
  comparison let two deadlines one rounding apart, say 15 and the next float above,
  swap places with the unit (once rescaled both round to one float and the tie went
  to file order).

The slots left over (mapIdle, reduceIdle) are ``shared`` (sec. 4.4). The objective is
the total number of reserved slots, sum_i (s_i1 + s_i2).

Tolerances (``docs/tolerances.md``): T_i meets its target when T_i <= deadline_limit(target)
= target (1 + TIME_RTOL), and a station is stable when rho < 1 - TIME_RTOL
(:mod:`~mropt.priority.queueing`); both are relative, so with the default Yu = 0 the
answer does not depend on the time unit. Yu itself is a time in the instance's unit:
data rescaled by 10^m need Yu rescaled by 10^m for the same answer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mropt.model.errors import InputError
from mropt.model.priority import PriorityInstance
from mropt.model.solution import Solution
from mropt.model.tolerance import deadline_limit
from mropt.priority.forecast import PlanningLoad, planning_load
from mropt.priority.queueing import Routing, meets_deadline, priority_sojourn, routing_of
from mropt.registry import Param, mropt_solver, register

ORDERS = ("deadline", "file")


def priority_order(instance: PriorityInstance, order: str = "deadline") -> list[int]:
    """Indices of the priorities in the order Algorithm 1's "For each i in I" visits them (sec. 4.3)."""
    if order not in ORDERS:
        raise InputError(f"method parameter 'order' must be one of {', '.join(ORDERS)}, got {order!r}")
    if order == "file":
        return list(range(instance.n))
    deadline = [p.deadline for p in instance.priorities]
    groups: list[list[int]] = []  # runs of deadlines each within deadline_limit of the previous: ties
    for i in sorted(range(instance.n), key=lambda i: (deadline[i], i)):
        if groups and deadline[i] <= deadline_limit(deadline[groups[-1][-1]]):
            groups[-1].append(i)
        else:
            groups.append([i])
    return [i for group in groups for i in sorted(group)]


def allocation_solution(
    instance: PriorityInstance,
    routing: Routing,
    load: PlanningLoad,
    map_slots: Sequence[int],
    reduce_slots: Sequence[int],
    *,
    status_if_feasible: str,
    bound: float | None = None,
    details: dict | None = None,
) -> Solution:
    """The decision of every priority method: allocation, shared (sec. 4.4), infeasible, routing, a, b (eq. 12).

    ``sojourn`` is T_i of eq. 16 in seconds, or null where a station is unstable.
    The status is ``status_if_feasible`` when every priority meets its deadline, else
    ``infeasible``; the objective is the total of reserved slots either way.
    """
    allocation: dict[str, dict] = {}
    infeasible: list[str] = []
    ratios: dict[str, float | None] = {}
    for i, p in enumerate(instance.priorities):
        t = priority_sojourn(
            routing, load.arrival_rate[i], load.map_work[i], load.reduce_work[i], map_slots[i], reduce_slots[i]
        )
        finite = math.isfinite(t)
        allocation[p.id] = {
            "map_slots": int(map_slots[i]),
            "reduce_slots": int(reduce_slots[i]),
            "sojourn": float(t) if finite else None,
        }
        ratios[p.id] = float(t / p.deadline) if finite else None
        if not meets_deadline(t, p.deadline):
            infeasible.append(p.id)
    used_map, used_reduce = int(sum(map_slots)), int(sum(reduce_slots))
    decision = {
        "allocation": allocation,
        "shared": {"map_slots": instance.map_slots - used_map, "reduce_slots": instance.reduce_slots - used_reduce},
        "infeasible": infeasible,
        "routing": routing.to_dict(),
        "a": routing.a,
        "b": routing.b,
    }
    info = {
        "sojourn_to_deadline": ratios,
        "planning_load": {
            p.id: {
                "arrival_rate": float(load.arrival_rate[i]),
                "map_work": float(load.map_work[i]),
                "reduce_work": float(load.reduce_work[i]),
                "forecast": list(load.forecast[i]),
            }
            for i, p in enumerate(instance.priorities)
        },
        **(details or {}),
    }
    return Solution(
        method="",
        status="infeasible" if infeasible else status_if_feasible,
        objective=float(used_map + used_reduce),
        bound=bound,
        solver=mropt_solver(),
        details=info,
        decision=decision,
    )


def mpsa_slots(
    instance: PriorityInstance, *, threshold: float = 0.0, order: str = "deadline"
) -> tuple[list[int], list[int], dict]:
    """Algorithm 1 (bounded, see the module docstring): (s_i1 list, s_i2 list, trace).

    The trace holds the visiting order and, per priority, the number of evaluations
    of eq. 16 the search made.
    """
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not threshold >= 0:
        raise InputError(f"method parameter 'threshold' (Yu, a time) must be a number >= 0, got {threshold!r}")
    routing = routing_of(instance)
    load = planning_load(instance)
    big_m, big_r = instance.map_slots, instance.reduce_slots
    s1 = [0] * instance.n
    s2 = [0] * instance.n
    evaluations: dict[str, int] = {}
    map_idle, reduce_idle = big_m, big_r
    visit = priority_order(instance, order)
    for i in visit:
        p = instance.priorities[i]

        def reduce_for(s: int, idle: int = reduce_idle) -> int:
            return min(-(-s * big_r // big_m), idle)  # ceil(k * s), capped at reduceIdle

        def sojourn(s: int, i: int = i) -> float:
            return priority_sojourn(
                routing, load.arrival_rate[i], load.map_work[i], load.reduce_work[i], s, reduce_for(s)
            )

        slack = math.inf  # Tcha = Float.MAX_VALUE
        limit = deadline_limit(p.deadline)
        map_min, map_max = 0, map_idle  # invariant: map_min fails; map_max is the candidate
        count = 0
        while map_max - map_min > 1 and not (threshold > 0 and slack <= threshold):
            s = (map_max + map_min) // 2
            t = sojourn(s)
            count += 1
            if not meets_deadline(t, p.deadline):
                map_min = s
            else:
                map_max = s
                slack = limit - t  # >= 0: T meets the limit
        evaluations[p.id] = count
        s1[i] = map_max
        s2[i] = reduce_for(map_max)
        map_idle -= s1[i]
        reduce_idle -= s2[i]
    trace = {"order": [instance.priorities[i].id for i in visit], "evaluations": evaluations}
    return s1, s2, trace


@register(
    "mpsa",
    kind="priority",
    summary="MPSA Algorithm 1: per-priority binary search on map slots, reduce = ceil(k * map)",
    params={
        "threshold": Param(
            float,
            0.0,
            "Yu of Algorithm 1: stop once the slack to the deadline is <= this "
            "(a time, in the instance's unit; 0: search to the end)",
            minimum=0,
        ),
        "order": Param(
            str, "deadline", "deadline: most urgent first; file: the file's order", choices=("deadline", "file")
        ),
    },
)
def mpsa(
    instance: PriorityInstance,
    *,
    time_limit: float | None = None,
    seed: int = 0,
    threshold: float = 0.0,
    order: str = "deadline",
) -> Solution:
    """Algorithm 1 of MPSA sec. 4.3 with eqs. 16 and 18; see the module docstring."""
    s1, s2, trace = mpsa_slots(instance, threshold=threshold, order=order)
    return allocation_solution(
        instance,
        routing_of(instance),
        planning_load(instance),
        s1,
        s2,
        status_if_feasible="feasible",
        details={"k": instance.reduce_to_map_ratio, **trace},
    )
