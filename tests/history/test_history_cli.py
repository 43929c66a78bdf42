"""``mropt history import|query|report`` and ``mropt import-rumen`` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

import mropt
from mropt.instances.workload_gen import generate_workload
from mropt.model.io import load_instance, save_instance

from cli_capture import assert_input_error, run_cli
from history_files import shared, write_jhist, write_rumen


def test_query_prints_csv(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    r = run_cli("history", "import", db, write_rumen(tmp_path / "b.json"), write_jhist(tmp_path / "a.jhist"))
    assert r.code == 0, r.err
    assert r.out.splitlines() == [
        "b.json: rumen, 1 jobs, 3 tasks, 3 attempts, 2 jobconf rows",
        "a.jhist: jhist, 1 jobs, 3 tasks, 3 attempts, 0 jobconf rows",
    ]
    q = run_cli("history", "query", db, 'SELECT source, job_id, "user", user_group FROM jobs ORDER BY source')
    assert q.code == 0, q.err
    assert q.out == "source,job_id,user,user_group\na.jhist,job_1_0001,ann,etl\nb.json,job_2_0001,bob,adhoc\n"
    # the views are there: eq. 9 per group (a.jhist: one reduce of 20 s; b.json: one of 6 s)
    q = run_cli("history", "query", db, 'SELECT "group", reduce_cost FROM group_reduce_cost ORDER BY 1')
    assert q.out == "group,reduce_cost\nadhoc,6.0\netl,20.0\n"


def test_report_runs(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    assert run_cli("history", "import", db, write_rumen(tmp_path / "b.json")).code == 0
    r = run_cli("history", "report", db)
    assert r.code == 0, r.err
    assert r.out.startswith("history: 1 jobs, 3 tasks, 3 attempts, 2 jobconf")
    assert "per user group" in r.out and "adhoc" in r.out and "possible slow nodes" in r.out


def test_errors_are_one_line_exit_2(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    assert_input_error(run_cli("history", "report", db), "no such history database")
    assert_input_error(run_cli("history", "import", db, tmp_path / "nothere.jhist"), "no such file")
    assert run_cli("history", "import", db, write_rumen(tmp_path / "b.json")).code == 0
    assert_input_error(run_cli("history", "query", db, "SELEC 1"), "query:")
    assert_input_error(run_cli("history", "query", db, "DELETE FROM jobs"), "read-only")
    assert_input_error(run_cli("history", "import", db, tmp_path / "b.json"), "already in the history database")
    (tmp_path / "junk.db").write_text("not a database\n")
    assert_input_error(run_cli("history", "report", tmp_path / "junk.db"), "not a history database")
    assert_input_error(run_cli("import-rumen", db, "-o", tmp_path / "w.json"), "cannot tell the kind")


def test_a_simulation_round_trip_gives_its_job_and_task_counts(tmp_path: Path) -> None:
    workload = tmp_path / "w.json"
    save_instance(generate_workload("amb-dynamic", seed=3, jobs=8), workload)
    out = tmp_path / "run1"
    assert run_cli("simulate", workload, "--policy", "fifo", "--out", out).code == 0
    db = tmp_path / "h.db"
    r = run_cli("history", "import", db, out)
    assert r.code == 0, r.err
    jobs = pq.read_table(out / "jobs.parquet")
    attempts = pq.read_table(out / "tasks.parquet").to_pylist()
    wl = load_instance(workload)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM jobs").fetchone()[0] == jobs.num_rows == 8
        assert con.execute("SELECT count(*) FROM attempts").fetchone()[0] == len(attempts)
        n_tasks = len({(a["job_id"], a["stage"], a["task"]) for a in attempts})
        assert n_tasks == sum(j.n_tasks for j in wl.jobs)
        assert con.execute("SELECT count(*) FROM tasks WHERE status = 'SUCCEEDED'").fetchone()[0] == n_tasks
        per_job = dict(con.execute("SELECT job_id, maps + reduces FROM jobs").fetchall())
        assert per_job == {j.id: j.n_tasks for j in wl.jobs}
        assert con.execute("SELECT DISTINCT value FROM jobconf WHERE key = 'mropt.sim.policy'").fetchall() == [
            ("fifo",)
        ]
    finally:
        con.close()
    assert json.loads((out / "summary.json").read_text())["jobs"] == 8


def test_simulate_records_its_history(tmp_path: Path) -> None:
    """``simulate --history DB``: the run lands in the database as an import of its --out folder
    would; without --out under FILE-POLICY-seedN; a second run of the same name is refused whole."""
    workload = tmp_path / "w.json"
    save_instance(generate_workload("amb-dynamic", seed=3, jobs=8), workload)
    db = tmp_path / "h.db"
    r = run_cli("simulate", workload, "--policy", "fifo", "--seed", "2", "--history", db)
    assert r.code == 0, r.err
    r = run_cli("simulate", workload, "--policy", "fair", "--out", tmp_path / "run2", "--history", db)
    assert r.code == 0, r.err
    con = duckdb.connect(str(db), read_only=True)
    try:
        counts = con.execute("SELECT source, count(*) FROM jobs GROUP BY source ORDER BY source").fetchall()
        assert counts == [("run2", 8), ("w-fifo-seed2", 8)]
        n_tasks = sum(j.n_tasks for j in load_instance(workload).jobs)
        assert con.execute("SELECT count(*) FROM tasks WHERE source = 'run2'").fetchone()[0] == n_tasks
    finally:
        con.close()
    r = run_cli("simulate", workload, "--policy", "fifo", "--seed", "2", "--history", db)
    assert r.code == 2 and "w-fifo-seed2" in r.err and "\n" not in r.err.strip()
    r = run_cli("simulate", workload, "--policy", "fifo", "--history-source", "x")
    assert r.code == 2 and "'--history-source' needs --history" in r.err


def test_import_rumen_makes_a_workload_that_runs_under_fifo(tmp_path: Path) -> None:
    files = [shared("rumen", "wordcount.json"), shared("rumen", "2jobs2min-rumen-jh.json")]
    files += sorted(shared("hadoop-jobhistory").glob("*.jhist"))
    w = tmp_path / "w.json"
    r = run_cli("import-rumen", *files, "-o", w)
    assert r.code == 0, r.err
    wl = load_instance(w)
    # 5 jobs (the failed one has no succeeded task), 7 hosts in one rack
    assert len(wl.jobs) == 5 and len(wl.nodes) == 7
    assert {n.rack for n in wl.nodes} == {"default-rack"}
    wc = next(j for j in wl.jobs if j.id == "job_201009241532_0001")
    # wordcount: the three maps' real attempts, 6.896 s, 6.5.. s, 4.1.. s, on foo.example.com
    maps = [g.duration for g in wc.stages[0].tasks]
    assert maps[0] == 6.896 and wc.stages[0].tasks[0].replicas == (("foo.example.com",),)
    assert [s.type for s in wc.stages] == ["map", "reduce"] and wc.stages[1].tasks[0].duration == 9.952
    assert wl.meta["source"]["jobs_left_out"] == ["job_1399356417814_19732"]
    sim = run_cli("simulate", w, "--policy", "fifo", "--json")
    assert sim.code == 0, sim.err
    summary = json.loads(sim.out)
    assert summary["finished"] == 5 and summary["unfinished"] == 0


def test_report_prints_epoch_times_as_utc_dates_and_trace_seconds_in_full(tmp_path: Path) -> None:
    """Epoch seconds (a job history's) printed as ``1.400e+09``, which says neither the day nor the span;
    they are ISO UTC dates, and a trace's own seconds (a simulation's) are printed in full."""
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


def test_a_taken_source_name_is_refused_with_the_option_that_renames_it(tmp_path: Path) -> None:
    """The refusal said "nothing imported" and stopped there; it names ``--source NAME``, and following it
    imports the same folder again under the new name."""
    run = tmp_path / "sim-a"
    mropt.simulate(generate_workload("amb-static", 1, jobs=3), "fifo").write(run)
    db = tmp_path / "h.duckdb"
    assert run_cli("history", "import", db, run).code == 0
    line = assert_input_error(run_cli("history", "import", db, run), "'sim-a'", "already in the history database")
    assert "--source NAME" in line, line
    again = run_cli("history", "import", db, run, "--source", "sim-a-2")
    assert again.code == 0, again.err
    assert again.out.startswith("sim-a-2: simulation, 3 jobs"), again.out
