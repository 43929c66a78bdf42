"""Fair's heartbeat on kept orders passes a job by on a node without its map input (``FairOffers._input_places``).

A map launched at NODE (RACK) level needs a pending task with input on the node (its rack):
``_assign_fast`` does not ask the engine on any other node. The places are checked against the
engine's own answer (``Stage.take`` on every node, every task pending), and the decisions against
the plain rule (``Fair._assign_reference``, which launches everywhere) on random workloads whose
map tasks list their replicas (some none: no locality), beside the generated placements of
``test_sim_heartbeat_reference``.
"""

from __future__ import annotations

import random
from typing import Any

from mropt.sim.engine import Simulation
from mropt.sim.policies.fair import Fair
from mropt.sim.policy import make_policy

from sim_helpers import (
    assert_places_are_the_engines,
    fair_params,
    pooled_workload,
    pooled_workloads,
    same_log,
    with_listed_replicas,
)


def test_input_places_are_where_the_engine_finds_a_local_task() -> None:
    rng = random.Random("fair-input-places")
    for w in pooled_workloads(rng, 20):
        policy = make_policy("fair")
        assert isinstance(policy, Fair)
        sim = Simulation(w, policy)
        policy.start(sim)
        for j in sim.jobs:
            _, nodes, racks = policy._input_places(j.index, 0)
            if nodes is None:
                assert j.stages[0].replicas is None or policy._no_locality(j.index, 0)
            else:
                assert_places_are_the_engines(sim, j.index, nodes, racks)


def test_listed_replicas_give_the_plain_rules_event_log() -> None:
    rng = random.Random("fair-listed-replicas")
    for _ in range(20):
        w = with_listed_replicas(pooled_workload(rng), rng)
        params: dict[str, Any] = fair_params(rng)
        same_log(w, "fair", params, seed=5, stall_limit=300)
