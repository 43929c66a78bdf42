"""``drf``'s parked users under their lowest pairs, and the launching user's tie key without ``_next_tie``.

``DrfOffers._park_keys`` parks a user only under the (demand, slot type) pairs of its waiting tasks
that no other pair of the same slot type is at or below in every amount (``_lowest``): a node that
fits a pair left out fits the pair below it, so ``ParkedUsers.best`` finds the user on the same
nodes. ``_assign_fast`` gives ``_push`` the launching user's tie key when its launching job is its
first with work and has maps of its current stage left (what ``_next_tie`` would answer).

Each is checked against a brute force, and on the reference test's random workloads against the
plain rule with spies: pairs were dropped, and ties were given without ``_next_tie`` (each equal to
its answer).
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from test_sim_drf_reference import random_workload

from mropt.sim.engine import Simulation
from mropt.sim.policies import drf_offers
from mropt.sim.policies.drf import Drf
from mropt.sim.policies.drf_offers import _lowest
from mropt.sim.policy import make_policy

PARAMS: dict[str, dict[str, Any]] = {"drf": {}, "ddrf": {"e1": 1, "e2": 2}}


def _fits(key: tuple[tuple[float, ...], int], free: tuple[float, ...], slot_free: tuple[bool, ...]) -> bool:
    return slot_free[key[1]] and all(d <= f + 1e-9 for d, f in zip(key[0], free))


def test_lowest_keeps_the_pairs_nothing_of_their_type_is_below_and_fits_the_same_nodes() -> None:
    rng = random.Random("drf-lowest")
    dropped = 0
    for _ in range(400):
        n_res = rng.randint(1, 3)
        keys = tuple(
            dict.fromkeys(
                (tuple(float(rng.choice([0.5, 1, 2, 3])) for _ in range(n_res)), rng.randint(0, 1))
                for _ in range(rng.randint(1, 7))
            )
        )
        got = _lowest(keys)
        want = tuple(
            k
            for k in keys
            if not any(o != k and o[1] == k[1] and all(a <= b for a, b in zip(o[0], k[0])) for o in keys)
        )
        assert got == want
        dropped += len(keys) - len(got)
        for slot_free in itertools.product([True, False], repeat=2):
            for _ in range(10):
                free = tuple(float(rng.choice([0, 0.5, 1, 2, 3, 4])) for _ in range(n_res))
                assert any(_fits(k, free, slot_free) for k in keys) == any(_fits(k, free, slot_free) for k in got)
    assert dropped > 0
    # a pair of another slot type is no pair below: both kept
    assert _lowest((((1.0, 1.0), 0), ((2.0, 2.0), 1))) == (((1.0, 1.0), 0), ((2.0, 2.0), 1))
    assert _lowest((((1.0, 1.0), 0), ((2.0, 2.0), 0), ((0.5, 3.0), 0))) == (((1.0, 1.0), 0), ((0.5, 3.0), 0))


def _run(w: Any, policy: str, reference: bool, spies: dict[str, int] | None = None) -> tuple[str, int]:
    p = make_policy(policy, PARAMS[policy], reference=reference)
    if spies is not None:
        push, launch_run = p._push, p._launch_run  # type: ignore[attr-defined]
        ran: list[Any] = []

        def launch_run_spy(*args: Any) -> Any:
            got = launch_run(*args)
            ran.append(got)
            return got

        def push_spy(u: int, tie: float | None = None) -> None:
            if tie is not None and u not in p._later:  # type: ignore[attr-defined]  # (not a deferred push)
                assert tie == p._next_tie(u)  # type: ignore[attr-defined]
                if not (ran and ran[-1] is not None):  # (not the tie of a run of none)
                    spies["ties"] += 1
            ran.clear()
            push(u, tie)

        p._push = push_spy  # type: ignore[attr-defined]
        p._launch_run = launch_run_spy  # type: ignore[attr-defined]
    sim = Simulation(w, p, seed=3)
    rec = sim.run()
    return rec.event_log_hash(), sim.events


@pytest.mark.parametrize("policy", ["drf", "ddrf"])
def test_parked_under_the_lowest_pairs_and_given_ties_decide_as_the_plain_rule(
    policy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spies = {"ties": 0, "dropped": 0}

    def lowest_spy(keys: Any) -> Any:
        got = _lowest(keys)
        spies["dropped"] += len(keys) - len(got)
        return got

    monkeypatch.setattr(drf_offers, "_lowest", lowest_spy)
    rng = random.Random(f"drf-park-lowest-{policy}")
    for _ in range(60):
        w = random_workload(rng)
        assert _run(w, policy, True) == _run(w, policy, False, spies)
    assert spies["dropped"] > 0 and spies["ties"] > 0


class _OwnOffer(Drf):
    """A DRF with its own ``_offer`` and ``_next_tie`` (here DRF's own, through ``super``)."""

    def _offer(self, job: int, node: int) -> int:
        return super()._offer(job, node)

    def _next_tie(self, u: int) -> float:
        return super()._next_tie(u)


def test_a_subclass_with_its_own_offer_or_tie_turns_the_spelled_out_steps_off() -> None:
    """``_DrfBase._inline``: on for DRF's own methods, off for a subclass's (whose runs still decide as
    the plain rule)."""
    rng = random.Random("drf-own-offer")
    for _ in range(10):
        w = random_workload(rng)
        plain, fast, base = _OwnOffer(reference=True), _OwnOffer(), Drf()
        logs = [Simulation(w, p, seed=3).run().event_log_hash() for p in (plain, fast, base)]
        assert logs[0] == logs[1] == logs[2]
        assert fast._inline is False and base._inline is True
