"""A launch run's segment takes an eligible stage's tasks from its fresh pointer unsearched (issue 32).

``LaunchRuns.segment`` starts its ``c`` tasks at the fresh pointer's task, or the one after it when
that one is not pending, without searching the stage's state: an eligible stage (no replicas, no
re-queued task on its list) has its pending tasks there and after (``mropt.sim.launch_runs``). On
random FIFO workloads with node failures (kills re-queue tasks below the pointer) and slow-start,
each segment's tasks must be the stage's first ``c`` pending tasks, as a search finds them; and the
batch it opens keeps its consecutive tasks as a ``range`` that a later join by ``launch_tasks``
turns into a list, the run's event log the plain rule's.
"""

from __future__ import annotations

import random
from typing import Any

from test_sim_fifo_runs import random_workload

from mropt.sim.attempts import Attempt
from mropt.sim.engine import Simulation
from mropt.sim.launch_runs import LaunchRuns
from mropt.sim.policies import fifo_runs
from mropt.sim.policy import make_policy
from mropt.sim.state import DONE, MAP, PENDING, Stage

from sim_helpers import workload


def test_a_segment_takes_the_first_pending_tasks_as_a_search_finds_them(monkeypatch: Any) -> None:
    segment, requeue_task = LaunchRuns.segment, Stage.requeue_task
    seen = {"segments": 0, "after_pointer": 0, "requeued_stage": 0}
    requeued: set[int] = set()  # the stages (ids) that had a task re-queued

    def requeue(self: Stage, task: int, node_rack: Any) -> None:
        requeued.add(id(self))
        requeue_task(self, task, node_rack)

    def checked(self: LaunchRuns, job: int, stype: int, nodes: list[int]) -> None:
        j = self.sim.jobs[job]
        stage = j.stages[j.cur]
        state, c = stage.state, len(nodes)
        first = state.find(PENDING, 0)  # the stage's lowest pending task, searched from its start
        assert first >= 0 and state.count(PENDING, first, first + c) == c
        assert first in (stage.fresh, stage.fresh + 1)
        seen["segments"] += 1
        seen["after_pointer"] += first == stage.fresh + 1
        seen["requeued_stage"] += id(stage) in requeued
        segment(self, job, stype, nodes)
        if c > 1 and self.sim.batches.open is not None:
            tasks = self.sim.batches.open.tasks  # the batch ends with the tasks the search found
            assert tasks is not None and list(tasks[-c:]) == list(range(first, first + c))

    monkeypatch.setattr(LaunchRuns, "segment", checked)
    monkeypatch.setattr(Stage, "requeue_task", requeue)
    rng = random.Random("launch-runs-fresh")
    for _ in range(200):
        w, _ = random_workload(rng)
        sim = Simulation(w, make_policy("fifo"), mode="event")
        rec = sim.run()
        plain = Simulation(w, make_policy("fifo", reference=True), mode="event").run()
        assert rec.event_log_hash() == plain.event_log_hash()
    assert seen["segments"] > 5000 and seen["after_pointer"] > 1000 and seen["requeued_stage"] > 100


def test_a_runs_consecutive_tasks_stay_a_range_until_a_join_breaks_them(monkeypatch: Any) -> None:
    """Three nodes of 2 map slots: the pass at 0 starts job a's 6 maps as one batch of a range of
    tasks; its end marks them done in one slice."""
    w = workload(
        [{"id": "n", "count": 3, "map_slots": 2, "reduce_slots": 1}],
        [{"id": "a", "submit_time": 0.0, "stages": [{"type": "map", "tasks": [{"duration": 2.0, "count": 6}]}]}],
    )
    batches: list[Attempt] = []
    segment = LaunchRuns.segment

    def kept(self: LaunchRuns, job: int, stype: int, nodes: list[int]) -> None:
        segment(self, job, stype, nodes)
        assert self.sim.batches.open is not None
        batches.append(self.sim.batches.open)

    monkeypatch.setattr(LaunchRuns, "segment", kept)
    sim = Simulation(w, make_policy("fifo"), mode="event")
    rec = sim.run()
    assert len(batches) == 1 and batches[0].tasks == range(0, 6) and batches[0].nodes == [0, 0, 1, 1, 2, 2]
    assert sim.jobs[0].stages[0].state == bytearray([DONE]) * 6
    assert (
        rec.event_log_hash() == Simulation(w, make_policy("fifo", reference=True), mode="event").run().event_log_hash()
    )


def test_a_launch_tasks_join_turns_a_runs_range_into_a_list(monkeypatch: Any) -> None:
    """The pass at 0 starts 3 of job a's maps as a segment (a batch of tasks ``range(0, 3)``) and the
    other 3 by ``launch_tasks``, node by node: each joins that batch, which then holds its tasks as a
    list; the event log is the plain rule's."""
    w = workload(
        [{"id": "n", "count": 3, "map_slots": 2, "reduce_slots": 1}],
        [{"id": "a", "submit_time": 0.0, "stages": [{"type": "map", "tasks": [{"duration": 2.0, "count": 6}]}]}],
    )
    batches: list[Attempt] = []

    def split(policy: Any, nodes: Any, runs: LaunchRuns) -> bool:
        sim = policy.sim
        runs.segment(0, MAP, [0, 0, 1])
        batches.append(sim.batches.open)
        assert batches[0].tasks == range(0, 3)
        for node in (1, 2, 2):
            sim.launch_tasks(0, node, MAP)
        return True

    monkeypatch.setattr(fifo_runs, "_maps_alone", split)
    sim = Simulation(w, make_policy("fifo"), mode="event")
    rec = sim.run()
    assert len(batches) == 1 and batches[0].tasks == [0, 1, 2, 3, 4, 5] and batches[0].nodes == [0, 0, 1, 1, 2, 2]
    assert sim.jobs[0].stages[0].state == bytearray([DONE]) * 6
    assert (
        rec.event_log_hash() == Simulation(w, make_policy("fifo", reference=True), mode="event").run().event_log_hash()
    )
