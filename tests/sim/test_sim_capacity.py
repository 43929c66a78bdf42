"""Capacity Scheduler policy (Hadoop 1.0.3): queue order, user limit, maximum capacity, off-switch rule.

Heartbeats (mropt/sim/engine.py): n nodes beat every max(3, ceil(n/100)) s, node i at
i/n of the interval plus whole intervals, while it has a free slot and work is pending.
"""

from __future__ import annotations

from typing import Any

import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policies.capacity import user_limit
from mropt.sim.policy import make_policy
from mropt.sim.recorder import Recorder

from sim_helpers import map_job, starts, succeeded_once, workload

NODES4 = [{"id": "n", "count": 4, "map_slots": 1, "reduce_slots": 0}]


def run(w: WorkloadInstance, params: dict[str, Any] | None = None) -> Recorder:
    return Simulation(w, make_policy("capacity", params or {})).run()


def busy(rec: Recorder, t: float, column: str) -> dict[str, int]:
    """Attempts running at time t, per value of a job column (queue, user)."""
    tasks = rec.tasks_columns()
    jobs = rec.jobs_columns()
    of = dict(zip(jobs["job_id"], jobs[column], strict=True))
    out: dict[str, int] = {}
    for jid, start, end in zip(tasks["job_id"], tasks["start"], tasks["end"], strict=True):
        if start <= t < end:
            out[of[jid]] = out.get(of[jid], 0) + 1
    return out


@pytest.mark.parametrize(
    ("occupied", "cap", "users", "ul_min", "factor", "limit"),
    [
        (0, 10, 2, 100.0, 1.0, 10),  # max(ceil(10/2), ceil(100 x 10/100)) = 10
        (0, 10, 2, 50.0, 1.0, 5),  # max(5, 5)
        (0, 10, 3, 25.0, 1.0, 4),  # max(ceil(10/3) = 4, ceil(2.5) = 3)
        (12, 10, 2, 50.0, 1.0, 7),  # over capacity: current = 13, max(7, 7), min(7, floor(10 x 1))
        (12, 10, 1, 100.0, 1.0, 10),  # current 13, but a user never gets more than floor(10 x 1)
        (12, 10, 1, 100.0, 2.0, 13),  # ... unless the user-limit factor allows it
        (0, 0, 1, 100.0, 1.0, 1),  # queueCap = max(capacity, slots per task)
    ],
)
def test_user_limit_formula(occupied: int, cap: int, users: int, ul_min: float, factor: float, limit: int) -> None:
    assert user_limit(occupied, cap, users, ul_min, factor) == limit


def test_lowest_occupied_over_capacity_first() -> None:
    # capacity slots a 3, b 1. Node 0 (t=0): tie 0/3 = 0/1, listed order: a; node 1: a 1/3 vs b 0: b;
    # node 2: a 1/3 vs b 1/1: a; node 3: a 2/3 vs b 1: a.
    queues = [{"id": "a", "capacity": 75}, {"id": "b", "capacity": 25}]
    jobs = [map_job("ja", 8, 10.0, queue="a"), map_job("jb", 8, 10.0, queue="b")]
    rec = run(workload(NODES4, jobs, queues=queues))
    assert busy(rec, 5.0, "queue") == {"a": 3, "b": 1}
    assert [s[0] for s in starts(rec, "jb")][:1] == [0.75]


def test_idle_capacity_is_shared() -> None:
    # a lone user may take floor(queueCap x user-limit-factor) slots: with factor 4, the whole cluster
    queues = [{"id": "a", "capacity": 25, "user_limit_factor": 4}, {"id": "b", "capacity": 75}]
    rec = run(workload(NODES4, [map_job("ja", 8, 10.0, queue="a")], queues=queues))
    assert busy(rec, 5.0, "queue") == {"a": 4}
    # with the default factor 1 the user is held to the queue's capacity (1 slot)
    queues[0].pop("user_limit_factor")
    rec1 = run(workload(NODES4, [map_job("ja", 8, 10.0, queue="a")], queues=queues))
    assert busy(rec1, 5.0, "queue") == {"a": 1}


def test_maximum_capacity_caps_a_queue() -> None:
    queues = [{"id": "a", "capacity": 25, "maximum_capacity": 50, "user_limit_factor": 4}, {"id": "b", "capacity": 75}]
    rec = run(workload(NODES4, [map_job("ja", 8, 10.0, queue="a")], queues=queues))
    assert busy(rec, 5.0, "queue") == {"a": 2}
    # 8 maps, 2 at a time, 10 s each: four waves
    assert rec.jobs_columns()["finish"][0] > 40.0


def test_user_limit_splits_a_queue() -> None:
    # one queue, 4 slots, minimum-user-limit-percent 50. u1 alone takes nodes 0 and 1 (t=0, 0.75);
    # u2 arrives at 1: with two active users the limit is max(ceil(4/2), ceil(50% x 4)) = 2,
    # so nodes 2 and 3 go to u2 although u1's job is first.
    queues = [{"id": "q", "capacity": 100, "minimum_user_limit_percent": 50}]
    jobs = [map_job("j1", 8, 10.0, user="u1", queue="q"), map_job("j2", 8, 10.0, submit=1.0, user="u2", queue="q")]
    rec = run(workload(NODES4, jobs, queues=queues))
    assert busy(rec, 5.0, "user") == {"u1": 2, "u2": 2}
    # without the user limit (100 %) the first job takes every slot
    rec100 = run(workload(NODES4, jobs, queues=[{"id": "q", "capacity": 100}]))
    assert busy(rec100, 5.0, "user") == {"u1": 4}


def test_supports_priority_orders_jobs_in_a_queue() -> None:
    nodes = [{"id": "n", "count": 1, "map_slots": 1, "reduce_slots": 0}]
    jobs = [
        map_job("first", 1, 10.0, submit=0.0),
        map_job("late", 1, 10.0, submit=1.0),
        map_job("urgent", 1, 10.0, submit=2.0, priority=2),
    ]
    with_priority = run(workload(nodes, jobs, queues=[{"id": "default", "capacity": 100, "supports_priority": True}]))
    assert [starts(with_priority, j)[0][0] for j in ("first", "urgent", "late")] == [0.0, 12.0, 24.0]
    without = run(workload(nodes, jobs))  # no queues: one queue 'default' at 100 %, submit order
    assert [starts(without, j)[0][0] for j in ("first", "late", "urgent")] == [0.0, 12.0, 24.0]


def test_off_switch_waits_for_missed_opportunities_and_goes_one_per_heartbeat() -> None:
    # n0 (rack r0) holds every input; n1 (rack r1) beats at 1.5 + 3k. localityWaitFactor = 1/2,
    # required = min(4 unfinished maps, 2 trackers) = 2, so off-switch needs missed > 1.
    # t=0 n0: two local maps. 1.5 n1: missed 1, no. 4.5: missed 2: one off-switch map, then the
    # heartbeat stops. 7.5: missed 3 (an off-switch launch does not reset it): the last one.
    nodes = [
        {"id": "n0", "count": 1, "rack": "r0", "map_slots": 2, "reduce_slots": 0},
        {"id": "n1", "count": 1, "rack": "r1", "map_slots": 2, "reduce_slots": 0},
    ]
    rec = run(workload(nodes, [map_job("j", 4, 100.0, replicas=["n0"])]))
    assert starts(rec, "j") == [(0.0, "n0", "node"), (0.0, "n0", "node"), (4.5, "n1", "any"), (7.5, "n1", "any")]
    # a locality wait factor of 0 allows off-switch at the first missed opportunity
    rec0 = run(workload(nodes, [map_job("j", 4, 100.0, replicas=["n0"])]), {"locality_wait_factor": 0.0})
    assert [s[0] for s in starts(rec0, "j")] == [0.0, 0.0, 1.5, 4.5]


def test_one_reduce_per_heartbeat() -> None:
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


def test_every_task_succeeds_once() -> None:
    jobs = []
    for k in range(8):
        jobs.append(
            {
                "id": f"j{k}",
                "submit_time": 2.0 * k,
                "user": f"u{k % 3}",
                "queue": "a" if k % 2 else "b",
                "priority": k % 3 - 1,
                "stages": [
                    {"type": "map", "tasks": [{"duration": 3.0 + k, "count": 4 + k}]},
                    {"type": "reduce", "tasks": [{"duration": 2.0, "count": 3}]},
                ],
            }
        )
    w = workload(
        [
            {"id": "a", "count": 3, "rack": "r0", "map_slots": 2, "reduce_slots": 1},
            {"id": "b", "count": 3, "rack": "r1", "map_slots": 2, "reduce_slots": 1},
        ],
        jobs,
        placement={"replicas": 3, "seed": 2},
        queues=[
            {"id": "a", "capacity": 30, "maximum_capacity": 60, "minimum_user_limit_percent": 50},
            {"id": "b", "capacity": 70, "supports_priority": True, "user_limit_factor": 2},
        ],
        timing={"reduce_slowstart": 0.05},
        faults=[{"node": "a-1", "down": 5.0, "up": 30.0}],
    )
    rec = run(w)
    succeeded_once(rec)
