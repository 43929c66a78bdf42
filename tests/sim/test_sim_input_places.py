"""``InputPlaces``: where a job's map stage holds its input (``mpsa`` passes a job by elsewhere).

A map launched at NODE (RACK) level needs a pending task with input on the node (its rack). The
places are checked against the engine's own answer (``Stage.take`` on every node, every task
pending); the decisions of ``mpsa`` and ``capacity`` against their plain rules (``reference=True``)
in heartbeat mode, on random workloads with generated placements and with listed replicas (a job's
maps with none), which ``test_sim_heartbeat_reference.py`` and ``test_sim_mpsa_fast.py`` do not draw.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from test_sim_fair_input_places import with_listed_replicas
from test_sim_heartbeat_reference import capacity_params, random_workload

from mropt.sim.engine import Simulation
from mropt.sim.policies.input_places import InputPlaces
from mropt.sim.policy import make_policy
from mropt.sim.speculation.table import make_speculation, rules
from mropt.sim.state import NODE, RACK


def test_input_places_are_where_the_engine_finds_a_local_task() -> None:
    rng = random.Random("input-places")
    for k in range(20):
        w = random_workload(rng)
        if k % 2:
            w = with_listed_replicas(w, rng)
        sim = Simulation(w, make_policy("fifo"))
        places = InputPlaces(sim)
        for j in sim.jobs:
            stage_index, nodes, racks = places.of(j.index, 0)
            assert stage_index == 0 and places.known[j.index][1] == nodes
            stage = j.stages[0]
            if nodes is None:
                assert stage.replicas is None
                continue
            for node in range(sim.n_nodes):
                rack = sim.node_rack[node]
                local = stage.take(node, rack, NODE, sim.node_rack)[0] >= 0
                near = stage.take(node, rack, RACK, sim.node_rack)[0] >= 0
                assert (node in nodes, rack in racks) == (local, near), (j.index, node)


def draw(policy: str, rng: random.Random) -> dict[str, Any]:
    if policy == "capacity":
        return capacity_params(rng)
    return {"interval": rng.choice([5.0, 600.0]), "level": rng.choice(["node", "rack"])}


@pytest.mark.parametrize("policy", ["capacity", "mpsa"])
def test_the_plain_rules_event_log_with_listed_and_generated_replicas(policy: str) -> None:
    rng = random.Random(f"input-places-{policy}")
    for k in range(12):
        w = random_workload(rng)
        if k % 2:
            w = with_listed_replicas(w, rng)
        params = draw(policy, rng)
        rule = rng.choice([None, None, *rules()])
        logs = [
            Simulation(
                w,
                make_policy(policy, params, reference=reference),
                mode="heartbeat",
                seed=5,
                stall_limit=300,
                speculation=make_speculation(rule),
            )
            .run()
            .event_log_hash()
            for reference in (True, False)
        ]
        assert logs[0] == logs[1], (policy, params, rule, w)
