"""Exact placement of one scheduling round: a Quincy-style min-cost flow (networkx).

Quincy (Isard et al., SOSP 2009) places the pending tasks of one round by a min-cost
flow; here it is the locality optimum against which delay scheduling's and DDRF's
choices on the same round (:mod:`mropt.fairness.ddrf`) are measured. A round
(:class:`SchedulingRound`) has nodes with free slots, in racks, and pending tasks,
each with the nodes that hold its input. The network:

* each task t has supply 1 (or, with ``counts``, user j's gate has supply counts_j
  and an arc of capacity 1 to each of its tasks, so exactly counts_j are placed);
* t -> each node holding its input, cost ``node_cost`` (0: node-local);
* t -> the rack aggregator of each rack holding its input, cost ``rack_cost``;
* t -> the cluster aggregator X, cost ``any_cost``; X -> every rack aggregator, 0;
  rack aggregator -> each of its nodes, 0; node -> sink, capacity = free slots;
* without ``counts``: t -> U_j (user j unscheduled), cost ``unscheduled_cost +
  wait_cost * waiting_j`` (Quincy's waiting penalty); U_j -> sink.

Costs are integers (network simplex). The result lists each placed task's node and
locality level; :func:`round_cost` prices any assignment with the same costs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import networkx as nx

from mropt.model.errors import InputError
from mropt.model.fairness import FairnessInstance


@dataclass(frozen=True)
class Costs:
    node_cost: int = 0
    rack_cost: int = 1
    any_cost: int = 3
    unscheduled_cost: int = 10
    wait_cost: int = 1


@dataclass(frozen=True)
class SchedulingRound:
    """Free slots per node (``slots``), ``rack`` of each node, pending ``tasks`` as
    (user, task index, input nodes), and rounds each user has waited."""

    slots: Mapping[str, int]
    rack: Mapping[str, str]
    tasks: Sequence[tuple[str, int, tuple[str, ...]]]
    waiting: Mapping[str, int] = field(default_factory=dict)

    def level(self, task: tuple[str, int, tuple[str, ...]], node: str) -> str:
        if node in task[2]:
            return "node"
        if self.rack[node] in {self.rack[v] for v in task[2]}:
            return "rack"
        return "any"


#: the most free slots of a round: each is one offer of the skip rules' loop (:mod:`mropt.fairness.ddrf`)
#: and one unit of the flow's capacity; a million take seconds
MAX_ROUND_SLOTS = 1_000_000


def round_from_instance(instance: FairnessInstance, slots_per_node: int | None = None) -> SchedulingRound:
    """A round on an empty cluster: every task with ``task_inputs`` pending (up to ``max_tasks``).

    Slots: ``slots_per_node`` per node, by default the number of the largest task (per
    resource, over users) that fit in the node, so that any slot holds any task; at most
    :data:`MAX_ROUND_SLOTS` in all (``--slots-per-node 2**70`` listed 2^70 offers).
    """
    if instance.nodes is None:
        raise InputError("round: the instance has no 'nodes'")
    if slots_per_node is not None and slots_per_node < 0:
        raise InputError(f"round: slots per node must be >= 0, got {slots_per_node}")
    biggest = instance.demands.max(axis=0)
    slots = {}
    for v, node in enumerate(instance.nodes):
        if slots_per_node is None:
            fit = [instance.node_capacity[v, j] / b for j, b in enumerate(biggest) if b > 0]
            slots[node.id] = int(min(fit) + 1e-9) if fit else 0
        else:
            slots[node.id] = int(slots_per_node)
    total = sum(slots.values())
    if total > MAX_ROUND_SLOTS:
        per_node = f"{slots_per_node:,} per node" if slots_per_node is not None else "the largest tasks that fit"
        shown = f"{total:,}" if total < 10**15 else f"{float(total):.3g}"
        raise InputError(
            f"round: {shown} free slots in all ({per_node}, on {len(slots):,} nodes); a round offers at most "
            f"{MAX_ROUND_SLOTS:,}: give fewer slots per node"
        )
    tasks: list[tuple[str, int, tuple[str, ...]]] = []
    for user in instance.users:
        inputs = user.task_inputs or ()
        limit = len(inputs) if user.max_tasks is None else min(len(inputs), user.max_tasks)
        tasks.extend((user.id, k, tuple(inputs[k])) for k in range(limit))
    return SchedulingRound(slots=slots, rack={n.id: n.rack for n in instance.nodes}, tasks=tuple(tasks))


def min_cost_placement(rnd: SchedulingRound, costs: Costs = Costs(), counts: Mapping[str, int] | None = None) -> dict:
    """The min-cost flow placement of the round: {"assignment": {(user, k): node}, "cost", "levels"}."""
    g = nx.DiGraph()
    sink, cluster = ("sink",), ("X",)
    users = sorted({t[0] for t in rnd.tasks})
    racks = sorted(set(rnd.rack.values()))
    for r in racks:
        g.add_edge(cluster, ("rack", r), weight=0)
    for v, free in rnd.slots.items():
        g.add_edge(("rack", rnd.rack[v]), ("node", v), weight=0)
        g.add_edge(("node", v), sink, weight=0, capacity=int(free))
    placed_total = 0
    if counts is not None:
        pending = {u: sum(1 for t in rnd.tasks if t[0] == u) for u in users}
        for u in users:
            want = int(counts.get(u, 0))
            if want > pending[u]:
                raise InputError(f"round: user {u!r} asked for {want} tasks, has {pending[u]} pending")
            g.add_node(("user", u), demand=-want)
            placed_total += want
    for t in rnd.tasks:
        tn = ("task", t[0], t[1])
        if counts is None:
            g.add_node(tn, demand=-1)
            wait = rnd.waiting.get(t[0], 0)
            g.add_edge(tn, ("unsched", t[0]), weight=costs.unscheduled_cost + costs.wait_cost * wait)
            g.add_edge(("unsched", t[0]), sink, weight=0)
            placed_total += 1
        else:
            g.add_edge(("user", t[0]), tn, weight=0, capacity=1)
        for v in t[2]:
            g.add_edge(tn, ("node", v), weight=costs.node_cost)
        for r in {rnd.rack[v] for v in t[2]}:
            g.add_edge(tn, ("rack", r), weight=costs.rack_cost)
        g.add_edge(tn, cluster, weight=costs.any_cost)
    g.add_node(sink, demand=placed_total)
    try:
        flow = nx.min_cost_flow(g)
    except nx.NetworkXUnfeasible:
        raise InputError("round: not enough free slots for the requested counts") from None
    assignment: dict[tuple[str, int], str] = {}
    for t in rnd.tasks:
        tn = ("task", t[0], t[1])
        out = flow.get(tn, {})
        target = next((k for k, f in out.items() if f > 0), None)
        if target is None or target[0] == "unsched":
            continue
        assignment[(t[0], t[1])] = _follow(flow, target, rnd, t)
    return {"assignment": assignment, "cost": round_cost(rnd, assignment, costs), "levels": levels(rnd, assignment)}


def _follow(flow: dict, start: tuple, rnd: SchedulingRound, task) -> str:
    """The node a unit of flow from ``start`` reaches (consuming it, so tasks get distinct slots)."""
    here = start
    while here[0] != "node":
        nxt = next(k for k, f in flow[here].items() if f > 0)
        flow[here][nxt] -= 1
        here = nxt
    return here[1]


def levels(rnd: SchedulingRound, assignment: Mapping[tuple[str, int], str]) -> dict[str, int]:
    task = {(t[0], t[1]): t for t in rnd.tasks}
    out = {"node": 0, "rack": 0, "any": 0}
    for key, node in assignment.items():
        out[rnd.level(task[key], node)] += 1
    return out


def round_cost(rnd: SchedulingRound, assignment: Mapping[tuple[str, int], str], costs: Costs = Costs()) -> int:
    """The flow's cost of an assignment: placement costs plus unscheduled tasks' penalties."""
    task = {(t[0], t[1]): t for t in rnd.tasks}
    total = 0
    per_level = {"node": costs.node_cost, "rack": costs.rack_cost, "any": costs.any_cost}
    for key, t in task.items():
        if key in assignment:
            total += per_level[rnd.level(t, assignment[key])]
        else:
            total += costs.unscheduled_cost + costs.wait_cost * rnd.waiting.get(t[0], 0)
    return total
