"""Helpers of the harness tests: experiment files and the `mropt` command as a subprocess."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPARE = [
    "run_key",
    "instance_hash",
    "instance_id",
    "method",
    "profile",
    "seed",
    "status",
    "objective",
    "bound",
    "verified",
    "accepted",
    "on_time",
    "gap",
    "reference",
    "reference_tag",
    "error",
]


def mropt(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mropt.cli.main", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=kw.pop("timeout", 120),
        **kw,
    )


@pytest.fixture
def write_experiment(tmp_path):
    def write(text: str, name: str = "exp.toml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write


def comparable(df):
    """The columns that must not depend on timing, executor or interruption, sorted by run key."""
    out = df[COMPARE].sort_values("run_key").reset_index(drop=True)
    out["error"] = out["error"].str.replace(r"killed after [0-9.]+ s", "killed after T s", regex=True)
    return out
