"""Studies through ``mropt gap --scheduler`` on a Dask cluster of separate processes.

A scheduler and two workers are started the way a user (or dask-jobqueue's SLURM jobs) starts them,
as processes of the ``dask scheduler`` and ``dask worker`` commands (``dask_processes.py``: free
ports, one thread per worker, no dashboard, scratch files in a temporary folder). A study of
methods and a study of policies run through ``--scheduler tcp://...`` (the ``DaskExecutor`` of
``mropt.harness.executors`` connected by address) must store the rows the local executor stores,
column for column except the wall-clock ones, and their runs must have executed on those two
workers (each worker's own count of executed tasks), not on a cluster of the client's making.

One test holds both studies, so that ``pytest -n 2`` starts one cluster, not one per xdist worker,
and each study's local run goes on while its Dask run does (the test takes about 15 s at a load
average of 4 on 2 cores). Every wait has a timeout (60 s) that a loaded 2-core machine meets: the
cluster was up in 1.5 s on a quiet one, in 6 s at a load average of 10.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from mropt.harness.experiment import load_experiment
from mropt.harness.runner import results_frame, run_study

from .conftest import ROOT
from .dask_processes import DASK, ClusterStartError, DaskProcesses
from .test_policy_study import STUDY as POLICY_STUDY_LOCAL
from .test_policy_study import workload

WORKERS = 2
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

#: test_policy_study's study (two policies, two seeds, a folder of workloads) under its own name
POLICY_STUDY = POLICY_STUDY_LOCAL.replace('name = "policies"', 'name = "dask-cluster-policies"')


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, request) -> DaskProcesses:
    """A ``dask scheduler`` with ``WORKERS`` ``dask worker`` processes registered; ended by the finaliser."""
    if DASK is None:
        pytest.skip("the `dask` command of the package distributed is not installed (pip install 'dask[distributed]')")
    procs = DaskProcesses(tmp_path_factory.mktemp("dask-cluster"), WORKERS)
    request.addfinalizer(procs.stop)
    try:
        procs.start()
    except ClusterStartError as exc:
        pytest.fail(str(exc))
    return procs


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


def local_and_dask(experiment: Path, out: Path, cluster: DaskProcesses) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of the study on the local executor and through ``mropt gap EXPERIMENT --scheduler
    ADDRESS``, the two at the same time; the Dask runs counted on the cluster's workers."""
    before = cluster.executed()
    command = [sys.executable, "-m", "mropt.cli.main", "gap", str(experiment), "--scheduler", cluster.address]
    gap = subprocess.Popen(
        [*command, "--out", str(out / "dask"), "--no-progress"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        run_study(load_experiment(experiment), out / "local", workers=1, progress=False)
        printed = gap.communicate(timeout=120)[0].decode(errors="replace")
    finally:
        if gap.poll() is None:
            gap.kill()
            gap.wait()
    assert gap.returncode == 0, printed
    local, remote = results_frame(out / "local"), results_frame(out / "dask")
    after = cluster.executed()
    ran = {name: after[name] - before.get(name, 0) for name in after}
    assert sorted(ran) == [f"w{i}" for i in range(WORKERS)]
    assert sum(ran.values()) == len(remote), f"runs on the cluster's workers {ran}, rows {len(remote)}"
    assert all(n > 0 for n in ran.values()), f"a worker ran nothing: {ran}"
    return local, remote


@pytest.mark.slow
def test_method_and_policy_studies_through_a_scheduler_store_the_local_rows(cluster, tmp_path):
    methods = tmp_path / "methods.toml"
    methods.write_text(METHOD_STUDY)
    local, remote = local_and_dask(methods, tmp_path / "methods", cluster)
    assert len(local) == 4
    assert set(local["status"]) == {"feasible", "error", "time_limit"}  # a plan, an exception, a kill
    pd.testing.assert_frame_equal(timeless(local), timeless(remote))

    (tmp_path / "workloads").mkdir()
    (tmp_path / "workloads" / "w4.json").write_text(json.dumps(workload("w4", 4)))
    policies = tmp_path / "policies.toml"
    policies.write_text(POLICY_STUDY)
    local, remote = local_and_dask(policies, tmp_path / "policies", cluster)
    assert len(local) == 4 and set(local["kind"]) == {"workload"} and set(local["status"]) == {"feasible"}
    pd.testing.assert_frame_equal(timeless(local), timeless(remote))
