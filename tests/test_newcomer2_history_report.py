"""``mropt history report`` prints a source's first submit and last finish readably.

Epoch seconds (a job history's) printed as ``1.400e+09``, which says neither the day nor the
span; they are now ISO UTC dates, and a trace's own seconds (a simulation's) are printed in full.
"""

from __future__ import annotations

from pathlib import Path

from history.history_files import write_jhist

import mropt
from mropt.instances.workload_gen import generate_workload

from cli_capture import run_cli


def test_report_prints_epoch_times_as_utc_dates_and_trace_seconds_in_full(tmp_path: Path) -> None:
    run = mropt.simulate(generate_workload("amb-static", 1, jobs=3), "fifo")
    run.write(tmp_path / "sim")
    db = tmp_path / "h.duckdb"
    assert run_cli("history", "import", db, write_jhist(tmp_path / "a.jhist"), tmp_path / "sim").code == 0
    r = run_cli("history", "report", db)
    assert r.code == 0, r.err
    rows = {line.split()[0]: line.split() for line in r.out.splitlines()[4:6]}
    # write_jhist: submitted at epoch 1e12 ms = 2001-09-09 01:46:40 UTC, JobFinished 30 s later
    assert rows["a.jhist"][-2:] == ["2001-09-09T01:46:40Z", "2001-09-09T01:47:10Z"], r.out
    jobs = run.jobs
    first, last = jobs["submit_time"].min(), jobs["finish"].max()
    assert rows["sim"][-2:] == [f"{first:.10g}", f"{last:.10g}"], r.out
    assert "e+" not in r.out.split("per user group")[0], r.out
