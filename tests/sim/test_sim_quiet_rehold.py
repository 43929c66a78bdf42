"""``HeldBeats._quiet``'s re-holds (``mropt.sim.lone_beats``): the quiet heartbeats of an offer held again an
interval later with ``hold``'s tests, in order (a time of the queue's: into the queue; after a held one: in
its place; two the same, an ulp apart an interval before: the second into the queue, after the first), and
the heartbeats without room among those offered, ended where they come before the first one not quiet.
``test_sim_quiet_runs.py``'s workloads met no re-held time in the queue or the held list (benchmarks/RESULTS.md,
issue 32, "runs of quiet heartbeats in bulk"); the SWIM day under ``fair`` meets the queue's at a fifth of its
quiet heartbeats re-held in bulk.

Each case calls ``_quiet`` by hand on the held heartbeats of a small run (:func:`three_nodes`: n1 held at
10, n2 at 11, n0 at 12 when the first offer comes, the clock at 10), with a policy whose every heartbeat is
quiet, and checks the held list, the map, the queue and the clock after it, then stops the run.
``tests/sim/test_sim_quiet_runs.py`` and ``test_sim_quiet_probes.py`` check whole runs against the plain
rules.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from test_sim_quiet_guards import _Idle, three_nodes

from mropt.sim.engine import Simulation
from mropt.sim.lone_beats import HeldBeats
from mropt.sim.state import MAP


class _Stop(Exception):
    """The case has run: the run stops there."""


def at_first_offer(case: Callable[[HeldBeats, Any, _Idle], None]) -> _Idle:
    """Run :func:`three_nodes` until ``_run``'s first offer of quiet heartbeats, call ``case`` there (the
    held heartbeats, ``_quiet`` unpatched, the policy), and stop."""
    policy = _Idle()
    quiet = HeldBeats._quiet

    def spy(self: HeldBeats, answer: Any, nxt: float, until: float, most: int) -> tuple[int, int, int, bool]:
        assert self.times == [10.0, 11.0, 12.0] and self.at == {10.0: 1, 11.0: 2, 12.0: 0}
        assert self.sim.now == 10.0 and nxt == 100.0 and math.isinf(until)
        case(self, lambda held, most, other=None: quiet(held, other or answer, nxt, until, most), policy)
        raise _Stop

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(HeldBeats, "_quiet", spy)
        with pytest.raises(_Stop):
            Simulation(three_nodes(), policy, mode="heartbeat", stall_limit=100_000).run()
    return policy


def queued(held: HeldBeats) -> list[tuple[float, int]]:
    """The heartbeats in the engine's queue: (time, node), in time and push order."""
    queue = held.sim._queue
    return [(time, arg) for time in sorted(queue.at) for events in queue.at[time] for _, arg in events if events]


def test_an_offer_held_again() -> None:
    """All three quiet (the bound, 10 + 3, takes them all): held again at 13, 14 and 15, the clock at 12."""

    def case(held: HeldBeats, quiet: Any, policy: _Idle) -> None:
        assert quiet(held, 8) == (3, 3, 3, False)
        assert held.times == [13.0, 14.0, 15.0] and held.at == {13.0: 1, 14.0: 2, 15.0: 0}
        assert held.sim.now == 12.0 and queued(held) == [(100.0, 1)]  # (job k's arrival only)

    assert at_first_offer(case).answered == [10.0, 11.0, 12.0]


def test_a_time_of_the_queue_goes_into_it() -> None:
    """n2's next time, 14, is a time of the queue's: its heartbeat goes into the queue there, the others
    are held."""

    def case(held: HeldBeats, quiet: Any, policy: _Idle) -> None:
        live = held.queued
        held.queued = {14.0: None, 100.0: None}.keys()  # (as if an event waited at 14)
        try:
            assert quiet(held, 8) == (3, 3, 3, True)
        finally:
            held.queued = live
        assert held.times == [13.0, 15.0] and held.at == {13.0: 1, 15.0: 0}
        assert (14.0, 2) in queued(held) and held.sim.now == 12.0

    at_first_offer(case)


def test_a_held_time_after_one_is_kept_in_order() -> None:
    """A heartbeat held at 13.5, after n1's next time (13): the re-held ones are put in order around it."""

    def case(held: HeldBeats, quiet: Any, policy: _Idle) -> None:
        held.times.append(13.5)
        held.at[13.5] = 0
        held.times.remove(12.0)
        del held.at[12.0]
        assert quiet(held, 8) == (2, 2, 2, False)  # (10 and 11: 13.5 is not before 10 + 3)
        assert held.times == [13.0, 13.5, 14.0] and held.at == {13.0: 1, 13.5: 0, 14.0: 2}

    assert at_first_offer(case).answered == [10.0, 11.0]


def test_two_times_one_interval_later_meet() -> None:
    """Two held times an ulp apart whose next times round to the same float (13 and the next float, plus 3,
    are both 16): the first is held at 16, the second goes into the queue there, after it (``release_at``)."""
    after = math.nextafter(13.0, math.inf)
    assert 13.0 + 3.0 == after + 3.0 == 16.0

    def case(held: HeldBeats, quiet: Any, policy: _Idle) -> None:
        held.times[:] = [13.0, after]
        held.at.clear()
        held.at.update({13.0: 1, after: 2})
        assert quiet(held, 8) == (2, 2, 2, True)
        assert held.times == [] and held.at == {}
        assert queued(held)[:2] == [(16.0, 1), (16.0, 2)] and held.sim.now == after

    at_first_offer(case)


def without_room(held: HeldBeats, node: int, quiet: Any, most: int, answer: Any = None) -> tuple[int, int, int, bool]:
    """``quiet(held, most)`` (or the ``answer`` given) with ``node``'s free slot taken for the call."""
    free = held.sim.free[MAP]
    free[node] = 0
    try:
        return quiet(held, most, answer)
    finally:
        free[node] = 1


@pytest.mark.parametrize("quiet_ones", [2, 1])
def test_one_without_room_before_the_first_not_quiet_is_ended(quiet_ones: int) -> None:
    """n2 (at 11) without a free slot: n1 (10) and n0 (12) are offered. Both quiet: n2's is ended between
    them, n1 and n0 held again at 13 and 15. Only n1 quiet: n2's, before n0's (the first not quiet), is
    ended all the same, n0's left due."""
    answered: list[list[float]] = []

    def answer(nodes: Any, times: Any) -> int:
        answered.append(list(times))
        return quiet_ones

    def case(held: HeldBeats, quiet: Any, policy: _Idle) -> None:
        pending = held.offers._pending
        assert pending[2] == 1
        assert without_room(held, 2, quiet, 8, answer) == (quiet_ones + 1, quiet_ones, 2, False)
        assert pending[2] == 0 and answered == [[10.0, 12.0]]
        if quiet_ones == 2:
            assert held.times == [13.0, 15.0] and held.at == {13.0: 1, 15.0: 0}
            assert held.sim.now == 12.0
        else:
            assert held.times == [12.0, 13.0] and held.at == {12.0: 0, 13.0: 1}
            assert held.sim.now == 10.0

    at_first_offer(case)


def test_one_without_room_after_the_first_not_quiet_is_left() -> None:
    """n0 (at 12) without a free slot, n1 (10) quiet and n2 (11) not: n0's comes after the first one not
    quiet, and is left for ``_run`` (as the one not quiet is)."""

    def case(held: HeldBeats, quiet: Any, policy: _Idle) -> None:
        assert without_room(held, 0, quiet, 8, lambda nodes, times: 1) == (1, 1, 2, False)
        assert held.times == [11.0, 12.0, 13.0] and held.at == {11.0: 2, 12.0: 0, 13.0: 1}
        assert held.offers._pending[0] == 1

    at_first_offer(case)
