"""FIFO's offer run plans a pass with reduces pending in bulk, as the node-by-node loop would (issue 32).

``fifo_runs._with_reduces``: where every up node has as many reduce slots, a pass's map launches
(``_slots_taken``) and its reduces (the first nodes with reduce room, one each) are listed apart
and merged in node order. The hand-made pass: 4 nodes of 1 map and 1 reduce slot; job a (2 maps
of 1 s, 3 reduces) and job b (6 maps of 5 s) at time 0. At 0, a's maps take nodes 0 and 1, b's
nodes 2 and 3. At 1, a's maps end: its 3 reduces are runnable (capacity ceil(3 x 1 / 4) = 1, so a
free reduce slot takes one) and b has 2 maps left (6 remain of the 4 slots' worth: full capacity).
``Fifo.assign`` node by node: node 0 a map of b then a reduce of a, node 1 the same, node 2 a
reduce of a; so the segments are b's map on 0, a's reduce on 0, b's map on 1, a's reduces on 1, 2.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from mropt.sim.engine import Simulation
from mropt.sim.launch_runs import LaunchRuns, Segment
from mropt.sim.policies import fifo_runs
from mropt.sim.policy import make_policy
from mropt.sim.state import MAP, REDUCE

from sim_helpers import fifo_same_as_plain, random_extras, workload


def watch(monkeypatch: pytest.MonkeyPatch) -> tuple[list[list[Segment]], list[bool]]:
    """What each ``_with_reduces`` call answered, and the plans LaunchRuns started inside the calls."""
    plans: list[list[Segment]] = []
    answers: list[bool] = []
    inside = [False]
    start, with_reduces = LaunchRuns.start, fifo_runs._with_reduces

    def started(self: LaunchRuns, plan: list[Segment]) -> None:
        if inside[0]:
            plans.append([(job, stype, list(nodes)) for job, stype, nodes in plan])
        start(self, plan)

    def watched(*args: Any) -> bool:
        inside[0] = True
        answers.append(with_reduces(*args))
        inside[0] = False
        return answers[-1]

    monkeypatch.setattr(LaunchRuns, "start", started)
    monkeypatch.setattr(fifo_runs, "_with_reduces", watched)
    return plans, answers


def test_the_pass_at_one_second_interleaves_maps_and_reduces_by_node(monkeypatch: pytest.MonkeyPatch) -> None:
    plans, answers = watch(monkeypatch)
    a = job("a", 0.0, (2, 1.0), (3, 10.0))
    b = job("b", 0.0, (6, 5.0))
    w = workload([{"id": "n", "count": 4, "map_slots": 1, "reduce_slots": 1}], [a, b])
    rec = Simulation(w, make_policy("fifo"), mode="event").run()
    assert answers[0] is True
    assert plans[0] == [(1, MAP, [0]), (0, REDUCE, [0]), (1, MAP, [1]), (0, REDUCE, [1, 2])]
    plain = Simulation(w, make_policy("fifo", reference=True), mode="event").run()
    assert rec.event_log_hash() == plain.event_log_hash()


def job(
    name: str, submit: float, maps: tuple[int, float], reduces: tuple[int, float] | None = None, priority: int = 0
) -> dict[str, Any]:
    """A job of ``maps`` (count, duration) and optional ``reduces``: one task group a stage."""
    stages = [{"type": "map", "tasks": [{"count": maps[0], "duration": maps[1]}]}]
    if reduces is not None:
        stages.append({"type": "reduce", "tasks": [{"count": reduces[0], "duration": reduces[1]}]})
    return {"id": name, "submit_time": submit, "priority": priority, "stages": stages}


def random_jobs(rng: random.Random) -> list[dict[str, Any]]:
    return [
        job(
            f"j{i}",
            float(rng.choice([0, 0, 1, 2, 5, 8, 13])),
            (rng.randint(1, 12), rng.choice([1.0, 2.0, 4.0])),
            (rng.randint(1, 8), rng.choice([2.0, 3.0])) if rng.random() < 0.8 else None,
            rng.choice([0, 0, 0, 1, -1]),
        )
        for i in range(rng.randint(3, 25))
    ]


def test_random_passes_with_reduces_decide_as_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nodes of 1-3 map slots and one reduce count (1 or 2) for all, replicas, slow-start and a
    node down and up at times: the same event log, events and attempts as the plain pass, and most
    passes with reduces pending planned in bulk (the others: a job not eligible)."""
    _, answers = watch(monkeypatch)
    rng = random.Random(32)
    for _ in range(200):
        reduce_slots = rng.choice([1, 2])
        nodes = [
            {"id": f"n{i}", "rack": f"r{i % 3}", "map_slots": rng.randint(1, 3), "reduce_slots": reduce_slots}
            for i in range(rng.randint(2, 14))
        ]
        extra = random_extras(rng, 0.25, 0.3, (0.0, 0.5), 0.3, down=(2.0, 6.0), up=(9.0, 20.0))
        w = workload(nodes, random_jobs(rng), **extra)
        fifo_same_as_plain(w)
    assert sum(answers) > 0.6 * len(answers) > 60
