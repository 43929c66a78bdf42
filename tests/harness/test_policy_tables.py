"""Policy studies as first-class studies: speculation in policy entries, the
policy tables of ``mropt gap`` and ``mropt report`` (benefit, on-time, JCT, slowdown, utilisation,
locality with intervals over seeds; no gap, no "proven optimal %"), workloads listed as files, and
a killed study that resumes.

The tables are checked against numbers computed here from the runs' own outputs (the job and
attempt tables of ``mropt.simulate``), and, on a two-job workload, against numbers worked out
by hand.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

import mropt
from mropt.harness.experiment import load_experiment
from mropt.harness.policy_report import policy_table, runs_table
from mropt.harness.report import study_text
from mropt.harness.runner import results_frame, run_study
from mropt.model.errors import InputError

from .conftest import ROOT
from .conftest import mropt as mropt_cli


def two_jobs(name: str, deadlines: bool) -> dict:
    """One node, 2 map and 1 reduce slots. j1: two 10 s maps (input on n0), then a 5 s reduce;
    j2: one 10 s map, no input replicas. Both submitted at 0; j2 has no deadline, nor j1 unless ``deadlines``."""
    j1 = {
        "id": "j1",
        "benefit": 100,
        "stages": [
            {"type": "map", "tasks": [{"duration": 10, "count": 2, "replicas": ["n0"]}]},
            {"type": "reduce", "tasks": [{"duration": 5}]},
        ],
    }
    if deadlines:
        j1["deadline"] = 40
    return {
        "kind": "workload",
        "schema_version": 1,
        "name": name,
        "cluster": {"nodes": [{"id": "n0", "map_slots": 2, "reduce_slots": 1}]},
        "jobs": [j1, {"id": "j2", "benefit": 50, "stages": [{"type": "map", "tasks": [{"duration": 10}]}]}],
    }


HAND = """
name = "hand"
method_seeds = [0, 1]
policies = [{name = "fifo", mode = "event"}]
[[instances]]
files = ["mixed.json", "nodeadline.json"]
"""


def test_gap_and_report_print_the_policy_tables_worked_out_by_hand(tmp_path, write_experiment):
    for name, deadlines in (("mixed", True), ("nodeadline", False)):
        (tmp_path / f"{name}.json").write_text(json.dumps(two_jobs(name, deadlines)))
    out = tmp_path / "res"
    run_study(load_experiment(write_experiment(HAND)), out, progress=False)
    printed = study_text(results_frame(out), resamples=200)  # what `mropt gap` prints
    assert printed.startswith("Policies compared") and "JCT mean s" in printed
    assert "proven optimal" not in printed and "gap %" not in printed
    assert "| nodeadline | fifo | 2 | 0 |" in policy_table(results_frame(out)).markdown()  # on-time: '-'
    runs = runs_table(results_frame(out)).frame.set_index(["group", "seed"])
    # By hand (event mode, FIFO): j1's maps run on [0, 10], its reduce on [10, 15]; j2's map on
    # [10, 20]. JCTs 15 and 20; ideal spans 10 + 5 and 10; 30 of 2 x 20 map slot-seconds and 5 of
    # 1 x 20 reduce slot-seconds busy; j1's two maps node-local, j2's map has no locality.
    for group in ("mixed", "nodeadline"):
        for seed in (0, 1):
            row = runs.loc[(group, seed)]
            assert row["JCT mean s"] == pytest.approx(17.5)
            assert row["JCT p95 s"] == pytest.approx(15 + 0.95 * 5)
            assert row["slowdown"] == pytest.approx((15 / 15 + 20 / 10) / 2)
            assert row["utilisation map %"] == pytest.approx(75.0)
            assert row["utilisation reduce %"] == pytest.approx(25.0)
            assert (row["node-local %"], row["rack-local %"], row["acceptance %"]) == (100.0, 0.0, 100.0)
    # on time: j1 of the one job with a deadline; without any deadline the share is missing, not 0
    assert list(runs.loc["mixed", "on-time %"]) == [100.0, 100.0]
    assert runs.loc["nodeadline", "on-time %"].isna().all()
    table = policy_table(results_frame(out), resamples=200).frame.set_index("group")
    assert list(table["runs"]) == [2, 2] and list(table["policy"]) == ["fifo", "fifo"]
    assert table.loc["mixed", "on-time %"] == 100.0 and np.isnan(table.loc["nodeadline", "on-time %"])
    assert table.loc["mixed", "JCT mean s CI low"] == table.loc["mixed", "JCT mean s CI high"] == 17.5


LATE = """
name = "late"
imports = ["tests.harness.fake_policies"]   # test-slow-fifo: fifo, 0.15 s slower, to be killed midway
method_seeds = [0, 1]
time_limit = 60
policies = [
  {name = "test-slow-fifo", label = "none", params = {delay = 0.15}, straggler_draws = "task"},
  {name = "test-slow-fifo", label = "late", params = {delay = 0.15}, speculation = "late", speculation_params = {lag = 0.0, slow_task_threshold = 0.5}},
]
[[instances]]
generator = "workload"
preset = "late"
seeds = [1, 2]
params = {jobs = 4, nodes = 8, replicas = 3}
"""


def _by_hand(store, row: dict) -> dict:
    """The row's run simulated again through ``mropt.simulate`` (test-slow-fifo is fifo), its measures
    computed here from its job and attempt tables and its workload file."""
    path = store / "instances" / f"{row['instance_hash']}.json"
    workload = json.loads(path.read_text())
    options = {"straggler_draws": "task"} if row["method"] == "none" else {}
    if row["method"] == "late":
        options = {"speculation": "late", "speculation_params": {"lag": 0.0, "slow_task_threshold": 0.5}}
    run = mropt.simulate(path, "fifo", seed=int(row["seed"]), **options)
    jobs, tasks = run.jobs, run.tasks
    done = jobs[jobs["finish"].notna()]
    jct = (done["finish"] - done["submit_time"]).to_numpy(float)
    speed = max(n.get("speed", 1.0) for n in workload["cluster"]["nodes"])
    span = {j["id"]: sum(max(g["duration"] for g in s["tasks"]) for s in j["stages"]) / speed for j in workload["jobs"]}
    slots = {t: sum(n[f"{t}_slots"] for n in workload["cluster"]["nodes"]) for t in ("map", "reduce")}
    makespan = tasks["end"].max()
    busy = {t: (tasks["end"] - tasks["start"])[tasks["stage_type"] == t].sum() for t in slots}
    with_deadline = jobs["deadline"].notna()
    levels = list(tasks["locality"].dropna())
    return {
        "summary": run.summary,
        "benefit": jobs["benefit"].sum(),
        "on-time %": 100.0 * (jobs["on_time"] == True).sum() / with_deadline.sum(),  # noqa: E712
        "JCT mean s": jct.mean(),
        "JCT p95 s": np.percentile(jct, 95),
        "slowdown": np.mean(
            [(f - s) / span[j] for j, f, s in zip(done["job_id"], done["finish"], done["submit_time"])]
        ),
        "utilisation map %": 100.0 * busy["map"] / (slots["map"] * makespan),
        "utilisation reduce %": 100.0 * busy["reduce"] / (slots["reduce"] * makespan),
        "acceptance %": 100.0 * jobs["accepted"].mean(),
        "node-local %": 100.0 * levels.count("node") / len(levels),
        "rack-local %": 100.0 * levels.count("rack") / len(levels),
    }


@pytest.mark.slow
def test_a_speculation_study_killed_midway_resumes_and_its_tables_match_the_runs(tmp_path, write_experiment):
    exp = write_experiment(LATE)
    out = tmp_path / "res"
    argv = [sys.executable, "-m", "mropt.cli.main", "gap", str(exp), "--out", str(out), "--no-progress"]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list((out / "runs").glob("*.parquet"))) < 2:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    stored = len(list((out / "runs").glob("*.parquet")))
    assert 2 <= stored < 8, "the study should be killed midway"
    again = mropt_cli("gap", str(exp), "--out", str(out), "--no-progress")
    assert again.returncode == 0, again.stderr
    assert f"8 runs ({stored} already stored, {8 - stored} run now, 0 failed)" in again.stdout
    assert "Policies compared" in again.stdout and "proven optimal" not in again.stdout
    df = results_frame(out)
    assert len(df) == 8 and df["run_key"].is_unique and df["gap"].isna().all()
    runs = runs_table(df).frame
    hand_rows = []
    for row in df.to_dict("records"):
        hand = _by_hand(out, row)
        metrics = json.loads(row["metrics"])
        assert metrics["event_log_sha256"] == hand["summary"]["event_log_sha256"]
        assert ("speculation" in metrics) == (row["method"] == "late")
        if row["method"] == "late":
            assert metrics["speculation_params"].items() >= {"lag": 0.0, "slow_task_threshold": 0.5}.items()
        got = runs[(runs["instance"] == row["instance_id"]) & (runs["policy"] == row["method"])]
        got = got[got["seed"] == row["seed"]].iloc[0]
        for column, value in hand.items():
            if column != "summary":
                assert got[column] == pytest.approx(value, rel=1e-9), column
        hand_rows.append({"policy": row["method"], **{k: v for k, v in hand.items() if k != "summary"}})
    table = policy_table(df, resamples=200).frame.set_index("policy")
    for policy, hand in pd.DataFrame(hand_rows).groupby("policy"):
        assert table.loc[policy, "runs"] == 4  # 2 workloads x 2 seeds
        for column in hand.columns.drop("policy"):
            mean, lo, hi = (table.loc[policy, c] for c in (column, f"{column} CI low", f"{column} CI high"))
            assert mean == pytest.approx(hand[column].mean(), rel=1e-9), column
            assert hand[column].min() - 1e-9 <= lo <= mean <= hi <= hand[column].max() + 1e-9, column


def test_policies_and_methods_in_one_study_keep_simulations_out_of_the_gaps(write_experiment, tmp_path):
    exp = write_experiment(
        'methods = ["edf-greedy"]\npolicies = ["fifo"]\n'
        '[[instances]]\ngenerator = "admission"\nseeds = [1, 2]\nparams = {jobs = 6}\n'
    )
    out = tmp_path / "res"
    run_study(load_experiment(exp), out, progress=False)
    df = results_frame(out)
    sims, plans = df[df["method"] == "fifo"], df[df["method"] == "edf-greedy"]
    assert len(sims) == len(plans) == 2
    assert sims["gap"].isna().all() and sims["reference"].isna().all()  # a simulation is no plan of the instance
    assert (plans["reference"] == plans["objective"]).all() and (plans["gap"] == 0).all()
    text = study_text(df)
    gaps, policies = text.split("Policies compared")
    assert "edf-greedy" in gaps and "fifo" not in gaps and "fifo" in policies


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ('{name = "fifo", speculation = "latte"}', "key 'policies[0].speculation': unknown speculation rule 'latte'"),
        (
            '{name = "fifo", speculation = "late", speculation_params = {lagg = 1}}',
            "key 'policies[0].speculation_params.lagg' is not a parameter of rule 'late' (it takes: ",
        ),
        (
            '{name = "fifo", speculation = "late", speculation_params = {lag = -1}}',
            "key 'policies[0].speculation_params.lag': speculation rule 'late': parameter 'lag' must be a number >= 0",
        ),
        (
            '{name = "fifo", speculation_params = {lag = 1}}',
            "key 'policies[0].speculation_params.lag' is not a parameter of no speculation rule (give 'speculation')",
        ),
        ('{name = "fifo", speculation = 3}', "key 'policies[0].speculation' must be a string, got 3"),
        ('{name = "fifo", straggler_draws = "each"}', "key 'policies[0].straggler_draws' must be one of stream, task"),
    ],
)
def test_bad_speculation_entries_are_one_line_errors(write_experiment, tmp_path, entry, words):
    _assert_one_line_error(write_experiment, tmp_path, f"policies = [{entry}]", '["w.json"]', words)


def _assert_one_line_error(write_experiment, tmp_path, policies: str, files: str, words: str) -> None:
    """An experiment of ``policies`` over ``files`` (beside w.json, a two-job workload) is refused in one line."""
    (tmp_path / "w.json").write_text(json.dumps(two_jobs("w", True)))
    path = write_experiment(f"{policies}\n[[instances]]\nfiles = {files}\n")
    with pytest.raises(InputError) as err:
        load_experiment(path)
    assert words in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("files", "words"),
    [
        ("[]", "key 'instances[0].files' must be a non-empty list of instance files, got []"),
        ('["w.json", "nope.json"]', "key 'instances[0].files[1]': no such file"),
        ('["w.json", 3]', "key 'instances[0].files[1]' must be a file name, got 3"),
    ],
)
def test_bad_file_lists_are_one_line_errors(write_experiment, tmp_path, files, words):
    _assert_one_line_error(write_experiment, tmp_path, 'policies = ["fifo"]', files, words)


def test_the_options_are_in_the_run_key_and_old_policy_keys_are_unchanged(write_experiment, tmp_path):
    (tmp_path / "w.json").write_text(json.dumps(two_jobs("w", True)))
    path = write_experiment(
        'policies = ["fifo", {name = "fifo", label = "late", speculation = "late"}]\n[[instances]]\nfiles = ["w.json"]\n'
    )
    plain, late = (json.loads(r.key) for r in load_experiment(path).runs())
    assert "speculation" not in plain and set(plain) >= {"policy", "mode"}  # keys of stores written before
    assert late["speculation"] == "late" and "speculation_params" not in late
