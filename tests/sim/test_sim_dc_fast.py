"""DC's plain rule and its fast path decide alike (``mropt.sim.policies.dc``, "Speed").

``make_policy("dc", reference=True)`` runs ``Dc._assign_reference`` (the active jobs sorted in EDF
order at every offer, every job asked for a launch) and keeps the whole reservation calendar; the
default runs ``Dc._assign_fast`` (kept EDF order, the jobs that may launch listed per instant) and
drops the reservations that ended. On seeded random slot workloads with deadlines (both
availabilities, event and heartbeat modes, replicas, slow-start, faults, speculation rules, jobs
without a deadline) both must give the same event log, and the kept lists must match a plain
recomputation at every offer.
"""

from __future__ import annotations

import random
from typing import Any

from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy
from mropt.sim.speculation.table import rules
from mropt.sim.state import ANY

from sim_helpers import deadline_workload, mr_job, same_log, workload


def test_reference_and_fast_dc_give_the_same_event_log() -> None:
    rng = random.Random("dc-fast")
    later_starts = rejected = 0
    for _ in range(40):
        w = deadline_workload(rng)
        params = {"availability": rng.choice(["calendar", "calendar", "current"])}
        rule = rng.choice([None, None, *rules()])
        mode = rng.choice(["event", "event", "heartbeat"])
        plain = same_log(w, "dc", params, rule, {"self_check": True}, mode=mode, seed=3, stall_limit=300)
        reasons = list(plain.jobs_columns()["reason"])
        for reason, job in zip(reasons, w.jobs, strict=True):
            accepted = reason.startswith("DC: n_m^min")
            later_starts += accepted and f"S_m = {job.submit_time:g}," not in reason
            rejected += not accepted
    assert later_starts > 0 and rejected > 0  # the calendar's later starts and rejections were compared


def test_an_offer_that_can_start_nothing_asks_no_job() -> None:
    # 4 nodes of 4 map slots and 1 reduce slot. j0: 6 maps of 10 by 60, n_m^min = 1. j1: maps of 5
    # and 10, a reduce of 3, by 40: S_r^max = 40 - 3/4, n_m^min = ceil(15 / 39.25) = 1, its maps end
    # at 15, n_r^min = 1. Slots stay idle and each pass offers them; at 15 j1's reduce takes the first
    # node's reduce slot, and the plain rule then asks j1 and j0 for a reduce on every other node
    w = workload(
        [{"id": f"n{i}", "map_slots": 4, "reduce_slots": 1} for i in range(4)],
        [
            mr_job("j0", [10.0] * 6, submit_time=0.0, deadline=60.0, benefit=1.0),
            mr_job("j1", [5.0, 10.0], [3.0], submit_time=0.0, deadline=40.0, benefit=1.0),
        ],
    )
    sim = Simulation(w, make_policy("dc"), mode="event")
    started = []
    launch_tasks = sim.launch_tasks

    def counting(job: int, node: int, slot_type: int, level: int = ANY, count: int = 1) -> Any:
        out = launch_tasks(job, node, slot_type, level, count)
        started.append(out[1])
        return out

    sim.launch_tasks = counting  # type: ignore[method-assign]
    rec = sim.run()
    assert list(rec.jobs_columns()["finish"]) == [60.0, 18.0]
    assert sum(started) == 9
    assert 0 not in started  # every call started a task: none asked a job that could start nothing
