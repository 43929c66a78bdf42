"""``mropt simulate`` and ``mropt policies`` end to end on a hand-checkable workload.

The workload (``TINY``): one node with 2 map slots and 1 reduce slot; job j1 has two
10 s maps then one 5 s reduce (deadline 20, benefit 100); j2 one 10 s map (deadline 12,
benefit 50). FIFO in event mode serves j1 first (same submit time, lower index): j1's maps
run on both map slots over [0, 10], then j2's map over [10, 20] and j1's reduce over
[10, 15]. So j1 finishes at 15 (on time, +100) and j2 at 20 (late: -0.3 x 50, AMB eq. 1):
benefit 85, makespan 20, map utilisation 30 / (2 x 20) = 0.75, reduce 5 / 20 = 0.25.
Ideal (eq. 4): STC = work / 3 slots: j1 25/3, j2 10/3; both fit in Max_time 20: 150.
"""

from __future__ import annotations

import json

import pytest

from cli_capture import run_cli
from sim_helpers import TINY


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    return path


def test_simulate_json_gives_the_hand_computed_outcome(tiny):
    r = run_cli("simulate", tiny, "--policy", "fifo", "--mode", "event", "--json")
    assert r.code == 0, r.err
    s = json.loads(r.out)
    for key in ("policy", "jobs", "accepted", "on_time", "benefit", "makespan", "events", "wall_time"):
        assert key in s  # the contract
    assert (s["policy"], s["mode"], s["seed"], s["params"]) == ("fifo", "event", 0, {})
    assert (s["jobs"], s["accepted"], s["rejected"], s["on_time"], s["late"]) == (2, 2, 0, 1, 1)
    assert (s["dropped"], s["unfinished"], s["finished"], s["attempts"]) == (0, 0, 2, 4)
    assert s["benefit"] == pytest.approx(100 - 0.3 * 50)
    assert s["makespan"] == 20.0
    assert s["utilisation"] == {"map": pytest.approx(0.75), "reduce": pytest.approx(0.25)}
    assert s["ideal"] == pytest.approx(150.0)
    assert len(s["event_log_sha256"]) == 64


def test_same_seed_same_event_log_hash(tiny):
    runs = [json.loads(run_cli("simulate", tiny, "--policy", "fifo", "--seed", "3", "--json").out) for _ in range(2)]
    assert runs[0]["event_log_sha256"] == runs[1]["event_log_sha256"]
    assert runs[0]["seed"] == 3


def test_summary_text_is_one_screen(tiny):
    r = run_cli("simulate", tiny, "--policy", "fifo", "--mode", "event")
    assert r.code == 0, r.err
    assert len(r.out.splitlines()) <= 30
    assert "benefit (eq. 1)" in r.out and "85" in r.out


def test_policies_lists_fifo_with_its_mode():
    r = run_cli("policies")
    assert r.code == 0
    line = next(line for line in r.out.splitlines() if line.startswith("fifo "))
    assert "heartbeat" in line and "JobQueueTaskScheduler" in line


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--policy", "no-such-policy"], "unknown policy 'no-such-policy'"),
        (["--policy", "fifo", "--param", "bogus=1"], "unknown parameter 'bogus'"),
        (["--policy", "fifo", "--param", "novalue"], "--param expects name=value"),
        (["--policy", "fifo", "--seed", "-1"], "argument --seed: must be an integer in [0, 2^63 - 1], got -1"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(tiny, args, words):
    r = run_cli("simulate", tiny, *args)
    assert r.code == 2
    assert len(r.err_lines) == 1 and words in r.err, r.err
    assert r.out == ""


def test_bad_workload_and_bad_plan_exit_2_with_one_line(tmp_path, tiny):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**TINY, "jobs": [{**TINY["jobs"][0], "deadline": -1}]}))
    r = run_cli("simulate", bad, "--policy", "fifo")
    assert r.code == 2 and len(r.err_lines) == 1 and "deadline" in r.err, r.err
    # a plan for another instance (its recorded hash) and a plan naming unknown jobs
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"method": "x", "status": "feasible", "accepted": ["j1"], "instance_hash": "0" * 64}))
    r = run_cli("simulate", tiny, "--policy", "fifo", "--plan", plan)
    assert r.code == 2 and len(r.err_lines) == 1 and "another instance" in r.err, r.err
    plan.write_text(json.dumps({"method": "x", "status": "feasible", "accepted": ["j9"]}))
    r = run_cli("simulate", tiny, "--policy", "fifo", "--plan", plan)
    assert r.code == 2 and len(r.err_lines) == 1 and "'j9'" in r.err, r.err
