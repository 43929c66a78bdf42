"""The held heartbeats' sorted list (``mropt.sim.lone_beats.HeldBeats``) and its ends in bulk.

Heartbeats that find no room are ended a prefix at a time: the ones due before the queue's next
instant (``bisect_left``: one due at that instant is pushed into the queue, not ended) and not
after ``until`` (``bisect_right``: one due at ``until`` runs). The random runs here are mostly idle
clusters, where a new-work pass schedules many nodes and most of their heartbeats find no room,
on node counts whose phases (``3 * i / nodes``) and job times fall on the same quarter seconds, so
heartbeats fall on other events' instants and on ``until``; a run on the fast path and one on the
plain rules (``HeartbeatOffers.plain``) must give the same event log, event count, stall, stop,
final time and utilisation rows; in some runs nodes share phases, so that a new-work pass holds a
heartbeat at a time held already. The layout itself is checked against a heap of (time, node).
"""

from __future__ import annotations

import heapq
import random
from typing import Any

import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.heartbeat_offers import HeartbeatOffers
from mropt.sim.lone_beats import HeldBeats
from mropt.sim.offers import C_DECIDE, EV_HEARTBEAT
from mropt.sim.policies.fifo import Fifo
from mropt.sim.policy import make_policy

from sim_helpers import heartbeat_outputs, workload


def idle_workload(rng: random.Random) -> WorkloadInstance:
    """4 to 30 slot nodes and a few small jobs arriving on quarter seconds: most nodes idle, n1
    going down and up again in some draws."""
    n = rng.choice([4, 6, 8, 12, 16, 24, 30, 7])
    nodes = [
        {
            "id": f"n{i}",
            "rack": f"r{i % 2}",
            "map_slots": rng.randint(1, 2),
            "reduce_slots": rng.randint(0, 1) if i else 1,
        }
        for i in range(n)
    ]
    jobs: list[dict[str, Any]] = []
    for i in range(rng.randint(2, 10)):
        stages: list[dict[str, Any]] = [
            {"type": "map", "tasks": [{"duration": rng.choice([0.5, 1.0, 2.5, 4.0]), "count": rng.randint(1, 6)}]}
        ]
        if rng.random() < 0.4:
            stages.append(
                {"type": "reduce", "tasks": [{"duration": rng.choice([0.75, 3.0]), "count": rng.randint(1, 2)}]}
            )
        submit = rng.randint(0, 160) / 4 if rng.random() < 0.8 else round(rng.uniform(0, 40), 3)
        jobs.append({"id": f"j{i}", "submit_time": submit, "pool": f"p{i % 2}", "stages": stages})
    extra: dict[str, Any] = {}
    if rng.random() < 0.4:
        extra["faults"] = [{"node": "n1", "down": rng.randint(0, 60) / 4, "up": rng.randint(60, 120) / 4}]
    return workload(nodes, jobs, **extra)


class _Picky(Fifo):
    """FIFO that declines three nodes in four before 12 s: runs with a small stall limit stall."""

    def assign(self, node: int) -> None:
        if node % 4 == 0 or self.sim.now >= 12.0:
            super().assign(node)


def run(
    w: WorkloadInstance, policy: str, plain: bool, until: float | None, limit: int, shared: bool
) -> tuple[Any, ...]:
    """The outputs of one run; ``shared``: the nodes' phases cut to whole seconds, so that several
    nodes share each (heartbeats at one time: held already when a pass holds the next)."""
    chosen = _Picky() if policy == "picky" else make_policy(policy)
    return heartbeat_outputs(w, chosen, plain, seed=5, until=until, limit=limit, whole_phases=shared)


@pytest.mark.parametrize("policy", ["fifo", "capacity", "picky"])
def test_idle_clusters_end_their_heartbeats_as_the_plain_rules(policy: str) -> None:
    rng = random.Random(f"held-beats-{policy}")
    stalls = stops = 0
    for _ in range(40):
        w = idle_workload(rng)
        until = rng.choice([None, None, rng.randint(8, 160) / 4, round(rng.uniform(2, 40), 3)])
        limit = rng.choice([2, 6, 300])
        shared = rng.random() < 0.25
        fast = run(w, policy, False, until, limit, shared)
        assert fast == run(w, policy, True, until, limit, shared), (policy, until, limit, shared, w)
        stalls += fast[2]
        stops += fast[3] is not None
    assert stops > 5  # runs stopped at ``until`` were compared
    if policy == "picky":
        assert stalls > 5  # and runs that stalled


@pytest.mark.parametrize("plain", [False, True])
def test_a_heartbeat_at_until_that_finds_no_room_only_ends(plain: bool) -> None:
    """Three one-slot nodes (phases 0, 1 and 2 s of a 3 s interval) and one map of 100 s at 0, until
    2: node 0's heartbeat at 0 takes the map, nodes 1's and 2's at 1 and 2 find nothing runnable.
    Four events (the arrival, three heartbeats), none counted as stalled (a stall limit of 0 would
    stop the run at the first one): the one at ``until`` is ended with the rest, not run."""
    nodes = [{"id": f"n{i}", "map_slots": 1, "reduce_slots": 0} for i in range(3)]
    jobs = [{"id": "j0", "submit_time": 0.0, "stages": [{"type": "map", "tasks": [{"duration": 100.0}]}]}]
    sim = Simulation(workload(nodes, jobs), make_policy("fifo"), mode="heartbeat", stall_limit=0, until=2.0)
    offers = sim.offers
    assert isinstance(offers, HeartbeatOffers)
    if plain:
        offers.plain()
    sim.run()
    assert (sim.events, sim.stalled, sim.stopped, sim.now) == (4, False, "until", 2.0)


class _Sim:
    """What :class:`HeldBeats`' holding reads of the engine: the queue's times, and its pushes."""

    def __init__(self, queued: set[float]) -> None:
        self.queued = dict.fromkeys(queued)
        self.pushed: list[tuple[float, int]] = []
        self.before_decide: Any = None

    def queued_times(self) -> Any:
        return self.queued.keys()

    def push_heartbeat(self, time: float, node: int) -> None:
        self.before_decide(time)  # (``EventQueue.push``: a heartbeat held at that time goes in first)
        self.pushed.append((time, node))
        self.queued[time] = None


class _Offers:
    def __init__(self, sim: _Sim) -> None:
        self.sim = sim


class _HeapModel:
    """The held heartbeats as a heap of (time, node), with ``HeldBeats.hold``'s rule for a taken time."""

    def __init__(self, queued: dict[float, None]) -> None:
        self.queued = queued
        self.heap: list[tuple[float, int]] = []
        self.pushed: list[tuple[float, int]] = []

    def hold(self, time: float, node: int) -> None:
        if time in self.queued or any(t == time for t, _ in self.heap):
            self.release(time)
            self.pushed.append((time, node))
        else:
            heapq.heappush(self.heap, (time, node))

    def release(self, time: float) -> None:
        for k, (t, node) in enumerate(self.heap):
            if t == time:
                self.heap.pop(k)
                heapq.heapify(self.heap)
                self.pushed.append((t, node))
                return

    def in_pop_order(self) -> list[float]:
        return [t for t, _ in sorted(self.heap)]


def test_the_sorted_list_keeps_a_heaps_order_and_contents() -> None:
    """Random holds (one at a time, or a pass's in node order through ``add``), releases and
    clears, against a heap of (time, node) with the same rule for taken times: the list is the
    heap's times in pop order, ``at`` its pairs, and the same heartbeats go into the queue."""
    rng = random.Random("held-layout")
    for _ in range(60):
        sim = _Sim({float(t) for t in rng.sample(range(40), 5)})
        held = HeldBeats(_Offers(sim))  # type: ignore[arg-type]
        sim.before_decide = held.release_at
        model = _HeapModel(sim.queued)
        for _ in range(rng.randint(1, 30)):
            op = rng.random()
            if op < 0.4:
                time, node = rng.randint(0, 160) / 4, rng.randrange(50)
                model.hold(time, node)
                held.hold(time, C_DECIDE, EV_HEARTBEAT, node)
            elif op < 0.8:  # a pass: phases of 8 nodes in node order, from ``now``
                now = rng.randint(0, 160) / 4
                times: list[float] = []
                for node in sorted(rng.sample(range(8), rng.randint(0, 8))):
                    phase = 3.0 * node / 8
                    k = max(-(-(now - phase) // 3.0), 0.0)
                    time = phase + k * 3.0
                    model.hold(time, node)
                    if time in sim.queued:  # (``_schedule_all``'s inline hold)
                        sim.push_heartbeat(time, node)
                    elif time in held.at:
                        held.add(times)
                        times = []
                        sim.push_heartbeat(time, node)
                    else:
                        held.at[time] = node
                        times.append(time)
                held.add(times)
            elif op < 0.95 and model.heap:  # a timer pushed at a held heartbeat's time
                time = rng.choice(model.heap)[0]
                model.release(time)
                held.release_at(time)
            else:
                model.heap.clear()
                held.clear()
            assert held.times == model.in_pop_order()
            assert held.at == dict(model.heap)
            assert sim.pushed == model.pushed
