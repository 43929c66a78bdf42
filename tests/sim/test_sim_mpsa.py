"""The ``mpsa`` policy: hunger degree (MPSA eqs. 19-20), Algorithm 2's choice, the reserve, a known answer."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mropt.instances.workload_gen import generate_workload
from mropt.model.workload import Stage, TaskGroup, WorkloadInstance, WorkloadJob
from mropt.priority.queueing import Routing, priority_sojourn
from mropt.sim.engine import Simulation
from mropt.sim.policies.mpsa import Mpsa, algorithm2_order, hunger_degree, shared_left
from mropt.sim.policy import make_policy
from mropt.sim.verify import verify_simulation

from sim_helpers import mr_job, policy_params, run, workload


def test_hunger_degree_is_eqs_19_20() -> None:
    # 1 - assigned / reserved: 3 of 4 held -> 0.25; 6 of 4 -> -0.5; 0 of 5 -> 1
    assert hunger_degree(3, 4) == 0.25
    assert hunger_degree(6, 4) == -0.5
    assert hunger_degree(0, 5) == 1.0
    assert hunger_degree(2, 8) == 0.75
    # no reservation: owed nothing
    assert hunger_degree(0, 0) == 0.0
    assert hunger_degree(1, 0) == -math.inf


def test_algorithm2_with_shared_slots_left() -> None:
    # 10 slots, reservations 4 + 2 + 2 -> 2 shared; held 3, 0, 2: hunger 0.25, 1.0, 0.0
    assert shared_left([3, 0, 2], [4, 2, 2], 10) == 2
    assert algorithm2_order([3, 0, 2], [4, 2, 2], 10, [True, True, True]) == [1, 0, 2]
    # queue 2 above its reservation (3 of 2: hunger -0.5) still competes while a shared slot is left
    assert shared_left([3, 0, 3], [4, 2, 2], 10) == 1
    assert algorithm2_order([3, 0, 3], [4, 2, 2], 10, [True, False, True]) == [0, 2]


def test_algorithm2_without_shared_slots() -> None:
    # held 5, 0, 3 against 4, 2, 2: excess 1 + 1 = the 2 shared slots -> none left
    assert shared_left([5, 0, 3], [4, 2, 2], 10) == 0
    # only queues below their reservation may take the slot: queue 1
    assert algorithm2_order([5, 0, 3], [4, 2, 2], 10, [True, True, True]) == [1]
    # queue 1 has no work: the slot is kept (reserved), queues 0 and 2 get nothing
    assert algorithm2_order([5, 0, 3], [4, 2, 2], 10, [True, False, True]) == []
    # a queue exactly at its reservation gets nothing either (the text's rule, sec. 4.4)
    assert algorithm2_order([4, 0, 4], [4, 2, 2], 10, [True, False, False]) == []
    # ties in hunger go to the more urgent (lower index) queue
    assert algorithm2_order([1, 1, 0], [2, 2, 2], 6, [True, True, False]) == [0, 1]


class _Fixed(Mpsa):
    """MPSA with a fixed reservation (no recomputation before the jobs end)."""

    def __init__(self, maps: list[int], reduces: list[int], **params: object) -> None:
        super().__init__(**policy_params("mpsa", interval=1e6, **params))
        self.fixed = [list(maps), list(reduces)]

    def start(self, sim):  # type: ignore[no-untyped-def]
        super().start(sim)
        self.reserved = [list(r) for r in self.fixed]

    def recompute(self) -> None:
        pass


def _two_queue_workload() -> WorkloadInstance:
    # one node, 2 map slots, 1 reduce slot; queue A (priority 2) has 3 maps of 10 s at t = 0,
    # queue B (priority 1) one map of 10 s at t = 5
    nodes = [{"id": "n0", "map_slots": 2, "reduce_slots": 1}]
    jobs = [mr_job("a", [10.0, 10.0, 10.0], priority=2), mr_job("b", 10.0, priority=1, submit_time=5.0)]
    return workload(nodes, jobs)


def _starts(w: WorkloadInstance, policy: Mpsa) -> dict[str, list[float]]:
    sim = Simulation(w, policy, mode="event")
    rec = sim.run()
    verdict = verify_simulation(w, rec.jobs_columns(), rec.tasks_columns())
    assert verdict.ok, verdict.problems
    t = rec.tasks_columns()
    out: dict[str, list[float]] = {}
    for job, start in zip(t["job_id"], t["start"].tolist()):
        out.setdefault(job, []).append(start)
    return {k: sorted(v) for k, v in out.items()}


def test_queue_above_its_allocation_gets_nothing_once_shared_slots_are_gone() -> None:
    w = _two_queue_workload()
    # A and B reserve one map slot each: nothing shared. A holds its slot; the second one stays
    # idle for B (arriving at 5), so A's maps run one after the other.
    assert _starts(w, _Fixed([1, 1], [1, 0])) == {"a": [0.0, 10.0, 20.0], "b": [5.0]}
    # one shared map slot (B reserves none): A takes it too at 0, B waits for a slot to free
    assert _starts(w, _Fixed([1, 0], [1, 0])) == {"a": [0.0, 0.0, 10.0], "b": [10.0]}


def test_locality_queue_first_then_hungriest() -> None:
    # two nodes in two racks; queue A (hungrier) has a map whose input is on n1 only, queue B a
    # map local to n0: node n0 goes to B (the locality-satisfying queue), A's task waits for n1
    nodes = [
        {"id": "n0", "rack": "r0", "map_slots": 1, "reduce_slots": 1},
        {"id": "n1", "rack": "r1", "map_slots": 1, "reduce_slots": 1},
    ]
    jobs = [
        {"id": "a", "priority": 2, "stages": [{"type": "map", "tasks": [{"duration": 10, "replicas": [["n1"]]}]}]},
        {"id": "b", "priority": 1, "stages": [{"type": "map", "tasks": [{"duration": 10, "replicas": [["n0"]]}]}]},
    ]
    w = workload(nodes, jobs)
    sim = Simulation(w, _Fixed([1, 1], [1, 1]), mode="event")
    rec = sim.run()
    assert verify_simulation(w, rec.jobs_columns(), rec.tasks_columns()).ok
    t = rec.tasks_columns()
    placed = {job: (node, loc) for job, node, loc in zip(t["job_id"], t["node"], t["locality"])}
    assert placed == {"a": ("n1", "node"), "b": ("n0", "node")}


def test_preset_runs_under_mpsa_fair_and_capacity() -> None:
    w = generate_workload("mpsa", 3, jobs=12, map_tasks=8, reduce_tasks=4, nodes=4, arrival_rate=2.0)
    for policy, params in (("mpsa", {"interval": 120.0}), ("fair", None), ("capacity", None)):
        sim, rec = run(w, policy, params)
        assert not sim.unfinished()
        assert len(rec.jobs_columns()["job_id"]) == 12
    sim, _ = run(w, "mpsa", {"interval": 120.0})
    allocations = sim.policy.allocations  # type: ignore[attr-defined]
    assert allocations and all(sum(a["map"]) <= 16 and sum(a["reduce"]) <= 8 for a in allocations)
    # the timer chain stopped: the last recomputation is within one interval of the last finish
    last_finish = max(float(x) for x in sim.record.jobs_columns()["finish"])
    assert allocations[-1]["time"] < last_finish + 120.0


def _tandem_workload(n: int, lam: float, w1: float, w2: float, seed: int) -> WorkloadInstance:
    rng = np.random.default_rng(seed)
    submits = np.cumsum(rng.exponential(1 / lam, size=n))
    maps = rng.exponential(w1, size=n)
    reduces = rng.exponential(w2, size=n)
    jobs = tuple(
        WorkloadJob(
            id=f"j{k}",
            submit_time=float(submits[k]),
            stages=(
                Stage("map", (TaskGroup(duration=float(maps[k])),)),
                Stage("reduce", (TaskGroup(duration=float(reduces[k])),)),
            ),
        )
        for k in range(n)
    )
    from mropt.instances.workload_gen import rack_nodes

    return WorkloadInstance(nodes=rack_nodes(1, 1, 1, 1), jobs=jobs)


@pytest.mark.slow
def test_tandem_mm1_sojourn_matches_the_jackson_model() -> None:
    # one map and one reduce station of one slot, Poisson arrivals, exponential task times:
    # a tandem of two M/M/1 queues, T = 1/(mu1 - lambda) + 1/(mu2 - lambda) (MPSA eq. 13)
    lam, w1, w2, n = 0.5, 1.0, 0.8, 24_000
    expected = priority_sojourn(Routing(q11=0.0, q12=1.0, q21=0.0), lam, w1, w2, 1, 1)
    assert expected == pytest.approx(1 / (1 - 0.5) + 1 / (1.25 - 0.5))
    w = _tandem_workload(n, lam, w1, w2, seed=7)
    sim = Simulation(w, make_policy("mpsa", {"interval": 5000.0}), mode="event")
    rec = sim.run()
    jc = rec.jobs_columns()
    assert verify_simulation(w, jc, rec.tasks_columns()).ok
    sojourn = np.asarray(jc["finish"], float) - np.asarray(jc["submit_time"], float)
    batches = sojourn[2000:].reshape(20, -1).mean(axis=1)  # batch means after a warm-up
    half = 2.093 * batches.std(ddof=1) / math.sqrt(len(batches))  # 95 %, t with 19 d.o.f.
    assert abs(batches.mean() - expected) <= half, (batches.mean(), expected, half)


def test_declined_slot_memo_changes_no_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    # the memo only skips recomputing an empty Algorithm 2 order: the run is the same without it
    import mropt.sim.policies.mpsa as mpsa_policy

    w = generate_workload("mpsa", 5, jobs=15, map_tasks=10, reduce_tasks=4, nodes=4, arrival_rate=1.5)
    hashes = []
    for memo in (True, False):
        monkeypatch.setattr(mpsa_policy, "MEMO", memo)
        sim, rec = run(w, "mpsa", {"interval": 150.0})
        assert not sim.unfinished()
        hashes.append((rec.event_log_hash(), repr(rec.jobs_columns()), repr(rec.tasks_columns())))
    assert hashes[0] == hashes[1]
