"""Hostile simulation folders: ``mropt simulate --out DIR`` killed at every step
of its write, and folders mixing the files of two runs or holding tables under each other's names.

Before: a kill after ``jobs.parquet`` left DIR with the new jobs and the old tasks and summary,
which ``mropt report DIR`` reported as one run; tables under each other's names gave a
``KeyError: 'end'`` traceback. Now DIR is the old run whole or the new one whole after a kill
at any step, and ``report`` refuses, in one line, any folder whose files are not one run's.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mropt.sim.outputs import FILES, HOLD_ENV

from cli_capture import assert_input_error, run_cli
from sim_helpers import TINY

ROOT = Path(__file__).resolve().parents[2]
#: where the writer can be killed: after each file, after the old folder moved aside, after the swap
STEPS = (*FILES, "moved aside", "swapped")


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (relative name -> sha256): what "whole" is compared on."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def seed_of(folder: Path) -> int:
    return json.loads((folder / "summary.json").read_text())["seed"]


def start_simulate(workload: Path, out: Path, step: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), HOLD_ENV: step}
    return subprocess.Popen(
        [sys.executable, "-m", "mropt.cli.main", "simulate", str(workload), "--policy", "fifo"]
        + ["--seed", "1", "--out", str(out)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    return path


@pytest.mark.slow
def test_a_kill_at_any_step_leaves_the_old_run_or_the_new_one_whole(tmp_path: Path, tiny: Path) -> None:
    old = tmp_path / "old"
    assert run_cli("simulate", tiny, "--policy", "fifo", "--seed", "0", "--out", old).code == 0
    (old / "report").mkdir()  # as `mropt report` leaves it: the old run's report goes with it
    (old / "report" / "report.md").write_text("the old run's report\n")
    before = snapshot(old)
    outs = {step: tmp_path / f"p{k}" / "D" for k, step in enumerate(STEPS)}
    fresh = tmp_path / "fresh" / "D"  # a folder that did not exist
    for out in outs.values():
        shutil.copytree(old, out)
    procs = {step: start_simulate(tiny, out, step) for step, out in outs.items()}
    procs["fresh"] = start_simulate(tiny, fresh, "summary.json")
    for proc in procs.values():  # all at once: each surely at its step, then killed there
        line = proc.stderr.readline()
        assert "holding" in line, line + proc.stderr.read()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stderr.close()
    for step, out in outs.items():
        beside = sorted(p.name for p in out.parent.iterdir())
        if step in FILES:  # killed while writing the new folder: the old one untouched
            assert snapshot(out) == before, step
            assert len(beside) == 2, beside  # D and the dead writer's new folder
        elif step == "moved aside":  # between the two renames: D missing, both folders beside it
            assert beside[0].startswith(".D.new-") and beside[1].startswith(".D.old-") and len(beside) == 2
        else:  # swapped: the new run in place, the old folder not yet deleted
            assert seed_of(out) == 1 and not (out / "report").exists()
        # `mropt report` finishes an interrupted swap, removes what the dead writer left, agrees
        r = run_cli("report", out, "-o", out.parent / "r")
        assert r.code == 0, (step, r.err)
        assert sorted(p.name for p in out.parent.iterdir()) == ["D", "r"], step
        want = 0 if step in FILES else 1
        assert seed_of(out) == want, step
        if want == 0:
            assert snapshot(out) == before
        else:
            assert sorted(p.name for p in out.iterdir()) == sorted(FILES)
    left = [p.name for p in fresh.parent.iterdir()]  # never swapped in: still no D, the dead writer's folder
    assert len(left) == 1 and left[0].startswith(".D.new-"), left
    # the next run into the same folder removes the dead writer's leftover
    assert run_cli("simulate", tiny, "--policy", "fifo", "--out", fresh).code == 0
    assert [p.name for p in fresh.parent.iterdir()] == ["D"] and seed_of(fresh) == 0


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two runs of different outcomes (another policy, another seed)."""
    root = tmp_path_factory.mktemp("two-runs")
    workload = root / "tiny.json"
    workload.write_text(json.dumps(TINY))
    runs = {}
    for name, policy, seed in (("a", "fifo", 0), ("b", "fair", 1)):
        runs[name] = root / name
        assert run_cli("simulate", workload, "--policy", policy, "--seed", seed, "--out", runs[name]).code == 0
    return runs


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sources=st.lists(st.sampled_from(["a", "b", None]), min_size=len(FILES), max_size=len(FILES)),
    names=st.permutations(FILES[:3]),
)
def test_report_refuses_every_folder_not_of_one_run(
    two_runs: dict[str, Path], sources: list[str | None], names: list[str]
) -> None:
    """Each file of the folder from run a, run b or missing, the tables under any of the three names:
    ``mropt report`` reads it only when every file is there, of one run, under its own name."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "mixed"
        folder.mkdir()
        for name, where, source in zip(FILES, [*names, "summary.json"], sources):
            if source is not None:
                shutil.copyfile(two_runs[source] / name, folder / where)
        one_run = None not in sources and len(set(sources)) == 1 and list(names) == list(FILES[:3])
        r = run_cli("report", folder, "-o", Path(tmp) / "report")
        if one_run:
            assert r.code == 0, r.err
        else:
            assert_input_error(r)
            assert not (Path(tmp) / "report").exists()


def test_tables_under_each_others_names_of_an_old_folder_are_one_line(tmp_path: Path, tiny: Path) -> None:
    """A folder written before run ids (no metadata): the report's columns are checked (a KeyError before)."""
    out = tmp_path / "o"
    assert run_cli("simulate", tiny, "--policy", "fifo", "--out", out).code == 0
    for name in FILES[:3]:  # as the code before wrote them: no key-value metadata
        table = pq.read_table(out / name)
        pq.write_table(table.replace_schema_metadata(None), out / name)
    summary = json.loads((out / "summary.json").read_text())
    summary.pop("run_id", None)
    (out / "summary.json").write_text(json.dumps(summary))
    assert run_cli("report", out, "-o", tmp_path / "r1").code == 0  # whole: still read
    os.replace(out / "jobs.parquet", tmp_path / "jobs")
    os.replace(out / "tasks.parquet", out / "jobs.parquet")
    os.replace(tmp_path / "jobs", out / "tasks.parquet")
    assert_input_error(run_cli("report", out, "-o", tmp_path / "r2"), "jobs.parquet: column", "is missing")


def test_a_report_entry_that_is_a_symlink_is_refused(tmp_path: Path, tiny: Path) -> None:
    out = tmp_path / "o"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert run_cli("simulate", tiny, "--policy", "fifo", "--out", out).code == 0
    (out / "report").symlink_to(elsewhere)
    assert_input_error(run_cli("report", out), "report: is a symlink")
    assert not list(elsewhere.iterdir())  # nothing written through the link
    assert run_cli("report", out, "-o", tmp_path / "r").code == 0  # elsewhere: fine
    # a rerun replaces the folder whole: the link goes with the old run, its target stays
    assert run_cli("simulate", tiny, "--policy", "fifo", "--seed", "1", "--out", out).code == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES) and elsewhere.is_dir()
