"""The Python API of simulations (issue 31, item 4): ``mropt.simulate``, ``mropt.load_run`` and
``mropt verify WORKLOAD DIR``.

A run's tables are pandas DataFrames, equal whether the run was simulated here or read back from
its ``--out`` folder; a folder holding files of two runs is refused; the command line checks a
folder with the independent ``verify_simulation`` (exit 0 / 1 / 2).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import mropt
from mropt.model.errors import InputError

from cli_capture import run_cli

#: one node with one map slot, in event mode: j1 (10 s, submitted at 0) runs on [0, 10]; j2 (5 s,
#: submitted at 1) waits for the slot and runs on [10, 15], past its deadline 14 (in fifo's own
#: heartbeat mode it would start at the heartbeat after 10)
TWO_JOBS = {
    "kind": "workload",
    "schema_version": 1,
    "cluster": {"nodes": [{"id": "n", "map_slots": 1, "reduce_slots": 0}]},
    "jobs": [
        {"id": "j1", "submit_time": 0, "deadline": 12, "stages": [{"type": "map", "tasks": [{"duration": 10}]}]},
        {"id": "j2", "submit_time": 1, "deadline": 14, "stages": [{"type": "map", "tasks": [{"duration": 5}]}]},
    ],
}


@pytest.fixture
def workload_file(tmp_path: Path) -> Path:
    path = tmp_path / "two.json"
    path.write_text(json.dumps(TWO_JOBS), encoding="utf-8")
    return path


def test_simulate_returns_the_tables_as_dataframes(workload_file: Path) -> None:
    run = mropt.simulate(workload_file, "fifo", seed=0, mode="event")
    assert isinstance(run.jobs, pd.DataFrame) and isinstance(run.tasks, pd.DataFrame)
    assert isinstance(run.utilisation, pd.DataFrame)
    jobs = run.jobs.set_index("job_id")
    assert jobs["finish"].to_dict() == {"j1": 10.0, "j2": 15.0}  # by hand (module constant)
    assert jobs["on_time"].to_dict() == {"j1": True, "j2": False}
    assert sorted(zip(run.tasks["job_id"], run.tasks["start"], run.tasks["end"])) == [
        ("j1", 0.0, 10.0),
        ("j2", 10.0, 15.0),
    ]
    busy = run.utilisation[(run.utilisation["pool"] == "*") & (run.utilisation["slot_type"] == "map")]
    assert busy["capacity"].eq(1).all() and set(busy["busy"]) <= {0, 1}
    s = run.summary
    assert (s["policy"], s["jobs"], s["finished"], s["on_time"], s["late"]) == ("fifo", 2, 2, 1, 1)
    assert s["makespan"] == 15.0 and s["mode"] == "event" and s["kind"] == "simulation"
    assert s["utilisation"]["map"] == 1.0  # busy on the whole of [0, 15]
    assert run.verify().ok


def test_a_path_a_workload_and_its_params_give_the_same_run(workload_file: Path) -> None:
    from mropt.model.io import load_instance

    by_path = mropt.simulate(str(workload_file), "fair", params={"preemption": False}, seed=3)
    by_object = mropt.simulate(load_instance(workload_file), "fair", params={"preemption": False}, seed=3)
    pd.testing.assert_frame_equal(by_path.tasks, by_object.tasks)
    assert by_path.summary["params"]["preemption"] is False and by_path.summary["seed"] == 3
    with pytest.raises(InputError, match="unknown policy 'no-such'"):
        mropt.simulate(workload_file, "no-such")


def test_load_run_reads_back_what_write_wrote(tmp_path: Path) -> None:
    inst = mropt.generate_admission(jobs=8, seed=2)  # an admission instance runs on SEQ's cluster
    run = mropt.simulate(inst, "fifo", seed=1)
    run.write(tmp_path / "out")
    back = mropt.load_run(tmp_path / "out")
    for name in ("jobs", "tasks", "utilisation"):
        pd.testing.assert_frame_equal(getattr(run, name), getattr(back, name))
    summary = dict(back.summary)
    assert len(summary.pop("run_id")) == 32 and summary == run.summary
    assert back.workload is None and back.recorder is None and back.folder == tmp_path / "out"
    assert back.verify(run.workload).ok
    with pytest.raises(InputError, match="needs its workload"):
        back.verify()
    with pytest.raises(InputError, match="only a run simulated here"):
        back.write(tmp_path / "again")


def test_a_folder_with_files_of_two_runs_is_refused(workload_file: Path, tmp_path: Path) -> None:
    mropt.simulate(workload_file, "fifo", seed=0).write(tmp_path / "a")
    mropt.simulate(workload_file, "fifo", seed=1).write(tmp_path / "b")
    shutil.copy(tmp_path / "b" / "tasks.parquet", tmp_path / "a" / "tasks.parquet")
    with pytest.raises(InputError, match="its files are of different runs"):
        mropt.load_run(tmp_path / "a")
    r = run_cli("verify", workload_file, tmp_path / "a")
    assert r.code == 2 and len(r.err_lines) == 1 and "different runs" in r.err


def _rewrite(path: Path, column: str, row: int, value: object) -> None:
    """Change one cell of a Parquet table, keeping its run id (what a hand edit would do)."""
    table = pq.read_table(path)
    df = table.to_pandas()
    df.loc[row, column] = value
    pq.write_table(
        type(table).from_pandas(df, preserve_index=False).replace_schema_metadata(table.schema.metadata), path
    )


def test_verify_on_the_command_line(workload_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    mropt.simulate(workload_file, "fifo").write(out)
    r = run_cli("verify", workload_file, out)
    assert r.code == 0 and r.out.startswith("ok: 2 jobs and 2 attempts checked"), r.err
    verdict = json.loads(run_cli("verify", workload_file, out, "--json").out)
    assert verdict["ok"] and verdict["problems"] == [] and verdict["late"] == ["j2"]

    # an attempt that ran longer than its task takes: verification fails, exit 1, the problems printed
    tasks = pq.read_table(out / "tasks.parquet").to_pandas()
    _rewrite(out / "tasks.parquet", "end", int(tasks.index[tasks["job_id"] == "j1"][0]), 11.0)
    r = run_cli("verify", workload_file, out)
    assert r.code == 1 and r.out == "" and r.err_lines and all(x.startswith("mropt verify: ") for x in r.err_lines)

    # the summary's benefit is checked against the tables' total
    mropt.simulate(workload_file, "fifo").write(out)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    summary["benefit"] += 1.0
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    r = run_cli("verify", workload_file, out)
    assert r.code == 1 and any("summary: benefit 1.0" in x for x in r.err_lines), r.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("fairness.json", "out"), "fairness.json: field 'kind' must be 'workload' or 'admission', got 'fairness'"),
        (("two.json", "empty"), "empty: not a simulation folder (jobs.parquet is missing)"),
        (("two.json", "out", "--allow-late"), "option '--allow-late' is for admission solutions"),
    ],
)
def test_verify_bad_input_is_one_line(
    workload_file: Path, tmp_path: Path, args: tuple[str, ...], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    mropt.simulate(workload_file, "fifo").write(tmp_path / "out")
    (tmp_path / "empty").mkdir()
    mropt.save_instance(mropt.generate_fairness(users=2, seed=1), tmp_path / "fairness.json")
    r = run_cli("verify", *args)
    assert r.code == 2 and len(r.err_lines) == 1, r.err
    assert r.err_lines[0].startswith("mropt: error: ") and message in r.err_lines[0]


def test_a_folder_of_a_run_with_reduces_verifies(tmp_path: Path) -> None:
    """A reduce has no locality: null in tasks.parquet, read back as NaN, which the verifier took
    for a locality and raised KeyError (a traceback from ``mropt verify`` on every SWIM day run)."""
    two_stage = json.loads(json.dumps(TWO_JOBS))
    two_stage["cluster"]["nodes"][0]["reduce_slots"] = 1
    for job in two_stage["jobs"]:
        job["stages"][0]["tasks"][0]["replicas"] = ["n"]  # a map's locality: node
        job["stages"].append({"type": "reduce", "tasks": [{"duration": 2}]})
        job["deadline"] = 100
    path = tmp_path / "reduces.json"
    path.write_text(json.dumps(two_stage))
    mropt.simulate(path, "fifo", mode="event").write(tmp_path / "out")
    back = mropt.load_run(tmp_path / "out")
    assert back.tasks["locality"].isna().sum() == 2  # the two reduces
    assert back.verify(path).ok
    r = run_cli("verify", path, tmp_path / "out")
    assert r.code == 0 and "Traceback" not in r.err, r.err
    tasks = pq.read_table(tmp_path / "out" / "tasks.parquet").to_pandas()
    tasks.loc[tasks["locality"].notna(), "locality"] = "far"
    tasks.to_parquet(tmp_path / "out" / "tasks.parquet")
    r = run_cli("verify", path, tmp_path / "out")
    assert r.code in (1, 2) and "Traceback" not in r.err, r.err
