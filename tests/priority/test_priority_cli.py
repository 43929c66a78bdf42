"""``mropt generate priority``, ``mropt solve --method mpsa|mpsa-exact --json`` and ``mropt verify``:
exit status, stdout and stderr (run in this process: ``cli_capture.run_completed``)."""

from __future__ import annotations

import json
import subprocess

import pytest

from cli_capture import run_completed


def mropt(*args: object) -> subprocess.CompletedProcess:
    return run_completed(*args)


def _reject(name: str) -> None:
    raise AssertionError(f"non-finite number {name} in solution JSON")


@pytest.mark.slow
def test_generate_solve_verify(tmp_path):
    inst = tmp_path / "p.json"
    result = mropt("generate", "priority", "--arrival-rate", "0.0005", "-o", inst)
    assert result.returncode == 0, result.stderr
    assert json.loads(inst.read_text())["kind"] == "priority"
    for method in ("mpsa", "mpsa-exact"):
        sol_file = tmp_path / f"{method}.json"
        result = mropt("solve", inst, "--method", method, "--json", "-o", sol_file)
        assert result.returncode == 0, result.stderr
        sol = json.loads(result.stdout, parse_constant=_reject)
        for key in ("allocation", "shared", "infeasible", "routing", "a", "b"):
            assert key in sol
        assert set(sol["allocation"]) == {"T1", "T2", "T3"}
        for entry in sol["allocation"].values():
            assert set(entry) == {"map_slots", "reduce_slots", "sojourn"}
        assert set(sol["shared"]) == {"map_slots", "reduce_slots"}
        assert set(sol["routing"]) == {"q11", "q12", "q10", "q21", "q20"}
        assert abs(sol["routing"]["q12"] - 5 / 7) < 1e-12 and abs(sol["a"] - 7 / 3) < 1e-12
        assert sol["infeasible"] == []
        checked = mropt("verify", inst, sol_file)
        assert checked.returncode == 0 and checked.stdout.startswith("ok:"), checked.stderr


@pytest.mark.slow
def test_infeasible_instance_prints_null_sojourn(tmp_path):
    inst = tmp_path / "p.json"
    assert mropt("generate", "priority", "--arrival-rate", "0.005", "-o", inst).returncode == 0
    result = mropt("solve", inst, "--method", "mpsa", "--json")
    assert result.returncode == 0
    sol = json.loads(result.stdout, parse_constant=_reject)  # strict JSON: no Infinity or NaN
    assert sol["status"] == "infeasible" and sol["infeasible"]


def test_bad_priority_file_is_one_line_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "kind": "priority",
                "schema_version": 1,
                "map_slots": 100,
                "reduce_slots": 50,
                "pattern_mix": {"simple": 1},
                "priorities": [
                    {"id": "T1", "deadline": 600, "arrival_rate": -1, "map_work": 6000, "reduce_work": 3000}
                ],
            }
        )
    )
    result = mropt("solve", bad, "--method", "mpsa")
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "priority 'T1'" in lines[0] and "arrival_rate" in lines[0] and "-1" in lines[0]
