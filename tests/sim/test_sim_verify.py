"""The independent verify of a simulation catches tampered outputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mropt.sim.engine import Simulation
from mropt.sim.policy import Policy
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


def _unfinished_verdict(w: Any, jobs: dict[str, Any], tasks: dict[str, Any]) -> list[str]:
    return [p for p in verify_simulation(w, jobs, tasks).problems if "unfinished" in p]


def test_a_run_that_never_launched_reduces_is_caught() -> None:
    # what slow-start 0 once gave: the maps ran, no reduce ever launched, no finish; the job
    # has no deadline or benefit, so only the missing cause can tell
    nodes = [{"id": "n", "count": 2, "map_slots": 2, "reduce_slots": 2}]
    w = workload(nodes, [mr_job("a", [10, 10, 10], [4, 4])], timing={"reduce_slowstart": 0})
    _, rec = run(w)
    jobs, tasks = copy(rec.jobs_columns()), rec.tasks_columns()
    keep = [i for i, t in enumerate(tasks["stage_type"]) if t == "map"]
    tasks = {k: (v[keep] if hasattr(v, "shape") else [v[i] for i in keep]) for k, v in tasks.items()}
    jobs["finish"][0] = float("nan")
    (problem,) = _unfinished_verdict(w, jobs, tasks)
    assert "'a'" in problem and "no stated cause" in problem


def test_a_policy_that_launches_nothing_is_caught_unless_the_run_stalled() -> None:
    w = workload([{"id": "n", "map_slots": 1, "reduce_slots": 1}], [mr_job("a", [5], 5)])
    rec = Simulation(w, Policy(), mode="event").run()  # the base policy launches nothing
    assert list(rec.jobs_columns()["unfinished_cause"]) == [""]
    assert any("no stated cause" in p for p in verify_simulation(w, rec.jobs_columns(), rec.tasks_columns()).problems)
    sim = Simulation(w, Policy(), mode="heartbeat", stall_limit=3)
    rec = sim.run()
    assert sim.stalled and list(rec.jobs_columns()["unfinished_cause"]) == ["stalled"]
    assert verify_simulation(w, rec.jobs_columns(), rec.tasks_columns()).ok


def test_a_job_left_by_a_failure_for_good_states_its_cause() -> None:
    # the only reduce node fails for good before the maps end: the reduce can run nowhere
    nodes = [{"id": "m", "map_slots": 1, "reduce_slots": 0}, {"id": "r", "map_slots": 0, "reduce_slots": 1}]
    jobs_in = [mr_job("a", [10], 5), mr_job("b", [3])]
    w = workload(nodes, jobs_in, faults=[{"node": "r", "down": 1}])
    _, rec = run(w, mode="event")  # verify passes in `run`
    jobs, tasks = rec.jobs_columns(), rec.tasks_columns()
    assert list(jobs["unfinished_cause"]) == ["no_node", ""] and jobs["finish"][1] == 13
    # the same tables, had the node come back: the cause is false
    back = workload(nodes, jobs_in, faults=[{"node": "r", "down": 1, "up": 2}])
    assert any("'no_node', yet" in p for p in verify_simulation(back, jobs, tasks).problems)
    blank = copy(jobs)
    blank["unfinished_cause"] = ["", ""]
    assert any("no stated cause" in p for p in verify_simulation(w, blank, tasks).problems)
    wrong = copy(jobs)
    wrong["unfinished_cause"] = ["no_node", "stalled"]
    assert any("'b'" in p and "finished" in p for p in verify_simulation(w, wrong, tasks).problems)
    # a task of the unfinished job that succeeded twice
    i = next(
        i for i, (j, t) in enumerate(zip(tasks["job_id"], tasks["stage_type"], strict=True)) if (j, t) == ("a", "map")
    )
    twice = {k: (list(v) + [v[i]] if not hasattr(v, "shape") else np.append(v, v[i : i + 1])) for k, v in tasks.items()}
    assert any("succeeded 2 times" in p for p in verify_simulation(w, jobs, twice).problems)
