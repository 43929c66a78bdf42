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

from test_sim_heartbeat_reference import fair_params, random_workload

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policies.fair import Fair
from mropt.sim.policy import make_policy
from mropt.sim.state import NODE, RACK


def with_listed_replicas(w: WorkloadInstance, rng: random.Random) -> WorkloadInstance:
    """``w`` with replicas listed for its map tasks: one to three nodes each, or none for a whole job."""
    data = w.to_dict()
    data.pop("placement", None)
    ids = [node["id"] for node in data["cluster"]["nodes"]]
    for job in data["jobs"]:
        none = rng.random() < 0.2
        for group in job["stages"][0]["tasks"]:
            count = group.get("count", 1)
            group["replicas"] = [
                [] if none else rng.sample(ids, rng.randint(1, min(3, len(ids)))) for _ in range(count)
            ]
    return WorkloadInstance.from_dict(data)


def test_input_places_are_where_the_engine_finds_a_local_task() -> None:
    rng = random.Random("fair-input-places")
    for k in range(20):
        w = random_workload(rng)
        if k % 2:
            w = with_listed_replicas(w, rng)
        policy = make_policy("fair")
        assert isinstance(policy, Fair)
        sim = Simulation(w, policy)
        policy.start(sim)
        for j in sim.jobs:
            _, nodes, racks = policy._input_places(j.index, 0)
            stage = j.stages[0]
            if nodes is None:
                assert stage.replicas is None or policy._no_locality(j.index, 0)
                continue
            for node in range(sim.n_nodes):
                rack = sim.node_rack[node]
                local = stage.take(node, rack, NODE, sim.node_rack)[0] >= 0
                near = stage.take(node, rack, RACK, sim.node_rack)[0] >= 0
                assert (node in nodes, rack in racks) == (local, near), (j.index, node)


def test_listed_replicas_give_the_plain_rules_event_log() -> None:
    rng = random.Random("fair-listed-replicas")
    for _ in range(20):
        w = with_listed_replicas(random_workload(rng), rng)
        params: dict[str, Any] = fair_params(rng)
        logs = [
            Simulation(w, make_policy("fair", params, reference=reference), seed=5, stall_limit=300)
            .run()
            .event_log_hash()
            for reference in (True, False)
        ]
        assert logs[0] == logs[1], (params, w)
