"""MPSA's plain Algorithm 2 and its accelerated one decide alike.

``make_policy("mpsa", reference=True)`` runs every slot through ``Mpsa.choose`` (each queue's
running attempts summed over its jobs, its wish found by a scan, the order by ``algorithm2_order``,
a launch tried on each job); the default runs ``Mpsa._choose_fast`` (the counts kept, one queue's
wish read from the run's runnable count, a map not tried on a node or rack holding none of its
input). On seeded random slot workloads (one or several priorities, replicas, slow-start, faults,
every ``lend_idle``, both levels, speculation rules) both must give the same event log; the fast
run checks its kept counts and order against the plain ones at every slot (``self_check``).
"""

from __future__ import annotations

import random
from typing import Any

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy
from mropt.sim.speculation.table import rules
from mropt.sim.state import ANY, MAP, NODE

from sim_helpers import random_extras, same_log, slot_stages, workload


def random_workload(rng: random.Random) -> WorkloadInstance:
    """A few slot nodes on two racks and jobs arriving faster than they can run, drawn from ``rng``."""
    nodes = [
        {"id": f"n{i}", "rack": f"r{i % 2}", "map_slots": rng.randint(1, 3), "reduce_slots": rng.randint(0, 2) or 1}
        for i in range(rng.randint(2, 6))
    ]
    levels = rng.choice([[0], [0, 1], [-1, 0, 2]])
    jobs = []
    for i in range(rng.randint(3, 20)):
        stages = slot_stages(rng, reduce=0.6)
        submit = float(rng.randint(0, 40))
        job: dict[str, Any] = {"id": f"j{i}", "submit_time": submit, "priority": rng.choice(levels), "stages": stages}
        if rng.random() < 0.5:
            job["deadline"] = submit + rng.choice([20.0, 60.0])
        jobs.append(job)
    return workload(nodes, jobs, **random_extras(rng, placement=0.8, faults=0.25))


def mpsa_params(rng: random.Random) -> dict[str, Any]:
    return {
        "interval": rng.choice([4.0, 10.0, 600.0]),
        "level": rng.choice(["node", "rack"]),
        "lend_idle": rng.choice(["no", "task_end", "preempt"]),
        "liveness": rng.random() < 0.8,
        "window": rng.choice([0, 2, 6]),
    }


def test_plain_and_accelerated_algorithm2_give_the_same_event_log() -> None:
    rng = random.Random("mpsa-fast")
    for _ in range(40):
        w = random_workload(rng)
        params = mpsa_params(rng)
        rule = rng.choice([None, None, *rules()])
        same_log(w, "mpsa", params, rule, {"self_check": True}, seed=3, stall_limit=300)


def test_a_map_is_not_tried_on_a_node_without_its_input() -> None:
    """One job, its two maps' input on n0 only: a heartbeat of n1 tries no NODE-level launch there
    (the plain rule tries one, which fails, then launches off-node)."""
    nodes = [{"id": f"n{i}", "rack": f"r{i}", "map_slots": 1, "reduce_slots": 1} for i in range(2)]
    jobs = [{"id": "j0", "submit_time": 0.0, "stages": [{"type": "map", "tasks": [{"duration": 5.0, "count": 2}]}]}]
    w = workload(nodes, jobs, placement={"replicas": 1, "seed": 0})
    tried: dict[bool, list[tuple[int, int]]] = {}
    for reference in (True, False):
        policy = make_policy("mpsa", {}, reference=reference)
        sim = Simulation(w, policy, mode="heartbeat", seed=0)
        held = {int(n) for n in sim.jobs[0].stages[0].replicas.reshape(-1)}  # type: ignore[union-attr]
        assert len(held) == 1  # one replica of each of the two maps, on the same node (seed 0)
        launch, launch_tasks = sim.launch, sim.launch_tasks
        calls: list[tuple[int, int]] = []  # (node, started: the first attempt's index, or -1)

        def spy(job: int, node: int, stype: int, level: int = ANY, calls: Any = calls, launch: Any = launch) -> int:
            if stype == MAP and level == NODE:
                calls.append((node, launch(job, node, stype, level)))
                return calls[-1][1]
            return launch(job, node, stype, level)

        def spy_run(
            job: int,
            node: int,
            stype: int,
            level: int = ANY,
            count: int = 1,
            calls: Any = calls,
            run: Any = launch_tasks,
        ) -> Any:
            got = run(job, node, stype, level, count)
            if stype == MAP and level == NODE:
                calls.append((node, got[0]))
            return got

        sim.launch = spy  # type: ignore[method-assign]
        sim.launch_tasks = spy_run  # type: ignore[method-assign]
        sim.run()
        tried[reference] = calls
    (input_node,) = held
    assert (1 - input_node, -1) in tried[True]
    assert tried[False]  # the fast path's NODE-level launches were seen (through launch_tasks)
    assert all(node == input_node and got >= 0 for node, got in tried[False])
