"""Fairness instances: loading, validation with one-line errors, round trips."""

from __future__ import annotations

import copy
import json

import pytest

from mropt.model import InputError, instance_from_dict, instance_to_json, load_instance
from mropt.model.fairness import FairnessInstance

from conftest import PAPER_EXAMPLE


def test_paper_example_loads_and_round_trips(tmp_path):
    inst = instance_from_dict(copy.deepcopy(PAPER_EXAMPLE))
    assert isinstance(inst, FairnessInstance) and inst.kind == "fairness"
    assert inst.resource_names == ("cpu", "mem")
    assert inst.dominant_demand.tolist() == pytest.approx([4 / 18, 3 / 9])
    assert inst.task_caps[1] == 10 and inst.task_caps[0] == float("inf")
    path = tmp_path / "f.json"
    path.write_text(instance_to_json(inst))
    again = load_instance(path)
    assert again.to_dict() == inst.to_dict()
    assert again.content_hash() == inst.content_hash()


def test_unknown_fields_are_kept():
    data = copy.deepcopy(PAPER_EXAMPLE)
    data["note"] = "x"
    data["users"][0]["team"] = "red"
    out = instance_from_dict(data).to_dict()
    assert out["note"] == "x" and out["users"][0]["team"] == "red"


def test_nodes_give_the_totals_and_must_agree():
    data = {
        "kind": "fairness",
        "schema_version": 1,
        "users": [{"id": "A", "demand": {"cpu": 1}, "task_inputs": [["n1"], ["n2", "n1"]]}],
        "nodes": [
            {"id": "n1", "rack": "r1", "capacity": {"cpu": 2, "mem": 4}},
            {"id": "n2", "capacity": {"cpu": 3, "mem": 4}},
        ],
    }
    inst = instance_from_dict(data)
    assert dict(inst.resources) == {"cpu": 5, "mem": 8}
    assert inst.node_capacity.tolist() == [[2, 4], [3, 4]]
    data["resources"] = {"cpu": 6, "mem": 8}
    with pytest.raises(InputError, match="'cpu' = 6 but the nodes' capacities sum to 5"):
        instance_from_dict(data)


def _bad(mutate):
    data = copy.deepcopy(PAPER_EXAMPLE)
    mutate(data)
    with pytest.raises(InputError) as err:
        instance_from_dict(data)
    text = str(err.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize(
    "mutate, words",
    [
        (lambda d: d["users"][1].update(weight=0), ["user 'B'", "'weight'", "0"]),
        (lambda d: d["users"][1].update(max_tasks=-1), ["user 'B'", "'max_tasks'", "-1"]),
        (lambda d: d["users"][1].update(max_tasks=2.5), ["user 'B'", "'max_tasks'", "2.5"]),
        (lambda d: d["users"][0].update(demand={"cpu": "1"}), ["user 'A'", "'cpu'", "'1'"]),
        (lambda d: d["users"][0].update(demand={"cpu": 0, "mem": 0}), ["user 'A'", "'demand'"]),
        (lambda d: d["users"][0].update(demand={"gpu": 1}), ["user 'A'", "'demand'", "'gpu'"]),
        (lambda d: d["users"][0].pop("demand"), ["user 'A'", "'demand'", "missing"]),
        (lambda d: d["users"].append({"id": "A", "demand": {"cpu": 1}}), ["user 'A'", "duplicate"]),
        (lambda d: d.update(resources={"cpu": -9}), ["'cpu'", "-9"]),
        (lambda d: d.update(users=[]), ["'users'"]),
        (lambda d: d["users"][0].update(task_inputs=[["n1"]]), ["user 'A'", "'task_inputs'", "nodes"]),
        (lambda d: d.update(nodes=[{"id": "n1", "capacity": {"cpu": 9, "mem": "x"}}]), ["node 'n1'", "'mem'", "'x'"]),
        (lambda d: d.update(nodes=[{"id": "n1"}]), ["node 'n1'", "'capacity'", "missing"]),
    ],
)
def test_bad_fields_name_user_or_node_field_and_value(mutate, words):
    text = _bad(mutate)
    for word in words:
        assert word in text, text


def test_unknown_node_in_task_inputs():
    data = {
        "kind": "fairness",
        "schema_version": 1,
        "users": [{"id": "A", "demand": {"cpu": 1}, "task_inputs": [["n9"]]}],
        "nodes": [{"id": "n1", "capacity": {"cpu": 2}}],
    }
    with pytest.raises(InputError, match=r"user 'A': field 'task_inputs\[0\]' names unknown node 'n9'"):
        instance_from_dict(data)


def test_json_file_round_trip_is_stable(tmp_path):
    text = instance_to_json(instance_from_dict(copy.deepcopy(PAPER_EXAMPLE)))
    assert json.loads(text)["users"][1]["max_tasks"] == 10
    assert instance_to_json(instance_from_dict(json.loads(text))) == text
