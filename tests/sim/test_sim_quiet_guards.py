"""Two guards of ``HeldBeats._quiet`` (``mropt.sim.lone_beats``) that ``fair`` never reaches: a run of
quiet heartbeats whose first is at the clock's time (``times[0] == sim.now``, held by the new-work pass
at the end of the queue's instant at that time).

``fair`` cannot answer such a heartbeat quiet: the new work that holds it (a job entering the
candidates, a reduce stage opening, a timer) drops its kept answer (``FairQuiet``), and the heartbeat
runs alone (``tests/sim/test_sim_quiet_runs.py``'s 50 workloads: 38 offers at the clock's time, none
answered). A policy whose every heartbeat is quiet (:class:`_Idle`: it never launches) answers it:

* the first advance's row break: the clock at the first quiet heartbeat's time, which is its own
  time, is a new instant of the utilisation rows at that time (``Simulation.advance``), as the
  plain rules' queue makes it (the instant closed, the heartbeat's a new one at the same time).
  Such an offer is of one heartbeat (below): the advance that breaks is the probe's path's,
  ``HeldBeats._quiet_one``; ``_quiet``'s own first advance, for longer offers, is at a time after
  the clock's (the spy below);
* the bound ``times[0] + interval``: a run offers only heartbeats before the first one's time plus
  the interval, where its re-held heartbeat falls. ``_run`` offers one heartbeat (``ask`` 1) whenever
  ``times[0]`` is the clock's time, and every held time is at most the clock's plus the interval,
  so the bound never cuts a run ``_run`` asks for; it is checked here on a direct call of ``_quiet``
  asking for more, and the invariant that makes it redundant on the runs (a spy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from mropt.sim.engine import Simulation
from mropt.sim.heartbeat_offers import HeartbeatOffers
from mropt.sim.lone_beats import HeldBeats
from mropt.sim.policies.fifo import Fifo

from sim_helpers import workload


class _Idle(Fifo):
    """A policy that never launches: every heartbeat is quiet, and it says so (``quiet_heartbeats``)."""

    def __init__(self, answer: bool = True) -> None:
        super().__init__()
        self.answered: list[float] = []  # the times of the heartbeats answered quiet
        if not answer:
            self.quiet_heartbeats = None  # type: ignore[assignment]

    def assign(self, node: int) -> None:
        return None

    def quiet_heartbeats(self, nodes: Sequence[int], times: Sequence[float]) -> int:
        self.answered.extend(times)
        return len(nodes)


def three_nodes() -> Any:
    """3 one-slot nodes (heartbeats at i + 3 k); a job of 2 maps arriving at 10 s, n1's heartbeat time,
    and one at 100 s, after the runs' end (the queue is not empty: the heartbeats are lone)."""
    nodes = [{"id": f"n{i}", "rack": "r0", "map_slots": 1, "reduce_slots": 0} for i in range(3)]
    maps = [{"type": "map", "tasks": [{"duration": 5.0, "count": 2}]}]
    jobs = [{"id": "j", "submit_time": 10.0, "stages": maps}, {"id": "k", "submit_time": 100.0, "stages": maps}]
    return workload(nodes, jobs)


def outputs(policy: _Idle, plain: bool, rows: str) -> tuple[Any, ...]:
    sim = Simulation(three_nodes(), policy, mode="heartbeat", stall_limit=100_000, until=20.0, utilisation_rows=rows)
    offers = sim.offers
    assert isinstance(offers, HeartbeatOffers) and offers._held is not None
    if plain:
        offers.plain()
    breaks: list[float] = []
    if rows == "after":
        row_break = sim._row_break

        def spied(time: float) -> None:
            breaks.append(time)
            row_break(time)

        sim._row_break = spied  # type: ignore[method-assign]
    rec = sim.run()
    util = rec.utilisation_columns()
    table = (util["time"].tolist(), util["slot_type"], util["busy"].tolist(), util["capacity"].tolist())
    return rec.event_log_hash(), sim.events, sim.stalled, sim.stopped, sim.now, table, breaks


@pytest.mark.parametrize("rows", ["after", "live"])
def test_a_quiet_run_at_the_clocks_time_breaks_the_rows(rows: str) -> None:
    """The arrival at 10 holds n1's heartbeat at 10, the clock's time; answered quiet, it is a new
    instant at 10 (a row break, with rows built after the run), as on the plain rules and one at a time."""
    bulk = _Idle()
    got = outputs(bulk, False, rows)
    assert bulk.answered[0] == 10.0  # (the first offer: n1's at 10, the arrival's time)
    if rows == "after":
        assert got[-1] == [10.0, 20.0], got[-1]  # (the arrival's instant, then n1's heartbeat at 10; the end)
    assert outputs(_Idle(answer=False), False, rows) == got
    assert outputs(_Idle(), True, rows) == got


def test_a_run_ends_before_the_first_ones_time_plus_the_interval() -> None:
    """``_quiet`` asked for more than ``_run`` asks at the clock's time (a spy at the first offer): n1
    held at 10 (the clock's time), n2 at 11, and n0 moved from 12 to 13, the first one's time plus the
    interval (where n1's heartbeat is held again): n0's is not offered, the run ends before it."""
    policy = _Idle()
    got: list[tuple[Any, ...]] = []
    quiet = HeldBeats._quiet

    def spy(self: HeldBeats, answer: Any, nxt: float, until: float, most: int) -> tuple[int, int, int, bool]:
        if not got:
            assert self.times == [10.0, 11.0, 12.0] and self.sim.now == 10.0 and nxt == 100.0
            del self.at[12.0]
            self.at[13.0] = 0
            self.times[2] = 13.0
            got.append(quiet(self, answer, nxt, until, 8))
            got.append((list(policy.answered), list(self.times)))
            return got[0]
        return quiet(self, answer, nxt, until, most)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(HeldBeats, "_quiet", spy)
        Simulation(three_nodes(), policy, mode="heartbeat", stall_limit=100_000, until=20.0).run()
    # (ended, quiet, offered, pushed); the offered times; n2 held again at 14, n1 at 13, n0's time:
    # into the queue, after n0's (``release_at``)
    assert got[0] == (2, 2, 2, True), got
    assert got[1] == ([10.0, 11.0], [14.0]), got


def test_held_times_stay_within_an_interval_of_the_clock() -> None:
    """Why the bound never cuts a run of ``_run``'s (a spy on ``_quiet``): at every offer every held
    time is at most the clock's time plus the interval, and an offer at the clock's time asks for one."""
    seen = {"calls": 0, "at the clock": 0}
    quiet = HeldBeats._quiet

    def spy(self: HeldBeats, answer: Any, nxt: float, until: float, most: int) -> tuple[int, int, int, bool]:
        sim = self.sim
        assert self.times[-1] <= sim.now + sim.heartbeat_interval
        seen["calls"] += 1
        if self.times[0] == sim.now:
            seen["at the clock"] += 1
            assert most == 1
        return quiet(self, answer, nxt, until, most)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(HeldBeats, "_quiet", spy)
        outputs(_Idle(), False, "after")
    assert seen["calls"] > 3 and seen["at the clock"] == 1, seen
