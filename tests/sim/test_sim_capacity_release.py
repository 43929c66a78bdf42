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
