"""What a run keeps after it is needed (issue 32): narrow utilisation blocks, released locality."""

from __future__ import annotations

import numpy as np
import pytest
from test_sim_fifo import mixed_workload

from mropt.sim import recorder
from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy
from mropt.sim.run import simulate, summarise
from mropt.sim.tasks_table import TasksTable


def test_utilisation_blocks_are_int32_and_read_back_as_int64(monkeypatch: pytest.MonkeyPatch) -> None:
    """Busy and capacity are kept as int32 in the typed blocks, given back as int64 with the values
    the lists held; a block with a value past int32 stays int64."""
    runs = []
    for chunk in (3, 1 << 30):
        monkeypatch.setattr(recorder, "UTILISATION_CHUNK", chunk)
        runs.append(simulate(mixed_workload(), "fair", seed=3).recorder)
    moved, kept = runs
    assert len(moved._u_blocks) > 3 and not kept._u_blocks
    for block in moved._u_blocks:
        assert block[3].dtype == np.int32 and block[4].dtype == np.int32
    for got, want in zip(moved.utilisation_arrays(), kept.utilisation_arrays(), strict=True):
        assert got.dtype == want.dtype and np.array_equal(got, want)
    assert moved.utilisation_arrays()[3].dtype == np.int64
    # a count past int32 (2^31 busy slots) keeps its block wide, and its value
    big = (1 << 31) + 5
    for values, extra in zip(
        (moved.u_time, moved.u_type, moved.u_pool, moved.u_busy, moved.u_cap), (9e9, 0, 0, 1, big)
    ):
        values.append(extra)
    moved._store_rows()
    last = moved._u_blocks[-1]
    assert last[3].dtype == np.int32 and last[4].dtype == np.int64
    blocks = list(moved.utilisation_blocks())
    assert blocks[-2][4][-1] == big and blocks[-2][3][-1] == 1 and blocks[-2][4].dtype == np.int64


def test_simulate_releases_locality_and_changes_no_output() -> None:
    """After the run, :func:`simulate` drops every stage's replicas and locality stacks; the summary
    (event-log hash included) and the tables are those of the same run that kept them."""
    w = mixed_workload()
    run = simulate(w, "fifo", seed=1)
    sim = Simulation(w, make_policy("fifo"), seed=1)
    rec = sim.run()
    kept = [st for job in sim.jobs for st in job.stages if st.replicas is not None]
    assert kept, "the workload has stages with replicas"
    assert any(level in (0, 1) for level in rec.a_level)  # node- and rack-local launches happened
    for job in run.recorder.sim.jobs:
        for st in job.stages:
            assert st.replicas is None and st.node_q is None and st.rack_q is None
    same = summarise(rec, "fifo", {}, run.wall_time)
    assert {**run.summary, "wall_time": 0} == {**same, "wall_time": 0}
    got, want = TasksTable(run.recorder).table(), TasksTable(rec).table()
    assert got.schema == want.schema and got.to_pandas().equals(want.to_pandas())
    assert run.recorder.event_log_hash() == rec.event_log_hash()
