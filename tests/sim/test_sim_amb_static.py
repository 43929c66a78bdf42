"""Regressions found by benchmarks/bench_sim_amb.py."""

from __future__ import annotations

import dataclasses

from mropt.instances.workload_convert import to_admission
from mropt.instances.workload_gen import generate_workload
from mropt.registry import solve
from mropt.sim.run import simulate
from mropt.sim.verify import verify_simulation


def test_amb_slow_phase_check_at_planned_cotm_terminates() -> None:
    # seed 1: job 8's last map attempts end at 125.10000000000001, its planned COTm is 125.1; the
    # check at 125.1 saw no miss and re-armed its timer at "now", forever
    w = generate_workload("amb-static", 1)
    run = simulate(w, "amb", {}, seed=0)
    assert run.summary["accepted"] == run.summary["on_time"] > 0
    assert verify_simulation(w, run.recorder.jobs_columns(), run.recorder.tasks_columns()).ok


def test_seq_runs_a_solution_given_to_simulate() -> None:
    w = generate_workload("amb-static", 2, jobs=6)
    plan = solve(to_admission(w), "amb")
    plan = dataclasses.replace(plan, instance_hash=None)
    run = simulate(w, "seq", {}, seed=0, plan=plan)
    cols = run.recorder.jobs_columns()
    accepted = {j for j, a in zip(cols["job_id"], cols["accepted"], strict=True) if a}
    assert accepted == set(plan.accepted)
