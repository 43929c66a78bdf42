"""The study runner end to end: failures recorded, SIGKILL and resume, malformed files."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from contextlib import redirect_stderr

import pandas as pd
import pytest

from mropt.cli.main import main
from mropt.harness.runner import results_frame

from .conftest import ROOT, comparable, mropt

FAILING = """
name = "failing"
imports = ["tests.harness.fake_methods"]
time_limit = 1.0
kill_grace = 0.3
methods = ["edf-greedy", "test-raise", "test-sleep", "test-crash", "test-trivial"]
[[instances]]
generator = "admission"
seeds = [1]
params = {jobs = 8}
"""


@pytest.mark.slow
def test_raise_sleep_and_crash_are_recorded_not_fatal(write_experiment, tmp_path):
    exp = write_experiment(FAILING)
    out = tmp_path / "out"
    done = mropt("gap", str(exp), "--out", str(out), "--workers", "2", "--no-progress")
    assert done.returncode == 0, done.stderr
    df = results_frame(out).set_index("method")
    assert len(df) == 5
    assert df.loc["test-raise", "status"] == "error" and "boom from test-raise" in df.loc["test-raise", "error"]
    assert df.loc["test-sleep", "status"] == "time_limit" and "killed after" in df.loc["test-sleep", "error"]
    assert df.loc["test-crash", "status"] == "error" and "SIGKILL" in df.loc["test-crash", "error"]
    assert df.loc["edf-greedy", "status"] == "feasible" and df.loc["edf-greedy", "verified"]
    assert df.loc["edf-greedy", "gap"] == 0.0 and df.loc["test-trivial", "gap"] == 1.0
    # the table is printed, and `mropt results` prints every row
    assert "edf-greedy" in done.stdout
    printed = mropt("results", str(out))
    assert printed.returncode == 0
    assert len(pd.read_csv(io.StringIO(printed.stdout))) == 5
    as_json = mropt("results", str(out), "--format", "json")
    assert len(as_json.stdout.strip().splitlines()) == 5


SLOW = """
name = "resume"
imports = ["tests.harness.fake_methods"]
time_limit = 20
methods = ["edf-greedy", {name = "test-slow", params = {delay = 0.12}}]
[[instances]]
generator = "admission"
seeds = {start = 1, count = 12}
params = {jobs = 8}
"""


@pytest.mark.slow
def test_sigkill_midway_then_resume_gives_every_run_once(write_experiment, tmp_path):
    exp = write_experiment(SLOW)
    reference = tmp_path / "uninterrupted"
    assert mropt("gap", str(exp), "--out", str(reference), "-j", "2", "--no-progress").returncode == 0
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "mropt.cli.main", "gap", str(exp), "--out", str(out), "-j", "2", "--no-progress"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        runs = out / "runs"
        if runs.is_dir() and len(list(runs.glob("*.parquet"))) >= 6:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    stored = len(list((out / "runs").glob("*.parquet")))
    assert 6 <= stored < 24, "the study should be killed midway"
    again = mropt("gap", str(exp), "--out", str(out), "-j", "2", "--no-progress")
    assert again.returncode == 0, again.stderr
    assert f"{stored} already stored" in again.stdout or "already stored" in again.stdout
    df = results_frame(out)
    assert len(df) == 24 and df["run_key"].is_unique
    pd.testing.assert_frame_equal(comparable(df), comparable(results_frame(reference)))
    # a third run finds nothing to do and adds no rows
    third = mropt("gap", str(exp), "--out", str(out), "--no-progress")
    assert "24 already stored, 0 run now" in third.stdout
    assert len(results_frame(out)) == 24


@pytest.mark.parametrize(
    "text, key",
    [
        ('methods = ["edf-greedy"]\n', "instances"),
        ('methods = ["edf-greedy"]\ntime_limt = 3\n[[instances]]\ngenerator = "admission"\nseeds = [1]\n', "time_limt"),
        ('methods = ["no-such-method"]\n[[instances]]\ngenerator = "admission"\nseeds = [1]\n', "methods[0].name"),
        (
            'methods = ["edf-greedy"]\n[[instances]]\ngenerator = "admission"\nseeds = [1]\nsweep = {sise = [1, 2]}\n',
            "instances[0].sweep.sise",
        ),
        ('methods = ["edf-greedy"]\n[[instances]]\ngenerator = "admission"\nseeds = "1"\n', "instances[0].seeds"),
        (
            'methods = ["edf-greedy"]\ntime_limit = -1\n[[instances]]\ngenerator = "admission"\nseeds = [1]\n',
            "time_limit",
        ),
        (
            'methods = [{name = "edf-greedy", params = {beam = 3}}]\n[[instances]]\ngenerator = "admission"\nseeds = [1]\n',
            "methods[0].params.beam",
        ),
        ('methods = ["edf-greedy"]\n[[instances]]\nfolder = "nowhere"\n', "instances[0].folder"),
        ('methods = ["edf-greedy"]\n[[instances]]\nset = "no-such-set"\n', "instances[0].set"),
        ('methods = ["edf-greedy"\n', "not valid TOML"),
    ],
)
def test_malformed_experiment_is_exit_2_naming_the_key(write_experiment, tmp_path, text, key):
    exp = write_experiment(text)
    err = io.StringIO()
    with redirect_stderr(err):
        status = main(["gap", str(exp), "--out", str(tmp_path / "never")])
    assert status == 2
    message = err.getvalue()
    assert message.count("\n") == 1 and key in message and str(exp) in message
    assert not (tmp_path / "never").exists()


def test_malformed_file_as_a_real_command(write_experiment, tmp_path):
    exp = write_experiment('methods = ["edf-greedy"]\n[[instances]]\ngenerator = "admission"\nseed = [1]\n')
    done = mropt("gap", str(exp), "--out", str(tmp_path / "never"))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "instances[0].seed" in done.stderr
