"""The utilisation rows built after the run (``mropt.sim.utilisation_rows``, the default) are the
rows the live recorder writes at the end of each instant (``Simulation(utilisation_rows="live")``,
``Recorder.flush``): the same rows in the same order, with the same types, and the same pools.

Both are made of one run each, on seeded random workloads: every policy in both modes, pools
and queues, replicas, slow-start, a node going down and up, Fair's preemption, LATE's backups,
runs stopped at ``until``, by the watch (a clock that counts its reads, so the stop is the same
in both runs) and by a stall, and policies that act at a heartbeat's own time (a kill, a timer
for now: instants that share a time value, the rows of a lone heartbeat deferred). A SWIM window
under ``fair`` and ``fifo`` where ``../shared`` has the trace.
"""

from __future__ import annotations

import dataclasses
import os
import random
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_sim_drf_reference import random_workload as resource_workload

from mropt.instances.admission_gen import generate_admission
from mropt.instances.workload_convert import to_workload
from mropt.model.errors import InputError
from mropt.model.workload import Fault, WorkloadInstance
from mropt.sim import ended_attempts, recorder, utilisation_rows
from mropt.sim.engine import Simulation
from mropt.sim.policies.fifo import Fifo
from mropt.sim.policy import Policy, make_policy
from mropt.sim.speculation import make_speculation
from mropt.sim.watch import Watch

from sim_helpers import Restless, capacity_params, deadline_workload, fair_params, pooled_workload

SHARED = Path(os.environ.get("MROPT_SHARED") or Path(__file__).resolve().parents[2].parent / "shared")
SWIM_DAY = SHARED / "traces" / "swim" / "FB-2009_samples_24_times_1hr_0.tsv"


class _Restless(Restless):
    """:class:`Restless` at its first 8 launches: instants at the time of the one before."""

    most = 8


class _Counting:
    """A watch's clock that counts its reads: the watch stops the run at its ``limit``-th look."""

    def __init__(self) -> None:
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return float(self.reads)


def rows(w: WorkloadInstance, policy: Callable[[], Policy], how: str, **options: Any) -> tuple[Any, ...]:
    """One run's pools, utilisation rows (each column's dtype and bytes), event log and stop."""
    stop_at = options.pop("stop_at", None)
    watch = Watch(time_limit=stop_at, clock=_Counting(), every=1) if stop_at is not None else None
    sim = Simulation(w, policy(), utilisation_rows=how, watch=watch, **options)
    rec = sim.run()
    columns = rec.utilisation_arrays()
    named = rec.utilisation_columns()
    # the summary's ratio makes a type's cluster rows' arrays at this bound: no (pool, type) has more
    keys = columns[2].astype(np.int64) * 2 + columns[1]
    assert np.bincount(keys, minlength=1).max(initial=0) <= rec.utilisation_rows_bound(), how
    return (
        tuple(rec.pools.items()),
        tuple((c.dtype.str, c.tobytes()) for c in columns),
        named["slot_type"],
        named["pool"],
        rec.event_log_hash(),
        sim.events,
        sim.stopped,
        sim.stalled,
    )


def assert_same_rows(w: WorkloadInstance, policy: Callable[[], Policy], **options: Any) -> int:
    """The live and the built rows of one run are the same; the number of rows."""
    live = rows(w, policy, "live", **options)
    after = rows(w, policy, "after", **options)
    assert after == live, (options, w)
    return len(live[1][0][1]) // 8


def _policy(name: str, params: dict[str, Any] | None = None) -> Callable[[], Policy]:
    return lambda: make_policy(name, params)


def _draw(rng: random.Random, name: str) -> tuple[WorkloadInstance, dict[str, Any]]:
    """A workload for ``name`` and its parameters."""
    if name == "amb":  # an admission instance arriving over time, a node failing in some
        instance = generate_admission(
            rng.randint(0, 10**6), jobs=rng.randint(6, 20), nodes=rng.randint(1, 3), size=4, mean_interarrival=40
        )
        w = to_workload(instance)
        if rng.random() < 0.5:
            w = dataclasses.replace(w, faults=(Fault("n-0", float(rng.randint(5, 200))),))
        return w, {"timeout_handling": True}
    if name in ("dc", "minedf-wc"):
        return deadline_workload(rng), {}
    if name in ("drf", "ddrf", "delay") and rng.random() < 0.5:
        return resource_workload(rng), {}
    params = {"fair": fair_params, "hei": fair_params, "capacity": capacity_params}.get(name, lambda _: {})(rng)
    return pooled_workload(rng), params


POLICIES = ["fifo", "fair", "hei", "capacity", "dc", "minedf-wc", "mpsa", "drf", "ddrf", "delay", "amb"]


def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store in blocks of 7 entries, the build a window of a block's ends and 5 keys' rows a
    piece: many windows and pieces on a small run (the counts run on from piece to piece and window
    to window); the rows kept in typed blocks of 3 by both recorders (the live one moves them at a
    job's end)."""
    monkeypatch.setattr(ended_attempts, "CHUNK", 7)
    monkeypatch.setattr(recorder, "UTILISATION_CHUNK", 3)
    monkeypatch.setattr(utilisation_rows, "PIECE", 5)
    monkeypatch.setattr(utilisation_rows, "WINDOW", 3)


@pytest.mark.parametrize("name", POLICIES)
def test_every_policy_in_both_modes(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random workloads (pools, queues, replicas, slow-start, faults), random parameters (Fair's
    preemption), both modes, at times stopped at ``until``, with a small stall limit; the last
    runs built in small pieces."""
    rng = random.Random(f"utilisation-rows-{name}")
    total = 0
    for k in range(6):
        if k == 4:
            small_pieces(monkeypatch)
        w, params = _draw(rng, name)
        options: dict[str, Any] = {"seed": rng.randint(0, 99), "mode": ("event", "heartbeat")[k % 2]}
        if rng.random() < 0.3:
            options["until"] = rng.choice([float(rng.randint(3, 40)), rng.randint(3, 40) + 0.5])
        if rng.random() < 0.3:
            options["stall_limit"] = rng.choice([2, 5])
        total += assert_same_rows(w, _policy(name, params), **options)
    assert total > 100


def test_speculation_and_node_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    """LATE's backups (their kills when a sibling wins), a node down and up, in both modes, built
    in small pieces."""
    small_pieces(monkeypatch)
    rng = random.Random("utilisation-rows-late")
    for k in range(8):
        w = pooled_workload(rng)
        data = w.to_dict()
        data["faults"] = [{"node": "n1", "down": float(rng.randint(2, 15)), "up": float(rng.randint(16, 40))}]
        data["timing"] = {**data.get("timing", {}), "straggler_rate": 0.3}
        w = WorkloadInstance.from_dict(data)
        rule = make_speculation("late", {"lag": 1.0})
        assert rule is not None
        options = {"seed": k, "mode": ("event", "heartbeat")[k % 2], "speculation": rule}
        assert_same_rows(w, _policy(rng.choice(["fifo", "fair", "drf"])), **options)


def test_preemption_kills() -> None:
    """Fair with preemption at short timeouts: attempts killed to give pools their shares."""
    rng = random.Random("utilisation-rows-preemption")
    for k in range(6):
        params = {"preemption": True, "min_share_timeout": 1.0, "fair_share_timeout": 2.0}
        assert_same_rows(pooled_workload(rng), _policy("fair", params), seed=k, mode=("heartbeat", "event")[k % 2])


class _Stops(Watch):
    """A watch that stops at its ``limit``-th look (every instant) and counts the stops that came
    where the instant's rows were deferred (``Simulation.defer_rows`` since the look before)."""

    def __init__(self, limit: int) -> None:
        super().__init__(time_limit=limit, clock=_Counting(), every=1)
        self.deferred = False
        self.stopped_deferred = False

    def check(self, sim: Any) -> str | None:
        stop = super().check(sim)
        self.stopped_deferred = stop is not None and self.deferred
        self.deferred = False
        return stop


def _watched(w: WorkloadInstance, how: str, limit: int, **options: Any) -> tuple[Any, bool]:
    """A run of ``_Restless`` stopped by :class:`_Stops`: its rows, and whether the stop came where
    rows were deferred."""
    watch = _Stops(limit)
    sim = Simulation(w, _Restless(), utilisation_rows=how, watch=watch, **options)
    defer = sim.defer_rows

    def noted() -> None:
        watch.deferred = True
        defer()

    sim.defer_rows = noted  # type: ignore[method-assign]
    rec = sim.run()
    return (tuple(rec.pools.items()), [(c.dtype.str, c.tobytes()) for c in rec.utilisation_arrays()], sim.events), (
        watch.stopped_deferred
    )


@pytest.mark.parametrize("mode", ["heartbeat", "event"])
def test_instants_that_share_a_time_and_stops_anywhere(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kill and a timer at a heartbeat's own time (a lone heartbeat's rows deferred to the
    engine's instant), the run stopped by the watch after each of its first instants, so that
    some stops come where rows were deferred (and never written), or at ``until``."""
    rng = random.Random(f"utilisation-rows-restless-{mode}")
    deferred_stops = 0
    for k in range(8):
        if k == 6:
            small_pieces(monkeypatch)
        w = pooled_workload(rng)
        assert_same_rows(w, _Restless, seed=k, mode=mode)
        assert_same_rows(w, _Restless, seed=k, mode=mode, until=float(rng.randint(3, 30)))
        for limit in range(1, 25):
            live, _ = _watched(w, "live", limit, seed=k, mode=mode)
            after, deferred = _watched(w, "after", limit, seed=k, mode=mode)
            assert after == live, (mode, k, limit, w)
            deferred_stops += deferred
    if mode == "heartbeat":
        assert deferred_stops > 0  # the stop where the rows of the last instant were never written


class _Straddling(Fifo):
    """FIFO, offered a node at a time (no offer runs), that at its first launch declines every other
    node and sets a timer for now; at the timer, an instant at the same time after a break of the
    rows, it launches as FIFO does: tasks of the batch opened before the break join it after."""

    def start(self, sim: Any) -> None:
        super().start(sim)
        self.offer_run = None
        self.state = "first"

    def assign(self, node: int) -> None:
        sim: Any = self.sim
        if self.state == "wait":
            return
        before = sim.next_attempt
        super().assign(node)
        if self.state == "first" and sim.next_attempt != before:
            self.state = "wait"
            sim.wake_at(sim.now, "go")

    def on_timer(self, tag: Hashable) -> None:
        self.state = "open"


def test_a_batch_whose_members_start_on_both_sides_of_a_break() -> None:
    """Members of one batch started at a break's time before and after it (the build counts them
    member by member there): the same rows as the live recorder's."""
    rng = random.Random("utilisation-rows-straddle")
    straddles = 0
    for k in range(12):
        w = pooled_workload(rng)
        assert_same_rows(w, _Straddling, seed=k, mode="event")
        sim = Simulation(w, _Straddling(), seed=k, mode="event")
        rec = sim.run()
        marks = sim._marks
        assert marks is not None
        ids, starts = rec.attempt_column("id"), rec.attempt_column("start")
        for time, mark, _, _ in marks.breaks:
            at = starts == time
            straddles += bool((ids[at] < mark).any() and (ids[at] >= mark).any())
    assert straddles > 0


def test_the_rows_of_a_swim_window_if_shared_has_it() -> None:
    """The first 150 jobs of the SWIM day under ``fair`` and ``fifo`` (heartbeat mode, lone
    heartbeats on), byte for byte."""
    if not SWIM_DAY.exists():
        pytest.skip(f"{SWIM_DAY} not available (the traces are kept in ../shared; set MROPT_SHARED)")
    from mropt.importers.swim_workload import import_swim_workload

    data = import_swim_workload(str(SWIM_DAY)).to_dict()
    w = WorkloadInstance.from_dict({**data, "jobs": data["jobs"][:150]})
    for name in ("fair", "fifo"):
        assert assert_same_rows(w, _policy(name), mode="heartbeat") > 1000


def test_a_run_without_rows_or_instants_and_a_bad_choice() -> None:
    w = pooled_workload(random.Random("no-rows"))
    rec = Simulation(w, make_policy("fifo"), record_utilisation=False).run()
    assert rec.pools == {"*": 0} and all(len(c) == 0 for c in rec.utilisation_arrays())
    assert not rec.utilisation
    assert assert_same_rows(w, _policy("fifo"), until=-1.0) == 0  # stopped before its first instant
    with pytest.raises(InputError, match="utilisation_rows must be one of after, live, got 'later'"):
        Simulation(w, make_policy("fifo"), utilisation_rows="later")
