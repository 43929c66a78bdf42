"""Fair's upkeep on the heartbeat path (``mropt.sim.policies.fair_offers``, ``fair_quiet``): the
order's only pool is not moved after its launches and its tasks' ends, and the quiet answer's node
verdicts (``FairQuiet._quiet_answered``, ``_verdict_passes``) are Hadoop's.

The first is a count: a one-pool run (every job of a SWIM day is in ``default``) may call
``FairOffers._place`` only when the pool enters or leaves an order, not at each of its tasks'
launches and ends (Hadoop's ``FairScheduler`` sorts the pools at every task; an order of one pool
cannot change). The second checks the node verdicts the quiet answer reads against Hadoop 1.0.3's
rule written with its ``ceil``, over every small case; ``test_sim_fair_quiet.py`` compares the
quiet answer with the walk on random runs (``self_check``).
"""

from __future__ import annotations

import itertools
import math
from types import SimpleNamespace
from typing import Any

from mropt.sim.engine import Simulation
from mropt.sim.policies.fair import Fair
from mropt.sim.policies.fair_quiet import FairQuiet
from mropt.sim.state import MAP, REDUCE

from sim_helpers import map_job, mr_job, policy_params, same_log, workload


class _Counting(Fair):
    """A Fair that counts its ``_place`` calls."""

    def start(self, sim: Any) -> None:
        super().start(sim)
        self.places = 0

    def _place(self, pool: Any, stype: int) -> None:
        self.places += 1
        super()._place(pool, stype)


def test_the_only_pool_is_not_moved_at_its_launches_and_ends() -> None:
    nodes = [{"id": f"n{i}", "rack": "r0", "map_slots": 2, "reduce_slots": 1} for i in range(4)]
    jobs = [mr_job(f"j{i}", [4.0] * 12, [3.0] * 3, submit_time=float(i)) for i in range(5)]
    w = workload(nodes, [*jobs, map_job("late", 20, 4.0, 200.0)])
    policy = _Counting(**policy_params("fair"))
    rec = Simulation(w, policy).run()
    launched = len(rec.tasks_columns()["job_id"])
    assert launched == 5 * 15 + 20
    # moved when it enters or leaves an order, or is sent back to it without candidates after an
    # update (31 here); before, also at each of its 95 launches and their ends (149)
    assert policy.places < launched // 2, (policy.places, launched)
    assert rec.event_log_hash() == same_log(w, "fair", {}).event_log_hash()


def test_the_verdicts_are_hadoops_rule() -> None:
    # CapBasedLoadManager (reported running < ceil(slots x min(1, runnable / cluster slots))) and the
    # per-heartbeat cap (assignmultiple: the cap, -1 the tracker's free slots; else 1), written from
    # Hadoop 1.0.3 with math.ceil, against ``_verdict_passes``, which leaves out the ceil and the
    # test of a cap of -1 on a full tracker
    for multiple, cap, slots, total, runnable in itertools.product(
        (True, False), (-1, 0, 1, 2), range(4), (0, 1, 3, 8), (0.0, 1.0, 2.0, 5.0, 9.0)
    ):
        for free in range(slots + 1):
            load = min(1.0, runnable / total) if total > 0 else 0.0
            tasks = (free if cap == -1 else cap) if multiple else 1
            want = slots - free < math.ceil(slots * load) and tasks > 0
            state = SimpleNamespace(
                sim=SimpleNamespace(slots=[[slots]] * 2, free=[[free]] * 2, total_slots=[total] * 2),
                runnable_total=[runnable] * 2,
                assign_multiple=multiple,
                caps=(cap, cap),
            )
            for stype in (MAP, REDUCE):
                assert FairQuiet._verdict_passes(state, stype, 0) is want, (multiple, cap, slots, free, total, runnable)  # type: ignore[arg-type]
