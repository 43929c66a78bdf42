"""``drf``'s offers of a whole pass in one call (``DrfOffers.offer_nodes``, ``EventOffers._pass``).

On a cluster without slots the engine gives ``drf`` (and ``ddrf``, ``delay``) the nodes of a pass at
once; ``_assign_fast`` offers them in order as the engine's loop would offer them one by one through
``assign`` (a node down skipped, the pass stopped once no task is runnable, the nodes left held).
The engine's loop is what ``EventOffers.plain()`` runs: on seeded random workloads (the reference
test's) both must give the same event log, the whole-pass call must be reached with passes of
several nodes, and some pass must stop early with nodes left (a spy on ``offer_nodes``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
from test_sim_drf_reference import random_workload

from mropt.sim.engine import Simulation
from mropt.sim.offers import EventOffers
from mropt.sim.policy import make_policy

PARAMS: dict[str, dict[str, Any]] = {"drf": {}, "ddrf": {"e1": 1, "e2": 2}, "delay": {"d": 1}}


def run(w: Any, policy: str, plain: bool, calls: list[tuple[int, int]]) -> tuple[str, int]:
    """One run of the accelerated offers, the engine's loop (``plain``) or the whole-pass call;
    ``calls`` gets (nodes given, nodes gone through) per whole-pass call."""
    p = make_policy(policy, PARAMS[policy])
    inner = p.offer_nodes  # type: ignore[attr-defined]

    def spy(nodes: Sequence[int]) -> int:
        went = inner(nodes)
        calls.append((len(nodes), went))
        return went

    p.offer_nodes = spy  # type: ignore[attr-defined]
    sim = Simulation(w, p, seed=3)
    assert isinstance(sim.offers, EventOffers)
    if plain:
        sim.offers.plain()
    rec = sim.run()
    return rec.event_log_hash(), sim.events


@pytest.mark.parametrize("policy", ["drf", "ddrf", "delay"])
def test_a_pass_in_one_call_decides_as_the_engines_loop(policy: str) -> None:
    rng = random.Random(f"drf-pass-{policy}")
    several = stopped = 0
    for _ in range(60):
        w = random_workload(rng)
        loop: list[tuple[int, int]] = []
        whole: list[tuple[int, int]] = []
        assert run(w, policy, True, loop) == run(w, policy, False, whole)
        assert not loop  # the engine's loop offers node by node
        if not w.uses_slots:
            assert whole  # the whole-pass call is the pass on a cluster without slots
        several += sum(given > 1 for given, _ in whole)
        stopped += sum(went < given for given, went in whole)
    assert several > 0 and stopped > 0


def test_on_slots_the_engine_loops_over_the_nodes() -> None:
    rng = random.Random("drf-pass-slots")
    for _ in range(40):
        w = random_workload(rng)
        if not w.uses_slots:
            continue
        calls: list[tuple[int, int]] = []
        run(w, "drf", False, calls)
        assert not calls


@pytest.mark.parametrize("policy", ["drf", "ddrf"])
def test_the_heap_without_its_stale_entries_decides_alike(policy: str) -> None:
    """``DrfOffers._compact`` (the heap's stale entries dropped past a bound) at every pass, spied: the
    event log of the plain rule, and some compaction drops entries."""
    rng = random.Random(f"drf-compact-{policy}")
    dropped = 0
    for _ in range(40):
        w = random_workload(rng)
        p = make_policy(policy, PARAMS[policy])
        inner = p._compact  # type: ignore[attr-defined]

        def compact(p: Any = p, inner: Any = inner) -> None:
            nonlocal dropped
            before = len(p._heap)
            inner()
            dropped += before - len(p._heap)
            p._heap_bound = 0  # (again at the next pass)

        p._compact = compact  # type: ignore[attr-defined]
        p._heap_bound = 0  # type: ignore[attr-defined]
        fast = Simulation(w, p, seed=3).run().event_log_hash()
        plain = Simulation(w, make_policy(policy, PARAMS[policy], reference=True), seed=3).run().event_log_hash()
        assert fast == plain
    assert dropped > 0
