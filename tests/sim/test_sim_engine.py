"""The engine on hand-checkable scenarios, a queueing-theory answer, and determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mropt.model.errors import InputError
from mropt.sim.engine import Simulation, heartbeat_interval
from mropt.sim.policy import make_policy

from sim_helpers import attempts, mr_job, run, workload

ONE_SLOT = {"id": "a", "map_slots": 1, "reduce_slots": 1}


def test_one_node_two_tasks_run_back_to_back() -> None:
    w = workload([ONE_SLOT], [mr_job("j", [10, 10])])
    sim, rec = run(w, mode="event")
    assert [(r[4], r[5]) for r in attempts(rec)] == [(0, 10), (10, 20)]
    jobs = rec.jobs_columns()
    assert jobs["finish"][0] == 20 and jobs["map_end"][0] == 20 and jobs["first_start"][0] == 0


def test_failure_mid_task_requeues_it_on_the_surviving_node() -> None:
    nodes = [{"id": "a", "map_slots": 1, "reduce_slots": 0}, {"id": "b", "map_slots": 1, "reduce_slots": 0}]
    w = workload(nodes, [mr_job("j", [10, 10])], faults=[{"node": "a", "down": 5, "up": 100}])
    _, rec = run(w, mode="event")
    rows = attempts(rec)
    assert [(r[3], r[4], r[5], r[6]) for r in rows] == [
        ("a", 0, 5, "failed"),
        ("b", 0, 10, "succeeded"),
        ("b", 10, 20, "succeeded"),
    ]
    assert rows[0][2] == rows[2][2]  # the failed task is the one re-run
    assert rec.jobs_columns()["finish"][0] == 20


def test_recovery_brings_the_slots_back() -> None:
    w = workload([ONE_SLOT], [mr_job("j", [10])], faults=[{"node": "a", "down": 4, "up": 30}])
    _, rec = run(w, mode="event")
    assert [(r[4], r[5], r[6]) for r in attempts(rec)] == [(0, 4, "failed"), (30, 40, "succeeded")]


def test_straggler_draw_multiplies_the_time() -> None:
    w = workload([ONE_SLOT], [mr_job("j", [10])], timing={"straggler_rate": 1.0, "straggler_slowdown": 3})
    _, rec = run(w, mode="event")
    assert attempts(rec)[0][5] == 30


def test_rack_local_and_remote_penalties() -> None:
    nodes = [
        {"id": "holder", "rack": "r0", "map_slots": 0, "reduce_slots": 1},
        {"id": "near", "rack": "r0", "map_slots": 1, "reduce_slots": 0},
        {"id": "far", "rack": "r1", "map_slots": 0, "reduce_slots": 0},
    ]
    job = {"id": "j", "stages": [{"type": "map", "tasks": [{"duration": 10, "replicas": ["holder"]}]}]}
    _, rec = run(workload(nodes, [job]), mode="event")
    (row,) = attempts(rec)
    assert row[3] == "near" and row[5] == 15  # Mumak's rack-local factor 1.5
    assert rec.tasks_columns()["locality"] == ["rack"]
    nodes[1]["rack"] = "r1"
    _, rec = run(workload(nodes, [job]), mode="event")
    assert attempts(rec)[0][5] == 30 and rec.tasks_columns()["locality"] == ["any"]


def test_node_local_task_has_no_penalty_and_speed_divides() -> None:
    nodes = [{"id": "a", "map_slots": 1, "reduce_slots": 0, "speed": 2.0}]
    job = {"id": "j", "stages": [{"type": "map", "tasks": [{"duration": 10, "replicas": ["a"]}]}]}
    _, rec = run(workload(nodes, [job]), mode="event")
    assert attempts(rec)[0][5] == 5 and rec.tasks_columns()["locality"] == ["node"]


def test_reduce_waits_for_the_last_map() -> None:
    nodes = [{"id": "a", "map_slots": 2, "reduce_slots": 1}]
    w = workload(nodes, [mr_job("j", [10, 20], 5)])
    _, rec = run(w, mode="event")
    reduce_row = [r for r in attempts(rec) if r[1] == 1]
    assert [(r[4], r[5]) for r in reduce_row] == [(20, 25)]
    jobs = rec.jobs_columns()
    assert jobs["map_end"][0] == 20 and jobs["finish"][0] == 25


def test_slowstart_reduce_copies_while_maps_run() -> None:
    # maps 10 and 20 on two slots; slow-start 0.5: the reduce launches when the first map ends
    # (t = 10); it copies for d/3 = 2 s, waits for the last map (t = 20), then needs 2d/3 = 4 s.
    nodes = [{"id": "a", "map_slots": 2, "reduce_slots": 1}]
    w = workload(nodes, [mr_job("j", [10, 20], 6)], timing={"reduce_slowstart": 0.5})
    _, rec = run(w, mode="event")
    reduce_row = [r for r in attempts(rec) if r[1] == 1]
    assert [(r[4], r[5]) for r in reduce_row] == [(10, 24)]


def test_multi_stage_chain_runs_stage_after_stage() -> None:
    nodes = [{"id": "a", "map_slots": 1, "reduce_slots": 1}]
    stages = [
        {"type": "map", "tasks": [{"duration": 3}]},
        {"type": "map", "tasks": [{"duration": 4}]},
        {"type": "reduce", "tasks": [{"duration": 5}]},
        {"type": "map", "tasks": [{"duration": 6}]},
    ]
    _, rec = run(workload(nodes, [{"id": "c", "stages": stages}]), mode="event")
    assert [(r[1], r[4], r[5]) for r in attempts(rec)] == [(0, 0, 3), (1, 3, 7), (2, 7, 12), (3, 12, 18)]
    jobs = rec.jobs_columns()
    assert jobs["map_end"][0] == 7 and jobs["finish"][0] == 18


def test_heartbeats_follow_hadoop_interval_and_node_phase() -> None:
    assert heartbeat_interval(40) == 3.0 and heartbeat_interval(600) == 6.0 and heartbeat_interval(301) == 4.0
    nodes = [{"id": "n", "count": 2, "map_slots": 1, "reduce_slots": 0}]
    w = workload(nodes, [mr_job("j", [10, 10, 10], submit_time=1.0)])
    _, rec = run(w, mode="heartbeat")
    # interval 3 s; node n-0 beats at 0, 3, 6, ...; n-1 at 1.5, 4.5, ...: the job arrives at 1
    assert [(r[3], r[4]) for r in attempts(rec)] == [("n-1", 1.5), ("n-0", 3.0), ("n-1", 13.5)]


def test_arrival_at_a_completion_instant_gets_the_freed_slot() -> None:
    w = workload([ONE_SLOT], [mr_job("a", [10]), mr_job("b", [10], submit_time=10)])
    _, rec = run(w, mode="event")
    assert [(r[0], r[4]) for r in attempts(rec)] == [("a", 0), ("b", 10)]


def test_same_seed_same_event_log_and_another_seed_differs() -> None:
    nodes = [{"id": "n", "count": 4, "rack": "r", "map_slots": 2, "reduce_slots": 1}]
    jobs = [mr_job(f"j{i}", 5.0 + i, 3.0, submit_time=float(i)) for i in range(10)]
    w = workload(nodes, jobs, timing={"straggler_rate": 0.3})
    hashes = [run(w, seed=s, mode="heartbeat")[1].event_log_hash() for s in (1, 1, 2)]
    assert hashes[0] == hashes[1] != hashes[2]


def test_bad_mode_is_an_input_error() -> None:
    w = workload([ONE_SLOT], [mr_job("j", [1])])
    with pytest.raises(InputError, match="mode must be one of event, heartbeat, got 'fast'"):
        Simulation(w, make_policy("fifo"), mode="fast")


def erlang_c_response(c: int, lam: float, mu: float) -> float:
    """Mean response time of M/M/c (Erlang C): W = C(c, a) / (c mu - lam) + 1 / mu."""
    a = lam / mu
    top = a**c / math.factorial(c) * c / (c - a)
    prob_wait = top / (sum(a**k / math.factorial(k) for k in range(c)) + top)
    return prob_wait / (c * mu - lam) + 1 / mu


@pytest.mark.slow
def test_mmc_station_matches_erlang_c() -> None:
    """Poisson arrivals, exponential single-task jobs, c slots, FCFS: Erlang C's mean response time."""
    c, lam, mu, n = 4, 3.0, 1.0, 30_000
    rng = np.random.default_rng(20261123)
    submit = np.cumsum(rng.exponential(1 / lam, n))
    service = rng.exponential(1 / mu, n)
    jobs = [mr_job(f"j{i}", float(service[i]), submit_time=float(submit[i])) for i in range(n)]
    w = workload([{"id": "station", "map_slots": c, "reduce_slots": 0}], jobs)
    sim = Simulation(w, make_policy("fifo"), mode="event")
    rec = sim.run()
    cols = rec.jobs_columns()
    response = cols["finish"] - cols["submit_time"]
    warm = n // 10
    batches = np.array_split(response[warm:], 30)
    means = np.array([b.mean() for b in batches])
    half = 2.756 * means.std(ddof=1) / math.sqrt(len(means))  # t(0.995, 29): a 99% interval
    expected = erlang_c_response(c, lam, mu)
    assert abs(means.mean() - expected) <= half, (means.mean(), expected, half)
    assert half < 0.1 * expected  # the interval is tight enough to mean something


@pytest.mark.parametrize("fail", [False, True])
def test_run_pauses_the_cyclic_collector_and_restores_it(fail: bool) -> None:
    """The collector is off while the engine runs (Simulation.run's docstring) and back on after,
    even when a policy raises."""
    import gc

    seen: list[bool] = []

    class Probe:
        def __init__(self, policy):  # type: ignore[no-untyped-def]
            self._policy = policy

        def __getattr__(self, name):  # type: ignore[no-untyped-def]
            return getattr(self._policy, name)

        def on_arrival(self, job):  # type: ignore[no-untyped-def]
            seen.append(gc.isenabled())
            if fail:
                raise RuntimeError("policy failed")
            return self._policy.on_arrival(job)

    w = workload([ONE_SLOT], [mr_job("j", [10, 10])])
    sim = Simulation(w, make_policy("fifo"), mode="event")
    sim.policy = Probe(sim.policy)  # type: ignore[assignment]
    assert gc.isenabled()
    if fail:
        with pytest.raises(RuntimeError):
            sim.run()
    else:
        sim.run()
    assert seen == [False]
    assert gc.isenabled()


def test_heartbeat_mode_skips_beats_of_a_node_no_pending_task_fits() -> None:
    """Heartbeat mode, tasks with demands: a node whose free memory fits no pending task does not
    beat (nothing could launch there) until capacity frees on it; the waiting task starts at the
    node's first beat after that, as it would have with every beat simulated."""
    nodes = [{"id": "n", "map_slots": 2, "reduce_slots": 0, "resources": {"mem": 1.0}}]
    jobs = [
        {"id": "big", "stages": [{"type": "map", "tasks": [{"duration": 100, "demand": {"mem": 0.8}}]}]},
        {
            "id": "small",
            "submit_time": 1,
            "stages": [{"type": "map", "tasks": [{"duration": 10, "demand": {"mem": 0.5}}]}],
        },
    ]
    sim, rec = run(workload(nodes, jobs), "fifo", mode="heartbeat")
    assert [(r[0], r[4], r[5]) for r in attempts(rec)] == [("big", 0, 100), ("small", 102, 112)]
    # the beats at 0, 102 and nothing between (33 idle beats of 3 s otherwise): arrivals, ends, beats
    assert sim.events <= 6
