"""CONTRIBUTING.md's walk-throughs for a speculation rule and a trace importer, each done once.

The two examples' code blocks are read from CONTRIBUTING.md and run, as written there, in a fresh
module against copies of the rule and importer tables, so they register nowhere else. Registered
once, each must show up everywhere the registry reaches, with nothing else edited: the rule in
``mropt policies`` (with its parameter) and in ``mropt simulate --speculation``'s choices; the
importer in ``mropt importers``, as the command ``mropt import-toy`` (its options built from the
parameter dataclass), in ``mropt history import``'s detection and in an experiment's importer
windows (``mropt gap --check``).
"""

from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path

import pytest

import mropt.importers.table as importer_table
import mropt.sim.speculation.table as rule_table
from mropt.model.io import load_instance
from mropt.registry import Table

from cli_capture import run_cli

CONTRIBUTING = Path(__file__).resolve().parents[1] / "CONTRIBUTING.md"


def _example(section: str) -> str:
    """The first ```python block under the heading ``## <section>`` of CONTRIBUTING.md."""
    text = CONTRIBUTING.read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```python\n(.*?)```", body, re.S)
    assert found, f"no python block under '## {section}' in CONTRIBUTING.md"
    return found.group(1)


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The two walk-throughs' code, run against copies of the speculation-rule and importer tables."""
    rules: Table = Table("speculation rule")
    rules.update(rule_table.rules())
    monkeypatch.setattr(rule_table, "RULES", rules)
    importers: Table = Table("importer")
    importers.update(importer_table.importers())
    monkeypatch.setattr(importer_table, "IMPORTERS", importers)
    module = types.ModuleType("contributing_plugins")
    monkeypatch.setitem(sys.modules, module.__name__, module)  # as an imported module is (dataclasses look)
    for section in ("Adding a speculation rule", "Adding a trace importer"):
        exec(compile(_example(section), str(CONTRIBUTING), "exec", dont_inherit=True), module.__dict__)
    return module


# -- the speculation rule -------------------------------------------------------------------
def _two_nodes(tmp_path: Path) -> Path:
    """One map task of 100 s; node a (speed 1) is offered first, node b runs twice as fast."""
    nodes = [
        {"id": "a", "map_slots": 1, "reduce_slots": 0},
        {"id": "b", "speed": 2, "map_slots": 1, "reduce_slots": 0},
    ]
    jobs = [{"id": "j", "submit_time": 0, "stages": [{"type": "map", "tasks": [{"duration": 100}]}]}]
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"kind": "workload", "schema_version": 1, "cluster": {"nodes": nodes}, "jobs": jobs}))
    return path


def test_the_rule_is_listed_with_its_parameter(plugins: types.ModuleType) -> None:
    r = run_cli("policies", "--params")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    rule = next(k for k, line in enumerate(lines) if line.startswith("oldest-running "))
    assert "backs up the task that has run longest" in lines[rule] and "[params: lag]" in lines[rule]
    assert lines[rule + 1].strip().startswith("lag: a number >= 0; default 30.0: seconds a task runs")


@pytest.mark.parametrize(("lag", "backups", "makespan"), [(5.0, 1, None), (200.0, 0, 100.0)])
def test_simulate_runs_the_rule_with_its_parameter(
    plugins: types.ModuleType, tmp_path: Path, lag: float, backups: int, makespan: float | None
) -> None:
    # the task starts on a at 0 and would end at 100; past lag, node b's free slot backs it up
    # (50 s at speed 2), which wins; with a lag of 200 s no backup starts before it ends
    r = run_cli(
        "simulate", _two_nodes(tmp_path), "--policy", "fifo", "--speculation", "oldest-running",
        "--speculation-param", f"lag={lag}", "--json",
    )  # fmt: skip
    assert r.code == 0, r.err
    summary = json.loads(r.out)
    assert summary["speculation"] == "oldest-running" and summary["speculation_params"] == {"lag": lag}
    assert summary["backups"] == backups and summary["finished"] == 1
    if makespan is None:
        assert 50.0 < summary["makespan"] < 100.0
    else:
        assert summary["makespan"] == makespan


def test_a_bad_rule_parameter_is_one_line(plugins: types.ModuleType, tmp_path: Path) -> None:
    r = run_cli(
        "simulate", _two_nodes(tmp_path), "--policy", "fifo", "--speculation", "oldest-running",
        "--speculation-param", "lag=-1",
    )  # fmt: skip
    assert r.code == 2 and r.err_lines == ["mropt: error: speculation 'oldest-running': parameter 'lag' must be a "
                                           "number >= 0, got -1"]  # fmt: skip


# -- the trace importer ---------------------------------------------------------------------
def _toy(tmp_path: Path) -> Path:
    path = tmp_path / "day.toy"
    path.write_text("# toy-trace\nj1 0 3 10\nj2 5 2 20\nj3 9 1 5\n", encoding="utf-8")
    return path


def test_the_importer_is_listed(plugins: types.ModuleType) -> None:
    r = run_cli("importers", "--params")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    toy = next(k for k, line in enumerate(lines) if line.startswith("toy "))
    assert lines[toy].split()[1:3] == ["workload,", "history"] and lines[toy].endswith("(mropt import-toy)")
    assert lines[toy + 1].split()[:2] == ["start:", "a"] and lines[toy + 1].endswith("[window]")
    assert lines[toy + 2].split()[:2] == ["nodes:", "an"]


def test_the_command_is_built_from_the_parameter_dataclass(plugins: types.ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "w.json"
    r = run_cli("import-toy", _toy(tmp_path), "--start", "5", "--nodes", "2", "-o", out)
    assert r.code == 0, r.err
    w = load_instance(out)
    assert [j.id for j in w.jobs] == ["j2", "j3"] and [j.submit_time for j in w.jobs] == [0.0, 4.0]
    assert w.n_nodes == 2 and w.n_tasks == 3
    assert "--nodes N" in run_cli("import-toy", "--help").out.replace("NODES", "N")
    bad = run_cli("import-toy", _toy(tmp_path), "--nodes", "0")
    assert bad.code == 2 and bad.err_lines == ["mropt: error: import-toy: parameter 'nodes' must be >= 1, got 0"]
    assert run_cli("import-toy", _toy(tmp_path), "--workload").code == 2  # no workload path of its own


def test_history_import_detects_the_format(plugins: types.ModuleType, tmp_path: Path) -> None:
    r = run_cli("history", "import", tmp_path / "h.duckdb", _toy(tmp_path))
    assert r.code == 0, r.err
    assert r.out.startswith("day.toy: toy, 3 jobs, 0 tasks")


def test_an_experiment_sweeps_its_windows(plugins: types.ModuleType, tmp_path: Path) -> None:
    _toy(tmp_path)
    block = '[[instances]]\nimporter = "toy"\ntrace = "day.toy"\nwindows = {start = [0, 5]}\n'
    good = tmp_path / "good.toml"
    good.write_text('policies = ["fifo"]\n' + block, encoding="utf-8")
    r = run_cli("gap", good, "--check")
    assert r.code == 0 and "2 instances" in r.out, (r.out, r.err)
    bad = tmp_path / "bad.toml"
    bad.write_text('policies = ["fifo"]\n' + block + "params = {nodes = 0}\n", encoding="utf-8")
    r = run_cli("gap", bad, "--check")
    assert r.code == 2 and "parameter 'nodes' must be >= 1, got 0" in r.err and len(r.err_lines) == 1
