"""A solution records its instance's content hash; verify rejects it on another instance."""

from __future__ import annotations

import json

import mropt
from mropt.instances.admission_gen import generate_admission
from mropt.model.solution import Solution
from mropt.registry import verify_solution


def test_solve_records_the_hash_and_json_round_trips_it():
    inst, other = generate_admission(1, jobs=6), generate_admission(2, jobs=6)
    sol = mropt.solve(inst, "edf-greedy")
    assert sol.instance_hash == inst.content_hash()
    data = json.loads(json.dumps(sol.to_dict()))
    assert list(data)[:11] == [
        "method",
        "status",
        "objective",
        "bound",
        "accepted",
        "sequence",
        "wall_time",
        "solver",
        "seed",
        "instance_hash",
        "params",
    ]
    back = Solution.from_dict(data, kind="admission")
    assert back.instance_hash == inst.content_hash() and back.instance_mismatch(inst) is None
    assert verify_solution(inst, back).ok
    verdict = verify_solution(other, back)
    assert verdict.problems == [back.instance_mismatch(other)]
    assert verdict.problems[0].startswith(f"solution is for another instance (hash {inst.content_hash()[:12]}")


def test_old_files_without_the_hash_are_checked_as_before():
    inst = generate_admission(1, jobs=6)
    data = mropt.solve(inst, "edf-greedy").to_dict()
    del data["instance_hash"]
    old = Solution.from_dict(data, kind="admission")
    assert old.instance_hash is None and old.instance_mismatch(inst) is None and verify_solution(inst, old).ok
    assert "instance_hash" not in old.decision  # not taken for a decision field
