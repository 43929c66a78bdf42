"""The memory cap of a run stopped by ``--until`` counts the attempts of the jobs submitted by then."""

from __future__ import annotations

from pathlib import Path

from mropt.model.io import load_instance
from mropt.sim.memory import ATTEMPT_BYTES, memory_estimate

from cli_capture import run_cli


def test_until_counts_the_attempts_of_the_jobs_submitted_by_then(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    assert run_cli("generate", "workload", "--preset", "amb-dynamic", "--jobs", "6", "-o", path).code == 0
    workload = load_instance(path)
    first = min(j.submit_time for j in workload.jobs)
    later = sum(j.n_tasks for j in workload.jobs if j.submit_time > first)
    assert later > 0
    assert memory_estimate(workload) - memory_estimate(workload, until=first) == ATTEMPT_BYTES * later
    assert memory_estimate(workload, until=max(j.submit_time for j in workload.jobs)) == memory_estimate(workload)
    cap = (memory_estimate(workload, until=first) + memory_estimate(workload)) / 2 / (1 << 30)
    refused = run_cli("simulate", path, "--policy", "fifo", "--max-memory", cap)
    assert refused.code == 2 and len(refused.err_lines) == 1 and "more than the" in refused.err
    stopped = run_cli("simulate", path, "--policy", "fifo", "--max-memory", cap, "--until", first, "--json")
    assert stopped.code == 0, stopped.err
    tight = memory_estimate(workload, until=first) / 2 / (1 << 30)
    line = run_cli("simulate", path, "--policy", "fifo", "--max-memory", tight, "--until", first).err_lines
    assert len(line) == 1 and f"attempts (of the jobs submitted by --until {first:g})" in line[0]
