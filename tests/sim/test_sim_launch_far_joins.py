"""A launch run's far tasks joined in one step (``Launches._join_far``, issue 32) against single launches.

Once a ``launch_tasks`` run's tasks come from beyond the node's and its rack's stacks and join the
open batch, ``_join_far`` takes the run's next tasks in one loop and adds their counts once. Random
workloads (slots, two or three resources, or both; stages without replicas, with generated ones, or
with listed ones, some tasks listing none; stragglers; two durations in a stage; a node going down
and its tasks re-queued) are run by a policy that makes each launch a run of ``k`` tasks and by its
twin that makes the same ``k`` single launches: the event logs must be the same, and ``_join_far``
must have taken tasks on every kind of stage.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from mropt.sim.engine import Simulation
from mropt.sim.launches import Launches
from mropt.sim.policy import Policy
from mropt.sim.state import ANY, MAP, NODE, RACK, REDUCE

from sim_helpers import workload


class Runs(Policy):
    """Every active job, in index order, is offered ``k`` tasks of each type on the node, at a drawn
    level: one ``launch_tasks`` call (``single``: up to ``k`` ``launch`` calls, stopping at -1)."""

    name = "runs"

    def __init__(self, single: bool, seed: int) -> None:
        super().__init__()
        self.single = single
        self.rng = random.Random(seed)

    def assign(self, node: int) -> None:
        sim = self.sim
        for job in sorted(sim.active):
            for stype in (MAP, REDUCE):
                k = self.rng.choice([1, 2, 3, 5, 8, 40])
                level = self.rng.choice([NODE, RACK, ANY, ANY])
                if self.single:
                    for _ in range(k):
                        if sim.launch(job, node, stype, level) < 0:
                            break
                else:
                    sim.launch_tasks(job, node, stype, level, k)


def _workload(rng: random.Random) -> Any:
    resources = rng.choice([[], ["cpu", "mem"], ["cpu", "mem"], ["cpu", "gpu", "mem"]])
    slots = not resources or rng.random() < 0.5
    nodes = []
    for i in range(rng.randint(3, 9)):
        node: dict[str, Any] = {"id": f"n{i}", "rack": f"r{i % 3}", "speed": rng.choice([1.0, 1.0, 2.0])}
        if slots:
            node["map_slots"] = rng.randint(1, 12)
            node["reduce_slots"] = rng.randint(1, 4)
        if resources:
            node["resources"] = {r: float(rng.randint(4, 16)) for r in resources}
        nodes.append(node)
    ids = [node["id"] for node in nodes]
    listed = rng.random() < 0.4
    jobs = []
    for i in range(rng.randint(2, 12)):
        groups: list[dict[str, Any]] = [{"duration": rng.choice([1.0, 2.0, 3.0]), "count": rng.randint(1, 30)}]
        if rng.random() < 0.15:
            groups.append({"duration": 4.0, "count": rng.randint(1, 5)})
        demand = {r: rng.choice([0.3, 0.7, 1.0, 2.5]) for r in resources}
        if resources and (not slots or rng.random() < 0.8):  # (nodes without slots: every task demands)
            for group in groups:
                group["demand"] = demand
        if listed:
            for group in groups:
                group["replicas"] = [
                    [] if rng.random() < 0.3 else rng.sample(ids, rng.randint(1, 2)) for _ in range(group["count"])
                ]
        stages: list[dict[str, Any]] = [{"type": "map", "tasks": groups}]
        if rng.random() < 0.6:
            reduces: dict[str, Any] = {"duration": 2.0, "count": rng.randint(1, 20)}
            if not slots:
                reduces["demand"] = demand
            stages.append({"type": "reduce", "tasks": [reduces]})
        jobs.append({"id": f"j{i}", "submit_time": float(rng.choice([0, 0, 1, 3, 7])), "stages": stages})
    extra: dict[str, Any] = {}
    if not listed and rng.random() < 0.6:
        extra["placement"] = {"replicas": rng.randint(1, 3), "seed": rng.randint(0, 9)}
    timing: dict[str, Any] = {}
    if rng.random() < 0.2:
        timing["straggler_rate"] = 0.3
    if rng.random() < 0.3:
        timing["reduce_slowstart"] = rng.choice([0.0, 0.5])
    if timing:
        extra["timing"] = timing
    if rng.random() < 0.5:
        extra["faults"] = [{"node": "n1", "down": rng.choice([1.0, 2.5, 4.0]), "up": rng.choice([6.0, 12.0])}]
    return workload(nodes, jobs, **extra)


def _run(w: Any, single: bool, seed: int) -> tuple[str, int]:
    sim = Simulation(w, Runs(single, seed), mode="event")
    rec = sim.run()
    return rec.event_log_hash(), sim.events


@pytest.mark.parametrize("block", range(4))
def test_a_run_joining_its_far_tasks_at_once_starts_what_single_launches_start(
    block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    joined = {"none": 0, "array": 0, "listed": 0, "requeued": 0, "demand": 0, "slots": 0}
    join_far = Launches._join_far

    def spy(self: Any, j: Any, stage: Any, node: int, got: int, room: int, demand: Any) -> int:
        requeued = any(stage.state[t] == 0 for t in stage.requeue)
        m: int = join_far(self, j, stage, node, got, room, demand)
        if m:
            kind = "none" if stage.replicas is None else "listed" if isinstance(stage.replicas, list) else "array"
            joined[kind] += m
            joined["requeued"] += m if requeued else 0
            joined["demand"] += m if demand is not None else 0
            joined["slots"] += m if self.uses_slots else 0
        return m

    monkeypatch.setattr(Launches, "_join_far", spy)
    for seed in range(block * 40, block * 40 + 40):
        w = _workload(random.Random(seed))
        assert _run(w, False, seed) == _run(w, True, seed), seed
    assert all(joined.values()), joined
