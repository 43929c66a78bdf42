"""Runs of quiet heartbeats in bulk (``Policy.quiet_heartbeats``: ``HeldBeats._quiet`` in
``mropt.sim.lone_beats``, ``FairQuiet._quiet_heartbeats`` for ``fair``) leave every output as the
heartbeats run one at a time.

A run with the bulk path, one without it (``without={"quiet_runs"}``: each heartbeat offered to
``assign``, the lone heartbeats still held) and one on the plain rules (``HeartbeatOffers.plain``:
every heartbeat an event of the queue) must give the same event log, event count, stall, stop,
final time, utilisation rows (written live or built after the run) and delay scheduling's waits,
float for float. The workloads make long quiet runs: many nodes, jobs whose input sits on a few
busy nodes and long locality delays, so that most heartbeats launch nothing; inside the runs,
waits reach their limits, preemption's starvation timeouts end, update() falls due, the run stops
at ``until`` or stalls (small ``stall_limit``), and nodes share phases (held times that meet).
Two hand-checked runs give the times an outside count of the heartbeats gives.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.heartbeat_offers import HeartbeatOffers
from mropt.sim.lone_beats import HeldBeats
from mropt.sim.policies.fair import Fair
from mropt.sim.policy import make_policy

from sim_helpers import starts, waiting_workload, workload


def quiet_workload(rng: random.Random) -> WorkloadInstance:
    """12 to 40 nodes on 2 to 4 racks; jobs whose map input sits on one to three of a few hot nodes
    (some without replicas), arriving over a minute into pools (some with max slots); sometimes a hot
    node down for a while."""
    return waiting_workload(
        rng,
        nodes=(12, 40),
        jobs=(2, 8),
        no_replicas=0.08,
        durations=(2.0, 9.0, 30.0, 70.0),
        tasks=(1, 8),
        reduce=0.4,
        reduce_task=(5.0, 2),
        min_maps=0.4,
        fault=((5, 40), (60, 200)),
    )


def quiet_params(rng: random.Random) -> dict[str, Any]:
    """Delays from none to long beside the 3 s heartbeat; preemption with timeouts that end between
    two updates; assign-multiple caps."""
    params: dict[str, Any] = {
        "node_delay": rng.choice([0.0, 4.0, 10.0, 25.0, 60.0]),
        "rack_delay": rng.choice([0.0, 5.0, 15.0, 40.0]),
    }
    if rng.random() < 0.2:
        params["assign_multiple"] = False
    if rng.random() < 0.2:
        params.update(assign_multiple_maps=rng.randint(1, 2), assign_multiple_reduces=rng.randint(0, 1))
    if rng.random() < 0.5:
        params.update(
            preemption=True,
            min_share_timeout=rng.choice([3.3, 7.3, 20.1]),
            fair_share_timeout=rng.choice([4.7, 12.7, 40.2]),
        )
    return params


class Watched:
    """What the bulk path did in a run: a wrapper of the policy's ``quiet_heartbeats`` counting its
    runs, the quiet heartbeats and why a run stopped before the end of what it was offered."""

    def __init__(self, policy: Fair, seen: Counter[str]) -> None:
        self.policy = policy
        self.seen = seen
        self.inner = policy._quiet_heartbeats
        policy._quiet_heartbeats = self  # type: ignore[method-assign]  # (``start`` installs the hook)

    def __call__(self, nodes: Sequence[int], times: Sequence[float]) -> int:
        policy = self.policy
        walked = bool(policy.skipped) and policy.quiet is not None and policy.skipped is not policy.quiet.jobs
        done = self.inner(nodes, times)
        seen = self.seen
        seen["runs"] += done > 0
        seen["runs after a walk that launched nothing"] += done > 0 and walked
        seen["quiet"] += done
        seen["long runs"] += done >= 10
        quiet = policy.quiet
        if 0 < done < len(nodes) and quiet is not None:  # why heartbeat ``done`` is not quiet
            now = times[done]
            assert policy.last_heartbeat is not None
            since = now - policy.last_heartbeat
            if policy.skipped and any(policy.waited[job] + since >= limit for job, limit in quiet.limits):
                seen["stopped at a wait's limit"] += 1
            elif policy.preemption and policy._quiet_starved(quiet, now):
                seen["stopped at starvation"] += 1
        return done


def outputs(
    w: WorkloadInstance,
    params: dict[str, Any],
    side: str,
    *,
    until: float | None,
    limit: int,
    rows: str,
    whole_phases: bool,
    seen: Counter[str] | None = None,
) -> tuple[Any, ...]:
    """One heartbeat-mode run of ``fair``: ``side`` ``bulk`` (quiet runs in bulk), ``alone`` (each
    heartbeat offered to ``assign``, the lone ones held) or ``plain`` (the plain rules). Its event
    log's hash, event count, stall, stop, final time, utilisation rows and the jobs' waits."""
    policy = make_policy("fair", params, without=() if side == "bulk" else {"quiet_runs"})
    assert isinstance(policy, Fair)
    sim = Simulation(w, policy, seed=3, mode="heartbeat", stall_limit=limit, until=until, utilisation_rows=rows)
    offers = sim.offers
    assert isinstance(offers, HeartbeatOffers) and offers._held is not None
    if whole_phases:  # (several nodes on each phase: their held times meet, and go into the queue)
        offers._phase = [float(int(phase)) for phase in offers._phase]
    if side == "plain":
        offers.plain()
    if seen is not None:
        Watched(policy, seen)
    rec = sim.run()
    if seen is not None:
        seen["stalled"] += sim.stalled and seen["quiet"] > 0
        seen["stopped at until"] += sim.stopped is not None and seen["quiet"] > 0
    util = rec.utilisation_columns()
    table = (util["time"].tolist(), util["slot_type"], util["pool"], util["busy"].tolist(), util["capacity"].tolist())
    return rec.event_log_hash(), sim.events, sim.stalled, sim.stopped, sim.now, table, policy.waited


def test_quiet_runs_in_bulk_give_the_outputs_of_heartbeats_one_at_a_time() -> None:
    rng = random.Random("quiet-runs")
    total: Counter[str] = Counter()
    for _ in range(50):
        w = quiet_workload(rng)
        params = quiet_params(rng)
        until = rng.choice([None, None, float(rng.randint(20, 150)), rng.randint(20, 150) + 0.35])
        limit = rng.choice([4, 25, 100_000])
        options: dict[str, Any] = {"until": until, "limit": limit, "rows": rng.choice(["live", "after"])}
        options["whole_phases"] = rng.random() < 0.2
        seen: Counter[str] = Counter()
        bulk = outputs(w, params, "bulk", seen=seen, **options)
        total.update(seen)
        for side in ("alone", "plain"):
            assert outputs(w, params, side, **options) == bulk, (side, params, options, w)
    # the runs went through what the test is for
    assert total["quiet"] > 4000 and total["long runs"] > 100, total
    what: str
    for what in (
        "stopped at a wait's limit",
        "stopped at starvation",
        "stalled",
        "stopped at until",
    ):
        assert total[what] >= 3, (what, total)


def two_racks(n: int, **first: Any) -> list[dict[str, Any]]:
    """``n`` nodes of one map slot, even ones on rack r0, odd ones on r1 (``first``: more of n0)."""
    nodes: list[dict[str, Any]] = [
        {"id": f"n{i}", "rack": f"r{i % 2}", "map_slots": 1, "reduce_slots": 0} for i in range(n)
    ]
    nodes[0].update(first)
    return nodes


def late_start(
    nodes: list[dict[str, Any]], jobs: list[dict[str, Any]], delay: float, side: str
) -> tuple[Any, Counter[str]]:
    """``late``'s map starts (``starts``) in a run of ``fair`` with node delay ``delay`` (a rack delay
    longer than the run), with the bulk path or without; what the bulk path did."""
    policy = make_policy(
        "fair", {"node_delay": delay, "rack_delay": 50.0}, without=() if side == "bulk" else {"quiet_runs"}
    )
    assert isinstance(policy, Fair)
    seen: Counter[str] = Counter()
    Watched(policy, seen)
    rec = Simulation(workload(nodes, jobs), policy, mode="heartbeat").run()
    assert (seen["quiet"] > 0) == (side == "bulk")
    return starts(rec, "late"), seen


def map_job_on(jid: str, *replicas: str, duration: float = 100.0) -> dict[str, Any]:
    """A job of one map task per replica node given, each with its input there alone."""
    tasks = [{"duration": duration, "replicas": [node]} for node in replicas]
    return {"id": jid, "stages": [{"type": "map", "tasks": tasks}]}


@pytest.mark.parametrize("side", ["bulk", "alone"])
@pytest.mark.parametrize(
    ("n", "delay", "start", "node", "quiet"),
    [
        # node i's heartbeats at 0.3 i + 3 k: the wait reaches 4 s at 4.5 (n5, rack r1: no input of
        # ``late`` on its rack), and ``late`` starts at 4.8 on n6 (rack r0, n0's); 12 quiet before
        # (0.6 to 4.2, but 3.0: n0 is full)
        (10, 4.0, 4.8, "n6", 12),
        # 0.5 i + 3 k: sums of halves, exact: the wait is 4.5, the delay itself, at 5.0 (n4, rack r0)
        (6, 4.5, 5.0, "n4", 7),
    ],
)
def test_a_wait_reaching_its_limit_inside_a_run(
    side: str, n: int, delay: float, start: float, node: str, quiet: int
) -> None:
    """``long`` takes n0 at 0 (its input's only node, one map slot); ``late``'s input is on n0 too, so
    every other node's heartbeat passes it by from node 1's first on: its wait is the time since that
    one. Once it reaches the node delay, ``late`` may start rack-local, on a node of n0's rack."""
    got, seen = late_start(
        two_racks(n), [map_job_on("long", "n0"), map_job_on("late", "n0", duration=1.0)], delay, side
    )
    assert got == [(pytest.approx(start), node, "rack")]
    if side == "bulk":
        assert seen["quiet"] == quiet and seen["stopped at a wait's limit"] == 1, seen


@pytest.mark.parametrize("side", ["bulk", "alone"])
def test_a_run_after_a_walk_that_launched_nothing(side: str) -> None:
    """10 nodes (heartbeats at 0.3 i + 3 k); n2 has two map slots. ``long`` takes n0 at 0; ``late``'s
    inputs are on n2 (one map) and n0 (five): its n2 map starts there at 0.6 (its wait back to 0),
    n3's heartbeat at 0.9 passes it by. At 3.6 n2, which holds its input, is walked (7 maps of 11
    slots: the load manager lets a second map in) and launches nothing (its map there has started):
    the quiet run from 3.9 on adds that walk's gap to the wait too. The wait, the time since 0.9,
    reaches the 6.1 s delay at 7.2 (n4, rack r0: n0's), where the next map starts."""
    nodes = two_racks(10)
    nodes[2]["map_slots"] = 2
    jobs = [map_job_on("long", "n0"), map_job_on("late", "n2", *["n0"] * 5)]
    got, seen = late_start(nodes, jobs, 6.1, side)
    assert got[:2] == [(pytest.approx(0.6), "n2", "node"), (pytest.approx(7.2), "n4", "rack")]
    if side == "bulk":
        assert seen["runs after a walk that launched nothing"] >= 1, seen


@pytest.mark.parametrize("side", ["bulk", "alone"])
def test_a_stall_inside_a_run(side: str) -> None:
    """``waits``'s input is on n0, down from 0 to 1,000 s, and its delays are longer than the run: the
    other 9 nodes' heartbeats (node i's at 0.3 i + 3 k) launch nothing. With ``stall_limit`` 50 the
    run stalls at the 51st, the 6th of the 6th interval: node 6's at 1.8 + 15 = 16.8 s."""
    w = workload(
        two_racks(10),
        [{"id": "waits", "stages": [{"type": "map", "tasks": [{"duration": 5.0, "replicas": ["n0"]}]}]}],
        faults=[{"node": "n0", "down": 0.0, "up": 1000.0}],
    )
    policy = make_policy(
        "fair", {"node_delay": 500.0, "rack_delay": 500.0}, without=() if side == "bulk" else {"quiet_runs"}
    )
    assert isinstance(policy, Fair)
    seen: Counter[str] = Counter()
    Watched(policy, seen)
    sim = Simulation(w, policy, mode="heartbeat", stall_limit=50)
    sim.run()
    assert sim.stalled and sim.now == pytest.approx(16.8)
    assert sim.events == 1 + 1 + 51  # the node's failure, the arrival, the heartbeats
    assert seen["quiet"] == (49 if side == "bulk" else 0), seen  # (the first walks; the 51st runs alone)


@pytest.mark.parametrize("side", ["bulk", "alone"])
def test_heartbeats_without_room_inside_a_run(side: str) -> None:
    """n0 to n4 run ``busy``'s maps (no replicas: they start at once) to 100 s; they alone have a
    reduce slot. ``late`` waits for n0's input on n5 to n9. ``red``'s map runs 5.1-7.1 on n7; its
    reduce starts at 7.2 on n4 (heartbeats at 0.3 i + 3 k), so the heartbeats of n0 to n3 held for
    it find no room (9.0 to 9.9), among the quiet ones of n5 to n9 (8.7, then 10.5). They must end
    there, unscheduled: ``red2``'s reduce, runnable at 22.1, then starts at n0's next heartbeat, 24.0
    (else at 57.2 or later, on n4)."""
    nodes = [{"id": f"n{i}", "rack": "r0", "map_slots": 1, "reduce_slots": 1 if i < 5 else 0} for i in range(10)]
    anywhere = [{"duration": 2.0, "replicas": []}]
    jobs = [
        {"id": "busy", "stages": [{"type": "map", "tasks": [{"duration": 100.0, "replicas": []}] * 5}]},
        map_job_on("late", "n0"),
    ]
    for jid, submit, duration in (("red", 5.0, 50.0), ("red2", 20.0, 5.0)):
        stages = [{"type": "map", "tasks": anywhere}, {"type": "reduce", "tasks": [{"duration": duration}]}]
        jobs.append({"id": jid, "submit_time": submit, "stages": stages})
    policy = make_policy(
        "fair", {"node_delay": 500.0, "rack_delay": 500.0}, without=() if side == "bulk" else {"quiet_runs"}
    )
    rec = Simulation(workload(nodes, jobs), policy, mode="heartbeat").run()
    assert starts(rec, "red") == [(pytest.approx(5.1), "n7", None), (pytest.approx(7.2), "n4", None)]
    assert starts(rec, "red2") == [(pytest.approx(20.1), "n7", None), (pytest.approx(24.0), "n0", None)]


def test_a_beat_held_again_at_a_queued_attempt_end() -> None:
    """3 nodes (heartbeats at i + 3 k: whole times); ``long`` takes n0 at 0 for 100 s, ``late`` waits
    for n0 (delays longer than the run): n1's and n2's heartbeats are quiet. n1's at 97 is held again
    at 100, the time ``long``'s end is queued: inside the run it goes into the queue (``_quiet``'s
    test of the queued times), as the heartbeats one at a time put it (rows built after the run)."""
    w = workload(two_racks(3), [map_job_on("long", "n0"), map_job_on("late", "n0", duration=1.0)])
    params = {"node_delay": 500.0, "rack_delay": 500.0}
    options: dict[str, Any] = {"until": None, "limit": 100_000, "rows": "after", "whole_phases": False}
    pushed: list[float] = []  # the times held again that ``_quiet`` put into the queue
    quiet = HeldBeats._quiet

    def spy(self: HeldBeats, *args: Any) -> tuple[int, int, int, bool]:
        sim = self.sim
        push = sim.push_heartbeat
        sim.push_heartbeat = lambda time, node: (pushed.append(time), push(time, node))[1]  # type: ignore[method-assign, func-returns-value]
        try:
            return quiet(self, *args)
        finally:
            del sim.push_heartbeat

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(HeldBeats, "_quiet", spy)
        bulk = outputs(w, params, "bulk", **options)
    assert pushed == [100.0], pushed
    assert bulk[4] == 104.0
    for side in ("alone", "plain"):
        assert outputs(w, params, side, **options) == bulk, side
