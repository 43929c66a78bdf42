"""The DRF rule written plain (``_DrfBase._assign_reference``) and its accelerated offers decide alike.

``make_policy(..., reference=True)`` runs ``drf``, ``ddrf`` and ``delay`` by the plain rule (users
sorted by their key at every launch, each user's share pushed at every end) and the default by the
accelerated offers (heap, blocked nodes, parked users, demand index, launch runs, deferred pushes).
On seeded random workloads (1 to 3 resources, with or without slots, replicas, faults, slow-start,
stages of several demands, users with several jobs or none named) both must give the same event log
(the recorder's hash) and the same skip trace, and each mode must run only its own offers.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policies.drf import _DrfBase
from mropt.sim.policy import make_policy

from sim_helpers import path_run, random_extras, workload

RESOURCES = ("cpu", "mem", "disk")


def random_workload(rng: random.Random) -> WorkloadInstance:
    """A few nodes and jobs arriving faster than they can run, drawn from ``rng``."""
    names = RESOURCES[: rng.randint(1, 3)]
    slots = rng.random() < 0.3
    nodes: list[dict[str, Any]] = []
    for i in range(rng.randint(2, 6)):
        node: dict[str, Any] = {
            "id": f"n{i}",
            "rack": f"r{i % 2}",
            "resources": {r: rng.choice([3, 4, 6]) for r in names},
        }
        if slots:
            node.update(map_slots=rng.randint(1, 3), reduce_slots=rng.randint(1, 2))
        nodes.append(node)

    def demand() -> dict[str, float]:
        return {r: rng.choice([0.5, 1, 2, 3]) for r in names}

    jobs = []
    for i in range(rng.randint(3, 25)):
        maps = [{"duration": rng.choice([1.0, 2.0, 3.5, 5.0]), "count": rng.randint(1, 6), "demand": demand()}]
        if rng.random() < 0.2:  # a stage of two demands
            maps.append({"duration": 2.0, "count": rng.randint(1, 3), "demand": demand()})
        stages: list[dict[str, Any]] = [{"type": "map", "tasks": maps}]
        if rng.random() < 0.4:
            stages.append(
                {"type": "reduce", "tasks": [{"duration": 3.0, "count": rng.randint(1, 3), "demand": demand()}]}
            )
        job: dict[str, Any] = {"id": f"j{i}", "submit_time": float(rng.randint(0, 20)), "stages": stages}
        if rng.random() < 0.9:
            job["user"] = f"u{rng.randint(0, 5)}"
        jobs.append(job)
    return workload(nodes, jobs, **random_extras(rng, placement=0.5, slowstart=0.3, down=4.0, up=12.0))


def run(
    w: WorkloadInstance, policy: str, params: dict[str, Any], reference: bool, without: frozenset[str] = frozenset()
) -> tuple[str, list[Any]]:
    trace: list[Any] = []
    rec = path_run(
        w, policy, params, reference, switches={"trace": trace if reference else None, "without": without}, seed=3
    )
    return rec.event_log_hash(), trace


@pytest.mark.parametrize("policy", ["drf", "ddrf", "delay"])
def test_reference_and_accelerated_offers_give_the_same_event_log(policy: str) -> None:
    rng = random.Random(f"drf-reference-{policy}")
    for _ in range(25):
        w = random_workload(rng)
        e1 = rng.randint(0, 3)
        params = {"drf": {}, "ddrf": {"e1": e1, "e2": e1 + rng.randint(0, 3)}, "delay": {"d": rng.randint(0, 4)}}
        plain, _ = run(w, policy, params[policy], reference=True)
        fast, _ = run(w, policy, params[policy], reference=False)
        assert plain == fast, (policy, params[policy], w.to_dict() if hasattr(w, "to_dict") else w)


def test_each_acceleration_turns_off_alone_and_any_subset_gives_the_same_event_log() -> None:
    # make_policy(..., without=...) turns off some of the accelerated offers' parts (the heap stays)
    names = _DrfBase.accelerations
    assert set(names) == {"blocked", "parked", "index", "runs", "deferred"}
    rng = random.Random("drf-without")
    subsets = [frozenset([name]) for name in names]
    subsets += [frozenset(n for n in names if rng.random() < 0.5) for _ in range(10)]
    for without in subsets:
        w = random_workload(rng)
        policy = rng.choice(["drf", "ddrf", "delay"])
        params = {"drf": {}, "ddrf": {"e1": 1, "e2": 2}, "delay": {"d": 2}}[policy]
        plain, _ = run(w, policy, params, reference=True)
        fast, _ = run(w, policy, params, reference=False, without=without)
        assert plain == fast, (policy, sorted(without))


def test_without_names_only_the_policys_accelerations() -> None:
    with pytest.raises(ValueError, match="policy 'drf': no acceleration 'heap' to turn off"):
        make_policy("drf", without={"heap"})
    with pytest.raises(ValueError, match=r"policy 'fifo': no acceleration 'index' to turn off \(known: runs\)"):
        make_policy("fifo", without={"index"})
    with pytest.raises(ValueError, match=r"policy 'seq': no acceleration 'runs' to turn off \(known: none\)"):
        make_policy("seq", without={"runs"})
    p = make_policy("ddrf", {"e1": 1, "e2": 1}, without={"parked", "runs"})
    assert p.without == {"parked", "runs"}


@pytest.mark.parametrize("policy,params", [("ddrf", {"e1": 1, "e2": 2}), ("delay", {"d": 2})])
def test_the_reference_traces_the_same_offers_as_the_accelerated_rule_one_at_a_time(
    policy: str, params: dict[str, Any]
) -> None:
    # with a trace, the accelerated offers launch one task at a time: every skip and launch is listed
    rng = random.Random(f"drf-trace-{policy}")
    skipped = 0
    for _ in range(8):
        w = random_workload(rng)
        _, plain = run(w, policy, params, reference=True)
        fast: list[Any] = []
        Simulation(w, make_policy(policy, params, trace=fast), seed=3).run()
        assert plain == fast
        skipped += sum(what == "skip" for *_, what in plain)
    assert skipped > 0  # the delay rule was exercised
