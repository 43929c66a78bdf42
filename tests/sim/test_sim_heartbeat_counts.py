"""Heartbeat mode's fast path on slots (``HeartbeatOffers._beat_counts`` and the inlined room test
of ``_schedule_all``) decides as the plain rules (``beat``, ``_schedule``, ``_room``) do.

On the seeded random slot workloads of ``test_sim_heartbeat_reference`` (pools, queues, replicas,
slow-start, faults) under ``fair``, ``capacity`` and ``fifo``, and with a small stall limit so
that some runs stall, a run on the fast path and one on the plain rules (``HeartbeatOffers.plain``)
must give the same event log and the same number of events.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.heartbeat_offers import HeartbeatOffers
from mropt.sim.policy import make_policy

from sim_helpers import capacity_params, fair_params, pooled_workload


def run(
    w: WorkloadInstance, policy: str, params: dict[str, Any], plain: bool, stall_limit: int
) -> tuple[str, int, bool]:
    sim = Simulation(w, make_policy(policy, params), seed=3, mode="heartbeat", stall_limit=stall_limit)
    offers = sim.offers
    assert isinstance(offers, HeartbeatOffers)
    assert offers._counts_only  # slots, no demands, no rule: the fast path is on unless turned off
    if plain:
        offers.plain()
    rec = sim.run()
    return rec.event_log_hash(), sim.events, sim.stalled


@pytest.mark.parametrize("policy", ["fair", "capacity", "fifo"])
def test_fast_heartbeats_give_the_plain_rules_event_log(policy: str) -> None:
    rng = random.Random(f"heartbeat-counts-{policy}")
    draw = {"fair": fair_params, "capacity": capacity_params}.get(policy, lambda _: {})
    stalled = 0
    for _ in range(25):
        w = pooled_workload(rng)
        params = draw(rng)
        limit = rng.choice([2, 5, 300])
        fast = run(w, policy, params, plain=False, stall_limit=limit)
        assert fast == run(w, policy, params, plain=True, stall_limit=limit), (policy, params, limit, w)
        stalled += fast[2]
    if policy == "fair":
        assert stalled > 0  # the stall path was compared too
