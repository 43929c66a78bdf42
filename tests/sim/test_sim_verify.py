"""The independent verify of a simulation catches tampered outputs."""

from __future__ import annotations

from typing import Any

import pytest

from mropt.sim.verify import verify_simulation

from sim_helpers import mr_job, run, workload


@pytest.fixture(scope="module")
def outputs() -> tuple[Any, dict[str, Any], dict[str, Any]]:
    nodes = [{"id": "n", "count": 2, "map_slots": 1, "reduce_slots": 1}]
    jobs = [mr_job("a", [10, 10], 5, deadline=30, benefit=100), mr_job("b", [4], 2, deadline=12, benefit=50)]
    w = workload(nodes, jobs)
    _, rec = run(w, mode="event")
    return w, rec.jobs_columns(), rec.tasks_columns()


def copy(table: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.copy() if hasattr(v, "copy") else v) for k, v in table.items()}


def test_untouched_outputs_pass(outputs: Any) -> None:
    w, jobs, tasks = outputs
    verdict = verify_simulation(w, jobs, tasks)
    assert verdict.ok and verdict.objective == pytest.approx(sum(jobs["benefit"]))


def test_a_shortened_attempt_is_caught(outputs: Any) -> None:
    w, jobs, tasks = outputs
    tasks = copy(tasks)
    tasks["end"][0] -= 1
    assert any("took" in p or "ends at" in p for p in verify_simulation(w, jobs, tasks).problems)


def test_two_attempts_in_one_slot_are_caught(outputs: Any) -> None:
    w, jobs, tasks = outputs
    tasks = copy(tasks)
    tasks["node"] = list(tasks["node"])
    first_map = [i for i, t in enumerate(tasks["stage_type"]) if t == "map"][:2]
    for i in first_map:
        tasks["node"][i] = "n-0"
    problems = verify_simulation(w, jobs, tasks).problems
    assert any("slots" in p for p in problems)


def test_a_missing_success_is_caught(outputs: Any) -> None:
    w, jobs, tasks = outputs
    tasks = copy(tasks)
    tasks["outcome"] = ["killed"] + list(tasks["outcome"][1:])
    assert any("succeeded 0 times" in p for p in verify_simulation(w, jobs, tasks).problems)


def test_a_wrong_benefit_or_on_time_flag_is_caught(outputs: Any) -> None:
    w, jobs, tasks = outputs
    bad = copy(jobs)
    bad["benefit"][0] += 1
    assert any("eq. 1" in p for p in verify_simulation(w, bad, tasks).problems)
    bad = copy(jobs)
    bad["on_time"] = [not v for v in bad["on_time"]]
    assert any("on_time" in p for p in verify_simulation(w, bad, tasks).problems)


def test_a_reduce_before_its_maps_is_caught(outputs: Any) -> None:
    w, jobs, tasks = outputs
    tasks = copy(tasks)
    i = list(tasks["stage_type"]).index("reduce")
    tasks["start"][i] -= 100
    tasks["end"][i] -= 100
    problems = verify_simulation(w, jobs, tasks).problems
    assert any("before stage 0 ends" in p or "before its job's submit" in p for p in problems)
