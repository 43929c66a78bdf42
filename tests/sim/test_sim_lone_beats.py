"""Heartbeat mode's lone heartbeats (``mropt.sim.lone_beats``: run outside the engine's queue when
nothing else happens at their time) keep the engine's order, counts and outputs.

Beside ``test_sim_heartbeat_counts`` (the same random workloads, stalls), these runs stop at a
random ``until``, record utilisation, and run a policy that acts at a heartbeat at the
heartbeat's own time (it kills the attempt it just started, whose node then beats again at that
time, and sets a timer for now): the rest of such an instant is the engine's. A run on the fast
path and one on the plain rules (``HeartbeatOffers.plain``: every heartbeat an event of the
queue) must give the same event log, event count, stop, final time and utilisation rows.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.event_queue import EventQueue
from mropt.sim.heartbeat_offers import HeartbeatOffers
from mropt.sim.offers import C_DECIDE, EV_HEARTBEAT, EV_TIMER
from mropt.sim.policy import Policy, make_policy

from sim_helpers import Restless, fair_params, heartbeat_outputs, pooled_workload


def run(w: WorkloadInstance, policy: Policy, plain: bool, until: float | None, limit: int) -> tuple[Any, ...]:
    return heartbeat_outputs(w, policy, plain, seed=3, until=until, limit=limit)


@pytest.mark.parametrize("policy", ["fair", "restless"])
def test_lone_heartbeats_give_the_plain_rules_outputs(policy: str) -> None:
    rng = random.Random(f"lone-beats-{policy}")
    for _ in range(25):
        w = pooled_workload(rng)
        params = fair_params(rng) if policy == "fair" else {}
        until = rng.choice([None, float(rng.randint(5, 60)), rng.randint(5, 60) + 0.75])
        limit = rng.choice([3, 300])
        fast, plain = (
            (run(w, make_policy("fair", params) if policy == "fair" else Restless(), side, until, limit))
            for side in (False, True)
        )
        assert fast == plain, (policy, params, until, limit, w)


def test_a_timer_pushed_at_a_held_heartbeats_time_comes_after_it() -> None:
    """The heartbeat was scheduled first: ``before_decide`` puts it into the queue before the timer
    (a timer set through the engine, ``Simulation.wake_at``, on a run not started yet)."""
    sim = Simulation(pooled_workload(random.Random("held")), make_policy("fifo"), mode="heartbeat")
    assert isinstance(sim.offers, HeartbeatOffers)
    held = sim.offers._held
    assert held is not None
    queue: EventQueue = sim._queue
    held.hold(6.0, C_DECIDE, EV_HEARTBEAT, 4)
    held.hold(9.0, C_DECIDE, EV_HEARTBEAT, 2)
    sim.wake_at(6.0, "t")  # released: node 4 first
    sim.wake_at(7.0, "u")  # nothing held at 7
    sim.push(9.0, 0, 0, "done")  # a completion: another class, the heartbeat stays held
    assert queue.at[6.0][C_DECIDE] == [(EV_HEARTBEAT, 4), (EV_TIMER, "t")]
    assert queue.at[7.0][C_DECIDE] == [(EV_TIMER, "u")]
    assert held.times == [9.0] and held.at == {9.0: 2}
    assert len(queue) == 4
    assert np.isclose(sorted(queue.times)[0], 6.0)
