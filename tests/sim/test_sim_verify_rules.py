"""verify_simulation's rules on hand-built attempt tables whose problems are known in advance.

Each case targets a place where checking every attempt at once (numpy) could go wrong where a
walk of one attempt after another would not: an end and a start at one instant on a node, the
running sum of a resource at the tolerance edge, a node with two slot types, the task group of a
task, a reduce's missing locality, the attempts of one task, the order and cap of the problems.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from mropt.sim.verify import verify_simulation, wasted_work

from sim_helpers import workload

#: (job, stage, task, node, start, end) and optionally outcome, locality, speculative
Row = tuple[Any, ...]


def tables(w: Any, rows: list[Row], ends: dict[str, tuple[float, float]]) -> tuple[dict, dict]:
    """The job and attempt tables of ``rows``; ``ends``: each job's (map_end, finish)."""
    spec = {job.id: job for job in w.jobs}
    t: dict[str, list[Any]] = {
        k: []
        for k in ("job_id", "stage", "stage_type", "task", "node", "start", "end", "outcome", "locality", "speculative")
    }
    for row in rows:
        job, stage, task, node, start, end = row[:6]
        outcome, locality, speculative = (*row[6:], *("succeeded", "node", False)[len(row) - 6 :])
        t["job_id"].append(job)
        t["stage"].append(stage)
        t["stage_type"].append(
            spec[job].stages[stage].type if job in spec and 0 <= stage < len(spec[job].stages) else "map"
        )
        t["task"].append(task)
        t["node"].append(node)
        t["start"].append(float(start))
        t["end"].append(float(end))
        t["outcome"].append(outcome)
        t["locality"].append(locality)
        t["speculative"].append(speculative)
    tasks = {
        k: (
            np.array(v, dtype=float)
            if k in ("start", "end")
            else np.array(v)
            if k in ("stage", "task", "speculative")
            else v
        )
        for k, v in t.items()
    }
    ids = [job.id for job in w.jobs]
    jobs = {
        "job_id": ids,
        "accepted": [True] * len(ids),
        "dropped": [False] * len(ids),
        "unfinished_cause": [""] * len(ids),
        "map_end": [ends[j][0] for j in ids],
        "finish": [ends[j][1] for j in ids],
        "on_time": [None] * len(ids),
        "benefit": [0.0] * len(ids),
    }
    return jobs, tasks


def problems(w: Any, rows: list[Row], ends: dict[str, tuple[float, float]]) -> list[str]:
    return verify_simulation(w, *tables(w, rows, ends)).problems


def maps(jid: str, *durations: float, submit: float = 0.0, demand: list[dict] | None = None) -> dict:
    groups = [{"duration": d} for d in durations]
    for g, amounts in zip(groups, demand or [], strict=False):
        g["demand"] = amounts
    return {"id": jid, "submit_time": submit, "stages": [{"type": "map", "tasks": groups}]}


def test_an_end_frees_its_slot_for_a_start_at_the_same_instant() -> None:
    w = workload([{"id": "n", "map_slots": 1, "reduce_slots": 1}], [maps("a", 5), maps("b", 5)])
    # b's attempt listed first: the order of the table must not decide the tie
    back_to_back = [("b", 0, 0, "n", 5, 10), ("a", 0, 0, "n", 0, 5)]
    assert problems(w, back_to_back, {"a": (5, 5), "b": (10, 10)}) == []
    overlapping = [("b", 0, 0, "n", 4.5, 9.5), ("a", 0, 0, "n", 0, 5)]
    assert problems(w, overlapping, {"a": (5, 5), "b": (9.5, 9.5)}) == [
        "node 'n': 2 map attempts at 4.5, it has 1 slots"
    ]


def test_a_node_counts_each_slot_type_apart() -> None:
    nodes = [{"id": "n", "map_slots": 1, "reduce_slots": 1}, {"id": "m", "map_slots": 1, "reduce_slots": 0}]
    job = {"stages": [{"type": "map", "tasks": [{"duration": 2}]}, {"type": "reduce", "tasks": [{"duration": 3}]}]}
    w = workload(nodes, [maps("a", 10), {"id": "b", **job}, {"id": "c", **job}])
    rows: list[Row] = [
        ("a", 0, 0, "n", 0, 10),
        ("b", 0, 0, "m", 0, 2),
        ("b", 1, 0, "n", 2, 5, "succeeded", None),  # a map and a reduce on n at once: one slot each
        ("c", 0, 0, "m", 2, 4),
    ]
    ends = {"a": (10, 10), "b": (2, 5), "c": (4, 7)}
    assert problems(w, [*rows, ("c", 1, 0, "n", 5, 8, "succeeded", None)], {**ends, "c": (4, 8)}) == []
    assert problems(w, [*rows, ("c", 1, 0, "n", 4, 7, "succeeded", None)], ends) == [
        "node 'n': 2 reduce attempts at 4, it has 1 slots"
    ]


@pytest.mark.parametrize(("second", "over"), [(0.5 + 1.5e-9, False), (0.5 + 2.5e-9, True)])
def test_a_resource_is_summed_per_node_up_to_its_tolerance(second: float, over: bool) -> None:
    # the big node's sums leave a rounding residue (0.1 + 0.2 - 0.1 - 0.2 is not 0 in floats):
    # the small node's sum starts from 0, whatever ran before it elsewhere
    nodes = [{"id": "big", "resources": {"mem": 1e9}}, {"id": "small", "resources": {"mem": 1}}]
    jobs = [
        maps("x", 10, 10, demand=[{"mem": 0.1e9 + 0.1}, {"mem": 0.2e9 + 0.2}]),
        maps("y", 10, 10, demand=[{"mem": 0.5}, {"mem": second}]),
    ]
    w = workload(nodes, jobs)
    rows: list[Row] = [
        ("x", 0, 0, "big", 0, 10),
        ("x", 0, 1, "big", 0, 10),
        ("y", 0, 0, "small", 20, 30),
        ("y", 0, 1, "small", 20, 30),
    ]
    found = problems(w, rows, {"x": (10, 10), "y": (30, 30)})
    assert found == (["node 'small': 1 mem in use at 20, it has 1"] if over else [])


def test_resources_are_worded_in_the_order_the_node_first_ran_them() -> None:
    nodes = [{"id": "n", "resources": {"cpu": 1, "mem": 1}}]
    w = workload(nodes, [maps("a", 10, 10, demand=[{"mem": 1, "cpu": 1}, {"cpu": 1, "mem": 1}])])
    found = problems(w, [("a", 0, 1, "n", 0, 10), ("a", 0, 0, "n", 0, 10)], {"a": (10, 10)})
    assert found == ["node 'n': 2 cpu in use at 0, it has 1", "node 'n': 2 mem in use at 0, it has 1"]


def test_each_task_is_timed_by_its_own_group_node_speed_and_locality() -> None:
    nodes = [{"id": "n", "map_slots": 3, "reduce_slots": 1, "speed": 2}]
    job = {"id": "a", "stages": [{"type": "map", "tasks": [{"duration": 2, "count": 2}, {"duration": 8}]}]}
    w = workload(nodes, [job])
    good: list[Row] = [
        ("a", 0, 0, "n", 0, 1),  # 2 / 2
        ("a", 0, 1, "n", 0, 1.5, "succeeded", "rack"),  # 2 / 2 x 1.5
        ("a", 0, 2, "n", 0, 12, "succeeded", "any"),  # 8 / 2 x 3
    ]
    assert problems(w, good, {"a": (12, 12)}) == []
    wrong = [*good[:2], ("a", 0, 2, "n", 0, 1)]  # the last task timed as one of the first group
    assert problems(w, wrong, {"a": (1.5, 1.5)}) == ["job 'a': attempt 2 took 1, the model gives 4"]


def test_a_reduce_has_no_locality_null_or_nan() -> None:
    nodes = [{"id": "n", "map_slots": 1, "reduce_slots": 1}]
    job = {
        "id": "a",
        "stages": [{"type": "map", "tasks": [{"duration": 2}]}, {"type": "reduce", "tasks": [{"duration": 3}]}],
    }
    w = workload(nodes, [job])
    for locality in (None, float("nan")):
        jobs, tasks = tables(w, [("a", 0, 0, "n", 0, 2), ("a", 1, 0, "n", 2, 5, "succeeded", locality)], {"a": (2, 5)})
        assert verify_simulation(w, pd.DataFrame(jobs), pd.DataFrame(tasks)).ok
    found = problems(w, [("a", 0, 0, "n", 0, 2), ("a", 1, 0, "n", 2, 5, "succeeded", "far")], {"a": (2, 5)})
    assert found == ["job 'a': attempt 1 has locality 'far' ('node', 'rack', 'any' or none expected)"]


def test_a_later_stage_waits_for_the_one_before_it() -> None:
    nodes = [{"id": "n", "map_slots": 2, "reduce_slots": 2}]
    stages = [{"type": "map", "tasks": [{"duration": 2}]}] + [{"type": "reduce", "tasks": [{"duration": 3}]}] * 2
    w = workload(nodes, [{"id": "a", "submit_time": 1, "stages": stages}])
    rows: list[Row] = [
        ("a", 0, 0, "n", 1, 3),
        ("a", 1, 0, "n", 3, 6, "succeeded", None),
        ("a", 2, 0, "n", 5, 8, "succeeded", None),
    ]
    assert problems(w, rows, {"a": (3, 8)}) == ["job 'a': stage 2 attempt 2 starts at 5, before stage 1 ends at 6"]


def test_a_down_node_runs_nothing_each_downtime_worded() -> None:
    faults = [{"node": "n", "down": 3, "up": 4}, {"node": "n", "down": 6, "up": 8}]
    w = workload([{"id": "n", "map_slots": 3, "reduce_slots": 1}], [maps("a", 4, 2, 10)], faults=faults)
    rows: list[Row] = [("a", 0, 1, "n", 4, 6), ("a", 0, 0, "n", 8, 12), ("a", 0, 2, "n", -2, 8)]
    # rows 0 and 1 touch the downtimes only at their ends; row 2 starts before its job too
    assert problems(w, rows, {"a": (12, 12)}) == [
        "attempt 2 (job 'a', stage 0, task 2): starts at -2, before its job's submit time 0",
        "attempt 2 (job 'a', stage 0, task 2): runs on 'n' over [-2, 8] while it is down [3, 4)",
        "attempt 2 (job 'a', stage 0, task 2): runs on 'n' over [-2, 8] while it is down [6, 8)",
    ]


def test_races_are_worded_task_by_task_in_the_order_of_their_first_attempt() -> None:
    nodes = [{"id": "n0", "map_slots": 1, "reduce_slots": 0}, {"id": "n1", "map_slots": 1, "reduce_slots": 0}]
    w = workload(nodes, [maps("a", 10, 10)])
    rows: list[Row] = [
        ("a", 0, 1, "n0", 10, 20),
        ("a", 0, 0, "n0", 0, 10),
        ("a", 0, 0, "n1", 4, 10, "killed"),  # a backup not marked speculative
        ("a", 0, 1, "n1", 14, 20, "killed"),
    ]
    assert problems(w, rows, {"a": (20, 20)}) == [
        "job 'a' stage 0 task 1: attempts 0 and 3 overlap and neither is speculative",
        "job 'a' stage 0 task 0: attempts 1 and 2 overlap and neither is speculative",
    ]
    rows[2] = ("a", 0, 0, "n1", 4, 10, "killed", "node", True)
    rows[3] = ("a", 0, 1, "n1", 20, 22, "killed", "node", True)  # starts when its task ended, runs on
    assert problems(w, rows, {"a": (20, 20)}) == [
        "job 'a' stage 0 task 1: speculative attempt 3 starts at 20 while no other attempt of its task runs",
        "job 'a' stage 0 task 1: attempt 3 runs until 22, after the task succeeded at 20",
    ]


def test_wasted_work_counts_each_loser_against_its_own_task() -> None:
    nodes = [{"id": "n0", "map_slots": 1, "reduce_slots": 0}, {"id": "n1", "map_slots": 1, "reduce_slots": 0}]
    w = workload(nodes, [maps("a", 10, 10), maps("b", 10)])
    rows: list[Row] = [
        ("a", 0, 0, "n0", 0, 10),
        ("a", 0, 0, "n1", 4, 10, "killed", "node", True),  # lost to the attempt before: 6 s
        ("a", 0, 1, "n1", 12, 20, "succeeded", "node", True),
        ("a", 0, 1, "n0", 10, 20, "killed"),  # lost: 10 s
        ("b", 0, 0, "n1", 15, 20, "killed"),  # b's task 0 has no winner: not a loser of a's
        ("b", 0, 0, "n1", 20, 30),
    ]
    _, tasks = tables(w, rows, {"a": (20, 20), "b": (30, 30)})
    assert wasted_work(tasks) == 16.0


def test_an_attempt_off_the_cluster_is_reported_not_timed() -> None:
    # a copy of a's success on a node the cluster lacks; its stage is complete without it
    w = workload([{"id": "n", "map_slots": 1, "reduce_slots": 1}], [maps("a", 5)])
    rows: list[Row] = [("a", 0, 0, "n", 0, 5), ("a", 0, 0, "zz", 0, 5)]
    assert problems(w, rows, {"a": (5, 5)}) == ["attempt 1 (job 'a', stage 0, task 0): node 'zz' is not in the cluster"]


def test_the_first_twenty_problems_in_table_order() -> None:
    w = workload([{"id": "n", "map_slots": 1, "reduce_slots": 1}], [maps("a", 5)])
    rows: list[Row] = [("a", 0, 0, "n", 0, 5)] + [("a", 0, k, "n", 0, 5) for k in range(25, 0, -1)]
    found = problems(w, rows, {"a": (5, 5)})
    assert found == [f"attempt {i} (job 'a', stage 0, task {26 - i}): the stage has 1 tasks" for i in range(1, 21)]
