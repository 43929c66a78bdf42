"""Batches of identical tasks (engine.py's module docstring) change no simulated time or row.

Every scenario is run with batching on and off; the job, attempt and utilisation tables and
the event-log hash must be identical, and the batched run must really have formed batches
where the scenario allows them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.attempts import Attempt, Member
from mropt.sim.engine import Simulation
from mropt.sim.policies.fifo import Fifo
from mropt.sim.policy import make_policy
from mropt.sim.state import MAP
from mropt.sim.verify import verify_simulation

from sim_helpers import mr_job, workload

SIX = [{"id": "n", "count": 6, "rack": "r", "map_slots": 2, "reduce_slots": 2}]


def many_jobs() -> list[dict[str, Any]]:
    return [mr_job(f"j{i}", [5.0 + i % 3] * 3 + [4.0] * 4, [3.0, 3.0], submit_time=float(i)) for i in range(10)]


def tables(sim: Simulation) -> tuple[Any, ...]:
    rec = sim.run()
    return rec.jobs_columns(), rec.tasks_columns(), rec.utilisation_columns(), rec.event_log_hash()


def assert_same(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
    for ta, tb in zip(a[:3], b[:3]):
        assert ta.keys() == tb.keys()
        for key in ta:
            va, vb = ta[key], tb[key]
            if isinstance(va, np.ndarray):
                assert np.array_equal(va, vb, equal_nan=va.dtype.kind == "f"), key
            elif isinstance(va, int):
                assert va == vb, key
            else:
                assert list(va) == list(vb), key
    assert a[3] == b[3]


def batch_count(sim: Simulation) -> int:
    """Batches whose live members (more than one) ended together: the recorder's spans of more than one attempt."""
    return int((sim.record.spans()["count"] > 1).sum())


def both(w: WorkloadInstance, make: Any = None, **options: Any) -> tuple[Simulation, Simulation]:
    """The same run with batching on and off; both checked by the independent verify."""
    runs = []
    for batch in (True, False):
        policy = make() if make is not None else make_policy("fifo")
        sim = Simulation(w, policy, batch=batch, **options)
        runs.append((sim, tables(sim)))
    (on, t_on), (off, t_off) = runs
    assert_same(t_on, t_off)
    verdict = verify_simulation(w, t_on[0], t_on[1])
    assert verdict.ok, verdict.problems
    assert batch_count(off) == 0
    return on, off


SCENARIOS: dict[str, WorkloadInstance] = {
    "plain": workload(SIX, many_jobs()),
    "stragglers": workload(SIX, many_jobs(), timing={"straggler_rate": 0.3, "straggler_slowdown": 2}),
    "slow-start": workload(SIX, many_jobs(), timing={"reduce_slowstart": 0.3}),
    "faults": workload(SIX, many_jobs(), faults=[{"node": "n-1", "down": 6, "up": 20}, {"node": "n-3", "down": 6}]),
    "placement": workload(
        [
            {"id": "a", "count": 4, "rack": "r0", "map_slots": 2, "reduce_slots": 1},
            {"id": "b", "count": 4, "rack": "r1", "map_slots": 2, "reduce_slots": 1, "speed": 2.0},
        ],
        many_jobs(),
        placement={"replicas": 2, "seed": 1},
    ),
}


@pytest.mark.parametrize("mode", ["event", "heartbeat"])
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_batching_changes_no_table(name: str, mode: str) -> None:
    on, _ = both(SCENARIOS[name], mode=mode, seed=3)
    if mode == "event":
        assert batch_count(on) > 0


def test_hand_scenarios_are_unchanged() -> None:
    one = [{"id": "a", "map_slots": 1, "reduce_slots": 1}]
    two = [{"id": "a", "map_slots": 2, "reduce_slots": 1}]
    pair = [{"id": "a", "map_slots": 1, "reduce_slots": 0}, {"id": "b", "map_slots": 1, "reduce_slots": 0}]
    cases = [
        workload(one, [mr_job("j", [10, 10])]),
        workload(pair, [mr_job("j", [10, 10])], faults=[{"node": "a", "down": 5, "up": 100}]),
        workload(two, [mr_job("j", [10, 20], 5)]),
        workload(two, [mr_job("j", [10, 20], 6)], timing={"reduce_slowstart": 0.5}),
        workload(one, [mr_job("a", [10]), mr_job("b", [10], submit_time=10)]),
        workload(
            [{"id": "n", "count": 2, "map_slots": 1, "reduce_slots": 0}], [mr_job("j", [10] * 3, submit_time=1.0)]
        ),
    ]
    for w in cases:
        for mode in ("event", "heartbeat"):
            both(w, mode=mode)


def test_same_start_and_time_form_one_batch_with_one_completion() -> None:
    # 3 nodes x 2 slots, one job of 6 maps of 10 s: FIFO's load factor gives each node 2 maps;
    # all six start at 0 and end at 10 on three nodes: one batch, one completion event
    w = workload([{"id": "n", "count": 3, "map_slots": 2, "reduce_slots": 0}], [mr_job("j", [10.0] * 6)])
    on, off = both(w, mode="event")
    spans = on.record.spans()
    assert spans["count"].tolist() == [6] and spans["end"].tolist() == [10.0]
    assert on.record.a_node == [0, 0, 1, 1, 2, 2]
    assert on.events == 2 and off.events == 7  # the arrival and the completion(s)
    assert on.record.a_id == list(range(6)) and on.record.a_end == [10.0] * 6


def test_different_running_times_do_not_batch() -> None:
    nodes = [{"id": "n", "count": 2, "map_slots": 1, "reduce_slots": 0}]
    w = workload(nodes, [mr_job("j", [10.0, 10.0])])
    mixed = [
        {"id": "a", "map_slots": 1, "reduce_slots": 0},
        {"id": "b", "map_slots": 1, "reduce_slots": 0, "speed": 2.0},
    ]
    w_slow = workload(mixed, [mr_job("j", [10.0, 10.0])])
    assert batch_count(both(w, mode="event")[0]) == 1
    assert batch_count(both(w_slow, mode="event")[0]) == 0


class KillOne(Fifo):
    """FIFO that kills one running map at a timer (a batch member when batching is on)."""

    def __init__(self, target: int, at: float, speculate: bool = False) -> None:
        super().__init__()
        self.target = target
        self.at = at
        self.spec = speculate
        self.seen: list[tuple[int, int, int, str]] = []

    def start(self, sim: Any) -> None:
        super().start(sim)
        sim.wake_at(self.at, "act")

    def on_timer(self, tag: Any) -> None:
        sim = self.sim
        view = sim.running[self.target]
        if self.spec:
            idle = next(n for n in range(sim.n_nodes) if sim.free[MAP][n] > 0)
            assert sim.speculate(view.job, view.stage, view.task, idle) >= 0
        else:
            sim.kill(self.target)

    def on_attempt_end(self, attempt: Any, outcome: str) -> None:
        self.seen.append((attempt.id, attempt.task, attempt.node, outcome))


def test_killing_one_member_leaves_the_others_running() -> None:
    w = workload([{"id": "n", "count": 3, "map_slots": 2, "reduce_slots": 0}], [mr_job("j", [10.0] * 6)])
    policies: list[KillOne] = []

    def make() -> KillOne:
        policies.append(KillOne(target=3, at=4.0))
        return policies[-1]

    on, _ = both(w, make, mode="event")
    assert policies[0].seen == policies[1].seen  # on_attempt_end got the same views in order
    rows = sorted(zip(on.record.a_id, on.record.a_task, on.record.a_start, on.record.a_end, on.record.a_outcome))
    killed = [r for r in rows if r[4] != 0]
    assert killed == [(3, 3, 0.0, 4.0, 1)]
    # task 3 is re-run on the slot it freed, from t = 4 to 14; the other five end at 10
    assert [r for r in rows if r[1] == 3 and r[4] == 0] == [(6, 3, 4.0, 14.0, 0)]
    assert sum(1 for r in rows if r[3] == 10.0) == 5


def test_speculating_a_batch_member_kills_the_loser() -> None:
    # four maps on two nodes of 2 slots, a third node idle (FIFO's load factor leaves it one map
    # slot); at t = 1 a backup of attempt 1 starts there: it ends at 11, the member at 10 wins
    nodes = [{"id": "n", "count": 3, "map_slots": 2, "reduce_slots": 0}]
    w = workload(nodes, [mr_job("j", [10.0] * 4)])

    def make() -> KillOne:
        return KillOne(target=1, at=1.0, speculate=True)

    on, _ = both(w, make, mode="event")
    rows = sorted(zip(on.record.a_id, on.record.a_task, on.record.a_end, on.record.a_spec, on.record.a_outcome))
    assert rows[-1] == (4, 1, 10.0, True, 1)  # the backup, killed when the member won
    # the task is done, not re-queued by its backup's kill
    assert on.jobs[0].finish == 10.0 and on.jobs[0].stages[0].pending == 0 and on.runnable[MAP] == 0


def test_node_failure_kills_the_batch_members_on_it() -> None:
    nodes = [{"id": "n", "count": 3, "map_slots": 2, "reduce_slots": 0}]
    w = workload(nodes, [mr_job("j", [10.0] * 6)], faults=[{"node": "n-1", "down": 5}])
    on, _ = both(w, mode="event")
    failed = [(t, n) for t, n, o in zip(on.record.a_task, on.record.a_node, on.record.a_outcome) if o == 2]
    assert sorted(failed) == [(2, 1), (3, 1)]
    assert on.jobs[0].finish == 20.0  # the two re-run on the freed slots from t = 10


def test_running_is_a_mapping_of_member_views() -> None:
    w = workload([{"id": "n", "count": 2, "map_slots": 2, "reduce_slots": 0}], [mr_job("j", [10.0] * 4)])
    sim = Simulation(w, make_policy("fifo"), mode="event")
    sim.wake_at(5.0)
    seen: dict[int, tuple[int, int, float | None]] = {}

    class Peek(Fifo):
        def on_timer(self, tag: Any) -> None:
            for aid, a in self.sim.running.items():
                seen[aid] = (a.task, a.node, a.end)
            assert isinstance(self.sim.running[0], Attempt) and isinstance(self.sim.running[1], Member)
            assert 3 in self.sim.running and 9 not in self.sim.running and len(self.sim.running) == 4

    sim.policy = Peek()
    sim.run()
    assert seen == {0: (0, 0, 10.0), 1: (1, 0, 10.0), 2: (2, 1, 10.0), 3: (3, 1, 10.0)}


def test_launch_count_starts_what_single_launches_would() -> None:
    w = workload([{"id": "n", "map_slots": 4, "reduce_slots": 0}], [mr_job("j", [10.0] * 3)])
    sim = Simulation(w, make_policy("fifo"), mode="event")

    class Grab(Fifo):
        def assign(self, node: int) -> None:
            first, started, _, _ = self.sim.launch_tasks(0, node, MAP, count=5)
            assert (first, started) == (0, 3)

    sim.policy = Grab()
    rec = sim.run()
    assert rec.a_id == [0, 1, 2] and rec.a_end == [10.0] * 3


def test_a_backup_that_wins_kills_the_batch_member() -> None:
    # as above, but the idle node is 4x faster: the backup of attempt 1 runs 1 .. 3.5 and wins;
    # the member is killed at 3.5 and the task is not run again
    nodes = [
        {"id": "n", "count": 2, "map_slots": 2, "reduce_slots": 0},
        {"id": "fast", "map_slots": 2, "reduce_slots": 0, "speed": 4.0},
    ]
    w = workload(nodes, [mr_job("j", [10.0] * 4)])

    def make() -> KillOne:
        return KillOne(target=1, at=1.0, speculate=True)

    on, _ = both(w, make, mode="event")
    rows = sorted(zip(on.record.a_id, on.record.a_task, on.record.a_end, on.record.a_spec, on.record.a_outcome))
    assert rows == [
        (0, 0, 10.0, False, 0),
        (1, 1, 3.5, False, 1),
        (2, 2, 10.0, False, 0),
        (3, 3, 10.0, False, 0),
        (4, 1, 3.5, True, 0),
    ]
    assert on.jobs[0].finish == 10.0 and on.jobs[0].stages[0].pending == 0


class KillInHook(Fifo):
    """FIFO whose on_attempt_end of attempt 0 kills attempt 5 (a member of the same batch)."""

    def on_attempt_end(self, attempt: Any, outcome: str) -> None:
        if attempt.id == 0:
            self.sim.kill(5)


def test_a_hook_killing_a_member_of_the_ending_batch() -> None:
    w = workload([{"id": "n", "count": 3, "map_slots": 2, "reduce_slots": 0}], [mr_job("j", [10.0] * 6)])
    on, _ = both(w, KillInHook, mode="event")
    rows = sorted(zip(on.record.a_id, on.record.a_task, on.record.a_end, on.record.a_outcome))
    assert rows[5] == (5, 5, 10.0, 1) and rows[6] == (6, 5, 20.0, 0)
