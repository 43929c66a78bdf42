"""The warning of a run that rejected most jobs on an idle cluster (mropt.sim.low_acceptance; issue 31, item 6).

The instance, worked by hand: 20 jobs submitted at 0, each one map task of 100 s and no reduce,
deadline 150, on 100 map slots. The SEQ model runs the map phases one after another, so the
second job would end at 200 > 150: AMB accepts exactly one job. The cluster runs that one task
for 100 s on 1 of 100 map slots: map utilisation 1 % over the makespan of 100 s. ``fair``
accepts all 20 and runs them at once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mropt.sim.low_acceptance import DOCS, MAX_ACCEPTED, MAX_BUSY, MIN_JOBS, low_acceptance_warning

from cli_capture import run_cli

ROOT = Path(__file__).resolve().parents[2]
WARNING = "mropt: warning: "


@pytest.fixture(scope="module")
def idle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    jobs = [
        {"id": f"j{i}", "map_tasks": 1, "reduce_tasks": 0, "map_task_time": 100, "reduce_task_time": 1,
         "deadline": 150, "benefit": 1}
        for i in range(20)
    ]  # fmt: skip
    instance = {"kind": "admission", "schema_version": 1, "name": "idle", "alpha": 0.3, "beta": 2, "rho": 1,
                "cluster": {"map_slots": 100, "reduce_slots": 100}, "jobs": jobs}  # fmt: skip
    path = tmp_path_factory.mktemp("idle") / "idle.json"
    path.write_text(json.dumps(instance))
    return path


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith(WARNING)]


def test_amb_rejecting_19_of_20_on_an_idle_cluster_warns_once(idle: Path) -> None:
    for extra in ((), ("--json",)):
        r = run_cli("simulate", idle, "--policy", "amb", *extra)
        assert r.code == 0, r.err
        assert len(_warnings(r.err)) == 1 and r.err.count("\n") == 1, r.err
        line = _warnings(r.err)[0]
        assert "amb accepted 1 of 20 jobs (5.0 %)" in line and "map 1.0 %" in line and "SEQ model" in line
        assert DOCS in line
    assert json.loads(r.out)["accepted"] == 1  # --json's stdout stays one JSON object


def test_a_normal_run_does_not_warn(idle: Path, tmp_path: Path) -> None:
    r = run_cli("simulate", idle, "--policy", "fair", "--json")
    assert r.code == 0 and json.loads(r.out)["accepted"] == 20 and r.err == ""
    # AMB's own instances (Table 2 defaults) keep most jobs on a busy cluster
    r = run_cli("generate", "admission", "--jobs", 20, "--seed", 2, "-o", tmp_path / "a.json")
    assert r.code == 0, r.err
    r = run_cli("simulate", tmp_path / "a.json", "--policy", "amb", "--json")
    assert r.code == 0 and json.loads(r.out)["accepted"] >= 10 and r.err == "", r.err


def _summary(jobs: int = 100, accepted: int = 5, **util: float | None) -> dict:
    return {"policy": "dc", "jobs": jobs, "accepted": accepted, "utilisation": util or {"map": 0.01, "reduce": 0.0}}


def test_the_thresholds() -> None:
    assert (MIN_JOBS, MAX_ACCEPTED, MAX_BUSY) == (10, 0.10, 0.10)  # documented in docs/simulation.md
    text = low_acceptance_warning(_summary())
    assert text is not None and text.startswith("dc accepted 5 of 100 jobs (5.0 %)") and "dc's admission" in text
    assert low_acceptance_warning(_summary(jobs=9, accepted=0)) is None  # too few jobs to tell
    assert low_acceptance_warning(_summary(jobs=10, accepted=0)) is not None
    assert low_acceptance_warning(_summary(accepted=10)) is None  # 10 % accepted is not below 10 %
    assert low_acceptance_warning(_summary(accepted=9)) is not None
    assert low_acceptance_warning(_summary(map=0.01, reduce=0.10)) is None  # one resource busy enough
    assert low_acceptance_warning(_summary(cpu=0.02, memory=0.0999)) is not None  # resource vectors too
    assert low_acceptance_warning(_summary(cpu=None)) is None  # no utilisation known: no claim of idleness
    assert low_acceptance_warning({**_summary(), "stopped": "until"}) is None  # later jobs never arrived


def test_the_docs_section_it_points_to_exists() -> None:
    title = DOCS.split('"')[1]
    assert f"## {title}" in (ROOT / "docs" / "simulation.md").read_text(encoding="utf-8")
