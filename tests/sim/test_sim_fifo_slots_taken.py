"""FIFO's maps-only pass lists the slots its maps take, not every free slot (issue 32).

``fifo_runs._slots_taken`` stops once it has listed the runnable maps the pass takes from, when
they are fewer than the cluster's free map slots: the nodes after them take none (the plan cuts
the list at that count). Here: 6 nodes of 2 map slots and one job of 3 maps at time 0. Fewer
maps remain (3) than the cluster has slots (12), so a node's capacity is ceil(3 x 2 / 12) = 1
(``Fifo._tracker_capacity``): the first pass lists nodes 0, 1, 2 once each, where it listed all 6.
"""

from __future__ import annotations

from typing import Any

import pytest

from mropt.sim.engine import Simulation
from mropt.sim.policies import fifo_runs
from mropt.sim.policy import make_policy

from sim_helpers import workload


def test_the_first_pass_lists_three_slots_for_three_maps(monkeypatch: pytest.MonkeyPatch) -> None:
    listed: list[list[int]] = []
    slots_taken = fifo_runs._slots_taken

    def watched(*args: Any) -> list[int]:
        listed.append(slots_taken(*args))
        return listed[-1]

    monkeypatch.setattr(fifo_runs, "_slots_taken", watched)
    job = {"id": "a", "submit_time": 0.0, "stages": [{"type": "map", "tasks": [{"duration": 2.0, "count": 3}]}]}
    w = workload([{"id": "n", "count": 6, "map_slots": 2, "reduce_slots": 1}], [job])
    rec = Simulation(w, make_policy("fifo"), mode="event").run()
    assert listed[0] == [0, 1, 2]
    plain = Simulation(w, make_policy("fifo", reference=True), mode="event").run()
    assert rec.event_log_hash() == plain.event_log_hash()
