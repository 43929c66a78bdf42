"""``fair``'s launch runs (``FairOffers._run_length``): the picks in a row that go to one job launch in
one ``launch_tasks`` call, with the plain rule's decisions.

``Fair._assign_reference`` (the oracle: Hadoop 1.0.3's assignTasks written plain, one task a pick,
pools and jobs sorted afresh before each) and the fast heartbeat must give the same event log on
workloads built to make runs and to end them every way: nodes with up to 6 map and 4 reduce slots;
pools of every weight, minShare, max slots and mode, whose keys cross after a launch or two; jobs
of several priorities (weights) whose keys cross within a pool; the per-heartbeat caps; maps
without replicas (level ANY); a node going down.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policies.fair_offers import FairOffers
from mropt.sim.policy import make_policy

from sim_helpers import fair_params, random_extras, same_log, starts, with_listed_replicas, workload


def run_workload(rng: random.Random) -> WorkloadInstance:
    """Wide slot nodes on two racks and many jobs in a few pools (module docstring)."""
    nodes = [
        {"id": f"n{i}", "rack": f"r{i % 2}", "map_slots": rng.randint(1, 6), "reduce_slots": rng.randint(1, 4)}
        for i in range(rng.randint(3, 6))
    ]
    n_pools = rng.randint(1, 3)
    jobs = []
    for i in range(rng.randint(4, 16)):
        stages: list[dict[str, Any]] = [
            {"type": "map", "tasks": [{"duration": rng.choice([1.0, 2.0, 5.0]), "count": rng.randint(1, 12)}]}
        ]
        if rng.random() < 0.6:
            stages.append({"type": "reduce", "tasks": [{"duration": 2.0, "count": rng.randint(1, 6)}]})
        jobs.append(
            {
                "id": f"j{i}",
                "submit_time": float(rng.randint(0, 12)),
                "priority": rng.randint(-2, 2),
                "pool": f"p{rng.randrange(n_pools)}",
                "stages": stages,
            }
        )
    pools: list[dict[str, Any]] = []
    for k in range(n_pools):
        pool: dict[str, Any] = {"id": f"p{k}", "weight": rng.choice([0.5, 1.0, 3.0])}
        if rng.random() < 0.5:
            pool.update(min_maps=rng.randint(0, 6), min_reduces=rng.randint(0, 3))
        if rng.random() < 0.4:
            pool.update(max_maps=rng.randint(1, 5), max_reduces=rng.randint(1, 3))
        if rng.random() < 0.2:
            pool.update(max_running=rng.randint(1, 3))
        if rng.random() < 0.25:
            pool.update(mode="fifo")
        pools.append(pool)
    w = workload(nodes, jobs, pools=pools, **random_extras(rng, placement=0.6))
    return with_listed_replicas(w, rng) if rng.random() < 0.3 else w


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The lengths of the runs the fast heartbeat launched (``_run_length``'s answers over 1)."""
    seen: list[int] = []
    plain = FairOffers._run_length

    def counted(self: FairOffers, *args: Any) -> int:
        n = plain(self, *args)
        if n > 1:
            seen.append(n)
        return n

    monkeypatch.setattr(FairOffers, "_run_length", counted)
    return seen


def test_launch_runs_give_the_plain_rules_event_log(runs: list[int]) -> None:
    rng = random.Random("fair-launch-runs")
    for _ in range(40):
        w = run_workload(rng)
        params = fair_params(rng)
        if rng.random() < 0.5:  # a wait long enough for RACK-level launches that take a node-local task
            params.update(node_delay=rng.choice([0.0, 1.0]), rack_delay=rng.choice([4.0, 8.0]))
        if rng.random() < 0.5:  # demands (runnable totals) stale for longer: the type's rejection ends runs
            params["update_interval"] = rng.choice([2.0, 5.0])
        if rng.random() < 0.3:
            params.update(assign_multiple_maps=rng.choice([-1, 2, 3]), assign_multiple_reduces=rng.choice([-1, 2]))
        same_log(w, "fair", params, seed=3, stall_limit=300)
    # the runs were there to compare: many, and some longer than 2 tasks
    assert len(runs) > 200 and max(runs) >= 4, (len(runs), max(runs, default=0))


def test_a_run_ends_where_the_stale_demand_rejects_the_type() -> None:
    """Hand-timed: update() every 3 s, heartbeats every 0.5 s on one node with 4 reduce slots. The
    update at 3 counts j0's 2 reduces (its map ended at 1); j0 ends at 5; j1's map ends at 5.2, its 4
    reduces are pending, but until the update at 6 the cluster's runnable reduces are still j0's 2
    (Hadoop's ``runnableTasks``): at 5.5 the loop rejects reduces once 2 run, and the other 2 start
    at 6. One run of 4 would take them all at 5.5."""
    w = workload(
        [{"id": "n0", "rack": "r0", "map_slots": 2, "reduce_slots": 4}],
        [
            {
                "id": "j0",
                "stages": [
                    {"type": "map", "tasks": [{"duration": 1.0}]},
                    {"type": "reduce", "tasks": [{"duration": 2.0, "count": 2}]},
                ],
            },
            {
                "id": "j1",
                "stages": [
                    {"type": "map", "tasks": [{"duration": 5.2}]},
                    {"type": "reduce", "tasks": [{"duration": 1.0, "count": 4}]},
                ],
            },
        ],
    )
    for reference in (True, False):
        policy = make_policy("fair", {"update_interval": 3.0}, reference=reference)
        rec = Simulation(w, policy, mode="heartbeat", heartbeat=0.5).run()
        assert [s for s, _, _ in starts(rec, "j0")] == [0.0, 3.0, 3.0]
        assert [s for s, _, _ in starts(rec, "j1")] == [0.0, 5.5, 5.5, 6.0, 6.0]
