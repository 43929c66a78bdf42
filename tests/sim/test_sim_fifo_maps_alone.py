"""FIFO's offer run for a pass with no reduce pending (``fifo_runs._maps_alone``) decides as
``Fifo.assign`` does (issue 32).

Such a pass is planned without the node-by-node loop: a node takes ``capacity - slots + free``
maps, its nodes repeated that many times are cut into the queue's jobs' runnable maps. On seeded
random slot clusters (equal or mixed slot counts), with map waves of whole-second tasks that free
several slots of a node at once, the tail of a run where fewer maps remain than the cluster has
slots (a tracker capacity below its slots), a node going down, priorities, slow-start, and
placements (stages the run cannot plan: its fallback to the loop), the run must give the plain
rule's (``reference=True``) event log, event count, attempt count and jobs table; and every kind of pass
above must have been planned this way at least once.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.launch_runs import LaunchRuns
from mropt.sim.policies import fifo_runs
from mropt.sim.policies.fifo import Fifo
from mropt.sim.policy import make_policy
from mropt.sim.state import MAP

from sim_helpers import random_extras, slot_nodes, workload


def random_workload(rng: random.Random) -> WorkloadInstance:
    """Up to 12 nodes (all of one slot count, or mixed), jobs of 1-30 maps of 1-3 s in bursts."""
    if rng.random() < 0.5:
        maps, reduces = rng.randint(1, 3), rng.randint(0, 2)
        nodes = [
            {"id": f"n{i}", "rack": f"r{i % 2}", "map_slots": maps, "reduce_slots": reduces if i else 1}
            for i in range(rng.randint(2, 12))
        ]
    else:
        nodes = slot_nodes(rng, most=12, racks=2)
    jobs = []
    for i in range(rng.randint(2, 25)):
        groups = [{"duration": float(rng.randint(1, 3)), "count": rng.randint(1, 30)}]
        if rng.random() < 0.1:  # two task groups: a stage the run does not plan, behind or before others
            groups.append({"duration": 1.0, "count": rng.randint(1, 4)})
        stages: list[dict[str, Any]] = [{"type": "map", "tasks": groups}]
        if rng.random() < 0.6:
            stages.append({"type": "reduce", "tasks": [{"duration": 2.0, "count": rng.randint(1, 5)}]})
        jobs.append(
            {
                "id": f"j{i}",
                "submit_time": float(rng.choice([0, 0, 0, 1, 3, 6, 10])),
                "priority": rng.choice([0, 0, 1]),
                "stages": stages,
            }
        )
    return workload(nodes, jobs, **random_extras(rng, 0.2, 0.25, (0.0, 0.5), 0.3, down=(1.0, 4.0), up=(6.0, 15.0)))


def run(w: WorkloadInstance, reference: bool) -> tuple[tuple[str, int, int], dict[str, np.ndarray]]:
    """(event-log hash, events, attempts) and the jobs table (its first starts are not in the log)."""
    sim = Simulation(w, make_policy("fifo", reference=reference), mode="event")
    rec = sim.run()
    return (rec.event_log_hash(), sim.events, sim.next_attempt), rec.jobs_columns()


def test_the_maps_only_pass_gives_the_plain_rules_event_log(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: Counter[str] = Counter()
    planned, listed, counted = fifo_runs._maps_alone, fifo_runs._slots_taken, fifo_runs._launches
    calls: Counter[str] = Counter()  # this pass's calls of the slot list and of the launch count

    def watched(policy: Fifo, nodes: Sequence[int], runs: LaunchRuns) -> bool:
        sim = policy.sim
        free = [sim.free[MAP][n] for n in nodes]
        # the bound of the pass's launches: every slot of a node up is free or runs an attempt
        assert sim.total_slots[MAP] - sim.busy[MAP] == sum(sim.free[MAP])
        started = sim.next_attempt
        calls.clear()
        done = planned(policy, nodes, runs)
        if calls["launches"]:  # a job not eligible below the free slots, fewer launches than slots
            seen["not eligible, launches counted"] += 1
        if not done:
            seen["fallback"] += 1
            assert not calls["slots"], "a pass that falls back listed its slots"
        elif sim.next_attempt > started:
            seen["planned"] += 1
            seen["capacity below slots"] += sim.remaining[MAP] < sim.total_slots[MAP]
            seen["several free slots on a node"] += max(free) > 1
            live = sim._live  # (the attempts this pass started: ids from ``started`` on)
            seen["several jobs"] += len({live[i].job for i in range(started, sim.next_attempt) if i in live}) > 1
        return done

    def listing(*args: Any) -> list[int]:
        calls["slots"] += 1
        return listed(*args)

    def counting(*args: Any) -> int:
        calls["launches"] += 1
        return counted(*args)

    monkeypatch.setattr(fifo_runs, "_maps_alone", watched)
    monkeypatch.setattr(fifo_runs, "_slots_taken", listing)
    monkeypatch.setattr(fifo_runs, "_launches", counting)
    rng = random.Random("fifo-maps-alone")
    for _ in range(80):
        w = random_workload(rng)
        (fast, fast_jobs), (plain, plain_jobs) = run(w, reference=False), run(w, reference=True)
        assert fast == plain, w
        assert fast_jobs.keys() == plain_jobs.keys()
        for name, column in plain_jobs.items():
            np.testing.assert_array_equal(fast_jobs[name], column, err_msg=name)
    kinds = ("planned", "fallback", "capacity below slots", "several free slots on a node", "several jobs")
    kinds += ("not eligible, launches counted",)
    for kind in kinds:
        assert seen[kind] > 0, (kind, seen)


def test_a_job_not_eligible_past_the_passs_launches_is_not_a_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass over fewer nodes than have free slots, fewer maps remaining than the cluster's slots:
    2 nodes of 4 map slots, job a's 2 maps then b's 2 (two task groups: not planned) at time 0. The
    remaining maps 4 < 8 slots give n0 the capacity ceil(4 x 4 / 8) = 2, so a pass over n0 alone
    launches a's 2 maps there (Fifo.assign's own answer) and stops before b, which it must not
    fall back for, though b comes before n0's 4 free slots are used up."""
    nodes = [{"id": f"n{i}", "rack": "r0", "map_slots": 4, "reduce_slots": 1} for i in range(2)]
    jobs = [
        {"id": "a", "submit_time": 0.0, "stages": [{"type": "map", "tasks": [{"duration": 1.0, "count": 2}]}]},
        {
            "id": "b",
            "submit_time": 0.0,
            "stages": [{"type": "map", "tasks": [{"duration": 1.0, "count": 1}, {"duration": 2.0, "count": 1}]}],
        },
    ]
    planned = fifo_runs._maps_alone
    first: list[tuple[bool, list[int], list[int]]] = []

    def n0_alone(policy: Fifo, nodes: Sequence[int], runs: LaunchRuns) -> bool:
        if first:
            return planned(policy, nodes, runs)
        sim = policy.sim
        assert list(nodes) == [0, 1] and sim.remaining[MAP] == 4 and sim.total_slots[MAP] == 8
        done = planned(policy, [0], runs)
        first.append((done, [sim.jobs[j].running[MAP] for j in range(2)], list(sim.free[MAP])))
        return done

    monkeypatch.setattr(fifo_runs, "_maps_alone", n0_alone)
    Simulation(workload(nodes, jobs), make_policy("fifo"), mode="event").run()
    assert first == [(True, [2, 0], [2, 4])]
