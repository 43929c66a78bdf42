"""Failed runs never vanish, interrupted runs are never results.

* every failure's reason is printed at the end, tables count failures (errors, time limits
  without a plan, answers verify rejected) beside the runs their means are over;
* ``--retry-failed`` runs stored failures again, ``--strict`` exits 1 when runs failed;
* an interrupted run (Ctrl-C or SIGTERM to the study, SIGINT/SIGTERM to a worker, a worker that
  could not start) is never stored;
* ``gap --check`` refuses methods of another kind and prints the worst-case wall time;
* an unreachable Dask scheduler is one line naming its address, within seconds.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from contextlib import redirect_stderr, redirect_stdout

import pandas as pd
import pytest

from mropt.cli.main import main
from mropt.harness.experiment import load_experiment
from mropt.harness.report import gap_table, kinds_table, time_to_optimality
from mropt.harness.runner import results_frame, run_study
from mropt.harness.store import Store
from mropt.harness.worker import WorkerProcess

from .conftest import ROOT, mropt
from .test_runner import FAILING

ONE = """
name = "{name}"
imports = ["tests.harness.fake_methods"]
time_limit = {limit}
kill_grace = 0.5
methods = {methods}
[[instances]]
generator = "admission"
seeds = [1, 2]
params = {{jobs = 6}}
"""


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


# -- tables -------------------------------------------------------------------------------------
def test_tables_count_every_failure_and_say_what_means_are_over():
    rows = pd.DataFrame(
        [
            {
                "method": "m",
                "instance_group": "g",
                "status": "feasible",
                "objective": 1.0,
                "gap": 0.0,
                "verified": True,
            },
            {"method": "m", "instance_group": "g", "status": "error", "objective": None, "gap": None, "verified": None},
            {
                "method": "m",
                "instance_group": "g",
                "status": "time_limit",
                "objective": None,
                "gap": None,
                "verified": None,
            },
            {
                "method": "m",
                "instance_group": "g",
                "status": "time_limit",
                "objective": 2.0,
                "gap": 0.5,
                "verified": True,
            },
            {
                "method": "m",
                "instance_group": "g",
                "status": "feasible",
                "objective": 9.0,
                "gap": None,
                "verified": False,
            },
        ]
    ).assign(
        kind="admission",
        wall_time=1.0,
        exact=True,
        jobs=6,
        profile=None,
        method_name="m",
        seed=0,
        reference=1.0,
        reference_tag="optimal",
        gap_to_bound=None,
        time_limit=10.0,
        instance_hash=[f"h{k}" for k in range(5)],
    )
    rows["verified"] = rows["verified"].astype("boolean")
    t = gap_table(rows).frame.iloc[0]
    assert (t["runs"], t["gap runs"], t["failed"]) == (5, 2, 3)
    assert t["mean gap %"] == pytest.approx(25.0)
    assert kinds_table(rows).frame.iloc[0]["sense"] == "max"
    assert time_to_optimality(rows).frame.iloc[0]["failed"] == 3


@pytest.mark.slow
def test_failures_are_listed_with_reasons_strict_exits_1_and_retry_reruns_them(write_experiment, tmp_path):
    exp = write_experiment(FAILING.replace('"test-trivial"]', '"test-trivial", "test-unverified"]'))
    out = tmp_path / "out"
    done = mropt("gap", str(exp), "--out", str(out), "-j", "2", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "4 failed)" in done.stdout and "\n4 failed:\n" in done.stdout
    for reason in (
        "test-raise on amb-n8",
        "boom from test-raise",
        "test-crash on",
        "killed by signal SIGKILL",
        "test-sleep on",
        "time_limit: killed after",
        "test-unverified on",
        "verify: objective",
    ):
        assert reason in done.stdout, reason
    df = results_frame(out).set_index("method")
    assert pd.isna(df.loc["test-unverified", "gap"])  # a rejected answer has no gap
    strict = mropt("gap", str(exp), "--out", str(out), "-j", "2", "--no-progress", "--strict")
    assert strict.returncode == 1 and "0 run now" in strict.stdout and "--retry-failed" in strict.stdout
    retry = mropt("gap", str(exp), "--out", str(out), "-j", "2", "--no-progress", "--retry-failed")
    assert retry.returncode == 0 and "2 already stored, 4 run now, 4 failed" in retry.stdout


# -- interrupted runs ---------------------------------------------------------------------------
@pytest.mark.slow
def test_a_worker_that_got_sigint_or_sigterm_is_not_stored(write_experiment, tmp_path):
    exp = write_experiment(ONE.format(name="sig", limit=20, methods='["edf-greedy", "test-sigint", "test-sigterm"]'))
    out = tmp_path / "out"
    done = mropt("gap", str(exp), "--out", str(out), "-j", "2", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "4 not run" in done.stdout and "not run: worker got SIGINT" in done.stdout
    assert "not run: worker got SIGTERM" in done.stdout
    assert set(results_frame(out)["method"]) == {"edf-greedy"}
    again = mropt("gap", str(exp), "--out", str(out), "-j", "2", "--no-progress", "--strict")
    assert again.returncode == 1 and "2 already stored, 4 run now" in again.stdout  # retried, never stored
    assert set(results_frame(out)["method"]) == {"edf-greedy"}


@pytest.mark.slow
@pytest.mark.parametrize("sig, group, code", [(signal.SIGINT, True, 130), (signal.SIGTERM, False, 143)])
def test_stopping_the_study_stores_no_run_in_flight_and_resume_finishes(write_experiment, tmp_path, sig, group, code):
    """Ctrl-C (SIGINT to the whole process group) or SIGTERM to the study: it stops at once, says how
    many runs are stored, and the runs in flight (killed) are not stored as errors."""
    exp = write_experiment(ONE.format(name="stop", limit=30, methods='["edf-greedy", "test-sleep"]'))
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "mropt.cli.main", "gap", str(exp), "--out", str(out), "-j", "2", "--no-progress"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list((out / "runs").glob("*.parquet"))) < 2:
        time.sleep(0.05)
    time.sleep(0.5)  # both test-sleep runs in flight
    start = time.monotonic()
    os.killpg(proc.pid, sig) if group else os.kill(proc.pid, sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code and time.monotonic() - start < 10
    assert "interrupted" in err and "2 of 4 runs stored" in err and err.count("\n") == 1
    df = Store(out).read()
    assert set(df["method"]) == {"edf-greedy"} and set(df["status"]) == {"feasible"}


def test_a_worker_that_cannot_start_stores_nothing(write_experiment, tmp_path, monkeypatch):
    def broken(self):
        raise RuntimeError("worker process did not start (no python)")

    monkeypatch.setattr(WorkerProcess, "_start", broken)
    exp = load_experiment(write_experiment(ONE.format(name="nostart", limit=5, methods='["edf-greedy"]')))
    summary = run_study(exp, tmp_path / "out", workers=2, progress=False)
    assert (summary.ran, summary.interrupted, summary.failures) == (2, 2, 0)
    assert all("not run: worker process could not start" in p for p in summary.problems)
    assert len(Store(tmp_path / "out").read()) == 0


# -- gap --check --------------------------------------------------------------------------------
def test_check_refuses_a_method_of_another_kind(write_experiment, tmp_path):
    exp = write_experiment('methods = ["edf-greedy", "mpsa"]\n[[instances]]\ngenerator = "admission"\nseeds = [1]\n')
    code, out, err = cli("gap", str(exp), "--check")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "'mpsa' solves priority instances" in err and "instances[0] gives admission" in err and str(exp) in err
    code, _, err = cli("gap", str(exp), "--out", str(tmp_path / "never"))
    assert code == 2 and not (tmp_path / "never").exists()


@pytest.mark.parametrize(
    "params, words",
    [
        ("{beam = -1}", "'beam' must be an integer >= 0, got -1"),
        ("{beam = 2.5}", "'beam' must be an integer >= 0, got 2.5"),
        ("{time_limit = 3}", "'methods[0].params.time_limit' is not a parameter of 'amb'"),
    ],
)
def test_check_refuses_bad_parameter_values(write_experiment, params, words):
    exp = write_experiment(
        f'methods = [{{name = "amb", params = {params}}}]\n[[instances]]\ngenerator = "admission"\nseeds = [1]\n'
    )
    code, out, err = cli("gap", str(exp), "--check")
    assert code == 2 and out == "" and err.count("\n") == 1 and words in err


def test_check_prints_the_worst_case_wall_time(write_experiment, tmp_path):
    exp = write_experiment(
        'time_limit = 10\nkill_grace = 5\nmethods = ["edf-greedy", "amb"]\n'
        '[[instances]]\ngenerator = "admission"\nseeds = [1, 2]\nparams = {jobs = 4}\n'
    )
    code, out, _ = cli("gap", str(exp), "--check", "-j", "2")
    assert code == 0 and "4 runs" in out and "worst-case wall time 30.0 s" in out and "2 workers" in out
    code, out, _ = cli("gap", str(exp), "--check", "-j", "1")
    assert "worst-case wall time 60 s (1 min)" in out
    # one run cannot take less than its own limit plus grace, however many workers
    exp = write_experiment(
        'time_limit = 10\nkill_grace = 5\nmethods = ["edf-greedy"]\n'
        '[[instances]]\ngenerator = "admission"\nseeds = [1]\nparams = {jobs = 4}\n',
        "one.toml",
    )
    code, out, _ = cli("gap", str(exp), "--check", "-j", "8")
    assert code == 0 and "worst-case wall time 15.0 s" in out


# -- Dask ---------------------------------------------------------------------------------------
@pytest.mark.slow
def test_an_unreachable_dask_scheduler_is_one_line_naming_it(write_experiment, tmp_path):
    exp = write_experiment(ONE.format(name="dask", limit=5, methods='["edf-greedy"]'))
    start = time.monotonic()
    done = mropt("gap", str(exp), "--out", str(tmp_path / "out"), "--scheduler", "tcp://127.0.0.1:9", "--no-progress")
    assert time.monotonic() - start < 30
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in done.stderr and "5 s" in done.stderr
    assert len(Store(tmp_path / "out").read()) == 0
