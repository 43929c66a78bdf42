"""Frictions a researcher met on the command line (the last review's list): each fixed, each held here.

A failed ``mropt verify`` of a simulation folder parsed the workload twice; ``mropt gap --check``
said "methods" of simulator policies; ``mropt solve --method drf`` printed every launch;
``mropt simulate``'s ``params`` row was about 230 characters wide; ``mropt import-rumen`` wrote
without the ``mropt:`` prefix of the other importers (the memory cap of ``simulate --until``:
``tests/sim/test_sim_memory_until.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mropt.model.io

from cli_capture import run_cli


def _workloads(tmp_path: Path) -> tuple[Path, Path]:
    first, second = tmp_path / "s1.json", tmp_path / "s2.json"
    for seed, path in ((1, first), (2, second)):
        argv = ["generate", "workload", "--preset", "amb-static", "--jobs", "3", "--seed", seed, "-o", path]
        assert run_cli(*argv).code == 0
    return first, second


def test_a_failed_verify_parses_the_workload_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's check parsed the workload, then the failure's first line parsed it again for its name."""
    first, second = _workloads(tmp_path)
    out = tmp_path / "run"
    assert run_cli("simulate", first, "--policy", "fifo", "--out", out).code == 0
    parsed: list[str] = []
    parse = mropt.model.io.instance_from_dict

    def counting(data: dict) -> object:
        parsed.append(str(data.get("name")))
        return parse(data)

    monkeypatch.setattr(mropt.model.io, "instance_from_dict", counting)
    result = run_cli("verify", second, out)
    assert result.code == 1 and "is it the run's workload?" in result.err_lines[0]
    assert parsed == ["amb-static-n3-L150-D1000-s2"]
    parsed.clear()
    assert run_cli("verify", first, out).code == 0 and parsed == ["amb-static-n3-L150-D1000-s1"]


@pytest.mark.parametrize(
    ("lists", "counted"),
    [
        ('policies = ["fifo", "fair"]', "2 policies, 4 runs"),
        ('methods = ["edf-greedy"]', "1 methods, 2 runs"),
        ('methods = ["edf-greedy"]\npolicies = ["fifo", "fair"]', "1 methods, 2 policies, 6 runs"),
    ],
)
def test_gap_check_counts_policies_as_policies(tmp_path: Path, lists: str, counted: str) -> None:
    """A policy study's ``--check`` said ``2 methods``: simulator policies are no methods."""
    path = tmp_path / "study.toml"
    text = f'name = "s"\ntime_limit = 5\n{lists}\n[[instances]]\ngenerator = "admission"\nseeds = [1, 2]\n'
    path.write_text(text + "params = {jobs = 4}\n", encoding="utf-8")
    result = run_cli("gap", path, "--check")
    assert result.code == 0, result.err
    assert f"{path}: ok: 2 instances, {counted}; worst-case wall time" in result.out


def test_drf_prints_the_length_and_first_launches_of_its_order(tmp_path: Path) -> None:
    """``mropt solve --method drf`` printed every launch (thousands on a trace); ``--json`` keeps them all."""
    path = tmp_path / "f.json"
    assert run_cli("generate", "fairness", "--seed", "1", "-o", path).code == 0
    whole = json.loads(run_cli("solve", path, "--method", "drf", "--json").out)
    order = whole["order"]
    assert len(order) == sum(whole["allocation"].values()) > 10  # one launch per task allocated
    text = run_cli("solve", path, "--method", "drf")
    assert text.code == 0
    rows = [line.split(None, 1)[1] for line in text.out.splitlines() if line.startswith("order ")]
    assert rows == [f"{len(order)} launches (the first 10: {' '.join(order[:10])}; all of them: --json)"], rows
    assert max(len(line) for line in text.out.splitlines()) < 100


def test_the_summary_shows_the_params_given_and_json_keeps_them_all(tmp_path: Path) -> None:
    """The ``params`` row was the JSON of every parameter, about 250 characters under ``fair``."""
    path, _ = _workloads(tmp_path)
    given = ["-p", "node_delay=3", "-p", "rack_delay=6", "-p", "preemption=true", "-p", "fair_share_timeout=100"]
    text = run_cli("simulate", path, "--policy", "fair", *given)
    assert text.code == 0, text.err
    lines = text.out.splitlines()
    assert max(len(line) for line in lines) <= 80
    start = next(k for k, line in enumerate(lines) if line.startswith("params "))
    shown = " ".join(line[len("params") :].strip() for line in lines[start : start + 3])
    assert shown == (
        "fair_share_timeout=100.0, node_delay=3.0, preemption=true, rack_delay=6.0; "
        "the others at their defaults (`mropt policies --params`)"
    )
    assert lines[start + 3].startswith("seed ")
    as_json = json.loads(run_cli("simulate", path, "--policy", "fair", *given, "--json").out)
    assert as_json["params"] == {  # the --json summary's field is unchanged: every parameter
        "assign_multiple": True,
        "assign_multiple_maps": -1,
        "assign_multiple_reduces": -1,
        "fair_share_timeout": 100.0,
        "min_share_timeout": 300.0,
        "node_delay": 3.0,
        "preemption": True,
        "rack_delay": 6.0,
        "update_interval": 0.5,
    }
    defaults = run_cli("simulate", path, "--policy", "fair")
    assert "\nparams              all at their defaults (`mropt policies --params`)\n" in f"\n{defaults.out}"
    assert "\nparams              -\n" in run_cli("simulate", path, "--policy", "fifo").out


def test_import_rumen_says_what_it_wrote_as_the_other_importers_do(tmp_path: Path) -> None:
    """``import-rumen`` printed ``wrote W.json: ...`` on stdout; the other importers print
    ``mropt: wrote W.json: ...`` on stderr (``import-swim``, ``import-alibaba``)."""
    from history.history_files import write_rumen, write_swim

    trace, workload = write_rumen(tmp_path / "job.json"), tmp_path / "w.json"
    result = run_cli("import-rumen", trace, "-o", workload)
    assert result.code == 0 and result.out == "", (result.out, result.err)
    assert result.err_lines == [
        f"mropt: wrote {workload}: 1 jobs, 3 tasks, 2 nodes; left out 0 jobs, 0 tasks without a succeeded attempt"
    ]
    to_stdout = run_cli("import-rumen", trace, "-o", "-")  # - is stdout, as for the other importers
    assert to_stdout.code == 0 and json.loads(to_stdout.out) == json.loads(workload.read_text())
    assert not (Path.cwd() / "-").exists()
    swim = run_cli("import-swim", write_swim(tmp_path / "day.tsv"), "-o", tmp_path / "i.json")
    assert swim.out == "" and swim.err_lines[0].startswith(f"mropt: wrote {tmp_path / 'i.json'}: ")
