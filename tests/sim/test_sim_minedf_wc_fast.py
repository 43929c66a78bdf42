"""MinEDF-WC's plain offer and its fast path decide alike (``mropt.sim.policies.minedf_wc``).

``make_policy("minedf-wc", reference=True)`` runs ``MinEdfWc._assign_reference`` (the active jobs
sorted in EDF order at every offer, every job asked for one task at a time until its launch returns
-1); the default runs ``MinEdfWc._assign_fast`` (the EDF order kept between arrivals and ends, jobs
without a runnable task passed by, a job's launches in one ``launch_tasks`` call). On seeded random
slot workloads with deadlines (every bound, commit and reclaim rule, event and heartbeat modes,
replicas, slow-start, faults, speculation rules) both must give the same event log and reasons.
"""

from __future__ import annotations

import random
from typing import Any

from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy
from mropt.sim.speculation.table import rules
from mropt.sim.state import ANY

from sim_helpers import deadline_workload, same_log, workload


def test_reference_and_fast_minedf_wc_give_the_same_event_log() -> None:
    rng = random.Random("minedf-wc-fast")
    accepted = killed = 0
    for _ in range(40):
        w = deadline_workload(rng)
        params = {
            "bound": rng.choice(["low", "avg", "up"]),
            "commit": rng.choice(["job", "phase"]),
            "reclaim": rng.choice(["wait", "kill"]),
        }
        rule = rng.choice([None, None, *rules()])
        mode = rng.choice(["event", "event", "heartbeat"])
        plain = same_log(w, "minedf-wc", params, rule, mode=mode, seed=5, stall_limit=300)
        accepted += sum(reason.startswith("MinEDF-WC: (m*, r*)") for reason in plain.jobs_columns()["reason"])
        killed += params["reclaim"] == "kill"
    assert accepted > 40 and killed > 5  # admitted jobs ran, under both reclaim rules


def _calls(w: Any, reference: bool) -> tuple[list[float], list[tuple[int, int]]]:
    """The jobs' finish times and every ``launch_tasks`` call's (job, tasks started)."""
    sim = Simulation(w, make_policy("minedf-wc", reference=reference), mode="event")
    started: list[tuple[int, int]] = []
    launch_tasks = sim.launch_tasks

    def counting(job: int, node: int, slot_type: int, level: int = ANY, count: int = 1) -> Any:
        out = launch_tasks(job, node, slot_type, level, count)
        started.append((job, out[1]))
        return out

    sim.launch_tasks = counting  # type: ignore[method-assign]
    return list(sim.run().jobs_columns()["finish"]), started


def test_an_offer_asks_only_the_jobs_that_can_start_a_task() -> None:
    # one node of 4 map slots; j0 (deadline 100) has 2 maps of 10, j1 (deadline 200) 6 maps of 10:
    # m* of j0 = 20 / 100 -> 1, of j1 = 60 / 200 -> 1. At 0 the plain rule asks j0 and j1 for their
    # minimums, then j0 for spare slots until it has no map left (-1), then j1 until the node is
    # full; at 10 every slot frees and j1's last 4 maps take them (its minimum, then 3 spare ones).
    # Every call of the fast path starts a task.
    jobs = [
        {"id": "j0", "stages": [{"type": "map", "tasks": [{"duration": 10.0, "count": 2}]}], "deadline": 100.0},
        {"id": "j1", "stages": [{"type": "map", "tasks": [{"duration": 10.0, "count": 6}]}], "deadline": 200.0},
    ]
    w = workload([{"id": "n0", "map_slots": 4, "reduce_slots": 1}], jobs)
    finish, plain = _calls(w, reference=True)
    assert finish == [10.0, 20.0]
    assert plain[:5] == [(0, 1), (1, 1), (0, 1), (0, 0), (1, 1)]  # one task a call; j0's -1
    finish, fast = _calls(w, reference=False)
    assert finish == [10.0, 20.0]
    assert fast == [(0, 1), (1, 1), (0, 1), (1, 1), (1, 1), (1, 3)]
