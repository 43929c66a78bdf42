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

from mropt.sim.engine import Simulation
from mropt.sim.policies.input_places import InputPlaces
from mropt.sim.policy import make_policy
from mropt.sim.speculation.table import rules

from sim_helpers import assert_places_are_the_engines, capacity_params, pooled_workloads, same_log


def test_input_places_are_where_the_engine_finds_a_local_task() -> None:
    rng = random.Random("input-places")
    for w in pooled_workloads(rng, 20):
        sim = Simulation(w, make_policy("fifo"))
        places = InputPlaces(sim)
        for j in sim.jobs:
            _, nodes, racks = places.of(j.index, 0)
            if nodes is None:
                assert j.stages[0].replicas is None
            else:
                assert_places_are_the_engines(sim, j.index, nodes, racks)


def draw(policy: str, rng: random.Random) -> dict[str, Any]:
    if policy == "capacity":
        return capacity_params(rng)
    return {"interval": rng.choice([5.0, 600.0]), "level": rng.choice(["node", "rack"])}


@pytest.mark.parametrize("policy", ["capacity", "mpsa"])
def test_the_plain_rules_event_log_with_listed_and_generated_replicas(policy: str) -> None:
    rng = random.Random(f"input-places-{policy}")
    for w in pooled_workloads(rng, 12):
        params = draw(policy, rng)
        rule = rng.choice([None, None, *rules()])
        same_log(w, policy, params, rule, mode="heartbeat", seed=5, stall_limit=300)
