"""The DDRF listing (DDRF paper sec. 4.1) on one scheduling round, without a simulator.

A round (:class:`~mropt.fairness.flow.SchedulingRound`) is a set of free slots and the
users' pending tasks with their input nodes. Slots are offered one at a time in a
seeded random order (slots freeing on random nodes, sec. 3.2). For each offered slot
on node v, users are tried in order of their weighted dominant share (DRF, sec. 3.1;
to 12 significant digits, the same in any units; ties by user order), and the first
user that launches takes the slot:

* a pending task with input on v launches there (node-local) and ``skip`` resets;
* else the user's ``skip`` grows by one; DDRF then launches a task whose input is in
  v's rack once ``skip > E1`` (rack-local), and any task once ``skip > E2``
  (non-local); otherwise the next user is tried. Delay scheduling (sec. 3.2) is
  E1 = E2 = D, without the rack level.

The listing increments ``skip`` a second time when the rack check fails; mropt counts
one skip per declined offer, as the analysis of sec. 4.2 does. A slot no user takes
stays empty in this round (the price of waiting, when no simulator brings more offers).
Shares grow by the user's dominant share per task (:attr:`FairnessInstance.dominant_demand`)
when a FairnessInstance is given, else by one per task.

:func:`compare_round` sets DRF's greedy choice, delay scheduling and DDRF beside the
min-cost flow (:mod:`mropt.fairness.flow`): the unconstrained optimum and the locality
optimum with each policy's own per-user counts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mropt.fairness.flow import Costs, SchedulingRound, levels, min_cost_placement, round_cost
from mropt.fairness.metrics import significant
from mropt.model.errors import InputError
from mropt.model.fairness import FairnessInstance


def offer_order(rnd: SchedulingRound, seed: int) -> list[str]:
    """Every free slot once, in a seeded random order (``numpy.random.default_rng(seed)``)."""
    slots = [v for v, free in rnd.slots.items() for _ in range(int(free))]
    order = np.random.default_rng(seed).permutation(len(slots))
    return [slots[k] for k in order]


def ddrf_round(
    rnd: SchedulingRound,
    E1: int,
    E2: int,
    *,
    seed: int = 0,
    instance: FairnessInstance | None = None,
    rack_level: bool = True,
) -> dict[str, Any]:
    """Run the skip rule on the round; returns assignment, levels, cost-free counts and skips."""
    if not 0 <= E1 <= E2:
        raise InputError(f"ddrf: need 0 <= E1 <= E2, got E1={E1}, E2={E2}")
    users = list(dict.fromkeys(t[0] for t in rnd.tasks))
    step = {u: 1.0 for u in users}
    weight = {u: 1.0 for u in users}
    if instance is not None:
        for i, uid in enumerate(instance.ids):
            step[uid], weight[uid] = float(instance.dominant_demand[i]), float(instance.weights[i])
    pending = {u: [t for t in rnd.tasks if t[0] == u] for u in users}
    share = dict.fromkeys(users, 0.0)
    skip = dict.fromkeys(users, 0)
    racks_of = {t: {rnd.rack[v] for v in t[2]} for t in rnd.tasks}
    assignment: dict[tuple[str, int], str] = {}
    empty = 0
    for v in offer_order(rnd, seed):
        chosen = None
        for u in sorted(
            (u for u in users if pending[u]), key=lambda u: (significant(share[u] / weight[u]), users.index(u))
        ):
            local = next((t for t in pending[u] if v in t[2]), None)
            if local is not None:
                chosen = (u, local)
                break
            skip[u] += 1
            if rack_level and skip[u] > E1:
                rack = next((t for t in pending[u] if rnd.rack[v] in racks_of[t]), None)
                if rack is not None:
                    chosen = (u, rack)
                    break
            if skip[u] > E2:
                chosen = (u, pending[u][0])
                break
        if chosen is None:
            empty += 1
            continue
        u, t = chosen
        pending[u].remove(t)
        assignment[(t[0], t[1])] = v
        share[u] += step[u]
        skip[u] = 0
    counts = {u: sum(1 for key in assignment if key[0] == u) for u in users}
    return {"assignment": assignment, "levels": levels(rnd, assignment), "counts": counts, "empty_slots": empty}


def compare_round(
    rnd: SchedulingRound,
    *,
    E1: int,
    E2: int,
    D: int,
    seed: int = 0,
    costs: Costs = Costs(),
    instance: FairnessInstance | None = None,
) -> list[dict[str, Any]]:
    """Rows: policy, placed tasks, node/rack/any launches, flow cost, and the locality optimum
    (min-cost flow) for the same per-user counts."""
    rows = []
    policies = {
        "drf-greedy (E1=E2=0)": ddrf_round(rnd, 0, 0, seed=seed, instance=instance),
        f"delay (D={D})": ddrf_round(rnd, D, D, seed=seed, instance=instance, rack_level=False),
        f"ddrf (E1={E1}, E2={E2})": ddrf_round(rnd, E1, E2, seed=seed, instance=instance),
    }
    for name, res in policies.items():
        best = min_cost_placement(rnd, costs, counts=res["counts"])
        rows.append(
            {
                "policy": name,
                "placed": len(res["assignment"]),
                **{f"{k}": n for k, n in res["levels"].items()},
                "cost": round_cost(rnd, res["assignment"], costs),
                "optimum_same_counts": best["cost"],
                "optimum_node": best["levels"]["node"],
                "empty_slots": res["empty_slots"],
            }
        )
    opt = min_cost_placement(rnd, costs)
    rows.append(
        {
            "policy": "min-cost flow (Quincy)",
            "placed": len(opt["assignment"]),
            **opt["levels"],
            "cost": opt["cost"],
            "optimum_same_counts": opt["cost"],
            "optimum_node": opt["levels"]["node"],
            "empty_slots": sum(rnd.slots.values()) - len(opt["assignment"]),
        }
    )
    return rows
