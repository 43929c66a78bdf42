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
    starts,
    with_listed_replicas,
    workload,
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


def test_a_place_whose_local_maps_all_started_is_not_asked_again() -> None:
    """``a``'s inputs: task 0 on n0, tasks 1 and 2 on n1 (n0 two map slots, n1 and n2 one; node delay
    100 s, so ``a`` stays NODE-level). Task 0 starts on n0 at 0, task 1 on n1 at its first beat, 1;
    task 2 waits for n1 (43, its first beat after task 1's end). n0 beats again with a free slot: it is among ``a``'s input places, but its local map
    runs, so the walk passes ``a`` by without a launch that would find no task (before: a call that
    returned none at every such heartbeat). The log is the plain rule's."""
    nodes = [
        {"id": "n0", "rack": "r0", "map_slots": 2, "reduce_slots": 0},
        {"id": "n1", "rack": "r0", "map_slots": 1, "reduce_slots": 0},
        {"id": "n2", "rack": "r0", "map_slots": 1, "reduce_slots": 0},
    ]
    tasks = [{"duration": 40.0, "replicas": [node]} for node in ("n0", "n1", "n1")]
    w = workload(nodes, [{"id": "a", "stages": [{"type": "map", "tasks": tasks}]}])
    params = {"node_delay": 100.0, "rack_delay": 100.0}
    policy = make_policy("fair", params)
    sim = Simulation(w, policy, mode="heartbeat")
    asked: list[tuple[int, int]] = []
    launch_tasks = sim.launch_tasks

    def counted(job: int, node: int, slot_type: int, level: int = 2, count: int = 1) -> Any:
        got = launch_tasks(job, node, slot_type, level, count)
        asked.append((node, got[0]))
        return got

    sim.launch_tasks = counted  # type: ignore[method-assign]
    rec = sim.run()
    assert starts(rec, "a") == [(0.0, "n0", "node"), (1.0, "n1", "node"), (43.0, "n1", "node")]
    assert asked == [(0, 0), (1, 1), (1, 2)]  # (node, first attempt): before, n0's later beats asked too
    same_log(w, "fair", params, mode="heartbeat")
