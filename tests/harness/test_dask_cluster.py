"""Studies through ``mropt gap --scheduler`` on a Dask cluster of separate processes.

A scheduler and two workers are started the way a user (or dask-jobqueue's SLURM jobs) starts them:
the ``dask scheduler`` and ``dask worker`` commands of the ``distributed`` package, each its own
process group, on free ports of 127.0.0.1, one thread per worker, no dashboard, scratch files in a
temporary folder. A study of methods and a study of policies run through ``--scheduler tcp://...``
(the ``DaskExecutor`` of ``mropt.harness.executors`` connected by address) must store the rows the
local executor stores, column for column except the wall-clock ones, and their runs must have
executed on those two workers (each worker's own count of executed tasks), not on a cluster of the
client's making.

One test holds both studies, so that ``pytest -n 2`` starts one cluster, not one per xdist worker;
every wait has a timeout that a loaded 2-core machine meets (the cluster is up in about 1.5 s there).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from mropt.harness.experiment import load_experiment
from mropt.harness.runner import results_frame, run_study

from .conftest import mropt
from .test_policy_study import workload

#: the ``dask`` command beside this interpreter (the virtual environment's), else on PATH
DASK = shutil.which("dask", path=str(Path(sys.executable).parent)) or shutil.which("dask")
WORKERS = 2
#: seconds for the scheduler to write its address and for the workers to register (a loaded machine)
START_TIMEOUT = 60.0
#: columns that measure wall-clock time: they differ between any two runs of the same study
WALL_CLOCK = ["wall_time", "run_time", "finished_at"]

METHOD_STUDY = """
name = "dask-cluster-methods"
imports = ["tests.harness.fake_methods"]
time_limit = 0.5
kill_grace = 0.3
methods = ["edf-greedy", "test-trivial", "test-raise", "test-sleep"]
[[instances]]
generator = "admission"
seeds = [1]
params = {jobs = 6}
"""

POLICY_STUDY = """
name = "dask-cluster-policies"
method_seeds = [0, 1]
time_limit = 60
policies = ["fifo", {name = "fifo", label = "fifo-event", mode = "event"}]
[[instances]]
folder = "workloads"
"""


def _stop(procs: list[subprocess.Popen]) -> None:
    """End each process group (a worker's nanny, its worker, the worker's solver processes): SIGTERM to
    all at once, then SIGKILL to what is left after 10 s."""
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)  # a nanny closes its worker on SIGTERM
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # whatever the group left behind
        proc.wait()


def _logs(folder: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-1500:]}" for p in sorted(folder.glob("*.log")))


@pytest.fixture(scope="module")
def dask_scheduler(tmp_path_factory, request) -> str:
    """The address of a ``dask scheduler`` with ``WORKERS`` ``dask worker`` processes registered."""
    if DASK is None:
        pytest.skip("the `dask` command of the package distributed is not installed (pip install 'dask[distributed]')")
    from dask.distributed import Client

    folder = tmp_path_factory.mktemp("dask-cluster")
    env = {**os.environ, "DASK_TEMPORARY_DIRECTORY": str(folder)}
    # the HTTP server (health, metrics) listens even with --no-dashboard: on a free port, not on 8787
    quiet_http = ["--no-dashboard", "--dashboard-address", "127.0.0.1:0"]
    procs: list[subprocess.Popen] = []
    request.addfinalizer(lambda: _stop(procs))

    def start(name: str, *args: str) -> subprocess.Popen:
        log = open(folder / f"{name}.log", "wb")  # noqa: SIM115 - the process writes it until the finaliser
        proc = subprocess.Popen(
            [DASK, *args], cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()
        procs.append(proc)
        return proc

    address_file = folder / "scheduler.json"
    scheduler = start(
        "scheduler",
        "scheduler",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        *quiet_http,
        "--scheduler-file",
        str(address_file),
        "--idle-timeout",
        "600",  # a scheduler orphaned by a killed pytest ends on its own
    )
    deadline = time.monotonic() + START_TIMEOUT
    address = None
    while address is None:
        try:
            address = json.loads(address_file.read_text())["address"]
        except (OSError, ValueError, KeyError):  # not written yet, or half written
            if scheduler.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"dask scheduler gave no address within {START_TIMEOUT:g} s\n{_logs(folder)}")
            time.sleep(0.05)
    for i in range(WORKERS):
        start(
            f"worker-{i}",
            "worker",
            address,
            "--name",
            f"w{i}",
            "--nthreads",
            "1",
            "--host",
            "127.0.0.1",
            *quiet_http,
            "--local-directory",
            str(folder / f"worker-{i}"),
            "--death-timeout",
            "60",  # a worker whose scheduler is gone ends on its own
        )
    with Client(address, timeout=START_TIMEOUT) as client:
        try:
            client.wait_for_workers(WORKERS, timeout=START_TIMEOUT)
        except TimeoutError:
            pytest.fail(f"{WORKERS} dask workers did not register within {START_TIMEOUT:g} s\n{_logs(folder)}")
    return address


def executed(address: str) -> dict[str, int]:
    """Tasks each worker of the cluster has executed so far, by worker name."""
    from dask.distributed import Client

    with Client(address, timeout=START_TIMEOUT) as client:
        counts = client.run(lambda dask_worker: (dask_worker.name, dask_worker.state.executed_count))
    return dict(counts.values())


def timeless(df: pd.DataFrame) -> pd.DataFrame:
    """Every column but the wall-clock ones, the simulation summary's ``wall_time`` dropped, the
    kill message's seconds replaced, in run-key order."""
    out = df.drop(columns=WALL_CLOCK).sort_values("run_key").reset_index(drop=True)

    def without_wall_time(text: object) -> object:
        if not isinstance(text, str):  # a run without metrics (an error)
            return text
        metrics = json.loads(text)
        if isinstance(metrics, dict):
            metrics.pop("wall_time", None)
        return json.dumps(metrics, sort_keys=True)

    out["metrics"] = out["metrics"].map(without_wall_time)
    out["error"] = out["error"].str.replace(r"killed after [0-9.]+ s", "killed after T s", regex=True)
    return out


def through_scheduler(experiment: Path, out: Path, address: str) -> pd.DataFrame:
    """``mropt gap EXPERIMENT --scheduler ADDRESS``: its rows, and the runs counted on the cluster's workers."""
    before = executed(address)
    done = mropt("gap", str(experiment), "--scheduler", address, "--out", str(out), "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    df = results_frame(out)
    after = executed(address)
    ran = {name: after[name] - before.get(name, 0) for name in after}
    assert sorted(ran) == [f"w{i}" for i in range(WORKERS)]
    assert sum(ran.values()) == len(df), f"runs on the cluster's workers {ran}, rows {len(df)}"
    assert all(n > 0 for n in ran.values()), f"a worker ran nothing: {ran}"
    return df


@pytest.mark.slow
def test_method_and_policy_studies_through_a_scheduler_store_the_local_rows(dask_scheduler, tmp_path):
    methods = tmp_path / "methods.toml"
    methods.write_text(METHOD_STUDY)
    local = results_frame(run_study(load_experiment(methods), tmp_path / "m-local", workers=2, progress=False).out)
    remote = through_scheduler(methods, tmp_path / "m-dask", dask_scheduler)
    assert len(local) == 4
    assert set(local["status"]) == {"feasible", "error", "time_limit"}  # a plan, an exception, a kill
    pd.testing.assert_frame_equal(timeless(local), timeless(remote))

    (tmp_path / "workloads").mkdir()
    (tmp_path / "workloads" / "w4.json").write_text(json.dumps(workload("w4", 4)))
    policies = tmp_path / "policies.toml"
    policies.write_text(POLICY_STUDY)
    local = results_frame(run_study(load_experiment(policies), tmp_path / "p-local", workers=2, progress=False).out)
    remote = through_scheduler(policies, tmp_path / "p-dask", dask_scheduler)
    assert len(local) == 4 and set(local["kind"]) == {"workload"} and set(local["status"]) == {"feasible"}
    pd.testing.assert_frame_equal(timeless(local), timeless(remote))
