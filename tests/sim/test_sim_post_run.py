"""What a run costs after the loop (issue 32): the summary's slot utilisation read from the
recorder's typed rows, and the study's metrics read from the recorder's columns without frames,
checked against the files ``--out`` writes, read back (``read_outputs``): the step series of
``utilisation.parquet`` integrated row by row here, ``run_metrics`` of the frames read from disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from test_sim_fifo import mixed_workload

from mropt.harness import worker
from mropt.harness.policy_metrics import run_metrics
from mropt.model.workload import WorkloadInstance
from mropt.sim import outputs, recorder
from mropt.sim.outputs import read_outputs, write_outputs
from mropt.sim.run import simulate
from mropt.sim.tasks_table import recut

from sim_helpers import mr_job, workload


def with_deadlines() -> WorkloadInstance:
    """:func:`mixed_workload` (two pools, replicas, a fault, stragglers) with a deadline and a benefit
    on every other job: some met, some missed."""
    data = mixed_workload().to_dict()
    for k, job in enumerate(data["jobs"]):
        if k % 2:
            job.update(deadline=job["submit_time"] + (1.0 if k % 4 == 1 else 500.0), benefit=1.0 + k)
    return WorkloadInstance.from_dict(data)


def step_ratio(rows: list[tuple[float, int, int]], horizon: float) -> float:
    """Busy over capacity slot-seconds on [0, horizon] of a step series ``(time, busy, capacity)``,
    integrated one step after another (the capacity before the first row: the first row's)."""
    busy = 0.0
    capacity = rows[0][2] * min(rows[0][0], horizon)
    for (t, b, c), (nxt, _, _) in zip(rows, [*rows[1:], (horizon, 0, 0)]):
        width = max(0.0, min(nxt, horizon) - min(t, horizon))
        busy += b * width
        capacity += c * width
    return busy / capacity


@pytest.mark.parametrize("policy", ["fair", "capacity"])
def test_summary_and_study_metrics_match_the_files_read_back(
    policy: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recorder, "UTILISATION_CHUNK", 5)  # the rows in many typed blocks
    w = with_deadlines()
    run = simulate(w, policy, seed=3)
    write_outputs(run, tmp_path / "out")
    summary, tables = read_outputs(tmp_path / "out")
    util, tasks, jobs = tables["utilisation.parquet"], tables["tasks.parquet"], tables["jobs.parquet"]
    # the pools' own rows are there too, and the counts changed at many instants
    assert {"*", "p0", "p1"} <= set(util["pool"]) and len(list(run.recorder.utilisation_blocks())) > 3
    horizon = summary["makespan"]
    for name in ("map", "reduce"):
        rows = util[(util["pool"] == "*") & (util["slot_type"] == name)]
        want = step_ratio(list(zip(rows["time"], rows["busy"], rows["capacity"], strict=True)), horizon)
        assert summary["utilisation"][name] == pytest.approx(want, rel=1e-9), name
    assert summary["utilisation"]["map"] != summary["utilisation"]["reduce"]
    # the study's measures from the recorder's columns: those of the frames read from the files
    levels = set(tasks["locality"].dropna())
    assert "node" in levels and tasks["locality"].isna().any()  # reduces have no locality
    assert jobs["on_time"].astype(object).isin([True]).any() and jobs["on_time"].astype(object).isin([False]).any()
    from_files = run_metrics(w, jobs, tasks)
    assert None not in from_files.values()
    rec = run.recorder
    assert run_metrics(w, rec.jobs_columns(), rec.tasks_columns()) == from_files
    # the worker's row: the summary and these measures, verified
    monkeypatch.setattr("mropt.sim.run.simulate", lambda *args, **kwargs: run)
    row: dict[str, Any] = worker.simulate_task({"method": policy, "seed": 3}, w)
    assert row["verified"] and row["verify_problems"] is None
    assert json.loads(row["metrics"]) == {
        **{k: v for k, v in run.summary.items() if k not in ("policy", "params")},
        **from_files,
    }


def test_a_run_without_attempts_has_no_measures() -> None:
    """No attempt (the run stops before the only job arrives): no locality share, from columns or frames."""
    w = workload([{"id": "n", "map_slots": 1, "reduce_slots": 1}], [mr_job("j", 1.0, submit_time=10.0)])
    run = simulate(w, "fifo", until=5.0)
    rec = run.recorder
    assert rec.attempts == 0 and rec.tasks_columns()["locality"] == []
    got = run_metrics(w, rec.jobs_columns(), rec.tasks_columns())
    assert got["locality_node"] is None and got["jct_mean"] is None and got["acceptance"] is not None


@pytest.mark.parametrize("size", [1, 2, 3, 4, 100])
def test_recut_gives_the_rows_in_pieces_of_size_across_blocks(size: int) -> None:
    """Blocks of 0, 3, 1, 0, 5 and 2 rows (two columns): the pieces are the rows joined, then cut."""
    lengths = [0, 3, 1, 0, 5, 2]
    ends = np.cumsum(lengths)
    blocks = [(np.arange(e - n, e), np.arange(e - n, e) * 0.5) for n, e in zip(lengths, ends, strict=True)]
    pieces = list(recut(iter(blocks), size))
    rows = list(range(int(ends[-1])))
    assert [p[0].tolist() for p in pieces] == [rows[k : k + size] for k in range(0, len(rows), size)]
    assert all(p[1].tolist() == [r * 0.5 for r in p[0].tolist()] for p in pieces)
    assert list(recut(iter([(np.zeros(0), np.zeros(0))]), size)) == []


def test_the_files_are_written_from_the_system_pool_and_the_default_pool_comes_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Arrow allocates from the system allocator while the tables are written (the pieces' buffers go
    back when freed), and its default pool is restored after the write, and after a failed one."""
    run = simulate(mixed_workload(), "fifo")
    default = pa.default_memory_pool().backend_name
    if default == "system":  # a pyarrow without mimalloc/jemalloc, or ARROW_DEFAULT_MEMORY_POOL=system
        pytest.skip("Arrow's default pool is the system allocator here: no swap to see")
    seen: list[str] = []
    write = outputs._write_parquet

    def spy(*args: Any) -> None:
        seen.append(pa.default_memory_pool().backend_name)
        if len(seen) == 4:
            raise OSError("disk full")
        write(*args)

    monkeypatch.setattr(outputs, "_write_parquet", spy)
    outputs.write_outputs(run, tmp_path / "out")
    assert seen == ["system"] * 3 and pa.default_memory_pool().backend_name == default
    with pytest.raises(OSError, match="disk full"):
        outputs.write_outputs(run, tmp_path / "again")
    assert pa.default_memory_pool().backend_name == default


def test_overlapping_writes_share_one_swap_of_the_pool() -> None:
    """Two writes whose blocks overlap (threads): the default pool comes back when the last one
    leaves, not when the first does (the first out would have left the second's pieces on the
    default pool, the second out the system pool as the default for good)."""
    default = pa.default_memory_pool().backend_name
    if default == "system":
        pytest.skip("Arrow's default pool is the system allocator here: no swap to see")
    first, second = outputs.system_pool(), outputs.system_pool()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert pa.default_memory_pool().backend_name == "system"
    second.__exit__(None, None, None)
    assert pa.default_memory_pool().backend_name == default
