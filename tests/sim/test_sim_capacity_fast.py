"""Capacity's accelerated heartbeat decides as the plain rule on nodes of many slots and resources.

``tests/sim/test_sim_heartbeat_reference.py`` draws slot-only nodes of 1-3 map slots. The
Alibaba day runs ``capacity`` on machines of 64 map slots, CPUs and memory (every task holds a
slot and its requests), where a heartbeat launches several maps and a job is considered again
after another job's launch: ``Capacity._maps`` then skips the local launch of a job whose local
launch failed earlier on the same heartbeat. These seeded random workloads (several slots and
resources per node, task groups of different requests in one stage, replicas, queues with
limits, nodes going down and up) must give ``Capacity._assign_reference``'s event log exactly.
"""

from __future__ import annotations

import random
from typing import Any

from mropt.model.workload import WorkloadInstance

from sim_helpers import random_queues, same_log, workload


def resource_workload(rng: random.Random) -> WorkloadInstance:
    """Nodes of 3-8 map slots and a few CPUs on 2-3 racks, jobs with CPU and memory requests."""
    n_racks = rng.randint(2, 3)
    nodes = [
        {
            "id": f"n{i}",
            "rack": f"r{i % n_racks}",
            "map_slots": rng.randint(3, 8),
            "reduce_slots": rng.randint(0 if i else 1, 2),
            "resources": {"cpu": float(rng.randint(2, 8)), "mem": 1.0},
        }
        for i in range(rng.randint(4, 9))
    ]
    n_queues = rng.randint(1, 3)
    jobs = []
    for i in range(rng.randint(6, 30)):
        groups = [
            {
                "duration": rng.choice([1.0, 3.0, 5.0, 9.0]),
                "count": rng.randint(1, 12),
                "demand": {"cpu": rng.choice([0.5, 1.0, 2.0]), "mem": rng.choice([0.1, 0.2, 0.4])},
            }
            for _ in range(rng.choice([1, 1, 2]))
        ]
        stages: list[dict[str, Any]] = [{"type": "map", "tasks": groups}]
        if rng.random() < 0.3:
            stages.append({"type": "reduce", "tasks": [{"duration": 2.0, "count": rng.randint(1, 3)}]})
        jobs.append(
            {
                "id": f"j{i}",
                "submit_time": float(rng.randint(0, 40)),
                "priority": rng.randint(-2, 2),
                "user": f"u{rng.randint(0, 4)}",
                "queue": f"q{rng.randrange(n_queues)}",
                "stages": stages,
            }
        )
    queues = random_queues(rng, n_queues, headroom=(10, 50), user_limit=0.5, priority=0.3)
    extra: dict[str, Any] = {"placement": {"replicas": rng.randint(1, 3), "seed": rng.randint(0, 9)}}
    if n_queues > 1 or rng.random() < 0.5:
        extra["queues"] = queues
    if rng.random() < 0.5:  # killed attempts: their tasks pending again, on their racks' stacks
        extra["faults"] = [
            {"node": f"n{k}", "down": float(rng.randint(5, 25)), "up": float(rng.randint(30, 60))}
            for k in rng.sample(range(len(nodes)), 2)
        ]
    return workload(nodes, jobs, **extra)


def test_fast_heartbeat_on_many_slots_and_resources_gives_the_reference_log() -> None:
    """Each workload run twice, each run by its own path alone (``same_log``)."""
    rng = random.Random("capacity-fast-resources")
    for _ in range(40):
        w = resource_workload(rng)
        params = {"locality_wait_factor": rng.choice([-1.0, -1.0, 0.0, 0.5, 1.0])}
        same_log(w, "capacity", params, seed=3, stall_limit=300)
