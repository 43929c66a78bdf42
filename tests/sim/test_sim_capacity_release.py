"""``Capacity.release_one`` against ``Capacity.release`` of one node (issue 32).

An attempt's end frees its slot and demand through ``release_one`` (no tuple of nodes, the
two-resource case spelled out); a batch's through ``release``. Random holds and ends, on nodes
that go down and come back, with two and three resources, must leave both forms' free slots and
resources equal bit for bit, and tell ``freed`` of the same nodes in the same order.
"""

from __future__ import annotations

import random

import pytest

from mropt.sim.capacity import Capacity

from sim_helpers import workload


def _capacity(resources: list[str], slots: bool) -> Capacity:
    slot_fields = {"map_slots": 4, "reduce_slots": 2} if slots else {}
    nodes = [
        {"id": f"n{k}", "rack": f"r{k % 2}", "resources": {r: 7.3 + k for r in resources}, **slot_fields}
        for k in range(4)
    ]
    job = {"id": "j", "stages": [{"type": "map", "tasks": [{"duration": 1, "demand": {resources[0]: 1.0}}]}]}
    return Capacity(workload(nodes, [job]))


@pytest.mark.parametrize("resources", [["cpu", "mem"], ["cpu", "gpu", "mem"]])
@pytest.mark.parametrize("slots", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_release_one_frees_what_release_of_one_node_frees(seed: int, slots: bool, resources: list[str]) -> None:
    rng = random.Random(seed)
    one, many = _capacity(resources, slots), _capacity(resources, slots)
    told: tuple[list[int], list[int]] = ([], [])
    one.freed, many.freed = told[0].append, told[1].append
    held: list[tuple[int, int, tuple[float, ...] | None]] = []
    for _ in range(400):
        op = rng.random()
        if op < 0.05:  # a node goes down (its attempts were ended first) or comes back
            node = rng.randrange(4)
            for cap in (one, many):
                (cap.up if not cap.node_up[node] else cap.down)(node)
            held = [h for h in held if h[1] != node]
        elif op < 0.55 or not held:  # an attempt starts: what ``Launches._start`` holds
            node, stype = rng.randrange(4), rng.randrange(2)
            demand = None if rng.random() < 0.2 else tuple(rng.choice([0.1, 0.3, 1.7]) for _ in resources)
            for cap in (one, many):
                if cap.uses_slots:
                    cap.free[stype][node] -= 1
                if demand is not None:
                    res = cap.free_resources[node]
                    for k, amount in enumerate(demand):
                        res[k] -= amount
            held.append((stype, node, demand))
        else:  # one ends
            stype, node, demand = held.pop(rng.randrange(len(held)))
            one.release_one(stype, node, demand)
            many.release(stype, (node,), demand)
        assert one.free == many.free
        assert [list(map(float.hex, r)) for r in one.free_resources] == [
            list(map(float.hex, r)) for r in many.free_resources
        ]
    assert told[0] == told[1] and told[0]


@pytest.mark.parametrize("slots", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_a_batch_release_frees_what_release_one_of_each_node_frees(seed: int, slots: bool) -> None:
    """``release`` of a batch (nodes repeated, in member order) against ``release_one`` of each: the
    same free slots and resources, bit for bit, and the same nodes told; where ``freed`` is a set's
    ``add`` (the event mode's), a batch without a demand on slots while every node is up tells the
    set in one ``update`` call."""
    rng = random.Random(seed)
    one, many = _capacity(["cpu", "mem"], slots), _capacity(["cpu", "mem"], slots)
    told_one: set[int] = set()
    told_many: set[int] = set()
    one.freed, many.freed = told_one.add, told_many.add
    updates = [0]
    update = many._freed_all
    assert getattr(update, "__self__", None) is told_many  # the set's own ``update``

    def counted(nodes: list[int]) -> None:
        updates[0] += 1
        update(nodes)

    many._freed_all = counted
    bulk = 0
    for _ in range(300):
        down = [node for node in range(4) if not one.node_up[node]]
        if rng.random() < 0.03:  # a node goes down, or one comes back
            node = rng.randrange(4)
            for cap in (one, many):
                (cap.up if not cap.node_up[node] else cap.down)(node)
            continue
        if down and rng.random() < 0.15:
            for cap in (one, many):
                cap.up(down[0])
            continue
        stype = rng.randrange(2)
        nodes = sorted(rng.randrange(4) for _ in range(rng.randint(1, 6)))
        demand = None if rng.random() < 0.5 else (rng.choice([0.1, 0.3, 1.7]), 0.5)
        for cap in (one, many):
            for node in nodes:
                if cap.node_up[node]:
                    cap.free[stype][node] -= 1 if cap.uses_slots else 0
                    if demand is not None:
                        cap.free_resources[node][0] -= demand[0]
                        cap.free_resources[node][1] -= demand[1]
        before = updates[0]
        for node in nodes:
            one.release_one(stype, node, demand)
        many.release(stype, nodes, demand)
        bulk += updates[0] > before
        assert updates[0] - before == (demand is None and slots and all(many.node_up))
        assert one.free == many.free and told_one == told_many
        assert [list(map(float.hex, r)) for r in one.free_resources] == [
            list(map(float.hex, r)) for r in many.free_resources
        ]
    assert bulk > 20 or not slots
