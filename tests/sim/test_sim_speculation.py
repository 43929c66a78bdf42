"""Speculative execution on hand cases: LATE (Hadoop 0.21), Hadoop 0.20.

Every run is event mode with one map slot per node unless said, so the times are exact:
under a rule the engine offers a node to the rule when it frees and, while attempts run and
a slot is free, every node at a tick every heartbeat interval (3 s for these small clusters)
from the last instant that armed it.
"""

from __future__ import annotations

import pytest

from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy
from mropt.sim.speculation import make_speculation
from mropt.sim.speculation.late import cap_allows, cap_count
from mropt.sim.verify import verify_simulation, wasted_work

from sim_helpers import workload


def node(nid: str, speed: float = 1.0, maps: int = 1, reduces: int = 0) -> dict:
    return {"id": nid, "speed": speed, "map_slots": maps, "reduce_slots": reduces}


def maps_job(jid: str, durations: list[float], submit: float = 0.0) -> dict:
    return {
        "id": jid,
        "submit_time": submit,
        "stages": [{"type": "map", "tasks": [{"duration": d} for d in durations]}],
    }


def simulate(w, rule: str, policy: str = "fifo", mode: str = "event", **params):
    sim = Simulation(w, make_policy(policy), mode=mode, speculation=make_speculation(rule, params))
    rec = sim.run()
    tasks = rec.tasks_columns()
    verdict = verify_simulation(w, rec.jobs_columns(), tasks)
    assert verdict.ok, verdict.problems
    assert wasted_work(tasks) == pytest.approx(sim.wasted_work)
    assert int(tasks["speculative"].sum()) == sim.backups
    return sim, rec


def backups(rec) -> list[tuple[str, int, str, float, float, str]]:
    """(job, task, node, start, end, outcome) of each speculative attempt."""
    t = rec.tasks_columns()
    return sorted(
        (j, int(k), n, float(s), float(e), o)
        for j, k, n, s, e, o, sp in zip(
            t["job_id"], t["task"], t["node"], t["start"], t["end"], t["outcome"], t["speculative"], strict=True
        )
        if sp
    )


def attempts_of(rec, jid: str, task: int) -> list[tuple[str, float, float, str, bool]]:
    t = rec.tasks_columns()
    return sorted(
        (n, float(s), float(e), o, bool(sp))
        for j, k, n, s, e, o, sp in zip(
            t["job_id"], t["task"], t["node"], t["start"], t["end"], t["outcome"], t["speculative"], strict=True
        )
        if j == jid and k == task
    )


def finish(rec, jid: str) -> float:
    jobs = rec.jobs_columns()
    return float(jobs["finish"][jobs["job_id"].index(jid)])


def test_late_backs_up_the_straggler_of_a_slow_node_on_a_fast_node():
    """n0 runs at 1/4 speed: its 100 s task takes 400 s; tasks 1-3 end at 100 on n1-n3.

    At 100 the rates are 1/100 (three finished) and 1/400 (task 0): mean 0.008125, population
    std 0.0032476; 0.008125 - 0.0025 > 1 std, task 0 ran 100 s >= 60 s, n1-n3 are not slow
    (each has one 100 s task: tracker means 100, std 0), the cap allows 10. n1 (first freed node)
    gets the backup at 100, which ends at 200: the job ends then, task 0's original on n0 is
    killed at 200 and its 200 s are wasted work.
    """
    w = workload([node("n0", 0.25), node("n1"), node("n2"), node("n3")], [maps_job("j", [100.0] * 4)])
    sim, rec = simulate(w, "late")
    assert backups(rec) == [("j", 0, "n1", 100.0, 200.0, "succeeded")]
    assert attempts_of(rec, "j", 0) == [("n0", 0.0, 200.0, "killed", False), ("n1", 100.0, 200.0, "succeeded", True)]
    assert finish(rec, "j") == 200.0
    assert sim.wasted_work == 200.0 and sim.backups == 1
    # without speculation the job waits for the straggler
    _, plain = simulate(w, "none")
    assert finish(plain, "j") == 400.0 and backups(plain) == []


def test_the_60_second_rule():
    """Tasks 1-3 end at 40; task 0 (160 s on n0) is slow at once but gets its backup only at the
    first offer at least 60 s after its dispatch: the ticks after 40 fall at 43, 46, ..., 61."""
    w = workload([node("n0", 0.25), node("n1"), node("n2"), node("n3")], [maps_job("j", [40.0] * 4)])
    _, rec = simulate(w, "late")
    assert backups(rec) == [("j", 0, "n1", 61.0, 101.0, "succeeded")]
    assert finish(rec, "j") == 101.0
    # lag 0: the backup starts as soon as n1 frees
    _, rec0 = simulate(w, "late", lag=0.0)
    assert backups(rec0) == [("j", 0, "n1", 40.0, 80.0, "succeeded")]


def test_never_on_the_node_that_runs_the_task():
    """One node with two map slots: task 0 (300 s) in one, six 10 s tasks through the other,
    which is free from 60 on. Task 0 is slow (rate 1/300 against six finished at 1/10) and old
    enough, but the only free slot is on its own node: no backup, ever. With a second node
    the backup goes there and never to n0."""
    job = maps_job("j", [300.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0])
    w = workload([node("n0", maps=2)], [job])
    sim, rec = simulate(w, "late")
    assert sim.backups == 0 and finish(rec, "j") == 300.0
    w2 = workload([node("n0", maps=2), node("n1")], [job])
    sim2, rec2 = simulate(w2, "late")
    assert sim2.backups == 1 and [b[2] for b in backups(rec2)] == ["n1"]


def test_never_where_the_task_failed():
    """The failed-on-this-node half of hasRunOnMachine: a task whose attempt failed on a node is
    not backed up there (the rule remembers the failure), though it may run there as a new task."""
    w = workload(
        [node("n0"), node("n1")],
        [maps_job("j", [100.0])],
        faults=[{"node": "n0", "down": 10.0, "up": 20.0}],
    )
    sim = Simulation(w, make_policy("fifo"), mode="event", speculation=make_speculation("late"))
    rule = sim.speculation
    sim.run()
    assert rule.failed_on == {(0, 0, 0): {0}}
    assert rule.ran_on(0, 0, 0, [], 0) and not rule.ran_on(0, 0, 0, [], 1)


def test_the_slow_node_rule():
    """n3 runs at half speed. Job a: task 0 of 500 s on n0, three 20 s tasks (40 s on n3); job b
    takes n1 and n2 over [20, 120]. Tracker means of a's tasks: n1 20, n2 20, n3 40: mean 26.7,
    std 9.43, and n3 is 13.3 above: too slow. From 61 task 0 is a candidate, but only n3 is
    free until 120: the backup waits for n1 (120). Without the rule (threshold 1e9) n3 gets it
    at 61."""
    w = workload(
        [node("n0"), node("n1"), node("n2"), node("n3", 0.5)],
        [maps_job("a", [500.0, 20.0, 20.0, 20.0]), maps_job("b", [100.0, 100.0])],
    )
    _, rec = simulate(w, "late")
    assert backups(rec) == [("a", 0, "n1", 120.0, 500.0, "killed")]
    assert finish(rec, "a") == 500.0
    _, loose = simulate(w, "late", slow_node_threshold=1e9)
    assert [(b[2], b[3]) for b in backups(loose)] == [("n3", 61.0)]


def test_hadoop_020_backs_up_a_task_0_2_below_the_average_progress():
    """Task 0 takes 150 s, tasks 1-3 100 s, n4 idle. Before 100 the average progress is
    (3 t/100 + t/150) / 4 and task 0 trails it by 0.0025 t: 0.2 at t = 80. The first tick
    from then (ticks every 3 s from 0) is 81: the backup starts there on n4 (the 60 s lag
    passed at 60); the original wins at 150 and the backup's 69 s are wasted."""
    w = workload([node(f"n{i}") for i in range(5)], [maps_job("j", [150.0, 100.0, 100.0, 100.0])])
    sim, rec = simulate(w, "hadoop-0.20")
    assert backups(rec) == [("j", 0, "n4", 81.0, 150.0, "killed")]
    assert sim.wasted_work == pytest.approx(69.0)
    assert finish(rec, "j") == 150.0


@pytest.mark.parametrize(
    ("total", "early", "slots", "expected"),
    [(1200, 800, 20, 40), (1200, 1150, 20, 10), (1200, 1150, 4000, 20)],
)
def test_speculative_cap_reproduces_hadoop_test_cases(total, early, slots, expected):
    """Hadoop 0.21 TestSpeculativeExecution.testAtSpeculativeCap: the fake JobTracker reports
    setNumSlots(S) as S/2 map slots; running tasks = total - finished early."""
    assert cap_count(total - early, slots // 2) == expected
    # the loop of the test: one backup at a time while atSpeculativeCap is false
    launched = 0
    while cap_allows(launched, total - early, slots // 2):
        launched += 1
    assert launched == expected


def test_speculative_cap_reading_is_forced_by_the_cases():
    """All 4,000 slots would give 40, not 20; the 400 remaining-or-total readings would give 120."""
    assert cap_count(50, 4000) == 40
    assert cap_count(1200, 10) == 120
    assert not cap_allows(0, 0, 100)  # no running task: nothing to speculate


def test_speculative_cap_in_a_run():
    """500 nodes of one map slot; 350 tasks of 10 s, 150 of 1000 s. At 60 (the first tick past the
    lag; 500 nodes heartbeat every ceil(500/100) = 5 s, so the ticks after 10 fall at 15, 20, ..., 60)
    350 nodes are free and all 150 long tasks are candidates (z = sqrt(350/150) > 1), but
    the job gets max(10, 0.01 x 500, 0.1 x 150) = 15 backups."""
    w = workload(
        [{"id": "n", "map_slots": 1, "reduce_slots": 0, "count": 500}],
        [maps_job("j", [1000.0] * 150 + [10.0] * 350)],
    )
    sim, rec = simulate(w, "late")
    got = backups(rec)
    assert sim.backups == 15 and {b[3] for b in got} == {60.0}
    assert sorted(b[1] for b in got) == list(range(15))  # equal time left: launch order


def test_no_rule_no_change():
    """speculation none is the engine without a rule: the same event log, no summary keys."""
    from mropt.sim.run import simulate as run_simulate

    w = workload([node("n0", 0.25), node("n1"), node("n2"), node("n3")], [maps_job("j", [100.0] * 4)])
    a = run_simulate(w, "fifo", seed=1)
    b = run_simulate(w, "fifo", seed=1, speculation="none")
    assert a.summary["event_log_sha256"] == b.summary["event_log_sha256"]
    assert "backups" not in b.summary and "wasted_work" not in b.summary
    c = run_simulate(w, "fifo", seed=1, speculation="late")
    assert c.summary["backups"] == 1 and c.summary["speculation"] == "late"
