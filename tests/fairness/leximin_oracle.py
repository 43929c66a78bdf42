"""Ground truth for the fairness tests at many scales: leximin allocations by enumeration.

The leximin allocations of a small instance (their ties, and placements on the nodes) come
from enumerating task vectors on the unscaled instance in exact fractions (``brute_force``);
``check_verify`` asserts ``mropt.verify`` accepts a solution and rejects it tampered by a
relative 1e-6 or with one task over a capacity beyond ``CAPACITY_RTOL`` (docs/tolerances.md).
Shared by ``test_fairness_scale.py`` (units) and ``test_fairness_spread_weights.py``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction

import mropt
from mropt.fairness.metrics import allocation_from_solution, allocation_solution
from mropt.model import instance_from_dict
from mropt.model.fairness import FairnessInstance
from mropt.model.solution import Solution
from mropt.model.tolerance import CAPACITY_RTOL
from mropt.registry import solve

TAMPER = 1e-6  # the smallest relative change verify must catch


def q(x: float) -> Fraction:
    """``x`` as the exact fraction of its shortest decimal repr (0.1 -> 1/10)."""
    return Fraction(repr(float(x)))


def scaled(inst: FairnessInstance, powers: dict[str, int], k: int) -> FairnessInstance:
    """``inst`` with resource r's capacities and demands times 10**powers[r], the weights times 10**k."""
    data = inst.to_dict()
    f = {r: 10.0 ** powers[r] for r in inst.resource_names}
    data["resources"] = {r: v * f[r] for r, v in data["resources"].items()}
    for u in data["users"]:
        u["demand"] = {r: v * f[r] for r, v in u["demand"].items()}
        u["weight"] = u.get("weight", 1) * 10.0**k
    for nd in data.get("nodes") or ():
        nd["capacity"] = {r: v * f[r] for r, v in nd["capacity"].items()}
    return instance_from_dict(data)


def exact_data(
    inst: FairnessInstance,
) -> tuple[list[list[Fraction]], list[Fraction], list[list[Fraction]], list[Fraction]]:
    """Demands, capacities, node capacities and weighted share coefficients per task, as fractions."""
    d = [[q(u.demand.get(r, 0)) for r in inst.resource_names] for u in inst.users]
    cap = [q(inst.resources[r]) for r in inst.resource_names]
    ncap = [[q(nd.capacity.get(r, 0)) for r in inst.resource_names] for nd in inst.nodes or ()]
    coef = [max(d[i][j] / cap[j] for j in range(len(cap))) / q(u.weight) for i, u in enumerate(inst.users)]
    return d, cap, ncap, coef


def node_placements(inst: FairnessInstance, x: Sequence[int], limit: int = 2) -> list[tuple]:
    """Up to ``limit`` placements (user -> tasks per node) of allocation x within the node capacities."""
    d, _, ncap, _ = exact_data(inst)
    v, m = len(ncap), len(inst.resource_names)
    found: list[tuple] = []

    def splits(total):
        for cut in itertools.combinations(range(total + v - 1), v - 1):
            edges = (-1, *cut, total + v - 1)
            yield tuple(edges[t + 1] - edges[t] - 1 for t in range(v))

    def place(i, free, acc):
        if len(found) >= limit:
            return
        if i == inst.n:
            found.append(tuple(acc))
            return
        for split in splits(int(x[i])):
            left = [[free[k][j] - split[k] * d[i][j] for j in range(m)] for k in range(v)]
            if all(val >= 0 for row in left for val in row):
                place(i + 1, left, [*acc, split])

    place(0, ncap, [])
    return found


def brute_force(
    inst: FairnessInstance, *, tolerance: bool = False
) -> tuple[list[Fraction] | None, list[tuple[int, ...]]]:
    """All leximin-optimal allocations (task vectors) of a small instance, by enumeration.

    Capacities are exact, or with ``tolerance`` the documented ``c (1 + CAPACITY_RTOL)``
    (aggregate only: no test with nodes sits at that edge).
    """
    d, cap, _, coef = exact_data(inst)
    if tolerance:
        cap = [c * (1 + Fraction(repr(CAPACITY_RTOL))) for c in cap]
    best, ties = None, []
    ranges = [range(int(b) + 1) for b in inst.task_bound()]
    cands = []
    for x in itertools.product(*ranges):
        if all(sum(x[i] * d[i][j] for i in range(inst.n)) <= cap[j] for j in range(len(cap))):
            cands.append((sorted(x[i] * coef[i] for i in range(inst.n)), x))
    cands.sort(key=lambda c: c[0], reverse=True)
    for vec, x in cands:
        if best is not None and vec != best:
            break
        if inst.nodes is not None and not node_placements(inst, x, limit=1):
            continue
        best = vec
        ties.append(x)
    return best, ties


def task_counts(inst: FairnessInstance, sol: Solution) -> list[float]:
    return [float(sol.decision["allocation"][u]) for u in inst.ids]


def sorted_exact(inst: FairnessInstance, sol: Solution) -> list[Fraction]:
    _, _, _, coef = exact_data(inst)
    return sorted(q(t) * c for t, c in zip(task_counts(inst, sol), coef))


def placement_of(sol: Solution) -> dict:
    return {u: {v: c for v, c in where.items() if c} for u, where in (sol.decision.get("placement") or {}).items()}


def over_capacity(inst: FairnessInstance, sol: Solution) -> Solution | None:
    """The solution with one more task (on one node, with nodes) that passes a capacity beyond CAPACITY_RTOL, or None."""
    d, cap, ncap, _ = exact_data(inst)
    tasks, per_node = allocation_from_solution(inst, sol)
    limit = 1 + Fraction(CAPACITY_RTOL)
    m = len(cap)
    for i in range(inst.n):
        if tasks[i] + 1 > inst.task_caps[i]:
            continue
        more = tasks.copy()
        more[i] += 1
        need = [sum(q(more[u]) * d[u][j] for u in range(inst.n)) for j in range(m)]
        over = any(need[j] > cap[j] * limit for j in range(m))
        for k in range(len(ncap)) if per_node is not None else [None]:
            nodes = None
            node_over = False
            if k is not None:
                nodes = per_node.copy()
                nodes[i, k] += 1
                node_over = any(
                    sum(q(nodes[u, k]) * d[u][j] for u in range(inst.n)) > ncap[k][j] * limit for j in range(m)
                )
            if over or node_over:
                return allocation_solution(
                    inst, more, method=sol.method, status=sol.status, solver=sol.solver, per_node=nodes
                )
    return None


def check_verify(inst: FairnessInstance, sol: Solution) -> None:
    """verify accepts ``sol`` and rejects it tampered by a relative 1e-6, or one task over capacity."""
    verdict = mropt.verify(inst, sol)
    assert verdict.ok, (sol.method, verdict.problems)
    dec = sol.decision
    share_user = max(dec["dominant_shares"], key=lambda u: dec["dominant_shares"][u])
    if dec["dominant_shares"][share_user] > 0:
        for f in (1 + TAMPER, 1 - TAMPER):
            bad = replace(
                sol,
                decision={
                    **dec,
                    "dominant_shares": {**dec["dominant_shares"], share_user: dec["dominant_shares"][share_user] * f},
                },
            )
            assert any("dominant share" in p for p in mropt.verify(inst, bad).problems), sol.method
    res = max(dec["utilisation"], key=lambda r: dec["utilisation"][r])
    if dec["utilisation"][res] > 0:
        bad = replace(
            sol, decision={**dec, "utilisation": {**dec["utilisation"], res: dec["utilisation"][res] * (1 + TAMPER)}}
        )
        assert any("utilisation" in p for p in mropt.verify(inst, bad).problems), sol.method
    top = max(sol.details["sorted_weighted_shares"])
    wrong = (
        [sol.objective * f for f in (1 + TAMPER, 1 - TAMPER)]
        if sol.objective > 0
        else [TAMPER * top]
        if top > 0
        else []
    )
    for claim in wrong:  # a claimed 0 is checked exactly, whatever the units
        assert any("objective" in p for p in mropt.verify(inst, replace(sol, objective=claim)).problems), sol.method
    bad = over_capacity(inst, sol)
    if bad is not None:
        assert any("capacity" in p for p in mropt.verify(inst, bad).problems), (sol.method, bad.decision)


def run(inst: FairnessInstance, method: str) -> Solution:
    """``method`` on ``inst``: the exact ones with 10 s, one thread, seed 0."""
    if method == "drf":
        return solve(inst, "drf")
    return solve(inst, method, time_limit=10, threads=1, seed=0)


def tie_on_disk() -> FairnessInstance:
    """cpu, mem, disk 4; u0's task disk 4 (weight 2000, one task), u1 cpu 1 (no task), u2's disk 2
    (weight 2000, two tasks): {u0: 1} and {u2: 2} are both leximin-optimal (shares 0, 1/2000)."""
    return instance_from_dict(
        {
            "kind": "fairness",
            "schema_version": 1,
            "resources": {"cpu": 4, "mem": 4, "disk": 4},
            "users": [
                {"id": "u0", "demand": {"disk": 4}, "weight": 2000, "max_tasks": 1},
                {"id": "u1", "demand": {"cpu": 1}, "weight": 1, "max_tasks": 0},
                {"id": "u2", "demand": {"disk": 2}, "weight": 2000, "max_tasks": 2},
            ],
        }
    )
