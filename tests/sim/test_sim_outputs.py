"""``mropt simulate --out DIR``: the Parquet tables, summary.json, atomic writes, and ``mropt report DIR``."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.outputs import FILES, is_simulation_folder
from mropt.sim.run import simulate

from cli_capture import run_cli
from sim_helpers import TINY

JOB_COLUMNS = {"job_id", "submit_time", "accepted", "map_end", "finish", "deadline", "on_time", "benefit"}


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    return path


def test_out_dir_holds_the_tables_and_no_temporary_file(tmp_path, tiny):
    out = tmp_path / "made" / "here"  # created when missing
    r = run_cli("simulate", tiny, "--policy", "fifo", "--mode", "event", "--out", out, "--json")
    assert r.code == 0, r.err
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)  # nothing else: no .tmp left
    jobs = pq.read_table(out / "jobs.parquet").to_pandas().set_index("job_id")
    assert JOB_COLUMNS - {"job_id"} <= set(jobs.columns)
    assert list(jobs["map_end"]) == [10.0, 20.0]
    assert list(jobs["finish"]) == [15.0, 20.0]
    assert list(jobs["on_time"]) == [True, False]
    assert list(jobs["benefit"]) == pytest.approx([100.0, -15.0])
    tasks = pq.read_table(out / "tasks.parquet").to_pandas()
    assert len(tasks) == 4 and set(tasks["outcome"]) == {"succeeded"}
    assert sorted(zip(tasks["job_id"], tasks["start"], tasks["end"])) == [
        ("j1", 0.0, 10.0),
        ("j1", 0.0, 10.0),
        ("j1", 10.0, 15.0),
        ("j2", 10.0, 20.0),
    ]
    util = pq.read_table(out / "utilisation.parquet").to_pandas()
    assert {"time", "slot_type", "pool", "busy", "capacity"} <= set(util.columns)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kind"] == "simulation" and summary["benefit"] == json.loads(r.out)["benefit"]
    assert is_simulation_folder(out)


def test_outputs_are_replaced_in_place_on_a_rerun(tmp_path, tiny):
    out = tmp_path / "o"
    for seed in (0, 1):
        assert run_cli("simulate", tiny, "--policy", "fifo", "--seed", seed, "--out", out).code == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)
    assert json.loads((out / "summary.json").read_text())["seed"] == 1


def test_out_on_a_file_is_one_line_exit_2(tmp_path, tiny):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = run_cli("simulate", tiny, "--policy", "fifo", "--out", blocker)
    assert r.code == 2 and len(r.err_lines) == 1, r.err


def test_report_on_a_simulation_folder(tmp_path, tiny):
    out = tmp_path / "o"
    assert run_cli("simulate", tiny, "--policy", "fifo", "--out", out).code == 0
    r = run_cli("report", out)
    assert r.code == 0, r.err
    names = {p.name for p in (out / "report").iterdir()}
    for stem in ("utilisation", "completion_cdf", "gantt"):
        assert {f"{stem}.png", f"{stem}.svg"} <= names
    assert {"report.md", "report.html"} <= names
    assert not [n for n in names if n.endswith(".tmp")]
    assert "gantt.png" in (out / "report" / "report.md").read_text()


def test_gantt_lanes_pack_attempts_on_the_lowest_free_slot():
    import pandas as pd

    from mropt.harness.sim_report import slot_lanes

    tasks = pd.DataFrame(
        {"node": ["a"] * 3, "stage_type": ["map"] * 3, "start": [0.0, 0.0, 10.0], "end": [10.0, 5.0, 12.0]}
    )
    # in start order (ties: earlier end first): the 5 s attempt takes slot 0, the 10 s one slot 1;
    # at 10 both are free again and the third takes the lowest, slot 0
    assert list(slot_lanes(tasks)) == ["a/map/1", "a/map/0", "a/map/0"]


def test_simulate_api_refuses_bad_input_in_one_line():
    from mropt.model.errors import InputError

    w = WorkloadInstance.from_dict(TINY)
    with pytest.raises(InputError, match="mode must be one of"):
        simulate(w, "fifo", mode="poll")
    with pytest.raises(InputError, match="seed must be"):
        simulate(w, "fifo", seed=-2)
    with pytest.raises(InputError, match="workload or an admission instance"):
        simulate(object(), "fifo")


@pytest.mark.parametrize("option", ["--out", "-o"])
def test_an_empty_out_name_is_one_line_exit_2(tmp_path, tiny, option, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run_cli("simulate", tiny, "--policy", "fifo", option, "")  # before: no --out, exit 0
    assert r.code == 2 and r.err_lines == ["mropt: error: option '--out' must name a folder, got ''"], r.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.json"]


def test_a_folder_not_of_an_earlier_run_is_refused_unless_force(tmp_path, tiny):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    r = run_cli("simulate", tiny, "--policy", "fifo", "-o", out)
    assert r.code == 2 and len(r.err_lines) == 1 and "'notes.txt'" in r.err and "--force" in r.err, r.err
    assert [p.name for p in out.iterdir()] == ["notes.txt"]  # before: the run written beside it
    assert run_cli("simulate", tiny, "--policy", "fifo", "-o", out, "--force").code == 0
    assert sorted(p.name for p in out.iterdir()) == sorted([*FILES, "notes.txt"])
    assert (out / "notes.txt").read_text() == "keep me"
    assert run_cli("report", out, "-o", tmp_path / "r").code == 0
    r = run_cli("simulate", tiny, "--policy", "fifo", "--force")
    assert r.code == 2 and r.err_lines == ["mropt: error: option '--force' needs --out"]


def test_every_file_carries_the_run_id_and_a_link_to_the_folder_stays_a_link(tmp_path, tiny):
    real = tmp_path / "real"
    link = tmp_path / "link"
    link.symlink_to(real)  # dangling: the folder is made where it leads
    for seed in (0, 1):
        assert run_cli("simulate", tiny, "--policy", "fifo", "--seed", seed, "--out", link).code == 0
    assert link.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == ["link", "real", "tiny.json"]
    run_id = json.loads((real / "summary.json").read_text())["run_id"]
    for name in FILES[:3]:
        meta = pq.read_schema(real / name).metadata
        assert meta[b"mropt.run_id"].decode() == run_id and meta[b"mropt.table"] == name.split(".")[0].encode()
