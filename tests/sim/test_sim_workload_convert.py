"""Admission instances as workloads and back (mropt.instances.workload_convert)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from mropt.instances.admission_gen import generate_admission
from mropt.instances.workload_convert import to_admission, to_workload
from mropt.model.admission import AdmissionInstance, Cluster, Job
from mropt.model.errors import InputError
from mropt.model.io import instance_from_dict, instance_to_json
from mropt.model.workload import NodeSpec, Stage, TaskGroup, WorkloadInstance, WorkloadJob


def _mixed() -> AdmissionInstance:
    jobs = (
        Job(id="p", map_phase_time=30, reduce_phase_time=12.5, deadline=90, benefit=300, submit_time=5),
        Job(id="t", map_tasks=7, reduce_tasks=3, map_task_time=10, reduce_task_time=4, deadline=80, benefit=400),
        Job(id="m", map_tasks=5, reduce_tasks=0, map_task_time=3, reduce_task_time=9, deadline=50, benefit=0),
    )
    return AdmissionInstance(
        cluster=Cluster(6, 4, {"note": "x"}), jobs=jobs, alpha=0.2, beta=3.0, rho=1.25, name="mix", meta={"k": 1}
    )


def test_round_trip_is_exact_through_the_file() -> None:
    for instance in (_mixed(), generate_admission(7, jobs=6, mean_interarrival=30)):
        workload = to_workload(instance)
        again = instance_from_dict(json.loads(instance_to_json(workload)))
        back = to_admission(again)  # type: ignore[arg-type]
        assert back == instance
        assert instance_to_json(back) == instance_to_json(instance)


def test_the_idealised_cluster_and_jobs() -> None:
    w = to_workload(_mixed())
    assert w.nodes == (NodeSpec("n", count=2, map_slots=3, reduce_slots=2),)  # gcd(6, 4) nodes
    assert (w.timing.rack_factor, w.timing.remote_factor, w.timing.straggler_rate) == (1.0, 1.0, 0.0)
    assert not w.faults and w.placement is None and w.alpha == 0.2
    p, t, m = w.jobs
    # phase form: M map tasks of TCm and R reduce tasks of TCr (one wave each)
    assert p.stages == (Stage("map", (TaskGroup(30.0, 6),)), Stage("reduce", (TaskGroup(12.5, 4),)))
    assert (p.submit_time, p.deadline, p.benefit) == (5, 90, 300)
    # task form: durations unscaled by rho (rho is the planner's slack)
    assert t.stages == (Stage("map", (TaskGroup(10.0, 7),)), Stage("reduce", (TaskGroup(4.0, 3),)))
    assert m.stages == (Stage("map", (TaskGroup(3.0, 5),)),)  # map-only
    assert to_workload(_mixed(), nodes=1).nodes == (NodeSpec("n", count=1, map_slots=6, reduce_slots=4),)
    with pytest.raises(InputError, match="'nodes' must divide map_slots 6 and reduce_slots 4, got 4"):
        to_workload(_mixed(), nodes=4)


def test_a_plain_workload_converts_where_the_data_allows() -> None:
    job = WorkloadJob(
        id="j",
        deadline=100,
        benefit=5,
        stages=(Stage("map", (TaskGroup(8, 10),)), Stage("reduce", (TaskGroup(6, 3),))),
    )
    w = WorkloadInstance(nodes=(NodeSpec("n", count=4, map_slots=2, reduce_slots=1, speed=2.0),), jobs=(job,))
    a = to_admission(w)
    assert (a.cluster.map_slots, a.cluster.reduce_slots, a.rho, a.beta) == (8, 4, 1.0, 2.0)
    j = a.jobs[0]
    assert (j.map_tasks, j.map_task_time, j.reduce_tasks, j.reduce_task_time) == (10, 4.0, 3, 3.0)
    assert np.allclose([a.tcm[0], a.tcr[0]], [8.0, 3.0])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda w: dataclasses.replace(w, nodes=(*w.nodes, NodeSpec("o", map_slots=1, reduce_slots=1))), "homogeneous"),
        (lambda w: _job(w, deadline=None), "field 'deadline' is missing"),
        (lambda w: _job(w, stages=w.jobs[0].stages[::-1]), "stages are reduce\\+map"),
        (
            lambda w: _job(w, stages=(Stage("map", (TaskGroup(1, 2), TaskGroup(2, 1))),)),
            "different durations \\(1, 2\\)",
        ),
    ],
)
def test_what_does_not_convert_is_named(change, message: str) -> None:  # type: ignore[no-untyped-def]
    w = to_workload(_mixed())
    with pytest.raises(InputError, match=message):
        to_admission(change(w))


def _job(w: WorkloadInstance, **fields) -> WorkloadInstance:  # type: ignore[no-untyped-def]
    return dataclasses.replace(w, jobs=(dataclasses.replace(w.jobs[0], **fields), *w.jobs[1:]))


def test_a_resource_cluster_does_not_convert() -> None:
    job = WorkloadJob(id="j", deadline=9, benefit=1, stages=(Stage("map", (TaskGroup(1, 1, {"cpu": 1}),)),))
    w = WorkloadInstance(nodes=(NodeSpec("n", resources={"cpu": 4}),), jobs=(job,))
    with pytest.raises(InputError, match="resources, not map and reduce slots"):
        to_admission(w)
