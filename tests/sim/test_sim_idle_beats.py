"""The idle nodes' heartbeats held in bulk when new work appears (``mropt.sim.idle_beats``).

The pass must hold exactly the heartbeats the plain rule schedules (``HeartbeatOffers._schedule``,
``_next_beat``: a node up, not scheduled, with a free slot of a type with pending work, at its
phase plus whole intervals), and whole runs on clusters big enough for the bulk path (over
``MIN_NODES`` idle nodes) must give the plain rules' event log, counts, stop and rows, with
nodes going down and up, and with phases cut to whole seconds (times that collide: the pass then
goes node by node).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim import idle_beats
from mropt.sim.engine import Simulation
from mropt.sim.offers import C_DECIDE, EV_HEARTBEAT, HeartbeatOffers
from mropt.sim.policy import make_policy
from mropt.sim.state import MAP, REDUCE

from sim_helpers import fair_params, heartbeat_outputs, slot_stages


def big_workload(rng: random.Random, faults: bool, n: int = 0) -> WorkloadInstance:
    """``n`` (else 40 to 160) slot nodes on 4 racks, bursts of jobs (most of the cluster idle between them)."""
    n = n or rng.randint(40, 160)
    nodes = [
        {"id": f"n{i}", "rack": f"r{i % 4}", "map_slots": rng.randint(1, 3), "reduce_slots": rng.randint(0, 2)}
        for i in range(n)
    ]
    nodes[0]["reduce_slots"] = 1
    jobs = [
        {
            "id": f"j{i}",
            "submit_time": float(rng.choice([0, 0, 5, 17, 40, 41]) + rng.random() * rng.choice([0, 3])),
            "pool": f"p{i % 2}",
            "stages": slot_stages(rng, reduce=0.6),
        }
        for i in range(rng.randint(3, 14))
    ]
    data: dict[str, Any] = {"cluster": {"nodes": nodes}, "jobs": jobs}
    if faults:
        data["faults"] = [
            {"node": f"n{rng.randrange(n)}", "down": float(rng.randint(0, 20)), "up": float(rng.randint(21, 60))}
            for _ in range(rng.randint(1, 5))
        ]
    return WorkloadInstance.from_dict(data)


def count_bulk(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the passes :func:`idle_beats.schedule_idle` made in bulk (it returned None)."""
    done = [0]
    real = idle_beats.schedule_idle

    def counting(offers: HeartbeatOffers, maps: bool, reduces: bool) -> list[int] | None:
        nodes = real(offers, maps, reduces)
        done[0] += nodes is None
        return nodes

    monkeypatch.setattr("mropt.sim.offers.schedule_idle", counting)
    return done


@pytest.mark.parametrize("policy", ["fair", "fifo"])
def test_bulk_passes_give_the_plain_rules_outputs(policy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(f"idle-beats-{policy}")
    bulk = count_bulk(monkeypatch)
    for k in range(10):
        w = big_workload(rng, faults=k % 2 == 1)
        params = fair_params(rng) if policy == "fair" else {}
        until = rng.choice([None, float(rng.randint(10, 50))])
        whole = k % 5 == 4
        before = bulk[0]
        runs = [
            heartbeat_outputs(w, make_policy(policy, params), plain, seed=5, until=until, limit=300, whole_phases=whole)
            for plain in (False, True)
        ]
        if not whole:
            assert bulk[0] > before  # the bulk path ran
        assert runs[0] == runs[1], (policy, params, until, whole, w)


def test_a_pass_holds_each_idle_nodes_next_heartbeat() -> None:
    """At random times and states, the pass holds ``_next_beat(node)`` for exactly the nodes the plain
    rule (``_schedule``) schedules, and marks them scheduled."""
    rng = random.Random("idle-pass")
    w = big_workload(rng, faults=False, n=200)
    for _ in range(40):
        sim = Simulation(w, make_policy("fifo"), mode="heartbeat")
        offers = sim.offers
        assert isinstance(offers, HeartbeatOffers)
        offers.start()
        held = offers._held
        assert held is not None and offers._idle is not None
        n = sim.n_nodes
        sim.now = rng.choice([0.0, rng.uniform(0, 10), rng.uniform(0, 1e5), float(rng.randint(0, 500))])
        sim.runnable[MAP] = rng.choice([0, 0, 4])
        sim.runnable[REDUCE] = rng.choice([0, 2]) if sim.runnable[MAP] else 2
        for free in sim.free:
            for node in range(n):
                free[node] = rng.choice([0, 0, 1, 2])
        for node in range(n):
            sim.node_up[node] = rng.random() > 0.1
            offers._pending[node] = rng.random() < 0.3
        pending_before = bytes(offers._pending)
        expected = {}
        for node in range(n):
            if not pending_before[node] and offers._room(node):
                expected[offers._next_beat(node)] = node
        assert len(expected) >= idle_beats.MIN_NODES  # the bulk path, not the node-by-node one
        offers._schedule_all()
        assert held.at == expected
        assert held.times == sorted(expected)
        assert [node for node in range(n) if offers._pending[node]] == sorted(
            set(expected.values()) | {node for node in range(n) if pending_before[node]}
        )


def test_a_pass_whose_time_is_held_already_goes_node_by_node() -> None:
    """A time held already (or one of the queue's instants) sends its node's heartbeat into the queue,
    as ``_schedule_all`` does node by node; the others are held."""
    w = big_workload(random.Random("idle-collide"), faults=False)
    sim = Simulation(w, make_policy("fifo"), mode="heartbeat")
    offers = sim.offers
    assert isinstance(offers, HeartbeatOffers)
    offers.start()
    held = offers._held
    assert held is not None
    sim.now = 100.0
    sim.runnable[MAP] = 3
    nodes = [node for node in range(sim.n_nodes) if sim.free[MAP][node] > 0]
    taken = offers._next_beat(nodes[7])
    held.hold(taken, 3, 5, nodes[3])  # held for another node at that time (phases cut, say)
    offers._pending[nodes[3]] = 1
    offers._schedule_all()
    # the second goes into the queue, the first (pushed before it: ``HeldBeats.release_at``) ahead of it
    assert sim._queue.at[taken][C_DECIDE] == [(EV_HEARTBEAT, nodes[3]), (EV_HEARTBEAT, nodes[7])]
    assert taken not in held.at and taken not in held.times
    assert sorted(held.at.values()) == [node for node in nodes if node not in (nodes[3], nodes[7])]


def test_a_heartbeat_at_an_instant_of_the_queue_goes_into_it() -> None:
    """A node whose heartbeat falls at an instant the queue holds (the one being run, when work appears
    at a node's heartbeat time) has it pushed there, in node order; the others are held."""
    w = big_workload(random.Random("idle-queued"), faults=False)
    sim = Simulation(w, make_policy("fifo"), mode="heartbeat")
    offers = sim.offers
    assert isinstance(offers, HeartbeatOffers)
    offers.start()
    held = offers._held
    assert held is not None
    sim.now = 250.0
    sim.runnable[MAP] = 3
    nodes = [node for node in range(sim.n_nodes) if sim.free[MAP][node] > 0]
    first, second = offers._next_beat(nodes[9]), offers._next_beat(nodes[2])
    sim.push(first, 0, 0, "done")  # instants of the queue (a completion's class)
    sim.push(second, 0, 0, "done")
    offers._schedule_all()
    assert sim._queue.at[first][C_DECIDE] == [(EV_HEARTBEAT, nodes[9])]
    assert sim._queue.at[second][C_DECIDE] == [(EV_HEARTBEAT, nodes[2])]
    assert held.at == {offers._next_beat(node): node for node in nodes if node not in (nodes[2], nodes[9])}
    assert held.times == sorted(held.at)
    assert all(offers._pending[node] for node in nodes)
