"""Event mode's accelerated pass decides as the plain one does (issue 32).

Two accelerations: the room index of ``EventOffers._pass`` (a pass after new work visits the
nodes with a free slot, not every node; ``EventOffers.plain`` turns it off) and, on it, FIFO's
offer run with its launches started in bulk (``mropt.sim.policies.fifo_runs`` and
``mropt.sim.launch_runs``; ``without={"runs"}`` turns it off). On seeded random slot workloads
(many nodes of a few slots, jobs with one or two task groups, priorities, replicas, slow-start,
faults, node speeds, batches on and off, utilisation recorded or not) the plain pass, the room
index alone and both must give the same event log, event count and attempt count; and the runs
must have started most of the tasks where they are allowed.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.launch_runs import LaunchRuns, Segment
from mropt.sim.offers import EventOffers
from mropt.sim.policy import make_policy

from sim_helpers import mr_job, random_extras, slot_nodes, workload


def random_workload(rng: random.Random) -> tuple[WorkloadInstance, bool]:
    """A slot cluster of up to 14 nodes and jobs arriving in bursts; and whether its runs are allowed."""
    speeds = rng.random() < 0.15
    nodes = slot_nodes(rng, most=14, racks=3, speeds=speeds)
    jobs = []
    for i in range(rng.randint(3, 30)):
        groups = [{"duration": rng.choice([1.0, 2.0, 4.0]), "count": rng.randint(1, 12)}]
        if rng.random() < 0.15:
            groups.append({"duration": 3.0, "count": rng.randint(1, 4)})
        stages: list[dict[str, Any]] = [{"type": "map", "tasks": groups}]
        if rng.random() < 0.7:
            stages.append(
                {"type": "reduce", "tasks": [{"duration": rng.choice([2.0, 3.0]), "count": rng.randint(1, 6)}]}
            )
        jobs.append(
            {
                "id": f"j{i}",
                "submit_time": float(rng.choice([0, 0, 1, 2, 5, 8, 13])),
                "priority": rng.choice([0, 0, 0, 1, -1]),
                "stages": stages,
            }
        )
    extra = random_extras(rng, 0.25, 0.25, (0.0, 0.5), 0.25, down=(2.0, 6.0), up=(9.0, 20.0))
    return workload(nodes, jobs, **extra), not speeds


def run(w: WorkloadInstance, policy: str, room: bool, runs: bool, **options: Any) -> tuple[str, int, int, int]:
    """(event-log hash, events, attempts, tasks the runs started) of one event-mode run."""
    p = make_policy(policy, {}, without=() if runs or policy != "fifo" else {"runs"})
    sim = Simulation(w, p, mode="event", **options)
    offers = sim.offers
    assert isinstance(offers, EventOffers)
    if not room:
        offers._room = offers._map_room = None
    if not runs or not room:
        offers._runs = None
    started = [0]
    if offers._runs is not None:  # count what the runs start
        start = offers._runs.start

        def counted(plan: list[Segment]) -> None:
            started[0] += sum(len(nodes) for _, _, nodes in plan)
            start(plan)

        offers._runs.start = counted  # type: ignore[method-assign]
    rec = sim.run()
    return rec.event_log_hash(), sim.events, sim.next_attempt, started[0]


def test_fifo_runs_and_the_room_index_give_the_plain_passes_event_log() -> None:
    rng = random.Random("fifo-runs")
    planned = tasks = 0
    for _ in range(60):
        w, allowed = random_workload(rng)
        options = {"batch": rng.random() < 0.85, "record_utilisation": rng.random() < 0.3}
        plain = run(w, "fifo", room=False, runs=False, **options)
        assert plain[3] == 0
        for room, runs in ((True, False), (True, True)):
            fast = run(w, "fifo", room=room, runs=runs, **options)
            assert fast[:3] == plain[:3], (room, runs, options, w)
            if runs and room and allowed and options["batch"]:
                planned += fast[3]
                tasks += w.n_tasks
    assert planned > 0.5 * tasks  # the runs started most tasks where allowed


@pytest.mark.parametrize("policy", ["fair", "capacity"])
def test_the_room_index_gives_the_plain_passes_event_log(policy: str) -> None:
    rng = random.Random(f"room-{policy}")
    for _ in range(25):
        w, _ = random_workload(rng)
        assert run(w, policy, room=True, runs=True)[:3] == run(w, policy, room=False, runs=False)[:3], w


def test_plain_turns_both_off_and_the_runs_stay_off_where_not_allowed() -> None:
    w = workload([{"id": "n", "count": 3, "map_slots": 2, "reduce_slots": 1}], [mr_job("a", 1.0, 2.0)])
    sim = Simulation(w, make_policy("fifo"), mode="event")
    offers = sim.offers
    assert isinstance(offers, EventOffers) and offers._room is not None and isinstance(offers._runs, LaunchRuns)
    offers.plain()
    assert offers._room is None and offers._map_room is None and offers._runs is None
    assert Simulation(w, make_policy("fifo"), mode="event", batch=False).offers._runs is None
