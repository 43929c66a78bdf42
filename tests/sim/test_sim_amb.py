"""AMB on the cluster: the static plan as SEQ, the dynamic part online, timeout handling (AMB sec. 4)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from mropt.admission.online import amb_online_order
from mropt.instances.admission_gen import generate_admission
from mropt.instances.workload_convert import to_workload
from mropt.model.admission import AdmissionInstance, Cluster, Job
from mropt.model.errors import InputError
from mropt.model.workload import Fault, Timing
from mropt.registry import solve
from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy


def _accepted(rec) -> list[str]:  # type: ignore[no-untyped-def]
    t = rec.jobs_columns()
    return [j for j, a in zip(t["job_id"], t["accepted"], strict=True) if a]


def test_static_plan_is_the_amb_method() -> None:
    instance = generate_admission(4, jobs=8, nodes=2, size=8, deadline=250)
    sol = solve(instance, "amb")
    policy = make_policy("amb")
    rec = Simulation(to_workload(instance), policy).run()
    assert sorted(_accepted(rec)) == sorted(sol.accepted)
    assert [instance.ids[j] for j in policy.sequence] == list(sol.sequence)  # type: ignore[attr-defined]
    times = policy.plan_times()
    assert times is not None and set(times) == set(sol.accepted)


def test_dynamic_part_matches_amb_online() -> None:
    instance = generate_admission(5, jobs=10, nodes=2, size=8, deadline=300, mean_interarrival=40)
    order, _, _ = amb_online_order(instance)
    policy = make_policy("amb")
    rec = Simulation(to_workload(instance), policy).run()
    assert sorted(_accepted(rec)) == sorted(instance.ids[j] for j in order)
    assert policy.sequence == [int(j) for j in order]  # type: ignore[attr-defined]
    t = rec.jobs_columns()
    for accepted, reason in zip(t["accepted"], t["reason"], strict=True):
        assert reason.startswith("AMB")
        assert accepted == ("accepted" in reason or "inserted" in reason)


def _two_jobs() -> AdmissionInstance:
    # M = R = 2 (nodes n-0, n-1 with 1 + 1 slots). Plan a, b: a maps 0-20, reduces 20-25;
    # b maps 20-30, reduces 30-35; both on time.
    jobs = (
        Job(id="a", map_tasks=4, reduce_tasks=2, map_task_time=10, reduce_task_time=5, deadline=30, benefit=100),
        Job(id="b", map_tasks=2, reduce_tasks=2, map_task_time=10, reduce_task_time=5, deadline=36, benefit=50),
    )
    return AdmissionInstance(cluster=Cluster(2, 2), jobs=jobs)


def _with_failure(instance: AdmissionInstance):  # type: ignore[no-untyped-def]
    return dataclasses.replace(to_workload(instance), faults=(Fault("n-1", 5.0),))


def test_timeout_handling_after_a_node_failure() -> None:
    # At 5 n-1 fails: a's task there is re-queued; on one slot a's maps end at 40 (10, 20, 30, 40),
    # so a misses 30 whatever is dropped: Algorithm 2 drops the running job a (benefit 100 > b's 50,
    # but dropping b does not repair S). b then runs alone: maps 5-15, 15-25, reduces 25-30, 30-35.
    policy = make_policy("amb")
    rec = Simulation(_with_failure(_two_jobs()), policy).run()
    t = rec.jobs_columns()
    assert list(t["dropped"]) == [True, False]
    assert "Algorithm 2" in t["reason"][0] and "end at 40" in t["reason"][0]
    assert t["finish"][1] == 35.0 and t["on_time"][1] is True
    # then b's planned COTm (10, in S without a) passes with its maps running: re-estimated at 25, still valid
    assert policy.timeouts == [(5.0, "a", 40.0, "running", ("a",)), (10.0, "b", 25.0, "valid", ())]
    assert policy.plan_times() == {"b": (25.0, 30.0)}
    assert float(np.sum(t["benefit"])) == pytest.approx(50 - 0.3 * 100)
    tasks = rec.tasks_columns()
    assert sorted(set(tasks["outcome"])) == ["failed", "killed", "succeeded"]


def test_without_timeout_handling_both_jobs_are_late() -> None:
    rec = Simulation(_with_failure(_two_jobs()), make_policy("amb", {"timeout_handling": False})).run()
    t = rec.jobs_columns()
    assert not any(t["dropped"])
    # a: maps end 40, reduces 40-45, 45-50 (one reduce slot); b: maps 40-60, reduces 60-70
    assert list(t["finish"]) == [50.0, 70.0]
    assert t["on_time"] == [False, False]
    assert float(np.sum(t["benefit"])) == pytest.approx(-0.3 * 150)


def test_slow_map_phase_triggers_timeout_handling() -> None:
    # every attempt a straggler (x2): at a's planned COTm 10 its maps run until 20; a alone
    # would end at 22 > 15: a has the smallest benefit of S (lines 02-03) and is dropped at 10
    jobs = (Job(id="a", map_tasks=2, reduce_tasks=2, map_task_time=10, reduce_task_time=2, deadline=15, benefit=5),)
    w = to_workload(AdmissionInstance(cluster=Cluster(2, 2), jobs=jobs))
    w = dataclasses.replace(w, timing=Timing(straggler_rate=1.0, straggler_slowdown=2.0))
    policy = make_policy("amb")
    t = Simulation(w, policy).run().jobs_columns()
    assert t["dropped"][0] and "lines 02-03" in t["reason"][0]
    assert policy.timeouts == [(10.0, "a", 20.0, "lines 02-03", ("a",))]


def test_amb_needs_an_admission_workload() -> None:
    w = to_workload(_two_jobs())
    w = dataclasses.replace(w, jobs=(dataclasses.replace(w.jobs[0], deadline=None), *w.jobs[1:]))
    with pytest.raises(InputError, match="policy 'amb'.*deadline"):
        Simulation(w, make_policy("amb")).run()
