"""The speed structures behind ``drf`` and ``Stage.take`` against brute force.

``ParkedUsers.best`` must name the smallest valid entry among the groups that fit a node, and
the locality stacks (``PlaceStacks`` for large stages, ``PlaceLists`` for small ones) must
serve each place's pending tasks lowest id first, pushed ones before the rest: random
sequences of operations are checked step by step against plain lists. A whole run must not
depend on which stack form serves it.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from mropt.instances.workload_gen import generate_workload
from mropt.sim import locality_stacks
from mropt.sim.engine import Simulation
from mropt.sim.locality_stacks import PlaceLists, PlaceStacks, build_stacks
from mropt.sim.policies.parked_users import ParkedUsers
from mropt.sim.policy import make_policy
from mropt.sim.state import PENDING, RUNNING


@pytest.mark.parametrize("n_res", [2, 3])  # (two resources: the walk's fast path)
@pytest.mark.parametrize("seed", range(20))
def test_parked_best_is_the_smallest_valid_fitting_entry(seed: int, n_res: int) -> None:
    rng = random.Random(seed)
    extra = n_res - 2  # a third resource, if any, drawn like the second
    demands = [
        (rng.choice([1.0, 2.0, 4.0]),) + tuple(rng.choice([0.1, 0.3, 0.5]) for _ in range(1 + extra)) for _ in range(6)
    ]
    keys = [(d, rng.randrange(2)) for d in demands]
    parked = ParkedUsers()
    live: dict[tuple, set] = {}  # entry -> the keys it is validly parked under
    version: dict[int, int] = {}
    for step in range(300):
        op = rng.random()
        if op < 0.5:  # park a user (a new version of it: older entries go stale)
            u = rng.randrange(12)
            version[u] = version.get(u, 0) + 1
            for entry in [e for e in live if e[1] == u]:
                del live[entry]
            entry = (round(rng.random(), 2), u, version[u])
            under = set(rng.sample(keys, rng.randint(1, 2)))
            live[entry] = under
            for key in under:
                parked.park(key, entry)
        free = (rng.choice([0.5, 1.0, 2.0, 4.0]),) + tuple(rng.choice([0.05, 0.2, 0.4, 0.6]) for _ in range(1 + extra))
        slot_free = (rng.random() < 0.8, rng.random() < 0.8)

        def valid(entry: tuple, key: tuple) -> bool:
            return key in live.get(entry, ())

        fitting = [
            (entry, key)
            for entry, under in live.items()
            for key in under
            if slot_free[key[1]] and all(x <= f + 1e-9 for x, f in zip(key[0], free))
        ]
        expected = min(fitting, default=None)
        got = parked.best(free, slot_free, valid)
        assert (got[0] if got else None) == (expected[0] if expected else None), step
        if got is not None and op > 0.8:  # take it, as assign does
            entry = parked.pop(got[1])
            assert entry == got[0]
            del live[entry]


@pytest.mark.parametrize("small", [False, True])
@pytest.mark.parametrize("listed", [False, True])
def test_place_stacks_serve_lowest_pending_first(listed: bool, small: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    n_tasks, n_nodes = 40, 9
    node_rack = [k // 3 for k in range(n_nodes)]
    replicas = rng.integers(-1, n_nodes, size=(n_tasks, 3)).astype(np.int32)
    given = [tuple(int(x) for x in row if x >= 0) for row in replicas] if listed else replicas
    monkeypatch.setattr(locality_stacks, "SMALL", 10**6 if small else 0)
    node_q, rack_q = build_stacks(given, node_rack)
    assert isinstance(node_q, PlaceLists if small else PlaceStacks)
    assert isinstance(rack_q, PlaceLists if small else PlaceStacks)
    state = bytearray(n_tasks)
    pushed: dict[tuple[str, int], list[int]] = {}
    for step in range(400):
        place = int(rng.integers(n_nodes))
        kind = "node" if rng.random() < 0.6 else "rack"
        where = place if kind == "node" else node_rack[place]
        holders = [
            t
            for t in range(n_tasks)
            if (place in given[t] if kind == "node" else any(node_rack[n] == where for n in given[t] if n >= 0))
        ]
        stack = pushed.get((kind, where), [])
        on_top = [t for t in reversed(stack) if state[t] == PENDING]
        rest = sorted(t for t in holders if state[t] == PENDING)
        expected = on_top[0] if on_top else (rest[0] if rest else -1)
        got = (node_q if kind == "node" else rack_q).pop(where, state)
        assert got == expected, step
        if got >= 0 and rng.random() < 0.7:
            state[got] = RUNNING
        if rng.random() < 0.2:  # a running task killed: back on top of its places' stacks
            running = [t for t in range(n_tasks) if state[t] == RUNNING]
            if running:
                t = int(rng.choice(running))
                state[t] = PENDING
                racks = set()
                for n in given[t]:
                    if n >= 0:
                        node_q.push(int(n), t)
                        pushed.setdefault(("node", int(n)), []).append(t)
                        racks.add(node_rack[n])
                for r in sorted(racks):
                    rack_q.push(r, t)
                    pushed.setdefault(("rack", r), []).append(t)


@pytest.mark.parametrize("policy,params", [("ddrf", {"e1": 1, "e2": 2}), ("delay", {"d": 3})])
def test_both_stack_forms_give_the_same_run(policy: str, params: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's every event is the same whichever form (``PlaceStacks`` or ``PlaceLists``) serves locality."""
    w = generate_workload("ddrf", 2, nodes=40, jobs=12)
    hashes = []
    for threshold in (0, 10**6):  # every stage large, then every stage small
        monkeypatch.setattr(locality_stacks, "SMALL", threshold)
        rec = Simulation(w, make_policy(policy, params)).run()
        assert "node" in list(rec.tasks_columns()["locality"])  # (locality is in play)
        hashes.append(rec.event_log_hash())
    assert hashes[0] == hashes[1]


@pytest.mark.parametrize("policy", ["drf", "ddrf", "delay"])
def test_no_job_with_work_sits_before_its_users_idle_position(policy: str) -> None:
    # ``_next_tie`` and the offers start a user's jobs at its kept idle position: every job before it
    # must have no runnable task at each offer (``self_check``), through arrivals, new stages,
    # slow-start reduces, failed attempts (a node going down), and the decisions must be the plain rule's
    from test_sim_drf_reference import random_workload

    rng = random.Random(f"drf-idle-{policy}")
    checked = 0
    for _ in range(12):
        w = random_workload(rng)
        params = {"drf": {}, "ddrf": {"e1": 1, "e2": 2}, "delay": {"d": 2}}[policy]
        fast: Any = make_policy(policy, params, self_check=True)
        check = fast._check_idle_before

        def counting(check: Any = check, fast: Any = fast) -> None:
            nonlocal checked
            check()
            checked += sum(fast._idle_before)

        fast._check_idle_before = counting
        fast_log = Simulation(w, fast, seed=3).run().event_log_hash()
        plain_log = Simulation(w, make_policy(policy, params, reference=True), seed=3).run().event_log_hash()
        assert fast_log == plain_log
    assert checked > 100  # jobs were passed by at the offers checked
