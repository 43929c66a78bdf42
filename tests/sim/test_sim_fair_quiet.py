"""Fair's quiet heartbeats (``mropt.sim.policies.fair_quiet``): the kept answer of a heartbeat that
launches nothing is the walk's answer.

Under ``self_check`` ``FairOffers._assign_fast`` computes the kept answer, then walks the jobs anyway:
where the answer says "nothing launches", the walk must try no launch and leave the same skipped
jobs, and at every walk that launches nothing the kept answer must equal one built afresh (a change
that should have dropped it did not). The runs are random slot workloads with delay scheduling
(node and rack delays, listed replicas and generated placements, jobs without replicas), pools at
their max slots, assign-multiple caps and preemption; each must also give the plain rule's event
log (``Fair._assign_reference``).
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policies.fair import Fair
from mropt.sim.policy import make_policy
from mropt.sim.speculation import make_speculation

from sim_helpers import fair_params, pooled_workload, same_log, waiting_workload, with_listed_replicas


def waiting_params(rng: random.Random) -> dict[str, Any]:
    """Delays long beside the 3 s heartbeat, preemption timeouts that end between two updates (0.5 s
    apart), and fair_params' other draws."""
    params = fair_params(rng)
    params.update(node_delay=rng.choice([0.0, 4.0, 10.0, 25.0]), rack_delay=rng.choice([0.0, 5.0, 15.0]))
    if params.get("preemption"):
        params.update(min_share_timeout=rng.choice([3.3, 7.3, 20.1]), fair_share_timeout=rng.choice([4.7, 12.7, 40.2]))
    return params


def checked_run(w: WorkloadInstance, params: dict[str, Any]) -> tuple[str, int]:
    """A run with ``self_check`` (the asserts inside): its event log's hash and the heartbeats on
    which the quiet answer was compared with the walk."""
    policy = make_policy("fair", params, self_check=True)
    assert isinstance(policy, Fair)
    rec = Simulation(w, policy).run()
    return rec.event_log_hash(), policy.quiet_checked


def test_the_quiet_answer_is_the_walks_where_jobs_wait_for_local_maps() -> None:
    rng = random.Random("fair-quiet-waiting")
    checked = 0
    for _ in range(120):
        w = waiting_workload(rng)
        params = waiting_params(rng)
        got, n = checked_run(w, params)
        checked += n
        plain = same_log(w, "fair", params)
        assert got == plain.event_log_hash(), params
    assert checked > 5000  # (the answer was used, not only built)


def test_the_quiet_answer_is_the_walks_on_pooled_workloads() -> None:
    rng = random.Random("fair-quiet-pooled")
    for k in range(20):
        w = pooled_workload(rng)
        if k % 2:
            w = with_listed_replicas(w, rng)
        params = fair_params(rng)
        got, _ = checked_run(w, params)
        assert got == same_log(w, "fair", params).event_log_hash(), params


def test_the_quiet_answer_under_hei_and_the_late_rule() -> None:
    """``hei`` (a ``Fair`` whose pools' weights and minShares it sets: ``pools_changed``) and ``fair``
    with LATE's backups beside it (``on_rule_backup``): the kept answer equals the walk at every
    heartbeat it answers, and the plain rule gives the same log."""
    rng = random.Random("fair-quiet-hei-late")
    checked = {"hei": 0, "late": 0}
    backups = 0
    for k in range(40):
        w = waiting_workload(rng)
        params = waiting_params(rng)
        name, rule = ("hei", None) if k % 2 else ("fair", "late")
        if rule:  # stragglers, so that LATE starts backups
            w = dataclasses.replace(w, timing=dataclasses.replace(w.timing, straggler_rate=0.3, straggler_slowdown=4.0))
        policy = make_policy(name, params, self_check=True)
        assert isinstance(policy, Fair)
        speculation = make_speculation(rule)
        sim = Simulation(w, policy, speculation=speculation)
        rec = sim.run()
        checked["late" if rule else "hei"] += policy.quiet_checked
        backups += sim.backups
        plain = same_log(w, name, params, rule=rule)
        assert rec.event_log_hash() == plain.event_log_hash(), (name, params)
    assert min(checked.values()) > 500 and backups >= 5, (checked, backups)
