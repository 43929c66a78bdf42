"""``mropt import-rumen`` takes reduce slow-start from the trace: the job configuration, else the attempts."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from mropt.importers.rumen_workload import history_workload, threshold_fraction
from mropt.model.workload import Timing, WorkloadInstance
from mropt.sim.run import simulate

from history_files import rumen_job, shared, write_rumen

H2, H1 = "mapreduce.job.reduce.slowstart.completedmaps", "mapred.reduce.slowstart.completed.maps"


def _job(jid: str, reduce_start_ms: int, props: dict[str, str] | None = None) -> dict:
    """rumen_job's two maps (done 5 s and 9 s after submit) with its reduce started at ``reduce_start_ms``."""
    job = rumen_job(jid)
    reduce = job["reduceTasks"][0]
    start = job["submitTime"] + reduce_start_ms
    reduce.update(startTime=start, finishTime=start + 6000)
    reduce["attempts"][0].update(startTime=start, finishTime=start + 6000)
    job["jobProperties"] = {**job["jobProperties"], **(props or {})}
    return job


def test_threshold_fraction_gives_back_k_maps() -> None:
    for n in range(1, 400):
        for k in range(n + 1):
            s = threshold_fraction(k, n)
            assert math.ceil(s * n) == k and 0.0 <= s <= 1.0 and s == round(s, 6), (k, n, s)


@pytest.mark.parametrize(
    ("props", "value", "origin"),
    [
        ({}, 0.5, "attempts"),  # the reduce started 6 s in: 1 of the 2 maps had finished
        ({H2: "0.25"}, 0.25, "jobconf"),
        ({H1: "0.8"}, 0.8, "jobconf"),  # Hadoop 1's name
        ({H2: "0.3", H1: "0.9"}, 0.3, "jobconf"),  # Hadoop 2's name first
        ({H2: "lots"}, 0.5, "attempts"),  # not a number in [0, 1]: ignored
        ({H2: "1.5"}, 0.5, "attempts"),
    ],
)
def test_slowstart_from_the_jobconf_else_the_attempts(tmp_path: Path, props: dict, value: float, origin: str) -> None:
    w = history_workload([write_rumen(tmp_path / "t.json", [_job("job_7_0001", 6000, props)])])
    assert w.timing.reduce_slowstart == value
    assert w.meta["source"]["reduce_slowstart"] == {"value": value, "from": origin, "jobs": 1}


def test_one_value_for_the_workload_the_smallest_and_none_without_reduces(tmp_path: Path) -> None:
    # reduces started after both maps (2 of 2: 1.0) and after the first (0.5), and one started
    # at the job's first map end (5 s: a map that ended at that instant counts as done)
    jobs = [_job("job_7_0001", 10_000), _job("job_7_0002", 6000), _job("job_7_0003", 5000)]
    w = history_workload([write_rumen(tmp_path / "t.json", jobs)])
    assert w.timing.reduce_slowstart == 0.5 and w.meta["source"]["reduce_slowstart"]["jobs"] == 3
    w = history_workload([write_rumen(tmp_path / "t.json", [_job("job_7_0001", 2000)])])  # before any map ended
    assert w.timing.reduce_slowstart == 0.0
    only_maps = rumen_job("job_7_0004")
    only_maps.update(reduceTasks=[], totalReduces=0, jobProperties={H2: "0.8"})
    w = history_workload([write_rumen(tmp_path / "m.json", [only_maps])])
    assert w.timing.reduce_slowstart is None and "reduce_slowstart" not in w.meta["source"]


def test_sleepjob_trace_replays_close_to_its_real_task_span() -> None:
    # SleepJob (10 maps, 1 reduce on localhost): its first reduce attempt started at
    # 1329348464.995, when 7 maps had finished (the 8th ended at 1329348465.965); its tasks
    # ran from 1329348450.485 to 1329348468.600: 18.115 s
    (path,) = shared("hadoop-jobhistory").glob("*Sleep+job*.jhist")
    w = history_workload([path])
    assert w.timing.reduce_slowstart == 0.7
    assert w.meta["source"]["reduce_slowstart"] == {"value": 0.7, "from": "attempts", "jobs": 1}

    def span(workload: WorkloadInstance) -> float:
        tasks = simulate(workload, "fifo", mode="event").recorder.tasks_columns()
        return float(max(tasks["end"]) - min(tasks["start"]))

    real = 468.600 - 450.485
    assert span(w) == pytest.approx(real, rel=0.05)
    # the reduces after every map, as before: over a quarter longer
    assert span(dataclasses.replace(w, timing=Timing())) > 1.25 * real
