"""DRF's blocked nodes (mropt/sim/policies/drf.py, ``assign``) change no decision.

A node offered to every job without a launch is *blocked*: until its free capacity grows it
is offered only to the jobs that may have gained work since. These tests run saturated
multi-resource workloads (several demand vectors, users with several jobs, map and reduce
stages, a stage of two demands, input replicas, faults, slow-start) with blocking on and off
and require identical tables and event logs, and that blocking did happen. On the same
workloads, a tie key kept from an earlier end at the same instant must be what a fresh look
gives.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policies.drf import _DrfBase
from mropt.sim.policy import make_policy
from mropt.sim.verify import verify_simulation

from sim_helpers import workload

DEMANDS = [{"cpu": 1, "mem": 1}, {"cpu": 2, "mem": 0.5}, {"cpu": 0.5, "mem": 3}, {"cpu": 3, "mem": 2}]


def saturated(seed: int, slots: bool = False, **extra: Any) -> WorkloadInstance:
    """Twelve users' jobs arriving faster than 6 nodes of 4 CPUs and 6 GB (and 2 + 1 slots) can serve them."""
    rng = random.Random(seed)
    nodes: list[dict[str, Any]] = [
        {"id": f"n{i}", "rack": f"r{i % 2}", "resources": {"cpu": 4, "mem": 6}} for i in range(6)
    ]
    if slots:
        for node in nodes:
            node.update(map_slots=2, reduce_slots=1)
    jobs = []
    for i in range(40):
        maps = [{"duration": rng.choice([3.0, 5.0, 8.0]), "count": rng.randint(2, 9), "demand": rng.choice(DEMANDS)}]
        if i % 7 == 3:  # a stage of two demands: its next task's demand changes as it launches
            maps.append({"duration": 4.0, "count": 3, "demand": rng.choice(DEMANDS)})
        stages: list[dict[str, Any]] = [{"type": "map", "tasks": maps}]
        if i % 3 == 0:
            stages.append({"type": "reduce", "tasks": [{"duration": 6.0, "count": 2, "demand": rng.choice(DEMANDS)}]})
        jobs.append(
            {"id": f"j{i}", "submit_time": round(rng.uniform(0, 60), 1), "user": f"u{i % 12}", "stages": stages}
        )
    return workload(nodes, jobs, **extra)


def run(w: WorkloadInstance, policy: str, params: dict[str, Any], blocking: bool) -> tuple[Any, ...]:
    p = make_policy(policy, params, reference=not blocking)
    assert isinstance(p, _DrfBase)
    blocked = [0]
    inner = p._assign_blocked

    def counting(*args: Any) -> None:
        blocked[0] += 1
        inner(*args)

    p._assign_blocked = counting  # type: ignore[method-assign]
    rec = Simulation(w, p, seed=5).run()
    jobs, tasks = rec.jobs_columns(), rec.tasks_columns()
    verdict = verify_simulation(w, jobs, tasks)
    assert verdict.ok, verdict.problems
    keys = ("job_id", "stage", "task", "node", "start", "end", "outcome", "locality")
    rows = sorted(zip(*(list(tasks[k]) for k in keys), strict=True), key=repr)
    return rows, list(jobs["finish"]), rec.event_log_hash(), blocked[0]


SCENARIOS = {
    "plain": {},
    "replicas-faults": {
        "placement": {"replicas": 2, "seed": 3},
        "faults": [{"node": "n1", "down": 20, "up": 45}, {"node": "n4", "down": 30}],
    },
    "slow-start": {"timing": {"reduce_slowstart": 0.5}},
    "slots": {"slots": True, "timing": {"reduce_slowstart": 0.3}},
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
@pytest.mark.parametrize(
    "policy,params", [("drf", {}), ("ddrf", {"e1": 1, "e2": 3}), ("delay", {"d": 2})], ids=["drf", "ddrf", "delay"]
)
def test_blocking_changes_no_decision(scenario: str, policy: str, params: dict[str, Any]) -> None:
    for seed in (1, 2):
        w = saturated(seed, **SCENARIOS[scenario])
        *on, blocked_on = run(w, policy, params, True)
        *off, blocked_off = run(w, policy, params, False)
        assert on == off
        assert blocked_off == 0
        assert blocked_on > 0  # the saturated cluster did block nodes


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_a_kept_tie_key_is_the_one_a_fresh_look_gives(scenario: str) -> None:
    # on_attempts_end keeps the tie key of an earlier end at the same instant unless the user's
    # jobs gained work since (_retie): after every end it must equal _next_tie now, which is what
    # the push at that end would have used. Durations are whole seconds, so ends coincide.
    kept = 0
    for seed in (1, 2):
        policy = make_policy("drf", {})
        assert isinstance(policy, _DrfBase)
        inner = policy.on_attempts_end

        def check(attempt: Any, outcome: str, count: int, policy: _DrfBase = policy, inner: Any = inner) -> None:
            nonlocal kept
            u = policy._user_index[policy.sim.jobs[attempt.job].user]
            kept += u in policy._later and u not in policy._retie
            inner(attempt, outcome, count)
            assert policy._later[u] == policy._next_tie(u)

        policy.on_attempts_end = check  # type: ignore[method-assign]
        w = saturated(seed, **SCENARIOS[scenario])
        rec = Simulation(w, policy, seed=5).run()
        verdict = verify_simulation(w, rec.jobs_columns(), rec.tasks_columns())
        assert verdict.ok, verdict.problems
    assert kept > 0  # the kept key was used
