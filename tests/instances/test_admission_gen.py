"""The paper-default admission generator."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mropt.instances.admission_gen import PAPER_JOB_TYPES, AdmissionParams, generate_admission
from mropt.model import InputError, instance_to_json
from mropt.model.io import instance_from_dict, parse_json


def test_same_arguments_same_bytes_other_seed_other_file():
    a = instance_to_json(generate_admission(7))
    assert a == instance_to_json(generate_admission(7))
    assert a != instance_to_json(generate_admission(8))
    assert a != instance_to_json(generate_admission(7, deadline=1200))


def test_paper_defaults():
    inst = generate_admission(3)
    assert inst.n == 30
    assert (inst.cluster.map_slots, inst.cluster.reduce_slots) == (80, 80)  # 40 nodes x 2 + 2
    assert (inst.alpha, inst.beta, inst.rho) == (0.3, 2.0, 1.0)
    for job in inst.jobs:
        assert 75 <= job.map_tasks <= 225  # [0.5 L, 1.5 L], L = 150 splits
        assert 500 <= job.deadline <= 1500  # [0.5 D, 1.5 D], D = 1000 s, all submitted at 0
        assert 300 <= job.benefit <= 700 and float(job.benefit).is_integer()
        assert job.submit_time == 0
        jt = PAPER_JOB_TYPES[job.extra["type"]]
        assert job.reduce_tasks == max(1, math.ceil(jt.reduce_fanout * job.map_tasks))
        assert abs(job.map_task_time / jt.map_task_time - 1) <= 0.2 + 1e-3


def test_file_records_model_seed_params_and_load():
    inst = generate_admission(5, jobs=12, size=120)
    record = inst.meta["generator"]
    assert record["seed"] == 5
    assert record["params"]["jobs"] == 12 and record["params"]["size"] == 120
    assert record["model"] == "amb-paper" and record["model_version"] == 1
    expected = float(inst.stc.sum() / inst.deadlines.max())
    assert record["load_factor"] == pytest.approx(expected, rel=1e-5)
    # the record survives a write/read cycle unchanged
    again = instance_from_dict(parse_json(instance_to_json(inst)))
    assert again.meta["generator"] == record


def test_prefix_property_jobs_depend_on_seed_and_index_only():
    small, large = generate_admission(2, jobs=5), generate_admission(2, jobs=40)
    assert small.jobs == large.jobs[:5]


def test_load_grows_with_size_and_shrinks_with_deadline():
    def load(**kw):
        return np.mean([generate_admission(s, **kw).load_factor for s in range(5)])

    assert load(size=200) > load(size=100)
    assert load(deadline=1600) < load(deadline=800)


def test_dynamic_arrivals_and_overrides():
    inst = generate_admission(1, jobs=20, mean_interarrival=60, mix={"grep": 1}, nodes=10)
    submits = inst.submit_times
    assert submits[0] == 0 and np.all(np.diff(submits) >= 0) and submits[-1] > 0
    assert np.all(inst.deadlines - submits >= 500) and np.all(inst.deadlines - submits <= 1500)
    assert {j.extra["type"] for j in inst.jobs} == {"grep"}
    assert inst.cluster.map_slots == 20


@pytest.mark.parametrize(
    "overrides, word",
    [
        ({"jobs": 0}, "'jobs'"),
        ({"size": -1}, "'size'"),
        ({"alpha": 2}, "'alpha'"),
        ({"beta": 0.5}, "'beta'"),
        ({"mix": {"sort": 1}}, "'sort'"),
        ({"benefit_min": 800}, "'benefit_min'"),
        ({"nope": 1}, "'nope'"),
    ],
)
def test_bad_parameters_are_input_errors(overrides, word):
    with pytest.raises(InputError, match=word):
        generate_admission(0, **overrides)


def test_params_object_and_overrides_agree():
    assert generate_admission(4, AdmissionParams(jobs=9)) == generate_admission(4, jobs=9)
