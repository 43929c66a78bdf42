"""``mropt simulate``'s one-screen summary has a ``locality`` row when the run has input replicas."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mropt.instances.workload_gen import generate_workload
from mropt.model.io import save_instance

from cli_capture import run_cli


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
