"""Reduce slow-start at its edges: 0 (reduces from the job's start), thresholds a 1-map or
reduce-only job meets, 1.0 (after every map); Hadoop 1.0.3's own FIFO test as the oracle."""

from __future__ import annotations

from typing import Any

import pytest

from sim_helpers import attempts, mr_job, run, workload

SLOTS_2_2 = {"map_slots": 2, "reduce_slots": 2}


def test_hadoop_default_task_assignment_gives_a_reduce_on_the_first_heartbeat() -> None:
    # Hadoop 1.0.3 TestJobQueueTaskScheduler.testDefaultTaskAssignment: two running jobs of 10
    # maps and 10 reduces, trackers tt1 and tt2 of 2 map and 2 reduce slots. Its jobs skip
    # initTasks, so their slow-start threshold is 0 maps, as ceil(0 x 10) is. Per tracker,
    # heartbeat after heartbeat: job 1's m, m, r; then job 1's r; then nothing.
    nodes = [{"id": "tt1", **SLOTS_2_2}, {"id": "tt2", **SLOTS_2_2}]
    jobs = [mr_job(f"job{k}", [1000.0] * 10, [1000.0] * 10) for k in (1, 2)]
    _, rec = run(workload(nodes, jobs, timing={"reduce_slowstart": 0}), mode="heartbeat")
    # 2 trackers: one heartbeat every 3 s, tt1 at 0, 3, 6, ..., tt2 at 1.5, 4.5, ...
    first = [(r[3], r[4], r[0], "m" if r[1] == 0 else "r") for r in attempts(rec) if r[4] < 100]
    assert sorted(first) == [
        ("tt1", 0.0, "job1", "m"),
        ("tt1", 0.0, "job1", "m"),
        ("tt1", 0.0, "job1", "r"),
        ("tt1", 3.0, "job1", "r"),
        ("tt2", 1.5, "job1", "m"),
        ("tt2", 1.5, "job1", "m"),
        ("tt2", 1.5, "job1", "r"),
        ("tt2", 4.5, "job1", "r"),
    ]


def _jobs(demand: dict[str, float] | None = None) -> list[dict[str, Any]]:
    jobs = [
        mr_job("a", [10.0] * 5, [9.0] * 3),
        mr_job("b", [4.0, 6.0], [5.0], submit_time=2.0),
        mr_job("c", [7.0] * 3, [3.0] * 4, submit_time=3.0),
        mr_job("d", [5.0], [2.0], submit_time=30.0),
    ]
    if demand is not None:
        for job in jobs:
            for stage in job["stages"]:
                for group in stage["tasks"]:
                    group["demand"] = demand
    return jobs


@pytest.mark.parametrize("policy", ["fifo", "fair", "capacity", "drf"])
def test_every_job_finishes_with_slowstart_0(policy: str) -> None:
    # drf shares resources, the others slots (every run passes verify_simulation in `run`)
    if policy == "drf":
        nodes = [{"id": "n", "count": 2, "resources": {"cpu": 3, "mem": 6}}]
        jobs = _jobs({"cpu": 1, "mem": 1})
    else:
        nodes = [{"id": "n", "count": 2, **SLOTS_2_2}]
        jobs = _jobs()
    _, rec = run(workload(nodes, jobs, timing={"reduce_slowstart": 0}), policy)
    table = rec.jobs_columns()
    assert all(f == f for f in table["finish"]), table["finish"]
    assert set(table["unfinished_cause"]) == {""}
    # the first job's reduces launched before any of its maps ended: slow-start 0 took effect
    rows = attempts(rec)
    first_map_end = min(r[5] for r in rows if r[0] == "a" and r[1] == 0)
    assert min(r[4] for r in rows if r[0] == "a" and r[1] == 1) < first_map_end


def test_slowstart_0_finish_time_by_hand() -> None:
    # one node, 2 map slots, 1 reduce slot: maps of 10 s start at 0; the reduce (9 s) starts
    # at 0 too, copies for 9/3 = 3 s, waits for the last map (10), then needs 2 x 9/3 = 6 s.
    nodes = [{"id": "a", "map_slots": 2, "reduce_slots": 1}]
    job = mr_job("j", [10.0, 10.0], 9.0)
    _, rec = run(workload(nodes, [job], timing={"reduce_slowstart": 0}), mode="event")
    assert [(r[1], r[4], r[5]) for r in attempts(rec)] == [(0, 0, 10), (0, 0, 10), (1, 0, 16)]
    assert rec.jobs_columns()["finish"][0] == 16
    _, rec = run(workload(nodes, [job]), mode="event")  # without slow-start: 10 + 9
    assert rec.jobs_columns()["finish"][0] == 19


def test_slowstart_0_opens_each_reduce_stage_of_a_chain_when_its_maps_become_current() -> None:
    # map 3 s, reduce 5 s, map 4 s, reduce 6 s on one map and one reduce slot. The first
    # reduce starts at 0: max(5/3, 3) + 10/3 = 19/3. The second map stage becomes current
    # then, and its reduce starts with it: max(19/3 + 2, 19/3 + 4) + 4 = 43/3.
    nodes = [{"id": "a", "map_slots": 1, "reduce_slots": 1}]
    stages = [
        {"type": t, "tasks": [{"duration": d}]} for t, d in (("map", 3), ("reduce", 5), ("map", 4), ("reduce", 6))
    ]
    w = workload(nodes, [{"id": "c", "stages": stages}], timing={"reduce_slowstart": 0})
    _, rec = run(w, mode="event")
    rows = attempts(rec)
    assert [r[1] for r in rows] == [0, 1, 2, 3]
    times = [t for r in rows for t in (r[4], r[5])]
    assert times == pytest.approx([0, 3, 0, 19 / 3, 19 / 3, 31 / 3, 19 / 3, 43 / 3])
    assert rec.jobs_columns()["finish"][0] == pytest.approx(43 / 3)


@pytest.mark.parametrize("slowstart", [0.0, 0.05])
def test_thresholds_of_a_one_map_and_a_reduce_only_job(slowstart: float) -> None:
    # one map: ceil(0.05 x 1) = 1, the reduce waits for the map (10 + 6); ceil(0 x 1) = 0,
    # it starts at 0 and ends at max(2, 10) + 4. A job without maps runs its reduce at once.
    # (Two nodes: FIFO launches one reduce per node and heartbeat.)
    nodes = [{"id": "a", "count": 2, "map_slots": 1, "reduce_slots": 1}]
    jobs = [mr_job("one", [10.0], 6.0), {"id": "none", "stages": [{"type": "reduce", "tasks": [{"duration": 6}]}]}]
    _, rec = run(workload(nodes, jobs, timing={"reduce_slowstart": slowstart}), mode="event")
    reduces = {r[0]: (r[4], r[5]) for r in attempts(rec) if r[2] == 0 and (r[0] == "none" or r[1] == 1)}
    assert reduces == {"one": (0, 14) if slowstart == 0 else (10, 16), "none": (0, 6)}


@pytest.mark.parametrize("policy", ["fifo", "fair"])
def test_slowstart_1_is_after_every_map(policy: str) -> None:
    nodes = [{"id": "n", "count": 2, **SLOTS_2_2}]
    _, with_one = run(workload(nodes, _jobs(), timing={"reduce_slowstart": 1.0}), policy)
    _, without = run(workload(nodes, _jobs()), policy)
    assert attempts(with_one) == attempts(without)
