"""Speculation rules on seeded runs and the contract around them.

* progress as Hadoop reports it (maps linear; a reduce's copy third bounded by the maps done);
* every rule under every slot policy: each task succeeds exactly once (the independent verify),
  backups are the speculative rows, the wasted work is what the attempt table gives;
* the clairvoyant reference never does worse than no speculation on the same stragglers;
* the percentile rule on the hand case of ``test_sim_speculation``;
* ``mropt simulate --speculation`` and ``mropt generate workload --preset late``.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pyarrow.parquet as pq
import pytest

from mropt.instances.workload_gen import generate_workload
from mropt.sim.run import simulate
from mropt.sim.speculation import progress, rate, rules
from mropt.sim.state import MAP, REDUCE
from mropt.sim.verify import verify_simulation, wasted_work

from cli_capture import run_cli
from sim_helpers import workload

#: every registered rule that starts backups (all but ``none``)
RULES = tuple(name for name, info in rules().items() if info.cls is not None)


def node(nid: str, speed: float = 1.0) -> dict:
    return {"id": nid, "speed": speed, "map_slots": 1, "reduce_slots": 0}


def maps_job(jid: str, durations: list[float]) -> dict:
    return {"id": jid, "stages": [{"type": "map", "tasks": [{"duration": d} for d in durations]}]}


def _sim(maps_end: float | None, finished: int, n: int = 4) -> SimpleNamespace:
    maps = SimpleNamespace(type=MAP, end_time=maps_end, finished=finished, n=n)
    return SimpleNamespace(jobs=[SimpleNamespace(stages=[maps, SimpleNamespace(type=REDUCE)])])


def test_map_progress_is_elapsed_over_running_time():
    a = SimpleNamespace(job=0, stage=0, type=MAP, start=10.0, work=40.0)
    sim = _sim(None, 0)
    assert progress(sim, a, 10.0) == 0.0
    assert progress(sim, a, 30.0) == 0.5
    assert progress(sim, a, 90.0) == 1.0
    assert rate(sim, a, 30.0) == pytest.approx(0.5 / 20.0)


def test_reduce_progress_in_thirds():
    """A 60 s reduce launched at 0: its copy third (20 s) cannot end before the maps do."""
    a = SimpleNamespace(job=0, stage=1, type=REDUCE, start=0.0, work=60.0)
    # maps still running: the copy third grows with time (10 s of 20) up to the fraction of maps done
    assert progress(_sim(None, 3), a, 10.0) == pytest.approx(0.5 / 3)  # 3 of 4 done: not capped
    assert progress(_sim(None, 1), a, 10.0) == pytest.approx(0.25 / 3)  # 1 of 4 done: capped
    assert progress(_sim(None, 3), a, 40.0) == pytest.approx(0.75 / 3)  # copy time over, maps not
    # maps ended at 50: the copy ends then, sort and reduce take the last 40 s
    assert progress(_sim(50.0, 4), a, 50.0) == pytest.approx(1 / 3)
    assert progress(_sim(50.0, 4), a, 70.0) == pytest.approx(1 / 3 + 20 / 60)
    assert progress(_sim(50.0, 4), a, 90.0) == 1.0
    # maps ended before the copy third did: linear throughout
    assert progress(_sim(5.0, 4), a, 30.0) == pytest.approx(0.5)


def _late_workload(seed: int):
    return generate_workload("late", seed, jobs=6, mean_splits=16, nodes=10, straggler_rate=0.15)


@pytest.mark.parametrize("policy", ["fifo", "fair", "capacity", "drf"])
@pytest.mark.parametrize("rule", RULES)
def test_every_rule_every_policy_runs_each_task_once(policy, rule):
    w = _late_workload(1)
    run = simulate(w, policy, seed=1, speculation=rule)
    rec = run.recorder
    tasks = rec.tasks_columns()
    verdict = verify_simulation(w, rec.jobs_columns(), tasks)
    assert verdict.ok, verdict.problems
    s = run.summary
    assert s["finished"] == 6 and s["speculation"] == rule
    assert s["backups"] == int(np.sum(tasks["speculative"]))
    assert s["wasted_work"] == pytest.approx(wasted_work(tasks))
    ok = [o == "succeeded" for o in tasks["outcome"]]
    keys = list(zip(tasks["job_id"], tasks["stage"].tolist(), tasks["task"].tolist(), strict=True))
    wins: dict[tuple, int] = {}
    for key, good in zip(keys, ok, strict=True):
        wins[key] = wins.get(key, 0) + good
    assert set(wins.values()) == {1} and len(wins) == w.n_tasks


def _mean_response(run) -> float:
    jobs = run.recorder.jobs_columns()
    return float(np.mean(np.asarray(jobs["finish"]) - np.asarray(jobs["submit_time"])))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("policy", ["fifo", "fair"])
def test_clairvoyant_never_worse_than_none(seed, policy):
    """Same stragglers for both (per-task draws): the reference's backups only help here."""
    w = _late_workload(seed)
    none = simulate(w, policy, seed=seed, straggler_draws="task")
    best = simulate(w, policy, seed=seed, speculation="clairvoyant")
    assert none.summary["straggler_draws"] == "task" == best.summary["straggler_draws"]
    assert _mean_response(best) <= _mean_response(none)


def test_percentile_rule_on_the_straggler_case():
    """The hand case of test_sim_speculation: at 100 the job's rates are 1/100 (three finished)
    and 1/400 (task 0); their 25th percentile is 0.0025 + 0.75 x 0.0075 = 0.008125, task 0 is
    below it; n1's progress (1) is not below the nodes' 25th percentile (0.8125); the cap
    0.1 x 4 slots lets one backup run. Task 0's backup starts on n1 at 100."""
    w = workload([node("n0", 0.25), node("n1"), node("n2"), node("n3")], [maps_job("j", [100.0] * 4)])
    run = simulate(w, "fifo", mode="event", speculation="late-percentile")
    t = run.recorder.tasks_columns()
    rows = [(n, float(s)) for n, s, sp in zip(t["node"], t["start"], t["speculative"], strict=True) if sp]
    assert rows == [("n1", 100.0)]
    assert run.summary["makespan"] == 200.0


def test_cli_speculation_json_and_outputs(tmp_path):
    w = workload([node("n0", 0.25), node("n1"), node("n2"), node("n3")], [maps_job("j", [100.0] * 4)])
    path = tmp_path / "w.json"
    path.write_text(json.dumps(w.to_dict()))
    out = tmp_path / "out"
    r = run_cli(
        "simulate", path, "--policy", "fair", "--mode", "event", "--speculation", "late", "--json", "--out", out
    )
    assert r.code == 0, r.err
    s = json.loads(r.out)
    assert (s["speculation"], s["backups"], s["wasted_work"], s["makespan"]) == ("late", 1, 200.0, 200.0)
    saved = json.loads((out / "summary.json").read_text())
    assert (saved["backups"], saved["wasted_work"]) == (1, 200.0)
    tasks = pq.read_table(out / "tasks.parquet").to_pydict()
    spec = [(n, o) for n, o, sp in zip(tasks["node"], tasks["outcome"], tasks["speculative"], strict=True) if sp]
    assert spec == [("n1", "succeeded")]
    plain = json.loads(run_cli("simulate", path, "--policy", "fair", "--json").out)
    assert "backups" not in plain and "wasted_work" not in plain
    text = run_cli("simulate", path, "--policy", "fifo", "--mode", "event", "--speculation", "late")
    assert "backups" in text.out and "wasted work" in text.out


def test_cli_speculation_bad_input(tmp_path):
    w = workload([node("n0")], [maps_job("j", [10.0])])
    path = tmp_path / "w.json"
    path.write_text(json.dumps(w.to_dict()))
    r = run_cli("simulate", path, "--policy", "fifo", "--speculation", "late", "--speculation-param", "nope=1")
    assert r.code == 2 and "unknown parameter 'nope'" in r.err
    r = run_cli("simulate", path, "--policy", "fifo", "--speculation", "late", "--speculation-param", "lag=-1")
    assert r.code == 2 and "'lag'" in r.err
    r = run_cli("simulate", path, "--policy", "fifo", "--speculation", "fast")
    assert r.code == 2


def test_generate_late_preset(tmp_path):
    out = tmp_path / "late.json"
    r = run_cli("generate", "workload", "--preset", "late", "--seed", "3", "-o", out)
    assert r.code == 0, r.err
    data = json.loads(out.read_text())
    speeds = [n.get("speed", 1.0) for n in data["cluster"]["nodes"]]
    assert len(speeds) == 40 and speeds.count(0.5) == 10 and speeds.count(1.0) == 30
    assert data["timing"] == {"straggler_rate": 0.05, "reduce_slowstart": 0.05}
    assert len(data["jobs"]) == 20 and max(j["submit_time"] for j in data["jobs"]) < 600
    params = data["generator"]["params"]
    assert (params["slow_fraction"], params["slow_speed"], params["straggler_rate"]) == (0.25, 0.5, 0.05)
    again = tmp_path / "again.json"
    run_cli("generate", "workload", "--preset", "late", "--seed", "3", "-o", again)
    assert again.read_bytes() == out.read_bytes()
    other = tmp_path / "other.json"
    r = run_cli(
        "generate", "workload", "--preset", "late", "--slow-fraction", "0.5", "--straggler-rate", "0.2", "-o", other
    )
    data = json.loads(other.read_text())
    assert [n.get("speed", 1.0) for n in data["cluster"]["nodes"]].count(0.5) == 20
    assert data["timing"]["straggler_rate"] == 0.2
    r = run_cli("generate", "workload", "--preset", "late", "--slow-fraction", "1.5")
    assert r.code == 2 and "slow_fraction" in r.err
    # the other presets do not record the late parameters
    amb = json.loads(run_cli("generate", "workload", "--preset", "amb-static").out)
    assert "slow_fraction" not in amb["generator"]["params"]
