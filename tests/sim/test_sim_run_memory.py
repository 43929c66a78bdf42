"""What a run keeps after it is needed (issue 32): narrow utilisation blocks, released locality."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from test_sim_fifo import mixed_workload

from mropt.sim import recorder, utilisation_rows
from mropt.sim.engine import Simulation
from mropt.sim.outputs import FILES, write_outputs
from mropt.sim.policy import make_policy
from mropt.sim.run import SimRun, simulate, summarise
from mropt.sim.tasks_table import TasksTable


def test_utilisation_blocks_are_int32_and_read_back_as_int64(monkeypatch: pytest.MonkeyPatch) -> None:
    """Busy and capacity are kept as int32 in the typed blocks, given back as int64 with the values
    the lists held; a block with a value past int32 stays int64."""
    runs = []
    for chunk in (3, 1 << 30):  # (the rows written live: moved into blocks when a job ends)
        monkeypatch.setattr(recorder, "UTILISATION_CHUNK", chunk)
        runs.append(Simulation(mixed_workload(), make_policy("fair"), seed=3, utilisation_rows="live").run())
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


def _files(run: object, folder: Path) -> dict[str, object]:
    """The tables ``write_outputs`` wrote (read back) and the summary less its run id."""
    write_outputs(run, folder)  # type: ignore[arg-type]
    out: dict[str, object] = {name: pq.read_table(folder / name) for name in FILES[:3]}
    summary = json.loads((folder / "summary.json").read_text())
    out["summary"] = {k: v for k, v in summary.items() if k not in ("run_id", "wall_time")}
    return out


def test_rows_built_after_the_run_are_built_at_each_read_and_never_kept(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The utilisation rows built after the run (a window of two entries' ends, pieces of three rows
    at a time) are never kept, read as often as one likes: the rows, pools, summary and files of
    the same run with its rows written live and kept."""
    monkeypatch.setattr(utilisation_rows, "WINDOW", 2)
    monkeypatch.setattr(utilisation_rows, "PIECE", 3)
    w = mixed_workload()
    sim = Simulation(w, make_policy("fair"), seed=3, mode="heartbeat", utilisation_rows="live")
    live = sim.run()
    summary = summarise(live, "fair", sim.policy.params, 0.0)
    assert live._u_blocks or live.u_time
    built = simulate(w, "fair", seed=3, mode="heartbeat")
    rec = built.recorder
    assert built.summary == {**summary, "wall_time": built.summary["wall_time"]}
    for _ in range(2):
        assert rec.pools == live.pools
        for got, want in zip(rec.utilisation_arrays(), live.utilisation_arrays(), strict=True):
            assert got.dtype == want.dtype and np.array_equal(got, want)
        assert not rec._u_blocks and not rec.u_time and not rec.u_pool  # nothing kept
    assert len(live.utilisation_arrays()[0]) > 40
    _, stype, pool, _, _ = live.utilisation_arrays()
    for got, want in zip(rec.utilisation_used(), (np.unique(stype), np.unique(pool)), strict=True):
        assert got.dtype == want.dtype and np.array_equal(got, want)
    kept = SimRun(w, "fair", live, summary, 0.0, dict(sim.policy.params))
    a, b = _files(kept, tmp_path / "live"), _files(built, tmp_path / "built")
    for name in FILES[:3]:
        got, want = a[name], b[name]
        assert got.schema.remove_metadata() == want.schema.remove_metadata(), name  # type: ignore[attr-defined]
        assert got.to_pandas().equals(want.to_pandas()), name  # type: ignore[attr-defined]  # (NaN = NaN)
    assert a["summary"] == b["summary"]
