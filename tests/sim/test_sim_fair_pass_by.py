"""Fair's quick pass of a heartbeat that launches nothing (``FairOffers._passed_by``) decides as the rules do.

A heartbeat whose only pass is the map pass, every job of it passed by on the node (delay
scheduling's NODE or RACK level, no input there), ends in ``_passed_by`` without the loop of
``_assign_fast``. The event logs of the plain rule (``Fair._assign_reference``), the kept orders with
the quick pass and without it (``without={"pass_by"}``) must be the same on random workloads, with
generated and listed replicas and delays long enough for jobs to wait; the quick pass must have
ended heartbeats in them (else the test compares nothing new).
"""

from __future__ import annotations

import random
from typing import Any

from test_sim_fair_input_places import with_listed_replicas
from test_sim_heartbeat_reference import fair_params, random_workload

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policies.fair_offers import FairOffers
from mropt.sim.policy import make_policy


def waiting_workload(rng: random.Random) -> WorkloadInstance:
    """More nodes and racks than ``random_workload``'s, each map's input on one or two of them: most
    heartbeats find a job waiting for a local map (delay scheduling) and launch nothing."""
    data = random_workload(rng).to_dict()
    racks = rng.randint(2, 4)
    data["cluster"]["nodes"] = [
        {"id": f"n{i}", "rack": f"r{i % racks}", "map_slots": rng.randint(1, 2), "reduce_slots": rng.randint(0, 1)}
        for i in range(rng.randint(8, 16))
    ]
    w = WorkloadInstance.from_dict(data)
    return with_listed_replicas(w, rng) if rng.random() < 0.7 else w


def test_the_quick_pass_gives_the_plain_rules_event_log(monkeypatch: Any) -> None:
    ended = [0]
    quick = FairOffers._passed_by

    def counted(self: FairOffers, *args: Any) -> bool:
        done = quick(self, *args)
        ended[0] += done
        return done

    monkeypatch.setattr(FairOffers, "_passed_by", counted)
    rng = random.Random("fair-pass-by")
    for k in range(24):
        w = waiting_workload(rng) if k % 2 else random_workload(rng)
        params: dict[str, Any] = {**fair_params(rng), "node_delay": rng.choice([2.0, 6.0, 20.0])}
        logs = [
            Simulation(w, make_policy("fair", params, **options), seed=5, stall_limit=300).run().event_log_hash()
            for options in ({"reference": True}, {}, {"without": {"pass_by"}})
        ]
        assert logs[0] == logs[1] == logs[2], (params, w)
    assert ended[0] > 100
