"""``mpsa``'s ``lend_idle``: the paper's idle reserve (sec. 4.4) against its work-conserving readings.

Hand-computed on heartbeat clusters of 100 map slots. The reservations are fixed (T1 46 map
slots, T2 27): 100 - 46 - 27 = 27 slots are shared, so under the paper's rule a lone T1 job
gets 46 + 27 = 73 slots and T2's 27 stay idle.
"""

from __future__ import annotations

from collections import Counter

import pytest

from mropt.instances.workload_gen import generate_workload
from mropt.model.errors import InputError
from mropt.sim.engine import Simulation
from mropt.sim.policies.mpsa import Mpsa
from mropt.sim.policy import make_policy
from mropt.sim.recorder import Recorder
from mropt.sim.verify import verify_simulation

from sim_helpers import map_job, policy_params, run, workload


class _Fixed(Mpsa):
    """MPSA with fixed map reservations (T1 46, T2 27) and no recomputation."""

    def __init__(self, **params: object) -> None:
        super().__init__(**policy_params("mpsa", interval=1e6, **params))

    def start(self, sim):  # type: ignore[no-untyped-def]
        super().start(sim)
        self.reserved = [[46, 27], [0, 0]]

    def recompute(self) -> None:
        pass


def _run(nodes: int, slots: int, jobs: list[dict[str, object]], lend: str) -> Recorder:
    cluster = [{"id": f"n{i}", "map_slots": slots, "reduce_slots": 1} for i in range(nodes)]
    w = workload(cluster, jobs)
    rec = Simulation(w, _Fixed(lend_idle=lend), mode="heartbeat").run()
    verdict = verify_simulation(w, rec.jobs_columns(), rec.tasks_columns())
    assert verdict.ok, verdict.problems
    return rec


def _peak(rec: Recorder, job: str, before: float) -> int:
    """Most attempts of ``job`` running at once before time ``before``."""
    t = rec.tasks_columns()
    spans = [(float(s), float(e)) for j, s, e in zip(t["job_id"], t["start"], t["end"]) if j == job]
    return max(sum(s <= x < e for s, e in spans) for x, _ in spans if x < before)


def _counts(rec: Recorder, job: str, outcome: str | None = None) -> dict[tuple[float, str], int]:
    """(start, node) -> attempts of ``job`` (of one outcome when given)."""
    t = rec.tasks_columns()
    rows = zip(t["job_id"], t["start"], t["node"], t["outcome"])
    return dict(Counter((float(s), n) for j, s, n, o in rows if j == job and outcome in (None, o)))


@pytest.mark.parametrize(("tasks", "lend", "peak"), [(300, "no", 73), (300, "task_end", 100), (80, "preempt", 80)])
def test_lone_job_on_an_empty_cluster(tasks: int, lend: str, peak: int) -> None:
    # 25 nodes x 4 map slots (the mpsa preset's cluster): T1 alone until T2 arrives at 1000 s.
    # Paper's rule: 46 reserved + 27 shared = 73; lent: every slot, or every task it has.
    jobs = [map_job("a", tasks, 60.0, priority=2), map_job("b", 27, 60.0, submit=1000.0, priority=1)]
    assert _peak(_run(25, 4, jobs, lend), "a", 1000.0) == peak


# 4 nodes x 25 map slots: node i beats at 0.75 i + 3 k s (Hadoop 1.0.3's 3-s interval), times
# exact in binary. T1 (300 maps of 60 s) at 0, T2 (27 maps of 60 s) at 90.
_JOBS = [map_job("a", 300, 60.0, priority=2), map_job("b", 27, 60.0, submit=90.0, priority=1)]


def test_paper_rule_keeps_the_reserve_idle() -> None:
    # T1: node 0's 25 at 0, node 1's 25 at 0.75, 23 of node 2's at 1.5 (73); node 3 stays idle.
    # T2 at 90 takes the idle slots at their next beats: node 2's 2 at 91.5, node 3's 25 at 92.25.
    rec = _run(4, 25, _JOBS, "no")
    assert _counts(rec, "b") == {(91.5, "n2"): 2, (92.25, "n3"): 25}
    assert "killed" not in set(rec.tasks_columns()["outcome"])


def test_task_end_gives_lent_slots_back_as_tasks_end() -> None:
    # T1 runs on all 100 slots in waves (0 + 0.75 i, 60 + 0.75 i, ...); T2 waits for T1's tasks
    # to end. At 120 node 0's 25 end: T1 holds 75, 29 over its 46, more than the 27 shared
    # slots, so only T2 (below its 27) may take them: 25 at 120. At 120.75 node 1's 25 end: T1
    # holds 50, 4 over, shared slots are left and both compete; T2 is hungrier
    # (1 - 25/27 > 0 > 1 - 50/46): its last 2 at 120.75, T1 takes the other 23.
    rec = _run(4, 25, _JOBS, "task_end")
    assert _peak(rec, "a", 90.0) == 100
    assert _counts(rec, "b") == {(120.0, "n0"): 25, (120.75, "n1"): 2}
    assert _counts(rec, "a", "killed") == {}


def test_preempt_reclaims_lent_slots_at_once() -> None:
    # At 90 T2 is owed min(27 reserved - 0 held, 27 pending) = 27 with no slot free; 100 - 46 -
    # 27 shared = 27 slots are lent to T1 -> 27 kills, latest started first: node 3's 25
    # (started 62.25) and 2 of node 2's (61.5), ended at 90. T2 takes them at the nodes' next
    # beats, 91.5 and 92.25: the paper's rule's start times, with T1 on 100 slots until then.
    rec = _run(4, 25, _JOBS, "preempt")
    assert _peak(rec, "a", 90.0) == 100
    assert _counts(rec, "a", "killed") == {(61.5, "n2"): 2, (62.25, "n3"): 25}
    t = rec.tasks_columns()
    assert {float(e) for e, o in zip(t["end"], t["outcome"]) if o == "killed"} == {90.0}
    assert _counts(rec, "b") == {(91.5, "n2"): 2, (92.25, "n3"): 25}


def test_default_is_the_paper_rule() -> None:
    cluster = [{"id": f"n{i}", "map_slots": 25, "reduce_slots": 1} for i in range(4)]
    w = workload(cluster, _JOBS)
    logs = [run(w, "mpsa", params)[1].event_log_hash() for params in ({}, {"lend_idle": "no"})]
    assert logs[0] == logs[1]
    with pytest.raises(InputError, match="lend_idle"):
        make_policy("mpsa", {"lend_idle": "always"})


def test_readings_on_the_preset_pass_the_verifier() -> None:
    # Algorithm 1's own reservations, recomputed every 120 s; run() asserts verify_simulation
    w = generate_workload("mpsa", 2, jobs=12, map_tasks=8, reduce_tasks=4, nodes=4, arrival_rate=2.0)
    for lend in ("task_end", "preempt"):
        sim, rec = run(w, "mpsa", {"interval": 120.0, "lend_idle": lend})
        assert not sim.unfinished()
        killed = list(rec.tasks_columns()["outcome"]).count("killed")
        assert (killed > 0) == (lend == "preempt"), (lend, killed)
        assert sim.policy.reclaimed == killed  # type: ignore[attr-defined]
