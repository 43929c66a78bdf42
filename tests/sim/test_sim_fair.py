"""Fair Scheduler policy (Hadoop 1.0.3): computeFairShares, pool shares on a cluster, delay scheduling, maxRunning.

Heartbeats (mropt/sim/engine.py): 4 nodes beat every 3 s, node i at 0.75 i + 3k, and only
while it has a free slot and work is pending.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policies.fair import Fair, compute_fair_shares, priority_factor
from mropt.sim.policy import make_policy
from mropt.sim.recorder import Recorder
from mropt.sim.state import MAP, REDUCE

from sim_helpers import map_job, policy_params, starts, succeeded_once, workload


def run(w: WorkloadInstance, params: dict[str, Any] | None = None, self_check: bool = False) -> tuple[Recorder, Fair]:
    policy = make_policy("fair", params or {}, self_check=self_check)
    assert isinstance(policy, Fair)
    return Simulation(w, policy).run(), policy


def busy_by_pool(rec: Recorder, t: float) -> dict[str, int]:
    """Attempts running at time t, per pool (from the attempt table)."""
    tasks = rec.tasks_columns()
    jobs = rec.jobs_columns()
    pool_of = dict(zip(jobs["job_id"], jobs["pool"], strict=True))
    out: dict[str, int] = {}
    for jid, start, end in zip(tasks["job_id"], tasks["start"], tasks["end"], strict=True):
        if start <= t < end:
            out[pool_of[jid]] = out.get(pool_of[jid], 0) + 1
    return out


# -- computeFairShares (SchedulingAlgorithms), TestComputeFairShares-style cases ---------------------


def test_equal_weights_share_equally() -> None:
    assert compute_fair_shares([100, 100, 100, 100], [0] * 4, [1] * 4, 40) == pytest.approx([10] * 4, abs=1e-5)


def test_small_demand_is_met_and_the_rest_split() -> None:
    # 2R + 20 + 10 = 100 -> R = 35
    got = compute_fair_shares([100, 50, 20, 10], [0] * 4, [1] * 4, 100)
    assert got == pytest.approx([35, 35, 20, 10], abs=1e-5)


def test_min_share_first_then_equal() -> None:
    # 20 + 3R = 40 -> R = 20/3
    got = compute_fair_shares([100, 100, 100, 100], [20, 0, 0, 0], [1] * 4, 40)
    assert got == pytest.approx([20, 20 / 3, 20 / 3, 20 / 3], abs=1e-5)


def test_weights_two_to_one() -> None:
    assert compute_fair_shares([100, 100], [0, 0], [2, 1], 30) == pytest.approx([20, 10], abs=1e-5)
    # a heavy pool with small demand: 10 + 2R = 50 -> R = 20
    assert compute_fair_shares([10, 100, 100], [0, 0, 0], [2, 1, 1], 50) == pytest.approx([10, 20, 20], abs=1e-5)


def test_demand_below_slots_and_min_shares_above_slots() -> None:
    assert compute_fair_shares([3, 5], [0, 0], [1, 1], 100) == pytest.approx([3, 5], abs=1e-5)
    # Hadoop 1.0.3 does not scale min shares down: they may add up to more than the slots
    assert compute_fair_shares([100, 100], [30, 30], [1, 1], 40) == [30, 30]
    assert compute_fair_shares([], [], [], 10) == []


def test_priority_factor() -> None:
    assert [priority_factor(p) for p in (3, 2, 1, 0, -1, -2, -5)] == [4, 4, 2, 1, 0.5, 0.25, 0.25]


# -- shares on a cluster ------------------------------------------------------------------------------------

NODES4 = [{"id": "n", "count": 4, "map_slots": 2, "reduce_slots": 0}]


def test_weighted_pools_get_their_fair_share_of_slots() -> None:
    # 8 map slots, weights 1:3. Node 0 (t=0): a (tie 0/1 = 0/3, name), then b; node 1: b, b;
    # node 2: a (tie 1/1 = 3/3), b; node 3: b, b -> a 2, b 6 = the fair shares 8 x 1/4, 8 x 3/4.
    w = workload(
        NODES4,
        [map_job("ja", 16, 10.0, pool="a"), map_job("jb", 16, 10.0, pool="b")],
        pools=[{"id": "a", "weight": 1}, {"id": "b", "weight": 3}],
    )
    rec, policy = run(w)
    assert busy_by_pool(rec, 5.0) == {"a": 2, "b": 6}
    assert [s[0] for s in starts(rec, "ja")][:2] == [0.0, 1.5]


def test_min_share_pool_is_served_first() -> None:
    w = workload(
        NODES4,
        [map_job("ja", 16, 10.0, pool="a"), map_job("jb", 16, 10.0, pool="b")],
        pools=[{"id": "a", "min_maps": 6}],
    )
    rec, _ = run(w)
    assert busy_by_pool(rec, 5.0) == {"a": 6, "b": 2}


def test_max_maps_caps_a_pool() -> None:
    w = workload(
        NODES4,
        [map_job("ja", 16, 10.0, pool="a"), map_job("jb", 16, 10.0, pool="b")],
        pools=[{"id": "a", "max_maps": 3}],
    )
    rec, _ = run(w)
    assert busy_by_pool(rec, 5.0) == {"a": 3, "b": 5}


class SharesAtFirstBeat(Fair):
    """Fair that records the fair shares its first heartbeat sees."""

    seen: dict[str, Any]

    def assign(self, node: int) -> None:
        super().assign(node)
        if not hasattr(self, "seen"):
            self.seen = {"pools": self.fair_shares(0), "jobs": self.job_fair_shares(0)}


def test_fair_shares_read_from_the_policy() -> None:
    w = workload(
        NODES4,
        [map_job("ja", 16, 10.0, pool="a"), map_job("jb", 2, 10.0, pool="b"), map_job("jc", 4, 10.0, pool="a")],
        pools=[{"id": "a", "weight": 1}, {"id": "b", "weight": 3}],
    )
    policy = SharesAtFirstBeat(**policy_params("fair"))
    Simulation(w, policy).run()
    # demands a 20, b 2 on 8 slots: b is capped by its demand, a takes the rest (6),
    # split between its jobs ja (demand 16) and jc (demand 4) equally: 3 and 3
    assert policy.seen["pools"] == pytest.approx({"a": 6.0, "b": 2.0}, abs=1e-5)
    assert policy.seen["jobs"] == pytest.approx({0: 3.0, 1: 2.0, 2: 3.0}, abs=1e-5)


def test_fifo_pool_orders_its_jobs_by_priority_then_submit() -> None:
    nodes = [{"id": "n", "count": 1, "map_slots": 1, "reduce_slots": 0}]
    jobs = [
        map_job("first", 1, 10.0, submit=0.0, pool="p"),
        map_job("late", 1, 10.0, submit=1.0, pool="p"),
        map_job("urgent", 1, 10.0, submit=2.0, pool="p", priority=1),
    ]
    rec, _ = run(workload(nodes, jobs, pools=[{"id": "p", "mode": "fifo"}]))
    # one node beats every 3 s: first ends at 10, urgent at the beat of 12, late at 24
    assert [starts(rec, j)[0][0] for j in ("first", "urgent", "late")] == [0.0, 12.0, 24.0]


def test_max_running_holds_jobs_back_until_the_next_update() -> None:
    nodes = [{"id": "n", "count": 4, "map_slots": 1, "reduce_slots": 0}]
    jobs = [map_job("j1", 4, 10.0, pool="p"), map_job("j2", 4, 10.0, submit=1.0, pool="p")]
    rec, _ = run(workload(nodes, jobs, pools=[{"id": "p", "max_running": 1}]))
    # j1 runs on nodes 0..3 from 0, 0.75, 1.5, 2.25 and ends at 12.25; the update of the beat
    # at 12 (node 0) still sees it; the next one, at node 1's beat of 12.75, makes j2 runnable.
    assert starts(rec, "j2")[0][0] == 12.75
    rec2, _ = run(workload(nodes, jobs))
    assert starts(rec2, "j2")[0][0] < 10.0


# -- delay scheduling --------------------------------------------------------------------------------------

RACKS = [
    {"id": "a", "count": 2, "rack": "r0", "map_slots": 1, "reduce_slots": 0},
    {"id": "b", "count": 2, "rack": "r1", "map_slots": 1, "reduce_slots": 0},
]


def delay_case(fillers: int, filler_time: float, params: dict[str, Any]) -> list[tuple[float, str, str | None]]:
    """Fillers (no replicas) take nodes a-0 (t=0) and a-1 (t=0.75); job j (submit 1) reads from a-0."""
    jobs = [map_job(f"f{k}", 1, filler_time) for k in range(fillers)]
    jobs.append(map_job("j", 1, 10.0, submit=1.0, replicas=["a-0"]))
    rec, _ = run(workload(RACKS, jobs), params)
    return starts(rec, "j")


def test_delay_then_rack_local() -> None:
    # a-1 is free: j is skipped at 1.5 (b-0), 2.25 (b-1), 3.75 (a-1), 4.5, 5.25, waiting 0, 0.75,
    # 2.25, 3.0, 3.75 s; at a-1's beat of 6.75 it has waited 5.25 >= node_delay 4: rack-local.
    assert delay_case(1, 100.0, {"node_delay": 4.0, "rack_delay": 4.0}) == [(6.75, "a-1", "rack")]


def test_delay_then_off_rack() -> None:
    # both r0 nodes busy: waits 0.75, 3.0, 3.75, 6.0 (RACK, none in r1), 6.75, then 9.0 >= 8 at 10.5
    assert delay_case(2, 100.0, {"node_delay": 4.0, "rack_delay": 4.0}) == [(10.5, "b-0", "any")]


def test_delay_until_the_local_node_frees() -> None:
    # the filler leaves a-0 at 5; a-0 beats at 6, when j has waited 4.5 < 5: node-local there
    assert delay_case(1, 5.0, {"node_delay": 5.0, "rack_delay": 5.0}) == [(6.0, "a-0", "node")]


def test_no_delay_launches_at_once() -> None:
    assert delay_case(2, 100.0, {"node_delay": 0.0, "rack_delay": 0.0}) == [(1.5, "b-0", "any")]


def test_auto_delay_is_one_and_a_half_heartbeats() -> None:
    w = workload(RACKS, [map_job("j", 1, 1.0)])
    _, policy = run(w)
    assert (policy.node_delay, policy.rack_delay) == (4.5, 4.5)


# -- outcomes --------------------------------------------------------------------------------------------


def mixed_workload() -> WorkloadInstance:
    jobs = []
    for k in range(8):
        jobs.append(
            {
                "id": f"j{k}",
                "submit_time": 3.0 * k,
                "pool": f"p{k % 3}",
                "priority": (k % 5) - 2,
                "stages": [
                    {"type": "map", "tasks": [{"duration": 4.0 + k, "count": 5 + k}]},
                    {"type": "reduce", "tasks": [{"duration": 3.0, "count": 2}]},
                ],
            }
        )
    return workload(
        [
            {"id": "a", "count": 3, "rack": "r0", "map_slots": 2, "reduce_slots": 1},
            {"id": "b", "count": 3, "rack": "r1", "map_slots": 2, "reduce_slots": 1},
        ],
        jobs,
        placement={"replicas": 3, "seed": 1},
        pools=[{"id": "p0", "min_maps": 3, "max_running": 2}, {"id": "p1", "weight": 2, "mode": "fifo"}],
        timing={"reduce_slowstart": 0.05},
    )


@pytest.mark.parametrize("params", [{}, {"assign_multiple": False}, {"preemption": True, "min_share_timeout": 2.0}])
def test_every_task_succeeds_once(params: dict[str, Any]) -> None:
    rec, _ = run(mixed_workload(), params)
    succeeded_once(rec)


def test_preemption_kills_for_a_starved_min_share() -> None:
    # pool a fills the 4 slots by t=2.25; pool b (min share 2) arrives at 3 and is starved;
    # at the 15 s check (timeout 5 s) a's two most recent attempts are killed, b takes the
    # freed nodes at their next beats (node 2 at 16.5, node 3 at 17.25).
    nodes = [{"id": "n", "count": 4, "map_slots": 1, "reduce_slots": 0}]
    jobs = [map_job("ja", 8, 100.0, pool="a"), map_job("jb", 2, 10.0, submit=3.0, pool="b")]
    w = workload(nodes, jobs, pools=[{"id": "b", "min_maps": 2}])
    rec, _ = run(w, {"preemption": True, "min_share_timeout": 5.0})
    tasks = rec.tasks_columns()
    killed = sorted(
        (float(s), float(e))
        for j, s, e, o in zip(tasks["job_id"], tasks["start"], tasks["end"], tasks["outcome"], strict=True)
        if o == "killed"
    )
    assert killed == [(1.5, 15.0), (2.25, 15.0)]
    assert [s[0] for s in starts(rec, "jb")] == [16.5, 17.25]
    succeeded_once(rec)
    rec_off, _ = run(w)
    assert "killed" not in rec_off.tasks_columns()["outcome"]


def test_preemption_timers_stop_when_nothing_can_run() -> None:
    # the only node goes down for good at 5: the job never finishes, and the update timers stop
    nodes = [{"id": "n", "count": 1, "map_slots": 1, "reduce_slots": 0}]
    w = workload(nodes, [map_job("j", 2, 10.0)], faults=[{"node": "n", "down": 5.0}])
    rec, policy = run(w, {"preemption": True})
    assert not policy.timer_on
    assert math.isnan(rec.jobs_columns()["finish"][0])


# -- the kept pool order (Fair.order, updated instead of sorted at every heartbeat) ----------------------


@pytest.mark.parametrize("params", [{}, {"assign_multiple": False}, {"preemption": True, "min_share_timeout": 2.0}])
def test_kept_pool_order_is_a_sort_at_every_heartbeat(params: dict[str, Any]) -> None:
    # min shares, weights, fifo pools, maxRunning, preemption: every key input changes in this run
    rec, policy = run(mixed_workload(), params, self_check=True)
    succeeded_once(rec)
    # every pool left the order with its last candidate job (it is brought up to date when read)
    assert policy._pool_order(MAP) == [] and policy._pool_order(REDUCE) == []
    assert run(mixed_workload(), params)[0].event_log_hash() == rec.event_log_hash()


class _Forgetful(Fair):
    """A Fair that forgets to move a pool after its launches: the check must notice."""

    def _launched(self, pool: Any, job: int, stype: int) -> None:
        order, placed = list(self.order[stype]), dict(self.placed[stype])
        super()._launched(pool, job, stype)
        self.order[stype][:] = order  # the pool's old key and place put back
        self.placed[stype].clear()
        self.placed[stype].update(placed)


def test_the_order_check_catches_a_pool_left_in_its_old_place() -> None:
    with pytest.raises(AssertionError, match="kept pool order"):
        Simulation(mixed_workload(), _Forgetful(self_check=True, **policy_params("fair"))).run()
