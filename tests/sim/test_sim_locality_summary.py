"""``mropt simulate``'s summary gives the locality of the attempts, the measure DDRF is about.

The summary (``--json``, ``summary.json``, ``mropt.simulate(...).summary``) of a run whose tasks
have input replicas adds ``locality``: ``attempts`` with a level and the shares of them launched
``node``-local, ``rack``-local and off-rack (``any``). Checked against an independent count: the
``locality`` column of the run's ``tasks.parquet``, read back with pandas. The one-screen (text)
summary shows the same shares as a ``locality`` row.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import mropt
from mropt.instances.workload_gen import generate_workload
from mropt.model.io import save_instance

from cli_capture import run_cli


def counted(folder: Path) -> dict[str, Any]:
    """What ``locality`` must be, from ``tasks.parquet``'s ``locality`` column alone."""
    levels = pd.read_parquet(folder / "tasks.parquet")["locality"].dropna()
    n = len(levels)
    return {"attempts": n, **{name: int((levels == name).sum()) / n for name in ("node", "rack", "any")}}


def assert_matches(summary: dict[str, Any], folder: Path) -> None:
    want = counted(folder)
    got = summary["locality"]
    assert set(got) == set(want) and got["attempts"] == want["attempts"] > 0
    for name in ("node", "rack", "any"):
        assert got[name] == pytest.approx(want[name], rel=1e-12, abs=0), name


def test_simulate_json_and_summary_json_hold_the_attempts_locality(tmp_path: Path) -> None:
    path = tmp_path / "ddrf.json"
    save_instance(generate_workload("ddrf", 1, nodes=30, jobs=8), path)
    out = tmp_path / "run"
    argv = ["simulate", path, "--policy", "ddrf", "--param", "e1=1", "--param", "e2=3", "--json", "--out", out]
    r = run_cli(*argv, "--no-progress")
    assert r.code == 0, r.err
    summary = json.loads(r.out)
    assert_matches(summary, out)
    shares = summary["locality"]
    assert 0 < shares["node"] < 1 and shares["rack"] > 0  # a delay run: some launches were not node-local
    assert json.loads((out / "summary.json").read_text())["locality"] == shares


def test_locality_with_backups_killed_attempts_and_a_stop(tmp_path: Path) -> None:
    w = generate_workload("late", 3, jobs=20, replicas=3, nodes=12)
    run = mropt.simulate(w, "fair", seed=2, speculation="late", until=2000.0)  # the last job ends at 2122.1
    assert run.summary["stopped"] == "until" and run.summary["backups"] > 0
    run.write(tmp_path / "run")
    tasks = pd.read_parquet(tmp_path / "run" / "tasks.parquet")
    assert tasks["speculative"].any() and (tasks["outcome"] == "killed").any()
    assert_matches(run.summary, tmp_path / "run")


def test_no_locality_without_replicas() -> None:
    run = mropt.simulate(generate_workload("amb-static", 1, jobs=4), "fifo")
    assert "locality" not in run.summary


def test_the_text_summary_gives_the_locality_shares_of_tasks_parquet(tmp_path: Path) -> None:
    path = tmp_path / "ddrf.json"
    save_instance(generate_workload("ddrf", 1, nodes=30, jobs=8), path)
    r = run_cli("simulate", path, "--policy", "ddrf", "--param", "e1=1", "--param", "e2=3", "--out", tmp_path / "run")
    assert r.code == 0, r.err
    row = next(line for line in r.out.splitlines() if line.startswith("locality "))
    levels = pd.read_parquet(tmp_path / "run" / "tasks.parquet")["locality"].dropna()
    want = ", ".join(f"{k} {100 * (levels == k).mean():.1f} %" for k in ("node", "rack", "any"))
    assert row.split(None, 1)[1] == f"{want} of {len(levels)} attempts", row


def test_no_locality_row_without_replicas(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    save_instance(generate_workload("amb-static", 1, jobs=4), path)
    r = run_cli("simulate", path, "--policy", "fifo")
    assert r.code == 0, r.err
    assert not any(line.startswith("locality") for line in r.out.splitlines()), r.out
