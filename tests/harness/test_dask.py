"""The same study on a real local Dask cluster gives the same rows as the local executor."""

from __future__ import annotations

import pandas as pd
import pytest

from mropt.harness.experiment import load_experiment
from mropt.harness.runner import results_frame, run_study

from .conftest import comparable

STUDY = """
name = "dask-vs-local"
imports = ["tests.harness.fake_methods"]
time_limit = 1.0
kill_grace = 0.3
methods = ["edf-greedy", "test-trivial", "test-raise", "test-sleep"]
[[instances]]
generator = "admission"
seeds = [1, 2]
params = {jobs = 6}
sweep = {size = [100, 200]}
"""


@pytest.mark.slow
def test_dask_local_cluster_gives_the_rows_of_the_local_executor(write_experiment, tmp_path):
    exp = load_experiment(write_experiment(STUDY))
    run_study(exp, tmp_path / "local", executor="local", workers=2, progress=False)
    run_study(exp, tmp_path / "dask", executor="dask", workers=2, progress=False)
    local, dask = results_frame(tmp_path / "local"), results_frame(tmp_path / "dask")
    assert len(local) == 16
    pd.testing.assert_frame_equal(comparable(local), comparable(dask))
    assert set(dask["status"]) == {"feasible", "error", "time_limit"}
