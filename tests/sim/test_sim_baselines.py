"""DC and MinEDF-WC (the AMB paper's baselines) on hand cases, and every admission policy's tables."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from mropt.instances.admission_gen import generate_admission
from mropt.instances.workload_convert import to_workload
from mropt.model.tolerance import deadline_limit
from mropt.model.workload import NodeSpec, Stage, TaskGroup, WorkloadInstance, WorkloadJob
from mropt.registry import solve
from mropt.sim.engine import Simulation
from mropt.sim.policies.minedf_wc import aria_minimum, aria_terms
from mropt.sim.policies.seq import Seq
from mropt.sim.policy import make_policy


def _maps(job_id: str, n: int, duration: float, deadline: float, submit: float = 0.0) -> WorkloadJob:
    return WorkloadJob(
        id=job_id, stages=(Stage("map", (TaskGroup(duration, n),)),), submit_time=submit, deadline=deadline, benefit=1
    )


def _cluster(map_slots: int, *jobs: WorkloadJob) -> WorkloadInstance:
    return WorkloadInstance(nodes=(NodeSpec("n", map_slots=map_slots, reduce_slots=1),), jobs=jobs)


def test_aria_minimum_on_numbers() -> None:
    # a = 400, b = 100, D' = 30: sqrt 20 and 10, m* = 20 * 30 / 30 = 20, r* = 10; 400/20 + 100/10 = 30
    assert aria_minimum(400.0, 100.0, 30.0) == pytest.approx((20.0, 10.0))
    m, r = aria_minimum(6000.0, 2700.0, 1000.0)
    assert 6000 / m + 2700 / r == pytest.approx(1000.0)
    assert (m, r) == pytest.approx((10.0249, 6.7249), abs=1e-4)


def test_aria_terms_of_the_bounds() -> None:
    w = WorkloadInstance(
        nodes=(NodeSpec("n", map_slots=2, reduce_slots=2),),
        jobs=(
            WorkloadJob(
                id="j",
                deadline=100,
                stages=(
                    Stage("map", (TaskGroup(10, 3), TaskGroup(4, 1))),
                    Stage("reduce", (TaskGroup(6, 2),)),
                ),
            ),
        ),
    )
    job = Simulation(w, make_policy("minedf-wc")).jobs[0]
    assert aria_terms(job, "low") == (34.0, 12.0, 0.0)
    assert aria_terms(job, "up") == (3 * 8.5, 6.0, 16.0)  # (N-1) mean, plus the maxima
    assert aria_terms(job, "avg") == ((34 + 25.5) / 2, 9.0, 8.0)


def test_minedf_rejects_an_infeasible_job_with_a_reason() -> None:
    # 4 maps of 10 by 5 s: m* = 40 / 5 = 8 > 4 slots
    t = Simulation(_cluster(4, _maps("a", 4, 10, 5)), make_policy("minedf-wc")).run().jobs_columns()
    assert not t["accepted"][0]
    assert t["reason"][0] == "MinEDF-WC: needs (m*, r*) = (8, 0) slots, the cluster has (4, 1)"


def test_minedf_commits_minima_for_later_jobs() -> None:
    # a needs m* = ceil(40/20) = 2 of 3 slots; b at 1 needs 2 more: only 1 uncommitted
    w = _cluster(3, _maps("a", 4, 10, 20), _maps("b", 2, 10, 11, submit=1))
    t = Simulation(w, make_policy("minedf-wc")).run().jobs_columns()
    assert list(t["accepted"]) == [True, False]
    assert "(2, 0) slots, (1, 1) not committed" in t["reason"][1]


@pytest.mark.parametrize(("reclaim", "b_start", "killed"), [("kill", 5.0, 1), ("wait", 10.0, 0)])
def test_minedf_reclaim(reclaim: str, b_start: float, killed: int) -> None:
    # a: 4 maps of 10, m* = 1, borrows both slots (work conserving); b arrives at 5 with m* = 1
    w = _cluster(2, _maps("a", 4, 10, 100), _maps("b", 1, 10, 100, submit=5))
    rec = Simulation(w, make_policy("minedf-wc", {"reclaim": reclaim})).run()
    tasks = rec.tasks_columns()
    starts = [s for j, s, o in zip(tasks["job_id"], tasks["start"], tasks["outcome"], strict=True) if j == "b"]
    assert starts == [b_start]
    assert Counter(tasks["outcome"])["killed"] == killed
    assert all(rec.jobs_columns()["on_time"])


def test_dc_runs_a_job_on_its_fixed_map_slots() -> None:
    # 4 maps of 10, deadline 100, map-only: n_m^min = ceil(40 / 100) = 1 though 4 slots are free
    rec = Simulation(_cluster(4, _maps("a", 4, 10, 100)), make_policy("dc")).run()
    t = rec.jobs_columns()
    assert t["reason"][0] == "DC: n_m^min = 1 map slots from S_m = 0, n_r^min = 0"
    assert t["finish"][0] == 40.0
    assert sorted(rec.tasks_columns()["start"]) == [0.0, 10.0, 20.0, 30.0]


def test_dc_rejects_an_infeasible_job_and_books_the_calendar() -> None:
    # a: 8 maps of 10 by 40 -> n = 2 of 3 slots over [0, 40); b at 0 needs ceil(30/30) = 1... from 0: 1 free, ok;
    # c needs ceil(20 / 10) = 2 by 10: only 0 free until 40 -> rejected
    w = _cluster(3, _maps("a", 8, 10, 40), _maps("b", 3, 10, 30), _maps("c", 2, 10, 10))
    for availability in ("calendar", "current"):
        t = Simulation(w, make_policy("dc", {"availability": availability})).run().jobs_columns()
        assert list(t["accepted"]) == [True, True, False]
        assert t["reason"][2].startswith("DC: needs n_m^min = 2 map slots from S_m = 0, 0 available")
        assert list(t["finish"][:2]) == [40.0, 30.0]


def _policies(instance):  # type: ignore[no-untyped-def]
    yield "seq", Seq(solve(instance, "amb"))
    yield "amb", make_policy("amb")
    yield "dc", make_policy("dc")
    yield "dc-current", make_policy("dc", {"availability": "current"})
    yield "minedf-wc", make_policy("minedf-wc")
    yield "minedf-wc-kill", make_policy("minedf-wc", {"reclaim": "kill", "bound": "avg"})


@pytest.mark.parametrize("seed", [0, 1])
def test_every_policy_keeps_its_tables_consistent(seed: int) -> None:
    instance = generate_admission(seed, jobs=10, nodes=3, size=10, deadline=300, mean_interarrival=15)
    workload = to_workload(instance, nodes=3)
    n_tasks = {j.id: [s.n_tasks for s in j.stages] for j in workload.jobs}
    for name, policy in _policies(instance):
        rec = Simulation(workload, policy).run()
        jobs, tasks = rec.jobs_columns(), rec.tasks_columns()
        assert any(jobs["accepted"]), name
        success = Counter(
            (j, s, k)
            for j, s, k, o in zip(tasks["job_id"], tasks["stage"], tasks["task"], tasks["outcome"], strict=True)
            if o == "succeeded"
        )
        assert max(success.values()) == 1, name  # no task succeeds twice
        for k, job_id in enumerate(jobs["job_id"]):
            done = sum(success[(job_id, s, t)] for s, n in enumerate(n_tasks[job_id]) for t in range(n))
            if not jobs["accepted"][k]:
                assert job_id not in set(tasks["job_id"]), name
            elif not jobs["dropped"][k]:
                assert done == sum(n_tasks[job_id]), (name, job_id)  # every task exactly once
                on_time = jobs["finish"][k] <= deadline_limit(np.array([jobs["deadline"][k]]))[0]
                assert jobs["on_time"][k] is bool(on_time), (name, job_id)
                assert jobs["benefit"][k] == (jobs["job_benefit"][k] if on_time else -0.3 * jobs["job_benefit"][k])
        times = policy.plan_times()
        if times is not None:
            accepted = {j for j, a, d in zip(jobs["job_id"], jobs["accepted"], jobs["dropped"], strict=True) if a}
            assert set(times) <= accepted, name


@pytest.mark.parametrize("seed", [0, 1])
def test_amb_paper_observation_qualitatively(seed: int) -> None:
    # AMB sec. 5 (Fig. 7) on the paper's static set: AMB earns most; DC accepts jobs it then
    # completes late (lowest completion rate); MinEDF-WC completes what it accepts but accepts fewer
    workload = to_workload(generate_admission(seed), nodes=40)
    out = {}
    for name in ("amb", "dc", "minedf-wc"):
        t = Simulation(workload, make_policy(name)).run().jobs_columns()
        accepted = int(np.sum(t["accepted"]))
        out[name] = (float(np.sum(t["benefit"])), accepted, sum(1 for v in t["on_time"] if v) / accepted)
    assert out["amb"][0] > max(out["dc"][0], out["minedf-wc"][0])
    assert out["dc"][2] < min(out["amb"][2], out["minedf-wc"][2])
    assert out["minedf-wc"][2] == 1.0 and out["minedf-wc"][1] < out["amb"][1]
