"""The summary on a cluster of resources: CPU and memory utilisation, on-time counts without deadlines.

Hand scenario: one node <4 CPU, 8 mem>; job A one task <2, 2> for 10 s, job B one task <1, 4>
for 5 s; both fit at 0 and run at once under drf. Makespan 10 s:
CPU held 2 x 10 + 1 x 5 = 25 of 4 x 10 = 40 CPU-seconds: 0.625; memory 2 x 10 + 4 x 5 = 40 of
8 x 10 = 80: 0.5. With a second, idle node of the same size down over [0, 6): its capacity counts
only while up, 4 s of the 10: CPU 25 / (40 + 16) = 25/56, memory 40 / (80 + 32) = 40/112.
"""

from __future__ import annotations

from typing import Any

import pytest

from mropt.harness.policy_metrics import as_frames, run_metrics
from mropt.sim.outputs import run_tables, summary_record
from mropt.sim.run import simulate

from sim_helpers import TINY, workload

NODE = {"resources": {"cpu": 4, "mem": 8}}


def job(job_id: str, cpu: float, mem: float, duration: float, **fields: Any) -> dict[str, Any]:
    task = {"duration": duration, "demand": {"cpu": cpu, "mem": mem}}
    return {"id": job_id, "user": job_id.lower(), "stages": [{"type": "map", "tasks": [task]}], **fields}


def test_cpu_and_memory_utilisation_by_hand() -> None:
    run = simulate(workload([{"id": "n", **NODE}], [job("A", 2, 2, 10), job("B", 1, 4, 5)]), "drf")
    assert run.summary["makespan"] == 10.0
    assert run.summary["utilisation"] == {"cpu": pytest.approx(0.625), "memory": pytest.approx(0.5)}


def test_a_node_down_counts_only_while_up() -> None:
    nodes = [{"id": "n", **NODE}, {"id": "m", **NODE}]
    w = workload(nodes, [job("A", 2, 2, 10), job("B", 1, 4, 5)], faults=[{"node": "m", "down": 0, "up": 6}])
    run = simulate(w, "drf")
    assert set(run.recorder.tasks_columns()["node"]) == {"n"}
    assert run.summary["utilisation"] == {"cpu": pytest.approx(25 / 56), "memory": pytest.approx(40 / 112)}


def test_the_tables_carry_each_attempts_demand_and_the_summary_the_totals() -> None:
    run = simulate(workload([{"id": "n", **NODE}], [job("A", 2, 2, 10), job("B", 1, 4, 5)]), "drf")
    tasks = run_tables(run)["tasks.parquet"].to_pandas().set_index("job_id")
    assert tasks["demand_cpu"].to_dict() == {"A": 2.0, "B": 1.0}
    assert tasks["demand_mem"].to_dict() == {"A": 2.0, "B": 4.0}
    jobs = run_tables(run)["jobs.parquet"].to_pandas().set_index("job_id")
    assert jobs["ideal_span"].to_dict() == {"A": 10.0, "B": 5.0}
    assert summary_record(run)["resources"] == {"cpu": 4.0, "mem": 8.0}


def test_jobs_without_deadlines_are_not_counted_on_time_zero() -> None:
    run = simulate(workload([{"id": "n", **NODE}], [job("A", 2, 2, 10), job("B", 1, 4, 5)]), "drf")
    assert run.recorder.jobs_columns()["on_time"] == [None, None]
    assert run.summary["on_time"] is None and run.summary["late"] is None
    jobs, tasks = as_frames(run.recorder.jobs_columns(), run.recorder.tasks_columns())
    assert run_metrics(run.workload, jobs, tasks)["on_time_share"] is None


def test_on_time_counts_only_jobs_with_a_deadline() -> None:
    # A meets its deadline 20; B has none: one on time, none late, a share of 1 over the one job with one
    w = workload([{"id": "n", **NODE}], [job("A", 2, 2, 10, deadline=20), job("B", 1, 4, 5)])
    run = simulate(w, "drf")
    assert run.recorder.jobs_columns()["on_time"] == [True, None]
    assert (run.summary["on_time"], run.summary["late"]) == (1, 0)
    jobs, tasks = as_frames(run.recorder.jobs_columns(), run.recorder.tasks_columns())
    assert run_metrics(run.workload, jobs, tasks)["on_time_share"] == 1.0


def test_a_slot_cluster_keeps_map_and_reduce_only() -> None:
    from mropt.model.workload import WorkloadInstance

    run = simulate(WorkloadInstance.from_dict(TINY), "fifo", mode="event")
    assert set(run.summary["utilisation"]) == {"map", "reduce"}
    assert "resources" not in summary_record(run)
    assert not [c for c in run_tables(run)["tasks.parquet"].column_names if c.startswith("demand_")]
