"""Capacity's walks over a backlog: passes counted in bulk, only jobs that may fit visited.

``Capacity._walk_fitting`` (mropt.sim.policies.capacity_passes) visits only the candidate jobs
whose map may fit the tracker's free resources, and gives the jobs it skips their missed
scheduling opportunities in bulk. On a long backlog of jobs whose launches fail (tasks too big
for what the tracker has left, or no local map) and whose off-switch thresholds are crossed at
different heartbeats, it must launch what ``Capacity._assign_reference`` launches, attempt by
attempt, while calling ``launch`` far less often.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.launches import Launches
from mropt.sim.policies import capacity
from mropt.sim.policies.capacity_passes import DemandClasses, PassCounts
from mropt.sim.policy import make_policy

from sim_helpers import random_queues, workload


def test_pass_counts_give_each_rank_the_walks_that_passed_it() -> None:
    """Brute force: a rank got one pass from each walk whose bound is above it."""
    rng = random.Random(5)
    for n in (1, 2, 7, 64, 100):
        counts = PassCounts(n)
        bounds: list[int] = []
        for _ in range(300):
            b = rng.choice([0, n, n + 3, rng.randint(0, n)])
            counts.pass_below(b)
            bounds.append(b)
            r = rng.randrange(n)
            assert counts.at(r) == sum(1 for x in bounds if x > r)
        assert [counts.at(r) for r in range(n)] == [sum(1 for x in bounds if x > r) for r in range(n)]


def test_demand_classes_list_the_candidates_that_fit_in_rank_order() -> None:
    """Brute force: the ranks of class 0 and of the classes whose demand is at most the free amount
    plus 1e-9 (``Capacity.fits``), ascending, after random joins and leaves (and past 8 classes)."""
    rng = random.Random(9)
    for n_res in (1, 2, 3):
        classes = DemandClasses(n_res)
        members: dict[int, tuple[float, ...] | None] = {}
        for _ in range(400):
            if members and rng.random() < 0.4:
                rank = rng.choice(sorted(members))
                classes.remove(members.pop(rank), rank)
            else:
                rank = rng.randrange(1000)
                if rank in members:
                    continue
                demand = None if rng.random() < 0.2 else tuple(float(rng.randint(1, 6)) for _ in range(n_res))
                classes.add(demand, rank)
                members[rank] = demand
            free = [rng.choice([0.0, 2.0, 3.0 - 1e-10, 4.5, 6.0]) for _ in range(n_res)]
            want = sorted(
                r for r, d in members.items() if d is None or all(a <= f + 1e-9 for a, f in zip(d, free, strict=True))
            )
            assert list(classes.fitting(free)) == want
            assert classes.one_demand == sum(1 for d in members.values() if d is not None)
            assert len(classes) == 1 + len({d for d in members.values() if d is not None})


def test_demand_classes_drop_a_demand_when_its_last_candidate_leaves() -> None:
    """A run's demands come and go (the Alibaba day: 986 over the day, at most 356 with candidates
    at once): a walk scans only those with candidates now. 2,000 demands, each joined by three ranks
    that leave in turn, at most 5 at a time: the slots stay at 1 + the demands with candidates, the
    arrays at their first size, and the walks list what brute force lists."""
    rng = random.Random(4)
    classes = DemandClasses(2)
    members: dict[int, tuple[float, ...]] = {}
    for k in range(2000):
        demand = (float(k % 7), float(k))  # (second amount: a new demand each time)
        for rank in (3 * k, 3 * k + 1, 3 * k + 2):
            classes.add(demand, rank)
            members[rank] = demand
        while len({*members.values()}) > rng.randint(1, 5):
            rank = rng.choice(sorted(members))
            classes.remove(members.pop(rank), rank)
        live = {*members.values()}
        assert len(classes) == 1 + len(live)
        assert len(classes.heads) == 8
        free = (rng.choice([0.0, 3.0, 6.0]), float(rng.randint(0, 2 * k + 1)))
        want = sorted(r for r, d in members.items() if d[0] <= free[0] + 1e-9 and d[1] <= free[1] + 1e-9)
        assert list(classes.fitting(free)) == want


def backlog_workload(rng: random.Random, n_jobs: int, queues: bool) -> WorkloadInstance:
    """A queue's backlog on 6-8 nodes of 8 map slots and 8 CPUs in 2-3 racks: big jobs (5-8 CPUs a
    task: they fit a tracker only when it is nearly empty), small jobs of 1-4 one-CPU tasks with one
    replica each (no local map on most racks: they wait for their off-switch thresholds, of
    different sizes), jobs of two map stages of different demands and stages of two demands; half of
    the times three nodes down for a while; with ``queues``, two queues half of the times."""
    n_racks = rng.randint(2, 3)
    nodes = [
        {
            "id": f"n{i}",
            "rack": f"r{i % n_racks}",
            "map_slots": 8,
            "reduce_slots": 1,
            "resources": {"cpu": 8.0, "mem": 4.0},
        }
        for i in range(rng.randint(6, 8))
    ]
    jobs = []
    for i in range(n_jobs):
        kind = rng.choices(["big", "small", "two", "mixed"], [10, 5, 3, 2])[0]
        if kind == "big":
            demand = {"cpu": float(rng.randint(5, 8)), "mem": 1.0}
            stages: list[dict[str, Any]] = [
                {
                    "type": "map",
                    "tasks": [{"duration": rng.choice([6.0, 9.0]), "count": rng.randint(2, 6), "demand": demand}],
                }
            ]
        elif kind == "small":
            demand = {"cpu": 1.0, "mem": rng.choice([0.25, 0.5])}
            stages = [{"type": "map", "tasks": [{"duration": 4.0, "count": rng.randint(1, 4), "demand": demand}]}]
        elif kind == "two":  # a second map stage of another demand: its class changes at the stage's end
            stages = [
                {"type": "map", "tasks": [{"duration": 3.0, "count": 2, "demand": {"cpu": 1.0, "mem": 0.5}}]},
                {"type": "map", "tasks": [{"duration": 5.0, "count": 3, "demand": {"cpu": 6.0, "mem": 1.0}}]},
            ]
        else:  # two demands in one stage: always visited
            stages = [
                {
                    "type": "map",
                    "tasks": [
                        {"duration": 3.0, "count": 2, "demand": {"cpu": 2.0, "mem": 0.5}},
                        {"duration": 3.0, "count": 2, "demand": {"cpu": 7.0, "mem": 0.5}},
                    ],
                }
            ]
        if rng.random() < 0.2:
            stages.append({"type": "reduce", "tasks": [{"duration": 2.0, "count": 1}]})
        jobs.append(
            {
                "id": f"j{i}",
                "submit_time": float(rng.randint(0, 30)),
                "priority": rng.randint(0, 2),
                "user": f"u{rng.randint(0, 3)}",
                "queue": f"q{rng.randrange(2)}",
                "stages": stages,
            }
        )
    extra: dict[str, Any] = {"placement": {"replicas": 1, "seed": rng.randint(0, 9)}}
    if rng.random() < 0.5:  # fewer trackers, then more: off-switch thresholds fall and rise again
        extra["faults"] = [
            {"node": f"n{k}", "down": float(rng.randint(5, 40)), "up": float(rng.randint(45, 90))}
            for k in rng.sample(range(len(nodes)), 3)
        ]
    if queues and rng.random() < 0.5:  # two queues: their order, maximum capacities, user limits, priorities
        extra["queues"] = random_queues(rng, 2, headroom=(10, 50), user_limit=0.3, priority=0.5)
    return workload(nodes, jobs, **extra)


def counted_run(w: WorkloadInstance, params: dict[str, Any], reference: bool) -> tuple[list[tuple[Any, ...]], str, int]:
    """The attempts (attempt, job, stage, task, node, start, end, locality) in order, the event-log hash and the calls to
    ``launch`` of one path's run."""
    calls = 0
    plain_launch = Launches.launch

    def launch(self: Any, *args: Any) -> int:
        nonlocal calls
        calls += 1
        return plain_launch(self, *args)

    mp = pytest.MonkeyPatch()
    mp.setattr(Launches, "launch", launch)
    try:
        rec = Simulation(w, make_policy("capacity", params, reference=reference), stall_limit=500).run()
    finally:
        mp.undo()
    t = rec.tasks_columns()
    cols = ("attempt", "job_id", "stage", "task", "node", "start", "end", "locality")
    rows = list(zip(*(list(t[c]) for c in cols), strict=True))
    return rows, rec.event_log_hash(), calls


@pytest.mark.parametrize("bulk_min", [capacity.BULK_MIN, 4])
def test_bulk_walk_launches_what_the_reference_launches_on_a_backlog(bulk_min: int) -> None:
    """Attempt by attempt the same as the plain rule, with far fewer ``launch`` calls; off-switch
    maps go out at several times (thresholds crossed at different heartbeats). Below the default
    ``BULK_MIN``, two queues half of the times."""
    queues = bulk_min < capacity.BULK_MIN
    mp = pytest.MonkeyPatch()
    mp.setattr(capacity, "BULK_MIN", bulk_min)
    rng = random.Random(f"capacity-bulk-{bulk_min}")
    try:
        calls = [0, 0]
        off_switch_times: set[float] = set()
        for _ in range(6):
            w = backlog_workload(rng, 160, queues=queues)
            params = {"locality_wait_factor": rng.choice([-1.0, 0.5, 1.0, 3.0])}
            ref_rows, ref_hash, ref_calls = counted_run(w, params, True)
            rows, got_hash, got_calls = counted_run(w, params, False)
            for k, (want, got) in enumerate(zip(ref_rows, rows, strict=False)):
                assert got == want, f"attempt {k}: {got} from the fast path, {want} from the reference"
            assert len(rows) == len(ref_rows)
            assert got_hash == ref_hash
            calls[0] += ref_calls
            calls[1] += got_calls
            off_switch_times.update(row[5] for row in ref_rows if row[-1] == "any")
    finally:
        mp.undo()
    assert len(off_switch_times) >= 20
    assert calls[1] * 2 < calls[0], calls  # the skipped jobs were not asked (each asked: 1.1x)


def test_a_job_visited_again_on_a_heartbeat_counts_down_to_its_off_switch() -> None:
    """``_walk_fitting``'s ``left``: a job a walk in bulk visits again on one heartbeat takes one from
    its count instead of reading its passes and testing again. Spied: off-switch maps go out decided
    by that count (the job was in ``left`` when the walk began), and the runs give the plain rule's
    attempts; the count computed afresh once per job and heartbeat, not once per visit."""
    mp = pytest.MonkeyPatch()
    mp.setattr(capacity, "BULK_MIN", 4)
    walk, fresh, plain_launch = capacity.Capacity._walk_fitting, capacity.Capacity._off_switch_left, Launches.launch
    fitting = DemandClasses.fitting
    counted = {"counted_down": 0, "fresh": 0, "visits": 0}
    known: set[int] = set()  # the jobs in ``left`` when the walk began

    def spied_walk(self: Any, q: Any, node: int, no_local: set[int], left: dict[int, int]) -> int:
        known.clear()
        known.update(left)
        return walk(self, q, node, no_local, left)

    def spied_fresh(self: Any, job: int, missed: int) -> int:
        counted["fresh"] += 1
        return fresh(self, job, missed)

    def spied_fitting(self: Any, free: Any) -> Any:
        for rank in fitting(self, free):
            counted["visits"] += 1
            yield rank

    def spied_launch(self: Any, job: int, node: int, stype: int, level: int) -> int:
        got = plain_launch(self, job, node, stype, level)
        if level == capacity.ANY and got >= 0 and job in known:
            counted["counted_down"] += 1
        return got

    rng = random.Random("capacity-left")
    try:
        for _ in range(4):
            w = backlog_workload(rng, 160, queues=False)
            params = {"locality_wait_factor": rng.choice([-1.0, 0.5, 1.0])}
            ref_rows, ref_hash, _ = counted_run(w, params, True)
            mp.setattr(capacity.Capacity, "_walk_fitting", spied_walk)
            mp.setattr(capacity.Capacity, "_off_switch_left", spied_fresh)
            mp.setattr(Launches, "launch", spied_launch)
            mp.setattr(DemandClasses, "fitting", spied_fitting)
            try:
                pol = make_policy("capacity", params)
                rec = Simulation(w, pol, stall_limit=500).run()
            finally:
                mp.setattr(capacity.Capacity, "_walk_fitting", walk)
                mp.setattr(capacity.Capacity, "_off_switch_left", fresh)
                mp.setattr(Launches, "launch", plain_launch)
                mp.setattr(DemandClasses, "fitting", fitting)
            t = rec.tasks_columns()
            cols = ("attempt", "job_id", "stage", "task", "node", "start", "end", "locality")
            assert list(zip(*(list(t[c]) for c in cols), strict=True)) == ref_rows
            assert rec.event_log_hash() == ref_hash
    finally:
        mp.undo()
    assert counted["counted_down"] >= 5, counted
    assert counted["fresh"] < counted["visits"] - 2_000, counted  # (22,394 of 26,645 visits)


def test_a_wait_factor_whose_bound_overflows_never_goes_off_switch_in_bulk() -> None:
    """A ``locality_wait_factor`` of 1e308 (valid: the parameter asks >= -1 and finite) makes the
    off-switch bound infinite: the plain rule's test never holds, and the walks in bulk (their
    count of opportunities left, ``_off_switch_left``) give its attempts instead of failing on the
    bound's floor; no map goes off-switch."""
    mp = pytest.MonkeyPatch()
    mp.setattr(capacity, "BULK_MIN", 4)
    try:
        w = backlog_workload(random.Random("capacity-huge-factor"), 160, queues=False)
        params = {"locality_wait_factor": 1e308}
        ref_rows, ref_hash, _ = counted_run(w, params, True)
        rows, got_hash, _ = counted_run(w, params, False)
    finally:
        mp.undo()
    assert rows == ref_rows and got_hash == ref_hash
    assert rows and all(row[-1] != "any" for row in rows if row[2] == 0)
