"""Numbers and strings in every file mropt reads: one reader, one rule.

Each test is a defect found before the fix (a traceback, a wrong acceptance, a warning
on stderr); the properties over generated files are in ``test_malformed_inputs.py``.
"""

from __future__ import annotations

import copy
import json

import pytest

import mropt
from mropt.cli.common import parse_param
from mropt.model import InputError
from mropt.model.io import instance_from_dict, parse_json
from mropt.model.solution import Solution

from cli_capture import assert_input_error, assert_promise, run_cli

ADMISSION = {
    "kind": "admission",
    "schema_version": 1,
    "cluster": {"map_slots": 2, "reduce_slots": 2},
    "jobs": [{"id": "a", "map_phase_time": 10, "reduce_phase_time": 5, "deadline": 100, "benefit": 3}],
}
FAIRNESS = {
    "kind": "fairness",
    "schema_version": 1,
    "resources": {"cpu": 9, "mem": 18},
    "users": [{"id": "A", "demand": {"cpu": 1, "mem": 4}}, {"id": "B", "demand": {"cpu": 3, "mem": 1}}],
}


def _file(tmp_path, text: str, name: str = "i.json"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _with_benefit(literal: str) -> str:
    return json.dumps(ADMISSION).replace('"benefit": 3', f'"benefit": {literal}')


@pytest.mark.parametrize(
    "literal, shown",
    [
        ("1" + "0" * 400, "an integer of 401 digits"),  # beyond the float range: was an OverflowError traceback
        ("1" + "0" * 5000, "an integer of 5001 digits"),  # over Python's 4,300 digits: was a ValueError traceback
        ("1e309", "1e309"),
        ("-1e309", "-1e309"),
    ],
)
def test_numbers_beyond_the_float_range_name_the_field(tmp_path, literal, shown):
    result = run_cli("solve", _file(tmp_path, _with_benefit(literal)), "--method", "edf-greedy")
    assert_input_error(result, "jobs[0] (id 'a')", "field 'benefit'", "finite number", shown)


@pytest.mark.parametrize("literal", ["1e309", "1" + "0" * 400, "1" + "0" * 5000])
def test_unknown_fields_obey_the_same_number_rules(tmp_path, literal):
    """``1e309`` in an unknown field was accepted (kept and written back as Infinity)."""
    text = json.dumps(ADMISSION).replace('"benefit": 3', f'"benefit": 3, "note": {literal}')
    result = run_cli("solve", _file(tmp_path, text), "--method", "edf-greedy")
    assert_input_error(result, "field 'note'", "finite number")
    text = json.dumps({**ADMISSION, "source": {"rows": [1, 2, "x"]}}).replace('"x"', literal)
    assert_input_error(run_cli("solve", _file(tmp_path, text), "--method", "edf-greedy"), "field 'source.rows[2]'")


@pytest.mark.parametrize("kind", [{}, [], 3, True])
def test_a_kind_that_is_not_a_string(tmp_path, kind):
    """``kind: {}`` was a TypeError (unhashable) traceback."""
    result = run_cli("solve", _file(tmp_path, json.dumps({**ADMISSION, "kind": kind})), "--method", "edf-greedy")
    assert_input_error(result, "field 'kind'", "unknown kind")


def test_lone_surrogates_are_refused(tmp_path):
    """A lone-surrogate id was accepted, then crashed the text output (UnicodeEncodeError on stdout)."""
    text = json.dumps(ADMISSION).replace('"id": "a"', '"id": "\\ud800"')
    result = run_cli("solve", _file(tmp_path, text), "--method", "edf-greedy")
    assert_input_error(result, "field 'jobs[0].id'", "lone surrogate")
    text = json.dumps(ADMISSION).replace('"id": "a"', '"id": "a", "\\udfff": 1')
    assert_input_error(run_cli("solve", _file(tmp_path, text), "--method", "edf-greedy"), "lone surrogate")
    # a surrogate pair is one valid character
    text = json.dumps(ADMISSION).replace('"id": "a"', '"id": "\\ud83d\\ude00"')
    assert parse_json(text)["jobs"][0]["id"] == "\U0001f600"


def test_fairness_numbers_that_overflowed_drf_and_verify(tmp_path):
    """A demand or capacity near 1.8e308 overflowed ``used + d`` (a numpy warning on stderr) and verify."""
    data = copy.deepcopy(FAIRNESS)
    data["resources"]["cpu"] = 1.79e308
    data["users"][0]["demand"]["cpu"] = 1.7e308
    result = run_cli("solve", _file(tmp_path, json.dumps(data)), "--method", "drf")
    assert_input_error(result, "field 'cpu'", "magnitude in [1e-100, 1e100]")


@pytest.mark.parametrize("value", [5e-324, 1e-101, 1e101, 1.7e308, -1e200])
def test_instance_numbers_have_bounded_magnitudes(value):
    data = copy.deepcopy(ADMISSION)
    data["jobs"][0]["deadline"] = value
    with pytest.raises(InputError, match="magnitude in"):
        instance_from_dict(data)


def test_integer_fields_are_64_bit(tmp_path):
    data = copy.deepcopy(ADMISSION)
    data["cluster"]["map_slots"] = 10**30
    result = run_cli("solve", _file(tmp_path, json.dumps(data)), "--method", "edf-greedy")
    assert_input_error(result, "cluster", "'map_slots'", "[1, 2^63 - 1]")


def test_solution_numbers_are_read_with_the_same_rules(tmp_path):
    inst = _file(tmp_path, json.dumps(ADMISSION))
    sol = {"method": "x", "status": "feasible", "objective": 1e309, "accepted": ["a"], "sequence": ["a"]}
    text = json.dumps(sol).replace("Infinity", "1e309")
    result = run_cli("verify", inst, _file(tmp_path, text, "s.json"))
    assert_input_error(result, "field 'objective'", "finite number")
    text = json.dumps({**sol, "objective": 3, "extra": 1}).replace('"extra": 1', '"extra": ' + "9" * 5000)
    assert_input_error(run_cli("verify", inst, _file(tmp_path, text, "s.json")), "field 'extra'")


@pytest.mark.parametrize(
    "text, words",
    [
        ("beam=1" + "0" * 5000, ["--param beam", "5001 digits"]),  # was a ValueError traceback
        ("beam=1e309", ["--param beam", "finite number"]),
        ("beam=NaN", ["--param beam", "NaN"]),
        ('x="\\ud800"', ["--param x", "lone surrogate"]),
    ],
)
def test_param_values_are_read_by_the_same_reader(text, words):
    with pytest.raises(InputError) as info:
        parse_param(text)
    for word in words:
        assert word in str(info.value)


def test_param_values_still_parse():
    assert parse_param("beam=8") == ("beam", 8)
    assert parse_param("mode=listing") == ("mode", "listing")
    assert parse_param("x=[1,2") == ("x", "[1,2")
    assert parse_param("x=2.5") == ("x", 2.5)


def test_a_huge_param_on_the_command_line_is_one_line(tmp_path):
    result = run_cli(
        "solve", _file(tmp_path, json.dumps(ADMISSION)), "--method", "amb", "--param", "beam=1" + "0" * 5000
    )
    assert_input_error(result, "--param beam")
    result = run_cli(
        "solve", _file(tmp_path, json.dumps(ADMISSION)), "--method", "amb", "--param", "beam=" + str(2**64)
    )
    assert_input_error(result, "beam")


def test_the_text_output_of_a_valid_file_still_works(tmp_path):
    result = run_cli("solve", _file(tmp_path, json.dumps(ADMISSION)), "--method", "edf-greedy")
    assert_promise(result)
    assert "edf-greedy" in result.out


# -- verify never overflows on a hand-made solution (before: OverflowError, ValueError, TypeError)
def _files(tmp_path, instance: dict, solution: dict):
    (tmp_path / "i.json").write_text(json.dumps(instance))
    (tmp_path / "s.json").write_text(json.dumps(solution))
    return tmp_path / "i.json", tmp_path / "s.json"


TINY = {
    "kind": "fairness",
    "schema_version": 1,
    "resources": {"cpu": 1e-100, "mem": 18},
    "users": [
        {"id": "A", "demand": {"cpu": 1e100, "mem": 4}, "weight": 1e-100},
        {"id": "B", "demand": {"cpu": 3e-100, "mem": 1}},
    ],
}


@pytest.mark.parametrize(
    "decision",
    [
        {"allocation": {"A": 1e300, "B": 0}},  # OverflowError in verify before
        {"allocation": {"A": 1, "B": 1}, "dominant_shares": {"A": "x", "B": [1]}},  # ValueError, TypeError
        {"allocation": {"A": 1, "B": 1}, "utilisation": {"cpu": {}, "mem": None}},
        {"allocation": {"A": 0, "B": 0}, "order": [["A"]]},  # unhashable in Counter
        {"allocation": {"A": 1, "B": 0}, "placement": {"A": {"n1": "x"}}},
        {"allocation": {"A": 1, "B": 1}, "dominant_shares": 1e308, "utilisation": [1]},  # "float is not iterable"
    ],
)
def test_verify_reports_bad_solutions_without_overflowing(tmp_path, decision):
    instance = dict(TINY)
    if "placement" in decision:
        instance["nodes"] = [{"id": "n1", "capacity": {"cpu": 1e-100, "mem": 18}}]
    sol = {"method": "drf", "status": "feasible", "objective": 1.0, "accepted": [], **decision}
    result = run_cli("verify", *_files(tmp_path, instance, sol))
    assert_promise(result, ok_codes=(1,))
    assert result.code == 1 and all(line.startswith("mropt verify: ") for line in result.err_lines)


def test_a_solution_claiming_infinite_shares_is_one_line(tmp_path):
    sol = {
        "method": "drf",
        "status": "feasible",
        "objective": 1.0,
        "accepted": [],
        "allocation": {"A": 1, "B": 1},
        "dominant_shares": {"A": 1, "B": 2},
    }
    inst, path = _files(tmp_path, TINY, sol)
    path.write_text(path.read_text().replace('"B": 2', '"B": 1e999'))
    assert_input_error(run_cli("verify", inst, path), "field 'dominant_shares.B'", "finite number")


def test_verify_objective_of_a_huge_weighted_share_is_infinite_not_an_error():
    inst = instance_from_dict(TINY)
    sol = Solution(method="drf", status="feasible", objective=1.0, decision={"allocation": {"A": 1e200, "B": 0}})
    verdict = mropt.verify(inst, sol)
    assert not verdict.ok and verdict.objective == 0.0
