"""Priority instance files: round trip, kept unknown fields, one-line errors."""

from __future__ import annotations

import copy
import json

import pytest

from mropt.instances.priority_gen import generate_priority
from mropt.model.errors import InputError
from mropt.model.io import instance_from_dict, instance_to_json, load_instance
from mropt.model.priority import PriorityInstance

EXAMPLE = {
    "kind": "priority",
    "schema_version": 1,
    "map_slots": 100,
    "reduce_slots": 50,
    "pattern_mix": {"simple": 1, "iterative": 1, "chain": 1},
    "iterations": 3,
    "priorities": [{"id": "T1", "deadline": 600, "arrival_rate": 0.00167, "map_work": 6000, "reduce_work": 3000}],
}


def test_example_round_trips_and_keeps_unknown_fields():
    data = copy.deepcopy(EXAMPLE)
    data["note"] = "kept"
    data["priorities"][0]["owner"] = "ops"
    inst = instance_from_dict(data)
    assert isinstance(inst, PriorityInstance) and inst.n == 1 and inst.reduce_to_map_ratio == 0.5
    out = inst.to_dict()
    assert out["note"] == "kept" and out["priorities"][0]["owner"] == "ops"
    assert instance_from_dict(json.loads(instance_to_json(inst))) == inst
    assert instance_from_dict(out).content_hash() == inst.content_hash()


def test_explicit_routing_and_history_round_trip():
    data = copy.deepcopy(EXAMPLE)
    del data["pattern_mix"], data["iterations"]
    data["routing"] = {"q11": 0.1, "q12": 0.6, "q21": 0.5, "q10": 0.3}
    del data["priorities"][0]["arrival_rate"]
    data["priorities"][0]["history"] = {"arrival_rate": [0.001, 0.002, 0.0015]}
    inst = instance_from_dict(data)
    assert inst.priorities[0].arrival_rate is None
    assert instance_from_dict(inst.to_dict()) == inst


def test_generator_is_deterministic_and_valid(tmp_path):
    a = generate_priority(seed=4, jitter=0.3, history_slices=6)
    b = generate_priority(seed=4, jitter=0.3, history_slices=6)
    assert instance_to_json(a) == instance_to_json(b)
    path = tmp_path / "p.json"
    path.write_text(instance_to_json(a))
    assert load_instance(path) == a
    assert a.meta["generator"]["params"]["history_slices"] == 6
    paper = generate_priority()
    assert [p.deadline for p in paper.priorities] == [600, 1200, 2400]
    assert paper.priorities[0].map_work == 6000 and paper.priorities[0].reduce_work == 3000


def _with(change):
    data = copy.deepcopy(EXAMPLE)
    change(data)
    return data


BAD = [
    (lambda d: d.pop("map_slots"), "'map_slots' is missing"),
    (lambda d: d.update(map_slots=0), "'map_slots' must be >= 1"),
    (lambda d: d.update(reduce_slots=2.5), "'reduce_slots' must be an integer"),
    (lambda d: d.update(priorities=[]), "'priorities' must list at least one"),
    (lambda d: d.update(priorities="T1"), "'priorities' must be a list"),
    (lambda d: d.pop("pattern_mix"), "'pattern_mix' is missing"),
    (lambda d: d.update(routing={"q11": 0, "q12": 1, "q21": 0}), "not both"),
    (lambda d: d.update(pattern_mix={"simple": 1, "mapreduce": 2}), "unknown pattern 'mapreduce'"),
    (lambda d: d.update(pattern_mix={"simple": 0}), "positive total weight"),
    (lambda d: d.update(pattern_mix={"simple": -1, "chain": 2}), "'simple' must be >= 0"),
    (lambda d: d.update(iterations=0), "'iterations' must be >= 1"),
    (lambda d: d["priorities"][0].update(deadline=-5), "priority 'T1': field 'deadline' must be > 0, got -5"),
    (lambda d: d["priorities"][0].pop("deadline"), "priority 'T1': field 'deadline' is missing"),
    (lambda d: d["priorities"][0].update(arrival_rate=-0.1), "'arrival_rate' must be >= 0"),
    (lambda d: d["priorities"][0].update(map_work="6000"), "'map_work' must be a number"),
    (lambda d: d["priorities"][0].update(reduce_work=0), "'reduce_work' must be > 0"),
    (lambda d: d["priorities"][0].pop("map_work"), "'map_work' is missing (give it, or its series"),
    (lambda d: d["priorities"][0].update(history={"arrivals": [1, 2]}), "unknown series 'arrivals'"),
    (lambda d: d["priorities"][0].update(history={"map_work": [5]}), "at least 2 time slices"),
    (lambda d: d["priorities"][0].update(history={"map_work": [5, 0]}), "'map_work[1]' must be > 0"),
    (lambda d: d["priorities"][0].update(history=[1, 2]), "field 'history'"),
    (lambda d: d["priorities"].append(dict(d["priorities"][0])), "duplicate id"),
    (lambda d: d["priorities"][0].update(id=""), "'id' must be a non-empty string"),
]


@pytest.mark.parametrize("change, words", BAD)
def test_bad_files_give_one_line_errors(change, words):
    with pytest.raises(InputError) as info:
        instance_from_dict(_with(change))
    message = str(info.value)
    assert words in message and "\n" not in message


ROUTING_BAD = [
    ({"q11": 0.5, "q12": 0.6, "q21": 0}, "q11 + q12 must be <= 1"),
    ({"q11": 1.0, "q12": 0.0, "q21": 0}, "jobs never leave"),
    ({"q11": 0.0, "q12": 1.0, "q21": 1.0}, "jobs never leave"),
    ({"q11": 0.1, "q12": 0.5}, "'q21' is missing"),
    ({"q11": 0.1, "q12": 0.5, "q21": 1.5}, "'q21' must be <= 1"),
    ({"q11": 0.1, "q12": 0.5, "q21": 0.5, "q10": 0.2}, "'q10' must equal 0.4"),
    ({"q11": 0.1, "q12": 0.5, "q21": 0.5, "q33": 0.2}, "unknown probability 'q33'"),
]


@pytest.mark.parametrize("routing, words", ROUTING_BAD)
def test_bad_routing(routing, words):
    def change(d):
        del d["pattern_mix"]
        d["routing"] = routing

    with pytest.raises(InputError, match=None) as info:
        instance_from_dict(_with(change))
    assert words in str(info.value)
