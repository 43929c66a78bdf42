"""The event queue gives events in the order (time, class, push order), as one heap of tuples does,
with events pushed while an instant is drained (and after it closed) in their place."""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Hashable

import pytest

from mropt.sim.engine import Simulation
from mropt.sim.event_queue import EventQueue, drain
from mropt.sim.offers import EV_TIMER
from mropt.sim.policy import Policy

from sim_helpers import mr_job, workload

Push = Callable[[float, int, int], None]


def reactions(seed: int, tag: int, now: float) -> list[tuple[float, int, int]]:
    """What processing event ``tag`` at ``now`` pushes: (time, class, tag), a function of its arguments."""
    rng = random.Random(seed * 100_003 + tag)
    if tag >= 400 or rng.random() > 0.4:
        return []
    return [(now + rng.choice([0.0, 0.0, 1.0]), rng.randrange(4), tag * 3 + k + 100) for k in range(rng.randint(1, 2))]


def initial(seed: int) -> list[tuple[float, int, int]]:
    rng = random.Random(seed)
    return [(float(rng.randrange(8)), rng.randrange(4), tag) for tag in range(60)]


def with_heap(seed: int, reopen: bool = True) -> list[tuple[float, int]]:
    heap: list[tuple[float, int, int, int]] = []
    seq = 0
    for time, cls, tag in initial(seed):
        seq += 1
        heapq.heappush(heap, (time, cls, seq, tag))
    out = []
    while heap:
        now = heap[0][0]
        while heap and heap[0][0] == now:
            _, _, _, tag = heapq.heappop(heap)
            out.append((now, tag))
            for time, cls, new in reactions(seed, tag, now):
                seq += 1
                heapq.heappush(heap, (time, cls, seq, new))
        if reopen and now == 3.0 and (now, -1) not in out:  # a push at an instant just closed: opens it again
            out.append((now, -1))
            seq += 1
            heapq.heappush(heap, (now, 2, seq, 9999))
    return out


def with_queue(seed: int) -> list[tuple[float, int]]:
    queue = EventQueue()
    for time, cls, tag in initial(seed):
        queue.push(time, cls, 0, tag)
    out = []
    while queue:
        now, lists = queue.next_instant()
        for _, tag in drain(lists):
            out.append((now, tag))
            for time, cls, new in reactions(seed, tag, now):
                queue.push(time, cls, 0, new)
        queue.close(now)
        if now == 3.0 and (now, -1) not in out:
            out.append((now, -1))
            queue.push(now, 2, 0, 9999)
    assert len(queue) == 0
    return out


@pytest.mark.parametrize("seed", range(10))
def test_same_order_as_one_heap_of_tuples(seed: int) -> None:
    got = with_queue(seed)
    assert got == with_heap(seed)
    assert len(got) > 60  # the reactions happened


class Reacting(Policy):
    """Each timer is one event of ``initial``/``reactions``: it records (now, tag) and pushes its reactions."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.seed = seed
        self.out: list[tuple[float, int]] = []

    def on_timer(self, tag: Hashable) -> None:
        assert isinstance(tag, int)
        now = self.sim.now
        self.out.append((now, tag))
        for time, cls, new in reactions(self.seed, tag, now):
            self.sim.push(time, cls, EV_TIMER, new)  # (a timer in any class: it is drained in that class's place)


@pytest.mark.parametrize("seed", range(10))
def test_the_engine_walks_an_instant_in_the_same_order(seed: int) -> None:
    """``Simulation._run`` walks an instant's class lists itself (no ``drain``): the same order."""
    policy = Reacting(seed)
    w = workload([{"id": "n0", "map_slots": 1, "reduce_slots": 1}], [mr_job("j", 1.0, submit_time=100.0)])
    sim = Simulation(w, policy)
    for time, cls, tag in initial(seed):
        sim.push(time, cls, EV_TIMER, tag)
    sim.run()
    assert policy.out == with_heap(seed, reopen=False)
    assert len(policy.out) > 60
