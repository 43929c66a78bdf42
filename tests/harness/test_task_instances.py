"""The instance a study's task carries: packed once per instance, the same content in the worker.

:func:`mropt.harness.runner.make_task` puts the instance into each run's task as its packed JSON
(:func:`mropt.harness.worker.pack_instance`), one bytes object per instance shared by the study's
tasks, so that each pickle of a task (Dask's client, scheduler and worker, the pipe to the worker
process) copies it rather than walking the instance's dict (issue 32). The worker process unpacks it
on the instance's first run only. What is checked: the unpacked instance has the content hash of the
original (workloads with every optional part; admission, fairness and priority instances); the tasks of one instance share
one bytes object, and a task's pickle is smaller than the instance's JSON (no dict in it); a study's
rows are the ones a simulation of the original instance gives.
"""

from __future__ import annotations

import json
import pickle

import pytest

from mropt.harness.experiment import load_experiment
from mropt.harness.runner import make_task, results_frame, run_study
from mropt.harness.worker import execute, pack_instance, unpack_instance
from mropt.instances.admission_gen import generate_admission
from mropt.instances.fairness_gen import generate_fairness
from mropt.instances.priority_gen import generate_priority
from mropt.instances.workload_gen import generate_ddrf, generate_late
from mropt.model.workload import WorkloadInstance
from mropt.sim.run import simulate


def every_part() -> WorkloadInstance:
    """A workload with every optional part: racks, speeds, resources, pools, queues, faults, timing,
    per-task and shared replicas, inputs, deadlines, fractions that are no short decimals, extra keys."""
    nodes = [
        {"id": "n0", "rack": "r0", "map_slots": 2, "reduce_slots": 1, "speed": 1.5},
        {"id": "n1", "rack": "r1", "map_slots": 1, "reduce_slots": 2},
        {"id": "m", "count": 3, "rack": "r1", "map_slots": 1, "reduce_slots": 0, "speed": 0.1 + 0.2},
    ]
    jobs = [
        {
            "id": "j\u00e9",
            "submit_time": 1 / 3,
            "deadline": 1e-7 + 40,
            "benefit": 2.5,
            "user": "u1",
            "pool": "p0",
            "queue": "q0",
            "priority": -2,
            "stages": [
                {
                    "type": "map",
                    "tasks": [
                        {"duration": 10, "count": 2, "replicas": [["n0", "n1"], ["m-2"]], "input_mb": 64.5},
                        {"duration": 2**-30, "count": 3, "replicas": ["n1"]},
                    ],
                },
                {"type": "reduce", "tasks": [{"duration": 5.0}]},
            ],
        },
        {
            "id": "j2",
            "submit_time": 3,
            "pool": "p1",
            "queue": "q1",
            "stages": [{"type": "map", "tasks": [{"duration": 7}]}],
        },
    ]
    return WorkloadInstance.from_dict(
        {
            "kind": "workload",
            "schema_version": 1,
            "name": "every part",
            "cluster": {"nodes": nodes},
            "alpha": 0.25,
            "timing": {"reduce_slowstart": 0.5, "rack_factor": 1.2, "remote_factor": 1.7},
            "pools": [{"id": "p0", "weight": 2.0, "min_maps": 1}, {"id": "p1", "weight": 0.5, "mode": "fifo"}],
            "queues": [{"id": "q0", "capacity": 70.0, "maximum_capacity": 90.0}, {"id": "q1", "capacity": 30.0}],
            "faults": [{"node": "n1", "down": 6.0, "up": 20.0}, {"node": "m-0", "down": 2.0}],
            "source": {"trace": "made up", "rows": [1, 2]},
            "jobs": jobs,
        }
    )


@pytest.mark.parametrize(
    "instance",
    [
        every_part(),
        generate_ddrf(3),
        generate_late(1, jobs=30),
        generate_admission(2),
        generate_fairness(4),
        generate_priority(5),
    ],
    ids=["every-part", "ddrf", "late", "admission", "fairness", "priority"],
)
def test_an_unpacked_instance_has_the_content_hash_of_the_original(instance):
    again = unpack_instance(pack_instance(instance))
    assert type(again) is type(instance)
    assert again.content_hash() == instance.content_hash()
    assert again.to_dict() == instance.to_dict()


STUDY = """
name = "packed"
method_seeds = [0, 1, 2]
time_limit = 60
policies = ["fifo", "fair"]
[[instances]]
generator = "workload"
preset = "late"
seeds = [0]
params = {jobs = 60, mean_interarrival = 5}
"""


def test_the_tasks_of_an_instance_share_one_packed_copy_and_pickle_without_its_dict(write_experiment):
    exp = load_experiment(write_experiment(STUDY))
    [entry] = exp.instances()
    runs = list(exp.runs([entry]))
    packed: dict[str, bytes] = {}
    tasks = [make_task(exp, run, packed) for run in runs]
    assert len(tasks) == 6 and list(packed) == [entry.instance.content_hash()]
    assert all(t["instance_data"] is tasks[0]["instance_data"] for t in tasks)
    text = json.dumps(entry.instance.to_dict(), separators=(",", ":"))
    assert len(pickle.dumps(tasks[0], protocol=pickle.HIGHEST_PROTOCOL)) < len(text) / 2
    assert "instance" not in tasks[0]  # (the dict itself travels no more)


def test_a_run_of_a_packed_task_is_the_simulation_of_the_original(write_experiment, tmp_path):
    exp = load_experiment(write_experiment(STUDY))
    [entry] = exp.instances()
    run = next(r for r in exp.runs([entry]) if r.method.name == "fair" and r.seed == 2)
    cache: dict[str, object] = {}
    row = execute(make_task(exp, run), cache)
    assert row["status"] == "feasible" and row["verified"], row
    [held] = cache.values()
    assert held.content_hash() == entry.instance.content_hash()
    direct = simulate(entry.instance, "fair", {}, seed=2)
    assert row["objective"] == direct.summary["benefit"]
    assert json.loads(row["metrics"])["event_log_sha256"] == direct.summary["event_log_sha256"]
    summary = run_study(exp, tmp_path / "out", workers=2, progress=False)
    assert summary.failures == 0
    frame = results_frame(tmp_path / "out")
    stored = frame[(frame["method"] == "fair") & (frame["seed"] == 2)]
    assert stored["objective"].tolist() == [direct.summary["benefit"]]
