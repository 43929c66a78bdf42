"""The Fair and Capacity schedulers' plain heartbeats and their accelerated ones decide alike.

``make_policy(..., reference=True)`` runs ``fair`` by ``Fair._assign_reference`` (Hadoop 1.0.3's
``FairScheduler.assignTasks`` with the pools and jobs sorted afresh before every task, update()
recomputing every pool and job) and ``capacity`` by ``Capacity._assign_reference`` (the queues and
their jobs listed afresh before every task); the default runs the heartbeats on kept orders
(``FairOffers._assign_fast``, ``Capacity._assign_fast``). On seeded random slot workloads (pools of
every setting, queues with limits, priorities, replicas, slow-start, faults, several users) both
must give the same event log (the recorder's hash), and each mode must run only its own heartbeat.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from mropt.sim.speculation.table import rules

from sim_helpers import capacity_params, fair_params, pooled_workload, same_log

# Every speculation rule too: its backups change a job's demand (Fair; Hadoop's updateDemand counts
# active attempts), which the policy hears through on_rule_backup. Capacity keeps no demand.
RULES = {"fair": [None, *rules()], "capacity": [None, *rules()]}


@pytest.mark.parametrize("policy,draw", [("fair", fair_params), ("capacity", capacity_params)])
def test_reference_and_accelerated_heartbeats_give_the_same_event_log(policy: str, draw: Any) -> None:
    rng = random.Random(f"heartbeat-reference-{policy}")
    for _ in range(30):
        w = pooled_workload(rng)
        params = draw(rng)
        rule = rng.choice(RULES[policy])
        # (a queue whose maximum capacity rounds to 0 never runs)
        same_log(w, policy, params, rule, seed=5, stall_limit=300)


@pytest.mark.parametrize("rule", [name for name in rules() if name != "none"])
def test_fair_counts_a_rules_backups_in_demand_as_the_reference_does(rule: str) -> None:
    """A rule's backup changes its job's demand (updateDemand counts active attempts); the
    accelerated update() hears of it through on_rule_backup, or its logs part from the plain rule's."""
    rng = random.Random(f"fair-backups-{rule}")
    for _ in range(8):
        w = pooled_workload(rng)
        same_log(w, "fair", fair_params(rng), rule, seed=5, stall_limit=300)
