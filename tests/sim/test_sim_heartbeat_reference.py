"""The Fair and Capacity schedulers' plain heartbeats and their accelerated ones decide alike.

``make_policy(..., reference=True)`` runs ``fair`` by ``Fair._assign_reference`` (Hadoop 1.0.3's
``FairScheduler.assignTasks`` with the pools and jobs sorted afresh before every task, update()
recomputing every pool and job) and ``capacity`` by ``Capacity._assign_reference`` (the queues and
their jobs listed afresh before every task); the default runs the heartbeats on kept orders
(``FairOffers._assign_fast``, ``Capacity._assign_fast``). On seeded random slot workloads (pools of
every setting, queues with limits, priorities, replicas, slow-start, faults, several users) both
must give the same event log (the recorder's hash), and each mode must run only its own heartbeat.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policy import Policy, make_policy
from mropt.sim.speculation.table import make_speculation, rules

from sim_helpers import assert_only_path_ran, count_assign_paths, workload


def random_workload(rng: random.Random) -> WorkloadInstance:
    """A few slot nodes on two racks and jobs arriving faster than they can run, drawn from ``rng``."""
    nodes = [
        {
            "id": f"n{i}",
            "rack": f"r{i % 2}",
            "map_slots": rng.randint(1, 3),
            "reduce_slots": rng.randint(0, 2) if i else 1,
        }
        for i in range(rng.randint(2, 6))
    ]
    n_pools = rng.randint(1, 4)
    jobs = []
    for i in range(rng.randint(3, 22)):
        stages: list[dict[str, Any]] = [
            {"type": "map", "tasks": [{"duration": rng.choice([1.0, 2.5, 4.0, 7.0]), "count": rng.randint(1, 8)}]}
        ]
        if rng.random() < 0.5:
            stages.append({"type": "reduce", "tasks": [{"duration": 3.0, "count": rng.randint(1, 3)}]})
        k = rng.randrange(n_pools)
        jobs.append(
            {
                "id": f"j{i}",
                "submit_time": float(rng.randint(0, 30)),
                "priority": rng.randint(-3, 3),
                "user": f"u{rng.randint(0, 3)}",
                "pool": f"p{k}",
                "queue": f"q{k}",
                "stages": stages,
            }
        )
    pools: list[dict[str, Any]] = []
    for k in range(n_pools):
        pool: dict[str, Any] = {"id": f"p{k}", "weight": rng.choice([0.5, 1.0, 2.0, 3.0])}
        if rng.random() < 0.5:
            pool.update(min_maps=rng.randint(0, 4), min_reduces=rng.randint(0, 2))
        if rng.random() < 0.3:
            pool.update(max_maps=rng.randint(1, 4))
        if rng.random() < 0.3:
            pool.update(max_running=rng.randint(1, 3))
        if rng.random() < 0.3:
            pool.update(mode="fifo")
        if rng.random() < 0.8:  # (an unlisted pool gets the defaults)
            pools.append(pool)
    cuts = sorted(rng.sample(range(1, 100), n_pools - 1))
    queues: list[dict[str, Any]] = []
    for k, (a, b) in enumerate(zip([0, *cuts], [*cuts, 100], strict=True)):
        queue: dict[str, Any] = {"id": f"q{k}", "capacity": float(b - a)}
        if rng.random() < 0.3:
            queue["maximum_capacity"] = float(min(100, b - a + rng.randint(0, 40)))
        if rng.random() < 0.4:
            queue.update(minimum_user_limit_percent=rng.choice([25.0, 50.0]), user_limit_factor=rng.choice([1.0, 2.0]))
        if rng.random() < 0.4:
            queue["supports_priority"] = True
        queues.append(queue)
    extra: dict[str, Any] = {"pools": pools}
    if n_pools > 1 or rng.random() < 0.5:
        extra["queues"] = queues
    if rng.random() < 0.7:
        extra["placement"] = {"replicas": rng.randint(1, 3), "seed": rng.randint(0, 9)}
    if rng.random() < 0.4:
        extra["timing"] = {"reduce_slowstart": rng.choice([0.0, 0.5, 1.0])}
    if rng.random() < 0.2:
        extra["faults"] = [{"node": "n1", "down": 6.0, "up": 20.0}]
    return workload(nodes, jobs, **extra)


def fair_params(rng: random.Random) -> dict[str, Any]:
    params: dict[str, Any] = {"node_delay": rng.choice([-1.0, 0.0, 2.0, 6.0]), "rack_delay": rng.choice([-1.0, 3.0])}
    if rng.random() < 0.3:
        params["assign_multiple"] = False
    if rng.random() < 0.3:
        params.update(assign_multiple_maps=rng.randint(1, 2), assign_multiple_reduces=rng.randint(1, 2))
    if rng.random() < 0.4:
        params.update(preemption=True, min_share_timeout=rng.choice([1.0, 5.0]), fair_share_timeout=2.0)
    return params


def capacity_params(rng: random.Random) -> dict[str, Any]:
    return {"locality_wait_factor": rng.choice([-1.0, -1.0, 0.0, 0.5])}


# Every speculation rule too: its backups change a job's demand (Fair; Hadoop's updateDemand counts
# active attempts), which the policy hears through on_rule_backup. Capacity keeps no demand.
RULES = {"fair": [None, *rules()], "capacity": [None, *rules()]}


def run(w: WorkloadInstance, policy: str, params: dict[str, Any], reference: bool, rule: str | None = None) -> str:
    p: Policy = make_policy(policy, params, reference=reference)
    calls = count_assign_paths(p)
    rec = Simulation(
        w, p, seed=5, stall_limit=300, speculation=make_speculation(rule)
    ).run()  # (a queue whose maximum capacity rounds to 0 never runs)
    assert_only_path_ran(calls, reference)
    return rec.event_log_hash()


@pytest.mark.parametrize("policy,draw", [("fair", fair_params), ("capacity", capacity_params)])
def test_reference_and_accelerated_heartbeats_give_the_same_event_log(policy: str, draw: Any) -> None:
    rng = random.Random(f"heartbeat-reference-{policy}")
    for _ in range(30):
        w = random_workload(rng)
        params = draw(rng)
        rule = rng.choice(RULES[policy])
        plain = run(w, policy, params, reference=True, rule=rule)
        fast = run(w, policy, params, reference=False, rule=rule)
        assert plain == fast, (policy, params, rule, w)


@pytest.mark.parametrize("rule", [name for name in rules() if name != "none"])
def test_fair_counts_a_rules_backups_in_demand_as_the_reference_does(rule: str) -> None:
    """A rule's backup changes its job's demand (updateDemand counts active attempts); the
    accelerated update() hears of it through on_rule_backup, or its logs part from the plain rule's."""
    rng = random.Random(f"fair-backups-{rule}")
    for _ in range(8):
        w = random_workload(rng)
        params = fair_params(rng)
        assert run(w, "fair", params, reference=True, rule=rule) == run(w, "fair", params, reference=False, rule=rule)
