"""A policy study checks, before anything runs, that every policy can run on every instance.

``mropt gap --check`` used to pass a study whose every run then failed (``hei`` with a history
file that does not exist) or ran nothing (``fair`` on a cluster of resources); both are now one
line naming the file, the policy and what is missing, at ``--check`` and in ``run_study``
before the store is created.
"""

from __future__ import annotations

import json

import pytest

from mropt.harness.experiment import load_experiment
from mropt.harness.runner import run_study
from mropt.model.errors import InputError

from cli_capture import run_cli


def write_workload(folder, nodes: dict) -> None:
    folder.mkdir()
    job = {"id": "j1", "stages": [{"type": "map", "tasks": [{"duration": 10, "count": 2, "demand": {"cpu": 1}}]}]}
    w = {"kind": "workload", "schema_version": 1, "name": "w", "cluster": {"nodes": [{"id": "n", **nodes}]}}
    (folder / "w.json").write_text(json.dumps({**w, "jobs": [job]}))


@pytest.mark.parametrize(
    ("nodes", "policies", "words"),
    [
        (
            {"map_slots": 2, "reduce_slots": 1, "resources": {"cpu": 4}},
            '[{name = "hei", params = {history = "/nonexistent.duckdb"}}]',
            "key 'policies': policy 'hei': parameter 'history' names no file: '/nonexistent.duckdb'",
        ),
        (
            {"resources": {"cpu": 4}},
            '["drf", {name = "fair", label = "fair-0", params = {node_delay = 0}}]',
            "key 'policies' (label 'fair-0'): policy 'fair' needs map and reduce slots on the nodes",
        ),
        (
            {"map_slots": 2, "reduce_slots": 1, "resources": {"cpu": 4}},
            '["dc"]',
            "key 'policies': policy 'dc' needs jobs with deadlines, but no job of the workload has a deadline",
        ),
    ],
)
def test_gap_check_refuses_a_policy_that_cannot_run(write_experiment, tmp_path, nodes, policies, words) -> None:
    write_workload(tmp_path / "workloads", nodes)
    path = write_experiment(f'name = "p"\npolicies = {policies}\n[[instances]]\nfolder = "workloads"\n')
    r = run_cli("gap", path, "--check")
    assert r.code == 2 and len(r.err_lines) == 1, (r.out, r.err)
    assert str(path) in r.err and words in r.err and "(instances[0], instance 'w')" in r.err
    out = tmp_path / "res"
    with pytest.raises(InputError, match="key 'policies'"):
        run_study(load_experiment(path), out, progress=False)
    assert not out.exists()  # refused before the store is created


def test_gap_check_passes_policies_that_can_run(write_experiment, tmp_path) -> None:
    write_workload(tmp_path / "workloads", {"map_slots": 2, "reduce_slots": 1, "resources": {"cpu": 4}})
    path = write_experiment('name = "p"\npolicies = ["fair", "drf", "hei"]\n[[instances]]\nfolder = "workloads"\n')
    r = run_cli("gap", path, "--check")
    assert r.code == 0 and "ok: 1 instances, 3 policies, 3 runs" in r.out, r.err
