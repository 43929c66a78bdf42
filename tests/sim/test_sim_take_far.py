"""``Stage.take`` at level ANY and ``Stage.take_far`` against brute force (issue 32).

Once a node's and its rack's stacks come up empty, ``take`` hands out the first requeued pending
task, else the lowest pending one, at the level its replicas give on the node; ``take_far``
serves a launch run's next tasks without looking at the stacks again, and reads the level
without the replicas. Random stages (tuple and array replicas, both stack forms, requeued
tasks, replica entries that name no node) are checked step by step against plain lists, and
a launch run against the launches one by one.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from mropt.sim.engine import Simulation
from mropt.sim.policy import Policy
from mropt.sim.state import ANY, NODE, NONE, PENDING, RACK, RUNNING, Stage

from sim_helpers import workload


def _level(row: list[int], node: int, rack: int, node_rack: list[int]) -> int:
    """The locality of a task with replica entries ``row`` on ``node`` (``Stage.level_on``'s rule,
    entries < 0 read as it reads them)."""
    if not row:
        return NONE
    if node in row:
        return NODE
    return RACK if any(node_rack[other] == rack for other in row) else ANY


def _stage(rng: random.Random, n: int, n_nodes: int, form: str) -> tuple[Stage, list[list[int]]]:
    """A map stage of ``n`` tasks, 3 replicas each (``padded``: some entries -1, some rows empty)."""
    rows = [rng.sample(range(n_nodes), 3) for _ in range(n)]
    if form == "array":
        return Stage(0, 0, [n], [1.0], [None], np.array(rows, dtype=np.int16)), rows
    if form == "padded":
        rows = [[-1 if rng.random() < 0.3 else x for x in row] for row in rows]
        return Stage(0, 0, [n], [1.0], [None], np.array(rows, dtype=np.int16)), rows
    rows = [row[: rng.randint(0, 3)] for row in rows]  # (tuples: a task may list none)
    return Stage(0, 0, [n], [1.0], [None], [tuple(row) for row in rows]), rows


@pytest.mark.parametrize("form", ["tuples", "array", "padded"])
@pytest.mark.parametrize("n", [20, 240])  # (a small stage gets PlaceLists, a large one PlaceStacks)
@pytest.mark.parametrize("seed", range(3))
def test_take_any_level_and_take_far_match_brute_force(seed: int, n: int, form: str) -> None:
    rng = random.Random(seed)
    n_nodes = 24
    node_rack = [k // 4 for k in range(n_nodes)]
    stage, rows = _stage(rng, n, n_nodes, form)
    requeued: list[int] = []  # the requeue stack, as plain list (most recent last)
    far_calls = 0
    for _ in range(2 * n):
        pending = [t for t in range(n) if stage.state[t] == PENDING]
        # a running task's attempt is killed (not where an entry names no node: ``requeue_task`` reads
        # it as node -1, the last node, as ``level_on`` does; placement never leaves one)
        if form != "padded" and rng.random() < 0.15 and len(pending) < n:
            task = rng.choice([t for t in range(n) if stage.state[t] == RUNNING])
            stage.requeue_task(task, node_rack)
            requeued.append(task)
            continue
        node = rng.randrange(n_nodes)
        rack = node_rack[node]
        got = stage.take(node, rack, ANY, node_rack)
        valid = [[x for x in rows[t] if x >= 0] for t in range(n)]
        local = [t for t in pending if node in valid[t]]
        near = [t for t in pending if any(node_rack[x] == rack for x in valid[t])]
        if local or near:
            assert got[1] in (NODE, RACK) and got[0] in (local or near)
        else:
            # the far case: the last requeued task still pending, else the lowest pending one
            again = [t for t in requeued if stage.state[t] == PENDING]
            want = again[-1] if again else (min(pending) if pending else -1)
            assert got == ((want, _level(rows[want], node, rack, node_rack)) if want >= 0 else (-1, -1))
            if want >= 0:
                assert stage.take_far(node, rack, node_rack) == got  # (takes nothing by itself)
                far_calls += 1
        if got[0] >= 0:
            stage.state[got[0]] = RUNNING
            stage.pending -= 1
    assert far_calls > 0


def test_a_launch_run_off_its_node_takes_what_single_launches_take() -> None:
    """``launch_tasks(count=k)`` on a node whose rack holds none of the stage's replicas starts the
    tasks and levels that k single launches start (the run's later tasks come from ``take_far``)."""
    nodes = [
        {"id": "a", "rack": "r0", "map_slots": 8, "reduce_slots": 1},
        {"id": "b", "rack": "r1", "map_slots": 8, "reduce_slots": 1},
    ]
    groups = [
        {"count": 3, "duration": 5, "replicas": ["a"]},
        {"count": 2, "duration": 5},
        {"count": 3, "duration": 5, "replicas": ["a"]},
    ]
    job = {"id": "j", "stages": [{"type": "map", "tasks": groups}]}

    class Burst(Policy):
        """At the job's arrival, 6 maps on node b (rack r1: no replica there) in one call or six."""

        name = "burst"

        def __init__(self, run: bool) -> None:
            super().__init__()
            self.run = run
            self.got: list[tuple[int, int]] = []

        def assign(self, node: int) -> None:
            if node != 1 or self.got:
                return
            sim = self.sim
            if self.run:
                first, count, _, _ = sim.launch_tasks(0, 1, 0, ANY, 6)
                self.got = [(sim.running[a].task, sim.running[a].level) for a in range(first, first + count)]
            else:
                for _ in range(6):
                    aid = sim.launch(0, 1, 0, ANY)
                    self.got.append((sim.running[aid].task, sim.running[aid].level))

    runs = []
    for run in (True, False):
        policy = Burst(run)
        Simulation(workload(nodes, [job]), policy, mode="event").run()
        runs.append(policy.got)
    assert runs[0] == runs[1] == [(0, ANY), (1, ANY), (2, ANY), (3, NONE), (4, NONE), (5, ANY)]
