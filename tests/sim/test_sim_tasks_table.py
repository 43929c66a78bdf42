"""The run's tables from the recorder's typed store (issue 32: ``mropt simulate --out`` of the
Alibaba day under 1 GB): the same columns, types, values and Parquet file as the tables built
from plain Python lists, and no Python object per attempt on the way."""

from __future__ import annotations

import json
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_sim_fifo import mixed_workload

from mropt.model.workload import WorkloadInstance
from mropt.sim import ended_attempts, recorder, tasks_table, utilisation
from mropt.sim.engine import Simulation
from mropt.sim.outputs import RUN_ID_KEY, TABLE_KEY, parquet_options, write_outputs
from mropt.sim.policy import make_policy
from mropt.sim.recorder import OUTCOMES, Recorder
from mropt.sim.run import SimRun, simulate, summarise
from mropt.sim.state import LEVEL_NAMES, SLOT_TYPES
from mropt.sim.tasks_table import TasksTable

from sim_helpers import mr_job, workload

RESOURCES = [{"id": "n", "count": 3, "rack": "r", "resources": {"cpu": 4, "mem": 8}}]


def resource_jobs() -> list[dict[str, Any]]:
    """Maps of two groups each (the second demands no memory), no replicas: locality null throughout."""
    groups = [
        {"duration": 3.0, "count": 5, "demand": {"cpu": 1, "mem": 1.5}},
        {"duration": 2.0, "count": 2, "demand": {"cpu": 2}},
    ]
    return [{"id": f"j{k}", "submit_time": k, "stages": [{"type": "map", "tasks": groups}]} for k in range(4)]


def case(name: str) -> tuple[WorkloadInstance, dict[str, Any]]:
    if name == "speculation-faults":  # backups killed, a node fault failing attempts, tasks without replicas
        return mixed_workload(), {"policy": "fair", "seed": 3, "speculation": "clairvoyant"}
    if name == "resources":  # demand_cpu, demand_mem; every locality None (a null column)
        return workload(RESOURCES, resource_jobs()), {"policy": "drf", "seed": 0, "speculation": "late"}
    # no attempt at all: the run stops before the only job arrives (every text column null, no rows)
    nodes = [{"id": "n", "map_slots": 1, "reduce_slots": 1}]
    return workload(nodes, [mr_job("j", 1.0, submit_time=10.0)]), {"policy": "fifo", "seed": 0, "until": 5.0}


def plain_columns(rec: Recorder) -> dict[str, Any]:
    """The attempt table as it was built before the typed store: Python lists, one row at a time."""
    sim = rec.sim
    job, stage, task, node = rec.a_job, rec.a_stage, rec.a_task, rec.a_node
    input_mb = np.full(len(job), np.nan)
    demand = np.zeros((len(job), len(sim.resources)))
    for row, (j, s, t) in enumerate(zip(job, stage, task, strict=True)):
        spec = sim.workload.jobs[j].stages[s]
        if spec.type == "map":
            input_mb[row] = [g.task_input_mb for g in spec.tasks for _ in range(g.count)][t]
        held = sim.jobs[j].stages[s].demand_of(t)
        if held is not None:
            demand[row] = held
    return {
        "job_id": [sim.jobs[j].id for j in job],
        "stage": np.array(stage, dtype=np.int64),
        "stage_type": [SLOT_TYPES[t] for t in rec.a_type],
        "task": np.array(task, dtype=np.int64),
        "attempt": np.array(rec.a_id, dtype=np.int64),
        "node": [sim.node_ids[k] for k in node],
        "rack": [sim.rack_names[sim.node_rack[k]] for k in node],
        "start": np.array(rec.a_start, dtype=float),
        "end": np.array(rec.a_end, dtype=float),
        "locality": [LEVEL_NAMES[v] for v in rec.a_level],
        "speculative": np.array(rec.a_spec, dtype=bool),
        "outcome": [OUTCOMES[k] for k in rec.a_outcome],
        "input_mb": input_mb,
        **{f"demand_{name}": demand[:, k] for k, name in enumerate(sim.resources)},
    }


def assert_same_columns(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert list(got) == list(want)
    for name, values in want.items():
        if isinstance(values, list):
            assert isinstance(got[name], list) and got[name] == values, name
        else:
            assert got[name].dtype == values.dtype and np.array_equal(got[name], values, equal_nan=True), name


@pytest.mark.parametrize("name", ["speculation-faults", "resources", "no-attempt"])
def test_the_tables_are_what_the_plain_lists_gave(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w, options = case(name)
    monkeypatch.setattr(recorder, "UTILISATION_CHUNK", 5)  # utilisation rows in blocks of 5 or more
    run = simulate(w, options.pop("policy"), seed=options.pop("seed"), **options)
    rec = run.recorder
    plain = plain_columns(rec)
    outcomes = set(plain["outcome"])
    if name == "speculation-faults":
        assert {"killed", "failed"} <= outcomes and plain["speculative"].any() and None in plain["locality"]
        assert {"node", "rack"} & set(plain["locality"])
    want = pa.table({k: pa.array(v) for k, v in plain.items()})
    assert want.num_rows == rec.attempts == run.summary["attempts"]
    # the columns Recorder.tasks_columns hands its callers: the same lists and typed arrays
    assert_same_columns(rec.tasks_columns(), plain)
    # the Arrow table: the same schema (null where every value is None) and values
    got = TasksTable(rec).table()
    assert got.schema == want.schema and got.to_pandas().equals(want.to_pandas())
    if name != "speculation-faults":
        assert pa.types.is_null(got.schema.field("locality").type)
    # the file --out writes: the bytes pyarrow.parquet.write_table writes of the list-built table
    # (in row groups of ROW_GROUP rows)
    monkeypatch.setattr(tasks_table, "ROW_GROUP", 7)  # pieces (row groups) of 7 rows, across blocks
    assert name == "no-attempt" or len(list(rec.utilisation_blocks())) >= 3  # two typed blocks, then the lists
    write_outputs(run, tmp_path / "out")
    plain_utilisation = pa.table({k: pa.array(v) for k, v in rec.utilisation_columns().items()})
    for name, table in (("tasks", want), ("utilisation", plain_utilisation)):
        meta = pq.read_schema(tmp_path / "out" / f"{name}.parquet").metadata
        sink = pa.BufferOutputStream()
        marked = table.replace_schema_metadata({RUN_ID_KEY: meta[RUN_ID_KEY], TABLE_KEY: name.encode()})
        pq.write_table(marked, sink, row_group_size=7, **parquet_options(marked.schema))
        assert (tmp_path / "out" / f"{name}.parquet").read_bytes() == sink.getvalue().to_pybytes(), name
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["attempts"] == want.num_rows
    assert summary["makespan"] == (max(rec.a_end) if want.num_rows else 0.0)


def gapped_run() -> Recorder:
    """Batches on 3 nodes of 2 slots, one node failing at 5: the batch loses the members on it and its
    live members end together (their attempt ids not consecutive), the failed tasks run again."""
    nodes = [{"id": "n", "count": 3, "map_slots": 2, "reduce_slots": 1}]
    w = workload(
        nodes, [mr_job("j", [10.0] * 6), mr_job("k", [3.0] * 40, [2.0] * 3)], faults=[{"node": "n-1", "down": 5}]
    )
    return Simulation(w, make_policy("fifo"), mode="event").run()


@pytest.mark.parametrize("size", [1, 3, 5, 7, 1000])
def test_chunks_cut_the_rows_in_order_at_every_size(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ended_attempts, "CHUNK", 4)  # blocks of a few endings: pieces cut across blocks
    rec = gapped_run()
    store = rec.ended_attempts
    assert store.gaps and len(store.task) > 3
    whole = store.rows()
    assert whole["id"].tolist() == rec.a_id and sorted(rec.a_id) == list(range(rec.attempts))
    pieces = list(store.chunks(size))
    assert [len(p["job"]) for p in pieces[:-1]] == [size] * (len(pieces) - 1) and 0 < len(pieces[-1]["job"]) <= size
    for name, values in whole.items():
        joined = np.concatenate([p[name] for p in pieces])
        assert joined.dtype == values.dtype and np.array_equal(joined, values), name


def test_summary_and_tables_keep_no_python_object_per_attempt(tmp_path: Path) -> None:
    """20,000 maps on 100 one-slot nodes (batches of 100): the summary (its event-log hash) and the
    three Parquet files, after the run, peak under 150 traced bytes an attempt (about 100 measured:
    numpy columns of the attempts; Arrow's own buffers are not traced). The lists of the attempt
    columns took 326."""
    n = 20_000
    w = workload(
        [{"id": "n", "count": 100, "rack": "r", "map_slots": 1, "reduce_slots": 0}],
        [{"id": "j", "stages": [{"type": "map", "tasks": [{"duration": 5.0, "count": n}]}]}],
    )
    rec = Simulation(w, make_policy("fifo"), mode="event").run()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        summary = summarise(rec, "fifo", {}, time.perf_counter())
        write_outputs(SimRun(w, "fifo", rec, summary, 0.0), tmp_path / "out")
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert summary["attempts"] == n == pq.read_metadata(tmp_path / "out" / "tasks.parquet").num_rows
    assert peak < 150 * n, peak / n


def test_spans_and_their_pieces_hold_each_entry_s_demand(monkeypatch: pytest.MonkeyPatch) -> None:
    """The spans' demand is each entry's task group's (``Stage.demand_of``, asked entry by entry
    here), whole or in pieces of whole blocks; the makespan is the last end of an attempt."""
    monkeypatch.setattr(ended_attempts, "CHUNK", 4)
    w = workload(RESOURCES, resource_jobs())
    rec = Simulation(w, make_policy("drf")).run()
    store, jobs = rec.ended_attempts, rec.sim.jobs
    spans = rec.spans()
    count = spans["count"]
    first = np.cumsum(count) - count
    stage, task = store.column("stage").tolist(), np.array(rec.a_task)[first].tolist()
    held = [jobs[j].stages[s].demand_of(t) or (0.0, 0.0) for j, s, t in zip(spans["job"].tolist(), stage, task)]
    assert spans["demand"].tolist() == [list(h) for h in held] and {1.5, 0.0} <= set(spans["demand"][:, 1])
    pieces = list(store.span_pieces(jobs, 2, size=5))
    assert len(pieces) > 2
    for name, values in spans.items():
        assert np.array_equal(np.concatenate([p[name] for p in pieces]), values), name
    assert rec.last_end() == max(rec.a_end) and Recorder(rec.sim).last_end() == 0.0


def test_utilisation_rows_moved_into_arrays_are_the_same_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """The utilisation rows come in typed blocks (every 3 rows here): the same table and summary as
    rows in one block."""
    runs = []
    for chunk in (3, 1 << 30):  # (rows built after the run: cut into blocks as they are read)
        monkeypatch.setattr(recorder, "UTILISATION_CHUNK", chunk)
        run = simulate(mixed_workload(), "fair", seed=3)
        runs.append((run.summary, len(list(run.recorder.utilisation_blocks())), run.recorder.utilisation_columns()))
    (summary, moved, a), (same, kept, b) = runs
    assert moved > 3 and kept == 1
    assert a["slot_type"] == b["slot_type"] and a["pool"] == b["pool"] and len(a["time"]) > 50
    for name in ("time", "busy", "capacity"):
        assert a[name].dtype == b[name].dtype and np.array_equal(a[name], b[name]), name
    assert {**summary, "wall_time": 0} == {**same, "wall_time": 0}


@pytest.mark.parametrize("resources", [{"cpu": 4, "mem": 8}, {"cpu": 4}])
def test_resource_use_summed_in_pieces_is_the_whole_sum(resources: dict[str, float], monkeypatch) -> None:
    """The summary's resource use sums the spans' held amount-seconds a few spans at a time, to the
    last bit what numpy's sum of them all at once gave (one resource: gathered and summed at once)."""
    monkeypatch.setattr(ended_attempts, "CHUNK", 2)
    monkeypatch.setattr(ended_attempts, "SPAN_PIECE", 3)
    nodes = [{**RESOURCES[0], "resources": resources}]
    jobs = [
        {"id": f"j{k}", "submit_time": k / 3, "stages": [{"type": "map", "tasks": [g]}]}
        for k in range(40)
        for g in [
            {"duration": 1 / 3 + k * 1e-3, "count": 1 + k % 3, "demand": {n: 0.1 + v / 7 for n, v in resources.items()}}
        ]
    ]
    rec = Simulation(workload(nodes, jobs), make_policy("drf")).run()
    horizon = rec.last_end()
    spans = rec.spans()
    width = np.minimum(spans["end"], horizon) - np.minimum(spans["start"], horizon)
    whole = (spans["demand"] * (spans["count"] * np.maximum(width, 0.0))[:, None]).sum(axis=0)
    assert len(list(rec.span_pieces())) > 10
    assert utilisation._held(rec, horizon, len(resources)).tolist() == whole.tolist()
