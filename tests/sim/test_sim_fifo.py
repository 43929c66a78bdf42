"""FIFO policy (Hadoop 1.0.3 JobQueueTaskScheduler): priority then submit order, one off-switch map
and one reduce per heartbeat, every task run once.

Heartbeats (mropt/sim/engine.py): n nodes beat every max(3, ceil(n/100)) s, node i at
i/n of the interval plus whole intervals, while it has a free slot and work is pending.
"""

from __future__ import annotations

import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy
from mropt.sim.recorder import Recorder

from sim_helpers import map_job, starts, succeeded_once, workload


def run(w: WorkloadInstance, policy: str = "fifo") -> Recorder:
    return Simulation(w, make_policy(policy, {})).run()


def test_priority_then_submit_order() -> None:
    # one node, one slot, beats at 0, 3, 6, ...: first ends at 10; urgent (priority 1, submitted
    # last) gets the beat of 12, late the beat of 24
    nodes = [{"id": "n", "count": 1, "map_slots": 1, "reduce_slots": 0}]
    jobs = [
        map_job("first", 1, 10.0, submit=0.0),
        map_job("late", 1, 10.0, submit=1.0),
        map_job("urgent", 1, 10.0, submit=2.0, priority=1),
    ]
    rec = run(workload(nodes, jobs))
    assert [starts(rec, j)[0][0] for j in ("first", "urgent", "late")] == [0.0, 12.0, 24.0]


def test_same_priority_and_submit_time_in_job_order() -> None:
    nodes = [{"id": "n", "count": 1, "map_slots": 1, "reduce_slots": 0}]
    rec = run(workload(nodes, [map_job("x", 1, 10.0), map_job("y", 1, 10.0)]))
    assert (starts(rec, "x")[0][0], starts(rec, "y")[0][0]) == (0.0, 12.0)


def test_one_non_local_map_per_heartbeat() -> None:
    # n0 (rack r0, one slot) runs the filler from t=0; j's inputs are on n0. n1 (rack r1, two
    # free slots) beats at 1.5 + 3k: one off-switch map per beat, at 1.5 and 4.5.
    nodes = [
        {"id": "n0", "count": 1, "rack": "r0", "map_slots": 1, "reduce_slots": 0},
        {"id": "n1", "count": 1, "rack": "r1", "map_slots": 2, "reduce_slots": 0},
    ]
    jobs = [map_job("filler", 1, 100.0), map_job("j", 2, 10.0, replicas=["n0"])]
    rec = run(workload(nodes, jobs))
    assert starts(rec, "j") == [(1.5, "n1", "any"), (4.5, "n1", "any")]


def test_local_maps_fill_a_heartbeat() -> None:
    # the same maps with inputs on n1 all start at n1's first beat
    nodes = [
        {"id": "n0", "count": 1, "rack": "r0", "map_slots": 1, "reduce_slots": 0},
        {"id": "n1", "count": 1, "rack": "r1", "map_slots": 2, "reduce_slots": 0},
    ]
    jobs = [map_job("filler", 1, 100.0), map_job("j", 2, 10.0, replicas=["n1"])]
    rec = run(workload(nodes, jobs))
    assert starts(rec, "j") == [(1.5, "n1", "node"), (1.5, "n1", "node")]


def test_one_reduce_per_heartbeat() -> None:
    # the map ends at 10; the node's beats of 12 and 15 start one reduce each
    nodes = [{"id": "n", "count": 1, "map_slots": 1, "reduce_slots": 2}]
    job = {
        "id": "j",
        "stages": [
            {"type": "map", "tasks": [{"duration": 10.0}]},
            {"type": "reduce", "tasks": [{"duration": 5.0, "count": 2}]},
        ],
    }
    rec = run(workload(nodes, [job]))
    assert [s[0] for s in starts(rec, "j")] == [0.0, 12.0, 15.0]


def mixed_workload() -> WorkloadInstance:
    jobs = []
    for k in range(10):
        jobs.append(
            {
                "id": f"j{k}",
                "submit_time": 2.5 * k,
                "user": f"u{k % 3}",
                "pool": f"p{k % 2}",
                "priority": k % 3 - 1,
                "stages": [
                    {"type": "map", "tasks": [{"duration": 2.0 + k, "count": 3 + 2 * k}]},
                    {"type": "reduce", "tasks": [{"duration": 4.0, "count": 1 + k % 3}]},
                    {"type": "map", "tasks": [{"duration": 1.5, "count": 2}]},
                ],
            }
        )
    return workload(
        [
            {"id": "a", "count": 4, "rack": "r0", "map_slots": 2, "reduce_slots": 2},
            {"id": "b", "count": 4, "rack": "r1", "map_slots": 2, "reduce_slots": 1, "speed": 1.5},
        ],
        jobs,
        placement={"replicas": 3, "seed": 3},
        timing={"reduce_slowstart": 0.05, "straggler_rate": 0.2},
        faults=[{"node": "b-2", "down": 4.0, "up": 20.0}],
    )


@pytest.mark.parametrize("policy", ["fifo", "fair", "hei", "capacity"])
def test_every_task_succeeds_exactly_once(policy: str) -> None:
    rec = run(mixed_workload(), policy)
    succeeded_once(rec)
    assert "failed" in rec.tasks_columns()["outcome"]  # the fault killed attempts, which ran again


@pytest.mark.parametrize("policy", ["fifo", "fair", "hei", "capacity"])
def test_same_seed_same_event_log(policy: str) -> None:
    w = mixed_workload()
    one = Simulation(w, make_policy(policy, {}), seed=4).run().event_log_hash()
    two = Simulation(w, make_policy(policy, {}), seed=4).run().event_log_hash()
    assert one == two
