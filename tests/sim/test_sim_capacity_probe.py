"""Capacity's walks ask no node- or rack-local launch where the stage's locality stacks hold no task.

``Capacity._maps`` and ``_walk_fitting`` test the rack's locality stack
(:func:`mropt.sim.policies.locality_probe.finds_no_local_task`) before asking ``launch(..., RACK)``;
an empty one is the launch's failure without the call. Spied here: the probe answers on the walks
job by job and in bulk, the launches it answers are not asked, and the runs give the plain rule's
event log (``Capacity._assign_reference`` asks every launch).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.launches import Launches
from mropt.sim.policies import capacity
from mropt.sim.policies.locality_probe import finds_no_local_task
from mropt.sim.policy import make_policy
from mropt.sim.state import NODE, RACK, Job, Stage

from sim_helpers import same_log, starts, workload

#: whether a spied ``_walk_fitting`` is running (a probe then counts as one in bulk)
_IN_BULK = [False]


def _spied_run(w: WorkloadInstance, params: dict[str, Any]) -> tuple[str, dict[str, int]]:
    """The fast path's event-log hash, and what the probe answered and the RACK-level launches asked;
    each probe that said "no task" checked against ``Stage.take`` on a copy of the stacks' answer."""
    seen = {"empty": 0, "empty_in_bulk": 0, "asked_rack": 0, "failed_rack": 0}
    plain_launch = Launches.launch

    def probe(job: Job, slot_type: int, node: int, rack: int, level: int) -> bool:
        got = finds_no_local_task(job, slot_type, node, rack, level)
        if got:
            seen["empty"] += 1
            seen["empty_in_bulk"] += _IN_BULK[0]
            stage: Stage = job.stages[job.cur]
            assert stage.node_q is not None and stage.node_q.pop(node, stage.state) < 0  # (take's first pop)
        return got

    def launch(self: Any, job: int, node: int, stype: int, level: int = 2) -> int:
        got = plain_launch(self, job, node, stype, level)
        if level == RACK:
            seen["asked_rack"] += 1
            seen["failed_rack"] += got < 0
        return got

    mp = pytest.MonkeyPatch()
    mp.setattr(capacity, "finds_no_local_task", probe)
    mp.setattr(Launches, "launch", launch)
    try:
        rec = Simulation(w, make_policy("capacity", params), stall_limit=500).run()
    finally:
        mp.undo()
    return rec.event_log_hash(), seen


def _two_racks() -> WorkloadInstance:
    """``a``'s 12 maps have their input on n0 (rack r0); n2 and n3 are in r1. ``b`` (no replicas)
    arrives at 1. Every heartbeat of n2 or n3 after ``a``'s first launch finds its stacks built and
    r1's stack empty: the walk passes ``a`` by without asking for a local map."""
    nodes = [{"id": f"n{i}", "rack": "r0" if i < 2 else "r1", "map_slots": 2, "reduce_slots": 0} for i in range(4)]
    a = {"id": "a", "stages": [{"type": "map", "tasks": [{"duration": 20.0, "replicas": ["n0"]} for _ in range(12)]}]}
    b = {"id": "b", "submit_time": 1.0, "stages": [{"type": "map", "tasks": [{"duration": 5.0, "count": 6}]}]}
    return workload(nodes, [a, b])


def test_a_rack_without_the_jobs_input_is_not_asked_for_a_local_map() -> None:
    """On ``_two_racks`` the probe answers, every RACK-level launch asked found a task or was asked
    before the stacks were built, and the log is the plain rule's."""
    w = _two_racks()
    params = {"locality_wait_factor": 1.0}
    got_hash, seen = _spied_run(w, params)
    assert seen["empty"] >= 5, seen
    assert seen["failed_rack"] <= 2, seen  # (before: one per heartbeat of r1's nodes while ``a`` waited)
    plain = same_log(w, "capacity", params)
    assert plain.event_log_hash() == got_hash
    assert [loc for _, _, loc in starts(plain, "a")].count("node") >= 4


def _backlog(rng: random.Random, n_jobs: int) -> WorkloadInstance:
    """Jobs whose maps read input on one or two racks of three, some without replicas, of one demand
    or two: walks job by job and (``BULK_MIN`` lowered) in bulk meet racks without their input."""
    nodes = [
        {
            "id": f"n{i}",
            "rack": f"r{i % 3}",
            "map_slots": 4,
            "reduce_slots": 1,
            "resources": {"cpu": 4.0, "mem": 4.0},
        }
        for i in range(9)
    ]
    jobs = []
    for i in range(n_jobs):
        racks = rng.sample(range(3), rng.randint(1, 2))
        homes = [f"n{k}" for k in range(9) if k % 3 in racks]
        demand = {"cpu": float(rng.randint(1, 3)), "mem": 1.0}
        tasks: list[dict[str, Any]] = [
            {"duration": float(rng.randint(3, 9)), "demand": demand}
            | ({} if rng.random() < 0.15 else {"replicas": rng.sample(homes, 1)})
            for _ in range(rng.randint(1, 6))
        ]
        stages: list[dict[str, Any]] = [{"type": "map", "tasks": tasks}]
        if rng.random() < 0.2:
            stages.append({"type": "reduce", "tasks": [{"duration": 2.0, "count": 1}]})
        jobs.append(
            {"id": f"j{i}", "submit_time": float(rng.randint(0, 40)), "user": f"u{rng.randint(0, 2)}", "stages": stages}
        )
    return workload(nodes, jobs)


@pytest.mark.parametrize("bulk_min", [capacity.BULK_MIN, 4])
def test_the_probe_gives_the_plain_rules_log_on_backlogs(bulk_min: int) -> None:
    """Random backlogs, job by job (default ``BULK_MIN``) and in bulk (4): the probe answers often,
    and every run's event log is the plain rule's."""
    rng = random.Random(f"capacity-probe-{bulk_min}")
    mp = pytest.MonkeyPatch()
    mp.setattr(capacity, "BULK_MIN", bulk_min)
    walks = {"bulk": 0}
    walk = capacity.Capacity._walk_fitting

    def spied_walk(self: Any, *args: Any) -> int:
        walks["bulk"] += 1
        _IN_BULK[0] = True
        try:
            return walk(self, *args)
        finally:
            _IN_BULK[0] = False

    mp.setattr(capacity.Capacity, "_walk_fitting", spied_walk)
    empty = in_bulk = 0
    try:
        for _ in range(6):
            w = _backlog(rng, 60)
            params = {"locality_wait_factor": rng.choice([-1.0, 0.5, 2.0])}
            got_hash, seen = _spied_run(w, params)
            empty += seen["empty"]
            in_bulk += seen["empty_in_bulk"]
            assert same_log(w, "capacity", params, stall_limit=500).event_log_hash() == got_hash
    finally:
        mp.undo()
    assert empty >= 1_000, empty
    assert (walks["bulk"] > 100) == (bulk_min < capacity.BULK_MIN), walks
    assert (in_bulk > 500) == (bulk_min < capacity.BULK_MIN), in_bulk  # (probes in ``_walk_fitting``)


def test_the_probe_asks_only_where_the_launch_would_look() -> None:
    """``finds_no_local_task`` says nothing (False) off the current stage's type, at level ANY, or
    before the stacks are built; at NODE it reads the node's stack, at RACK the rack's."""
    w = _two_racks()
    sim = Simulation(w, make_policy("capacity"))
    job: Any = sim.jobs[0]
    assert not finds_no_local_task(job, 0, 2, 1, RACK)  # (stacks not built yet: ask the launch)
    stage = job.stages[0]
    stage.build_locality(sim.node_rack)
    assert finds_no_local_task(job, 0, 2, 1, RACK)  # r1 holds none of a's input
    assert finds_no_local_task(job, 0, 1, 0, NODE)  # n1 neither
    assert not finds_no_local_task(job, 0, 1, 0, RACK)  # r0 (n0) does
    assert not finds_no_local_task(job, 0, 0, 0, NODE)
    assert not finds_no_local_task(job, 0, 2, 1, 2)  # level ANY: ask
    assert not finds_no_local_task(job, 1, 2, 1, RACK)  # not the current stage's type: ask
