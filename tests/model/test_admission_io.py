"""Loading, writing and validating admission instance files."""

from __future__ import annotations

import copy
import json
import math

import pytest

from mropt.model import AdmissionInstance, InputError, instance_to_json, load_instance
from mropt.model.io import instance_from_dict, parse_json

EXAMPLE = {
    "kind": "admission",
    "schema_version": 1,
    "cluster": {"map_slots": 30, "reduce_slots": 20},
    "alpha": 0.3,
    "beta": 2.0,
    "rho": 1.0,
    "jobs": [
        {"id": "j1", "map_phase_time": 150, "reduce_phase_time": 170, "deadline": 500, "benefit": 300},
        {
            "id": "j7",
            "map_tasks": 150,
            "reduce_tasks": 40,
            "map_task_time": 21.5,
            "reduce_task_time": 30.0,
            "deadline": 900,
            "benefit": 450,
            "submit_time": 300,
        },
    ],
}


def test_contract_example_loads_with_derived_phase_times():
    inst = instance_from_dict(EXAMPLE)
    assert inst.ids == ("j1", "j7")
    # j1 gives phase times; j7 gives tasks: TCm = ceil(150/30) * 21.5, TCr = ceil(40/20) * 30.
    assert list(inst.tcm) == [150.0, 5 * 21.5]
    assert list(inst.tcr) == [170.0, 2 * 30.0]
    assert inst.jobs[1].submit_time == 300.0
    assert (inst.alpha, inst.beta, inst.rho) == (0.3, 2.0, 1.0)


def test_rho_scales_task_form_only():
    data = copy.deepcopy(EXAMPLE)
    data["rho"] = 1.5
    inst = instance_from_dict(data)
    assert inst.tcm[0] == 150.0  # phase times are taken as given
    assert inst.tcm[1] == pytest.approx(5 * 21.5 * 1.5)
    assert inst.tcr[1] == pytest.approx(2 * 30.0 * 1.5)


def test_defaults_for_alpha_beta_rho():
    data = copy.deepcopy(EXAMPLE)
    for key in ("alpha", "beta", "rho"):
        del data[key]
    inst = instance_from_dict(data)
    assert (inst.alpha, inst.beta, inst.rho) == (0.3, 2.0, 1.0)


def test_round_trip_is_byte_stable_and_keeps_unknown_fields(tmp_path):
    data = copy.deepcopy(EXAMPLE)
    data["generator"] = {"seed": 4, "note": "kept"}
    data["jobs"][0]["owner"] = "alice"
    text = instance_to_json(instance_from_dict(data))
    again = instance_to_json(instance_from_dict(parse_json(text)))
    assert text == again
    parsed = json.loads(text)
    assert parsed["generator"] == {"seed": 4, "note": "kept"}
    assert parsed["jobs"][0]["owner"] == "alice"
    path = tmp_path / "i.json"
    path.write_text(text)
    assert load_instance(path) == instance_from_dict(data)


def test_instances_are_immutable():
    inst = instance_from_dict(EXAMPLE)
    with pytest.raises(AttributeError):
        inst.alpha = 0.5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        inst.jobs[0].deadline = 1.0  # type: ignore[misc]
    with pytest.raises(ValueError):
        inst.tcm[0] = 1.0


def test_content_hash_ignores_layout_but_not_content():
    a = instance_from_dict(EXAMPLE)
    b = instance_from_dict(parse_json(json.dumps(EXAMPLE, indent=8)))
    assert a.content_hash() == b.content_hash()
    changed = copy.deepcopy(EXAMPLE)
    changed["jobs"][0]["benefit"] = 301
    assert instance_from_dict(changed).content_hash() != a.content_hash()


def _mutated(path: tuple, value=None, delete: bool = False) -> dict:
    data = copy.deepcopy(EXAMPLE)
    target = data
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


# (mutation, words that must appear in the one-line message)
BAD = [
    (_mutated(("jobs", 0, "deadline"), delete=True), ["'j1'", "'deadline'", "missing"]),
    (_mutated(("jobs", 1, "map_task_time"), delete=True), ["'j7'", "'map_task_time'", "missing"]),
    (_mutated(("jobs", 0, "benefit"), "300"), ["'j1'", "'benefit'", "'300'"]),
    (_mutated(("jobs", 0, "benefit"), True), ["'j1'", "'benefit'", "True"]),
    (_mutated(("jobs", 0, "benefit"), -5), ["'j1'", "'benefit'", "-5"]),
    (_mutated(("jobs", 0, "map_phase_time"), 0), ["'j1'", "'map_phase_time'", "0"]),
    (_mutated(("jobs", 0, "reduce_phase_time"), -1.5), ["'j1'", "'reduce_phase_time'", "-1.5"]),
    (_mutated(("jobs", 1, "map_tasks"), 0), ["'j7'", "'map_tasks'", "0"]),
    (_mutated(("jobs", 1, "map_tasks"), 2.5), ["'j7'", "'map_tasks'", "2.5"]),
    (_mutated(("jobs", 1, "reduce_task_time"), 0), ["'j7'", "'reduce_task_time'", "0"]),
    (_mutated(("jobs", 1, "submit_time"), -1), ["'j7'", "'submit_time'", "-1"]),
    (_mutated(("jobs", 1, "deadline"), 200), ["'j7'", "'deadline'", "200"]),
    (_mutated(("jobs", 1, "id"), "j1"), ["'j1'", "duplicate"]),
    (_mutated(("jobs", 0, "id"), 7), ["jobs[0]", "'id'", "7"]),
    (_mutated(("jobs", 0, "map_tasks"), 3), ["'j1'", "not both"]),
    (_mutated(("cluster", "map_slots"), 0), ["cluster", "'map_slots'", "0"]),
    (_mutated(("cluster", "reduce_slots"), -2), ["cluster", "'reduce_slots'", "-2"]),
    (_mutated(("cluster", "reduce_slots"), "20"), ["cluster", "'reduce_slots'", "'20'"]),
    (_mutated(("cluster",), delete=True), ["'cluster'", "missing"]),
    (_mutated(("jobs",), []), ["'jobs'"]),
    (_mutated(("jobs",), {"j1": 1}), ["'jobs'", "list"]),
    (_mutated(("alpha",), 1.5), ["'alpha'", "1.5"]),
    (_mutated(("alpha",), -0.1), ["'alpha'", "-0.1"]),
    (_mutated(("beta",), 1.0), ["'beta'", "1"]),
    (_mutated(("rho",), 0), ["'rho'", "0"]),
    (_mutated(("kind",), "fairnesss"), ["'kind'", "'fairnesss'", "unknown"]),
    (_mutated(("kind",), delete=True), ["'kind'", "missing"]),
    (_mutated(("schema_version",), 2), ["'schema_version'", "2", "newer"]),
    (_mutated(("schema_version",), "1"), ["'schema_version'", "'1'"]),
]


@pytest.mark.parametrize("data, words", BAD, ids=[" ".join(w) for _, w in BAD])
def test_validation_errors_name_the_job_field_and_value(data, words):
    with pytest.raises(InputError) as info:
        instance_from_dict(data)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message, message


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_rejected(tmp_path, literal):
    text = json.dumps(EXAMPLE).replace('"deadline": 500', f'"deadline": {literal}')
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_instance(path)
    message = str(info.value)
    assert str(path) in message
    assert ("'deadline'" in message and "'j1'" in message) or "non-finite" in message


def test_file_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_instance(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "admission",')
    with pytest.raises(InputError, match="not valid JSON.*line 1"):
        load_instance(bad)
    with pytest.raises(InputError, match="is a directory"):
        load_instance(tmp_path)
    arr = tmp_path / "arr.json"
    arr.write_text("[1, 2]")
    with pytest.raises(InputError, match="expected a JSON object"):
        load_instance(arr)


def test_map_only_job_has_zero_reduce_time():
    data = _mutated(("jobs", 1, "reduce_tasks"), 0)
    inst = instance_from_dict(data)
    assert inst.tcr[1] == 0.0


def test_programmatic_construction_validates_too():
    inst = instance_from_dict(EXAMPLE)
    with pytest.raises(InputError, match="'deadline'"):
        type(inst.jobs[0])(id="x", deadline=math.nan, benefit=1, map_phase_time=1, reduce_phase_time=1)
    with pytest.raises(InputError, match="'alpha'"):
        AdmissionInstance(cluster=inst.cluster, jobs=inst.jobs, alpha=2.0)
