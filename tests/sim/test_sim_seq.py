"""SEQ on the cluster (AMB sec. 4.1): an admission plan executed on the idealised cluster.

The check: on a homogeneous cluster with no locality penalty and task counts that
are multiples of the slot counts, the simulated map ends are the SEQ model's COTm, and the
finishes are its COTr for every job whose model reduce ran alone and unpreempted.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from mropt.instances.admission_gen import generate_admission
from mropt.instances.workload_convert import to_workload
from mropt.model.admission import AdmissionInstance, Cluster, Job
from mropt.model.errors import InputError
from mropt.registry import solve
from mropt.sim.engine import Simulation
from mropt.sim.policies.seq import Seq
from mropt.sim.policy import make_policy, policy_info


def _divisible(instance: AdmissionInstance) -> AdmissionInstance:
    """Task counts rounded up to whole waves of the cluster's slots."""
    m, r = instance.cluster.map_slots, instance.cluster.reduce_slots
    jobs = [
        dataclasses.replace(j, map_tasks=math.ceil(j.map_tasks / m) * m, reduce_tasks=math.ceil(j.reduce_tasks / r) * r)
        for j in instance.jobs
    ]
    return dataclasses.replace(instance, jobs=tuple(jobs))


def _run(instance: AdmissionInstance, plan):  # type: ignore[no-untyped-def]
    policy = Seq(plan)
    rec = Simulation(to_workload(instance, nodes=2), policy).run()
    return policy, rec, rec.jobs_columns()


def _check_against_model(instance: AdmissionInstance, sol) -> int:  # type: ignore[no-untyped-def]
    policy, _, jobs = _run(instance, sol)
    predicted = policy.plan_times()
    assert predicted is not None and set(predicted) == set(sol.accepted)
    row = {job_id: k for k, job_id in enumerate(jobs["job_id"])}
    order = list(sol.sequence)
    tcr = dict(zip(instance.ids, instance.tcr, strict=True))
    exact_reduces = 0
    latest_reduce_end = 0.0
    for job_id in order:
        cotm, cotr = predicted[job_id]
        k = row[job_id]
        assert jobs["map_end"][k] == pytest.approx(cotm, rel=1e-12, abs=1e-9)
        alone = cotm >= latest_reduce_end and cotr == pytest.approx(cotm + tcr[job_id], rel=1e-12)
        if alone:  # the model's reduce ran alone and unpreempted: the cluster's does too
            assert jobs["finish"][k] == pytest.approx(cotr, rel=1e-12, abs=1e-9)
            exact_reduces += 1
        latest_reduce_end = max(latest_reduce_end, cotr)
        assert jobs["on_time"][k] is True  # a valid plan: finish <= COTr <= deadline here
    for job_id, accepted, reason in zip(jobs["job_id"], jobs["accepted"], jobs["reason"], strict=True):
        assert accepted == (job_id in sol.accepted)
        if not accepted:
            assert reason.startswith("not in the plan")
    return exact_reduces


@pytest.mark.parametrize("method", ["amb", "milp-highs", "edf-greedy"])
@pytest.mark.parametrize("seed", [1, 2])
def test_seq_reproduces_the_model_on_the_idealised_cluster(method: str, seed: int) -> None:
    instance = _divisible(generate_admission(seed, jobs=7, nodes=2, size=8, deadline=250, task_time_jitter=0.0))
    sol = solve(instance, method)
    assert sol.status in ("optimal", "feasible") and sol.accepted
    assert _check_against_model(instance, sol) >= 1


def test_seq_cotr_exact_when_reduces_do_not_overlap() -> None:
    # 4 map + 2 reduce slots; each job's reduce (2 waves) ends before the next job's maps do
    cluster = Cluster(4, 2)
    jobs = (
        Job(id="a", map_tasks=8, reduce_tasks=4, map_task_time=10, reduce_task_time=5, deadline=100, benefit=1),
        Job(id="b", map_tasks=4, reduce_tasks=2, map_task_time=15, reduce_task_time=7, deadline=60, benefit=1),
        Job(id="c", map_tasks=4, reduce_tasks=0, map_task_time=9, reduce_task_time=1, deadline=200, benefit=1),
    )
    instance = AdmissionInstance(cluster=cluster, jobs=jobs)
    policy = Seq(["b", "a", "c"])
    rec = Simulation(to_workload(instance), policy).run()
    jobs_t = rec.jobs_columns()
    # by hand: b maps 0-15, reduces 15-22; a maps 15-35, reduces 35-45; c maps 35-44
    assert list(jobs_t["map_end"]) == [35.0, 15.0, 44.0]
    assert list(jobs_t["finish"]) == [45.0, 22.0, 44.0]
    assert policy.plan_times() == {"b": (15.0, 22.0), "a": (35.0, 45.0), "c": (44.0, 44.0)}


def test_seq_reduces_go_to_the_earliest_deadline() -> None:
    # one map and one reduce slot; x's maps first, but y (earlier deadline) gets the reduce slot first
    cluster = Cluster(1, 1)
    jobs = (
        Job(id="x", map_tasks=1, reduce_tasks=2, map_task_time=10, reduce_task_time=10, deadline=100, benefit=1),
        Job(id="y", map_tasks=1, reduce_tasks=1, map_task_time=5, reduce_task_time=3, deadline=30, benefit=1),
    )
    rec = Simulation(to_workload(AdmissionInstance(cluster=cluster, jobs=jobs)), Seq(["x", "y"])).run()
    t = rec.jobs_columns()
    # x maps 0-10, its first reduce 10-20 (y not ready), y maps 10-15, y's reduce 20-23, x's 23-33
    assert list(t["map_end"]) == [10.0, 15.0]
    assert list(t["finish"]) == [33.0, 23.0]


def test_seq_plan_from_a_solution_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    instance = generate_admission(3, jobs=5, nodes=2, size=6, deadline=200)
    sol = solve(instance, "amb")
    path = tmp_path / "sol.json"
    path.write_text(json.dumps(sol.to_dict()))
    assert policy_info("seq").needs_plan
    policy = make_policy("seq", {"plan": str(path)})
    rec = Simulation(to_workload(instance), policy).run()
    accepted = [j for j, a in zip(rec.jobs_columns()["job_id"], rec.jobs_columns()["accepted"], strict=True) if a]
    assert sorted(accepted) == sorted(sol.accepted)
    tasks = rec.tasks_columns()
    assert set(tasks["outcome"]) == {"succeeded"}
    assert len(tasks["job_id"]) == sum(j.n_tasks for j in to_workload(instance).jobs if j.id in sol.accepted)


def test_seq_plan_errors_are_one_line() -> None:
    instance = generate_admission(3, jobs=3, nodes=1, size=4)
    with pytest.raises(InputError, match="parameter 'plan' is required"):
        Simulation(to_workload(instance), make_policy("seq")).run()
    with pytest.raises(InputError, match="job 'zz', which is not in the workload"):
        Simulation(to_workload(instance), Seq(["j1", "zz"])).run()
    with pytest.raises(InputError, match="nope.json"):
        Simulation(to_workload(instance), Seq("nope.json")).run()


def test_seq_with_submit_times_is_work_conserving() -> None:
    # y is first in the plan but arrives at 20: x uses the slot meanwhile (the model waits)
    cluster = Cluster(1, 1)
    jobs = (
        Job(id="x", map_tasks=2, reduce_tasks=0, map_task_time=10, reduce_task_time=1, deadline=100, benefit=1),
        Job(
            id="y",
            map_tasks=1,
            reduce_tasks=0,
            map_task_time=5,
            reduce_task_time=1,
            deadline=100,
            benefit=1,
            submit_time=15,
        ),
    )
    instance = AdmissionInstance(cluster=cluster, jobs=jobs)
    policy = Seq(["y", "x"])
    t = Simulation(to_workload(instance), policy).run().jobs_columns()
    assert list(t["finish"]) == [20.0, 25.0]
    times = policy.plan_times()
    assert times is not None and times["y"] == (20.0, 20.0) and times["x"] == (40.0, 40.0)
    # not preempted: x's second map holds the slot when y arrives, so y ends 5 s after the model's COTm
    assert np.array(t["finish"]) - np.array([times["x"][1], times["y"][1]]) == pytest.approx([-20.0, 5.0])
