"""The simulation's memory cap: a run is estimated from its workload and refused above the cap.

The estimates below are computed by hand from the per-item costs that ``docs/simulation.md``
states (1,024 bytes an attempt, 64 a task, 128 a task group, 512 a stage, 4,096 a job, 1,536 a
node, 32 a replica entry, 128 in a stage of at most 200 entries), not by calling the estimate.
"""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.memory import MAX_MEMORY_BYTES, memory_estimate
from mropt.sim.outputs import write_outputs
from mropt.sim.run import simulate

from cli_capture import run_cli
from sim_helpers import TINY

GIB = 1 << 30
#: one job of 1e8 one-second maps on 100 nodes: schema-valid (a group may count up to 1e8)
HUGE = {
    "kind": "workload",
    "schema_version": 1,
    "cluster": {"nodes": [{"id": "n", "count": 100, "map_slots": 2, "reduce_slots": 2}]},
    "jobs": [{"id": "j", "stages": [{"type": "map", "tasks": [{"duration": 1, "count": 100_000_000}]}]}],
}


def test_a_workload_of_1e8_tasks_is_refused_before_the_engine_is_built(tmp_path, monkeypatch) -> None:
    # by hand: 1e8 x (1,024 + 64) + 128 + 512 + 4,096 + 100 x 1,536 bytes = 101.3 GiB > 16 GiB.
    # The engine must never be built (it would allocate the task states, then fill the memory).
    def no_engine(*args: object, **kwargs: object) -> None:
        raise AssertionError("the simulation was built")

    monkeypatch.setattr("mropt.sim.run.Simulation", no_engine)
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(HUGE))
    r = run_cli("simulate", path, "--policy", "fifo")
    assert r.code == 2 and len(r.err_lines) == 1, r.err
    assert "needs about 101 GiB (100,000,000 tasks, 100,000,000 attempts, 1 job, 100 nodes" in r.err
    assert "more than the 16 GiB cap of simulate; give --max-memory GIB" in r.err
    assert MAX_MEMORY_BYTES == 16 * GIB  # the default docs/simulation.md states


def test_max_memory_raises_the_cap(tmp_path) -> None:
    # TINY by hand: 4 tasks x (1,024 + 64) + 3 groups x 128 + 3 stages x 512 + 2 jobs x 4,096 + 1 node x 1,536
    # = 16,000 bytes: above a cap of 1e-5 GiB (10,737 bytes), below one of 1e-4 GiB (107,374 bytes)
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    low = run_cli("simulate", path, "--policy", "fifo", "--max-memory", "0.00001")
    assert low.code == 2 and len(low.err_lines) == 1, low.err
    assert "needs about 1.49e-05 GiB (4 tasks, 4 attempts, 2 jobs, 1 node" in low.err
    assert "more than the 1e-05 GiB cap" in low.err
    high = run_cli("simulate", path, "--policy", "fifo", "--max-memory", "0.0001", "--json")
    assert high.code == 0, high.err
    assert json.loads(high.out)["finished"] == 2
    # a speculation rule counts a backup per task: 4 more attempts, 20,096 bytes, above 1.8e-5 GiB (19,327)
    cap = ["--max-memory", "0.000018"]
    assert run_cli("simulate", path, "--policy", "fifo", *cap).code == 0
    spec = run_cli("simulate", path, "--policy", "fifo", *cap, "--speculation", "late")
    assert spec.code == 2 and "(4 tasks, 8 attempts," in spec.err


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_a_bad_max_memory_is_one_line(tmp_path, value: str) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    r = run_cli("simulate", path, "--policy", "fifo", "--max-memory", value)
    assert r.code == 2 and len(r.err_lines) == 1 and "--max-memory must be a number of GiB > 0" in r.err


def test_the_estimate_is_above_the_memory_the_run_takes(tmp_path) -> None:
    # a mid-size run that defeats batching (stragglers), with HDFS placement in small stages, many
    # jobs and pools, its tables written: the Python heap's peak (tracemalloc) during the run, the
    # summary and --out stays under the estimate (pyarrow's own buffers are not traced; the RSS
    # measurements of docs/simulation.md cover them)
    jobs = [
        {
            "id": f"j{k}",
            "user": f"u{k % 25}",
            "submit_time": 2 * k,
            "stages": [
                {"type": "map", "tasks": [{"duration": 10, "count": 40}]},
                {"type": "reduce", "tasks": [{"duration": 20, "count": 10}]},
            ],
        }
        for k in range(100)
    ]
    w = WorkloadInstance.from_dict(
        {
            "kind": "workload",
            "schema_version": 1,
            "cluster": {
                "nodes": [
                    {"id": f"r{r}", "rack": f"r{r}", "count": 20, "map_slots": 2, "reduce_slots": 2} for r in range(5)
                ]
            },
            "timing": {"straggler_rate": 0.5},
            "placement": {"replicas": 3, "seed": 0},
            "jobs": jobs,
        }
    )
    # the modules the run and --out import on first use (pandas, pyarrow's compute, ...) are
    # imported first, by a tiny run: their import is not the run's memory, and whether an earlier
    # test in the same process imported them must not decide this test
    write_outputs(simulate(WorkloadInstance.from_dict(TINY), "fair"), tmp_path / "warm")
    tracemalloc.start()
    try:
        run = simulate(w, "fair")
        write_outputs(run, tmp_path / "out")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert run.summary["attempts"] == 5000
    # by hand: 5,000 x 1,088 + 200 groups x 128 + 200 stages x 512 + 100 x 4,096 + 100 x 1,536 + 12,000 x 128
    assert memory_estimate(w) == 5000 * 1088 + 200 * 128 + 200 * 512 + 100 * 4096 + 100 * 1536 + 12000 * 128
    assert peak < memory_estimate(w)


ROOT = Path(__file__).resolve().parents[2]
TRACE = Path(os.environ.get("MROPT_SHARED") or ROOT.parent / "shared") / "traces" / "alibaba-2017" / "batch_task.csv"


@pytest.mark.slow
def test_the_alibaba_day_is_under_the_default_cap() -> None:
    # benchmarks/RESULTS.md: the whole day (10,528,237 tasks on 1,300 machines) runs in 1.7-2.2 GB;
    # the estimate (about 12 GiB: no batching assumed) must not refuse it, with or without --slots
    if not TRACE.is_file():
        pytest.skip(f"Alibaba 2017 trace not available at {TRACE} (kept in ../shared; set MROPT_SHARED)")
    from mropt.importers.alibaba_workload import AlibabaWorkloadParams, import_alibaba_workload

    w = import_alibaba_workload(TRACE, AlibabaWorkloadParams())
    assert (w.n_tasks, w.n_nodes) == (10_528_237, 1300)
    assert 10 * GIB < memory_estimate(w) < MAX_MEMORY_BYTES
