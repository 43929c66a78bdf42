"""Dominant Resource Fairness by progressive filling (DDRF paper sec. 3.1).

The listing of sec. 3.1: repeatedly pick the user i with the smallest dominant share
``s_i``, and launch its next task if ``C + D_i <= R``, updating ``C``, ``U_i`` and
``s_i = max_j u_ij / r_j``. Users are kept in a binary heap keyed by their weighted
share ``s_i / w_i``, so each decision costs O(log n) (as the text says).

Two stopping rules:

* ``mode="text"`` (default): the text after Table 1 says scheduling goes on when some
  resource is used up, since some tasks do not need it. A user whose next task does
  not fit is removed from the heap (resources only shrink in a static allocation, so
  it can never fit again) and the others go on. On return no user can launch a task.
* ``mode="listing"``: as the listing, stop at the first task that does not fit.

Ties of the weighted share go by ``tie_break``: ``"largest-demand"`` (default; the
user whose task has the larger dominant share goes first, which reproduces Table 1's
order B, A, A, B, A) or ``"index"`` (the order of ``users``). Shares (and, for the
tie-break, one task's dominant share) are compared rounded to 12 significant digits
(:func:`~mropt.fairness.metrics.significant`) so that equal fractions (2/3 and 2/3)
tie, in any units. A task fits when every resource's use stays within
:func:`~mropt.model.tolerance.capacity_limit` (``CAPACITY_RTOL``, relative; see
``docs/tolerances.md``), so the allocation is the same when a resource's capacity and
demands, or the weights, are expressed in other units.

Resources: ``time_limit`` is looked at every :data:`CLOCK_EVERY`
decisions; past it, filling stops and the allocation so far (a valid, partial one) is
returned with status ``time_limit``. The launch order lists every task, so an instance
that could launch more than :data:`MAX_LAUNCHES` tasks (:func:`launch_bound`: huge
capacities against tiny demands) is refused up front with an InputError saying so.

Weights divide the share (weighted DRF); ``max_tasks`` caps a user. With ``nodes``,
each task goes on one node (``placement``: ``first-fit`` or ``best-fit``, see
:mod:`mropt.fairness.placement`), preferring a node that holds its input, then its
rack, then any (``locality=True``) -- a task "fits" when some node can hold it.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field

import numpy as np

from mropt.fairness.metrics import allocation_solution, significant
from mropt.fairness.placement import PLACEMENT_RULES, LocalityMap, choose_node
from mropt.model.errors import InputError
from mropt.model.fairness import FairnessInstance
from mropt.model.solution import Solution
from mropt.model.tolerance import capacity_limit
from mropt.registry import Param, mropt_solver, register

MODES = ("text", "listing")
TIE_BREAKS = ("largest-demand", "index")
#: decisions between two looks at the clock
CLOCK_EVERY = 1024
#: the most tasks drf launches (and lists in ``order``): about 80 MB of order, 100 MB of JSON
MAX_LAUNCHES = 10_000_000


def launch_bound(instance: FairnessInstance) -> float:
    """An upper bound on the tasks progressive filling can launch.

    Each user alone fits at most ``task_bound`` tasks; and every task uses at least its
    dominant share ``d_i`` of some resource, so all tasks together number at most
    m / min d_i (m resources, each used at most once over).
    """
    demands, cap = instance.demands, instance.capacity
    with np.errstate(divide="ignore", over="ignore"):
        fit = np.where(demands > 0, cap / np.where(demands > 0, demands, 1.0), np.inf).min(axis=1)
    alone = float(np.minimum(np.floor(fit + 1e-9), instance.task_caps).sum())
    dom = instance.dominant_demand
    shares = float(len(cap) / dom.min()) if dom.min() > 0 else math.inf
    return min(alone, shares)


@dataclass
class FillingResult:
    """What progressive filling did: tasks per user, launch order, placement, levels."""

    tasks: np.ndarray
    order: list[int]
    used: np.ndarray
    per_node: np.ndarray | None = None
    nodes_used: list[int] = field(default_factory=list)  # node of each launch, in order
    levels: dict[str, int] = field(default_factory=lambda: {"node": 0, "rack": 0, "any": 0})
    blocked: list[int] = field(default_factory=list)
    decisions: int = 0
    timed_out: bool = False


def share_key(
    share: float, dominant_demand: float, index: int, tie_break: str = "largest-demand"
) -> tuple[float, float, int]:
    """The heap key of a user in progressive filling: smallest weighted share first (sec. 3.1).

    Shares are compared rounded to 12 significant digits (so 2/3 and 2/3 tie); ties go by
    ``tie_break``: ``"largest-demand"`` (the user whose next task has the larger dominant
    share first: Table 1's order B, A, A, B, A) or ``"index"`` (``index`` alone). Shared with
    the simulator's ``drf``/``ddrf`` policies (:mod:`mropt.sim.policies.drf`).
    """
    return share_key_with_tie(share, tie_key(dominant_demand, tie_break), index)


def share_key_with_tie(share: float, tie: float, index: int) -> tuple[float, float, int]:
    """:func:`share_key` with its middle member given (``tie_key`` of the next task's dominant share)."""
    return (significant(share), tie, index)


def tie_key(dominant_demand: float, tie_break: str = "largest-demand") -> float:
    """The middle member of :func:`share_key`: how users of equal shares are ordered.

    A function of the next task's dominant share alone, so a caller that keeps it per task
    demand (the simulator's ``drf``) builds the same keys as :func:`share_key`."""
    if tie_break == "largest-demand":
        return -significant(dominant_demand)
    return 0.0


def _check(mode: str, tie_break: str, placement: str) -> None:
    if mode not in MODES:
        raise InputError(f"drf: parameter 'mode' must be one of {', '.join(MODES)}, got {mode!r}")
    if tie_break not in TIE_BREAKS:
        raise InputError(f"drf: parameter 'tie_break' must be one of {', '.join(TIE_BREAKS)}, got {tie_break!r}")
    if placement not in PLACEMENT_RULES:
        raise InputError(f"drf: parameter 'placement' must be one of {', '.join(PLACEMENT_RULES)}, got {placement!r}")


def progressive_filling(
    instance: FairnessInstance,
    *,
    mode: str = "text",
    tie_break: str = "largest-demand",
    placement: str = "first-fit",
    locality: bool = True,
    time_limit: float | None = None,
) -> FillingResult:
    """Progressive filling with a binary heap (sec. 3.1); see the module docstring.

    Past ``time_limit`` seconds it stops with ``timed_out`` set (looked at every
    :data:`CLOCK_EVERY` decisions); more than :data:`MAX_LAUNCHES` possible launches
    are refused up front (InputError).
    """
    _check(mode, tie_break, placement)
    bound = launch_bound(instance)
    if bound > MAX_LAUNCHES:
        raise InputError(
            f"drf: this instance could launch up to {bound:.3g} tasks (capacities against the smallest demands), "
            f"more than the {MAX_LAUNCHES:,} drf lists in its launch order; give users 'max_tasks' or "
            f"larger demands"
        )
    end = None if time_limit is None else time.perf_counter() + time_limit
    n = instance.n
    demands = instance.demands
    cap = instance.capacity
    limit = capacity_limit(cap)  # relative only (docs/tolerances.md): "+ 1e-9" let 4 tasks of 1e-45 fit in 1e-45
    dom = instance.dominant_demand
    step = dom / instance.weights
    caps = instance.task_caps
    tasks = np.zeros(n, dtype=np.int64)
    used = np.zeros_like(cap)
    with_nodes = instance.nodes is not None
    free = instance.node_capacity.copy() if with_nodes else None
    per_node = np.zeros((n, len(instance.node_ids)), dtype=np.int64) if with_nodes else None
    where = LocalityMap(instance) if with_nodes and locality else None
    result = FillingResult(tasks=tasks, order=[], used=used, per_node=per_node)

    heap = [share_key(0.0, dom[i], i, tie_break) for i in range(n) if caps[i] > 0]
    heapq.heapify(heap)
    while heap:
        if end is not None and result.decisions % CLOCK_EVERY == 0 and time.perf_counter() >= end:
            result.timed_out = True
            break
        entry = heapq.heappop(heap)
        i = entry[-1]
        result.decisions += 1
        d = demands[i]
        node: int | None = None
        level = ""
        if free is not None:  # the instance has nodes
            preferred = where.levels(i, int(tasks[i])) if where is not None else None
            choice = choose_node(free, d, cap, placement, preferred, capacity=instance.node_capacity)
            fits = choice is not None
            if choice is not None:
                node, level = choice
        else:
            with np.errstate(over="ignore"):  # used + d beyond the float range: it does not fit
                fits = bool(np.all(used + d <= limit))
        if not fits:
            result.blocked.append(i)
            if mode == "listing":
                break
            continue
        used += d
        tasks[i] += 1
        result.order.append(i)
        if node is not None:
            assert free is not None and per_node is not None  # both built when the instance has nodes
            free[node] -= d
            per_node[i, node] += 1
            result.nodes_used.append(node)
            result.levels[level] += 1
        if tasks[i] < caps[i]:
            heapq.heappush(heap, share_key(tasks[i] * step[i], dom[i], i, tie_break))
    return result


@register(
    "drf",
    kind="fairness",
    summary="DRF progressive filling with a binary heap (DDRF sec. 3.1)",
    params={
        "mode": Param(
            str, "text", "text: go on past a task that does not fit; listing: stop there", choices=("text", "listing")
        ),
        "tie_break": Param(
            str, "largest-demand", "largest-demand (Table 1's order) or index", choices=("largest-demand", "index")
        ),
        "placement": Param(str, "first-fit", "with nodes: first-fit or best-fit", choices=("first-fit", "best-fit")),
        "locality": Param(bool, True, "with nodes: prefer the input node, then its rack"),
    },
)
def solve_drf(
    instance: FairnessInstance,
    *,
    time_limit: float | None = None,
    seed: int = 0,
    mode: str = "text",
    tie_break: str = "largest-demand",
    placement: str = "first-fit",
    locality: bool = True,
) -> Solution:
    """Registered method ``drf``: progressive filling with a binary heap (DDRF sec. 3.1, Table 1)."""
    res = progressive_filling(
        instance, mode=mode, tie_break=tie_break, placement=placement, locality=bool(locality), time_limit=time_limit
    )
    details = {
        "decisions": res.decisions,
        "blocked": [instance.ids[i] for i in res.blocked],
        "mode": mode,
    }
    if res.timed_out:
        details["stopped"] = f"time limit {time_limit:g} s: the allocation so far (filling not finished)"
    if instance.nodes is not None:
        details["locality_levels"] = dict(res.levels)
        details["placement_rule"] = placement
    return allocation_solution(
        instance,
        res.tasks,
        method="drf",
        status="time_limit" if res.timed_out else "feasible",
        solver=mropt_solver(),
        per_node=res.per_node,
        order=res.order,
        details=details,
    )
