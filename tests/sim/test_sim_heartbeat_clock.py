"""A heartbeat is never scheduled before the clock (``HeartbeatOffers._next_beat`` and its inlined copies in
``_schedule_counts`` and ``_schedule_all``).

A node's next heartbeat is its phase (``interval x node / nodes``) plus whole intervals; in floats that sum
can round below now (a 0.3 s interval on 2 nodes at 3.75 s: 3.7499999999999996; near 2**52 s, where a
time's last bit is a second, whole seconds), and a task then started before its job was submitted. The
oracle is the workload's own submit times and ``verify_simulation`` (which shares no code with the engine):
no attempt starts before its job's submit time, the clock never runs back, and the fast paths on slots
decide as the plain rules (``HeartbeatOffers.plain``).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.heartbeat_offers import HeartbeatOffers
from mropt.sim.policy import make_policy
from mropt.sim.verify import verify_simulation


def clock_workload(rng: random.Random, base: float, interval: float, demands: bool) -> WorkloadInstance:
    """A few nodes, jobs submitted on the heartbeat grid's near-misses (multiples of a fraction of the
    interval, after ``base``), maps and some reduces of short durations (whole seconds far from 0, where a
    time's last bit is a second: ``verify`` checks each attempt's running time)."""
    durations = [0.1, 0.3, 1.0, 2.5] if base < 2.0**50 else [1.0, 2.0, 3.0]
    nodes = rng.randint(2, 6)
    node: dict[str, Any] = {"id": "n", "count": nodes, "map_slots": rng.randint(1, 2), "reduce_slots": 1}
    if demands:
        node["resources"] = {"cpu": 4, "mem": 4}
    jobs = []
    for j in range(rng.randint(1, 8)):
        step = interval * rng.choice([1, 0.5, 0.25]) / rng.choice([1, nodes])
        stages: list[dict[str, Any]] = [
            {"type": "map", "tasks": [{"duration": rng.choice(durations), "count": rng.randint(1, 6)}]}
        ]
        if rng.random() < 0.4:
            stages.append({"type": "reduce", "tasks": [{"duration": durations[-1], "count": rng.randint(1, 2)}]})
        if demands:
            for st in stages:
                st["tasks"][0]["demand"] = {"cpu": 1, "mem": 1}
        jobs.append({"id": f"j{j}", "submit_time": base + step * rng.randint(0, 40), "stages": stages})
    return WorkloadInstance.from_dict(
        {"kind": "workload", "schema_version": 1, "cluster": {"nodes": [node]}, "jobs": jobs}
    )


def run(w: WorkloadInstance, policy: str, interval: float, plain: bool) -> tuple[Any, Any]:
    sim = Simulation(w, make_policy(policy), mode="heartbeat", heartbeat=interval)
    assert isinstance(sim.offers, HeartbeatOffers)
    if plain:
        sim.offers.plain()
    return sim, sim.run()


@pytest.mark.parametrize("policy", ["fair", "capacity", "fifo"])
@pytest.mark.parametrize(("base", "interval"), [(0.0, 0.3), (0.0, 0.7), (0.0, 0.1), (2.0**52, 3.0)])
def test_no_attempt_starts_before_its_job_or_the_clock(policy: str, base: float, interval: float) -> None:
    rng = random.Random(f"heartbeat-clock-{policy}-{base}-{interval}")
    for k in range(30):
        w = clock_workload(rng, base, interval, demands=policy != "fifo" and k % 2 == 1)
        sim, rec = run(w, policy, interval, plain=False)
        jobs, tasks = rec.jobs_columns(), rec.tasks_columns()
        submit = {job.id: job.submit_time for job in w.jobs}
        starts = np.asarray(tasks["start"], dtype=float)
        assert all(s >= submit[j] for s, j in zip(starts, tasks["job_id"], strict=True)), (k, w.to_dict())
        verdict = verify_simulation(w, jobs, tasks)
        assert verdict.ok, (k, verdict.problems[:3])
        plain_sim, plain_rec = run(w, policy, interval, plain=True)
        assert (rec.event_log_hash(), sim.events) == (plain_rec.event_log_hash(), plain_sim.events), k
