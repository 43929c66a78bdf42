"""The compiled ``fair`` run against the Python engine's with ``fair``'s parameters and the stall limit varied.

A per-heartbeat cap above the node's free slots (``assign_multiple_maps``) makes the walk go on after the
node is full (every job visited, none launching); one task a heartbeat (``assign_multiple`` false), delays
of 0 or longer than any run, and stall limits that stall a third of the runs (``Simulation.stalled``: the
queue cleared, its arrivals with it, and the instants after that one event each) each take their own path
through the loop. Every table, the event-log hash, the events, the clock and the stall must be the Python
engine's.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy

from compiled_helpers import differences, run_outcome, slotted

pytest.importorskip("numba")


@pytest.fixture(scope="module", name="fair_engine")
def fair_engine_fixture() -> Any:
    from mropt.sim.compiled import fair_engine

    return fair_engine


def draw(seed: int) -> tuple[dict[str, Any], int]:
    rng = random.Random(10_000 + seed)
    params = {
        "assign_multiple": rng.random() < 0.7,
        "assign_multiple_maps": rng.choice([-1, 1, 2]),
        "node_delay": rng.choice([-1.0, 0.0, 100.0]),
        "rack_delay": rng.choice([-1.0, 0.0, 100.0]),
        "update_interval": rng.choice([0.5, 0.1, 7.0]),
    }
    return params, rng.choice([0, 1, 2, 3, 5, 100_000])


@pytest.mark.parametrize("chunk", range(3))
def test_runs_with_the_parameters_and_the_stall_limit_varied_are_the_python_engines(
    fair_engine: Any, chunk: int
) -> None:
    stalled = 0
    for seed in range(chunk * 60, chunk * 60 + 60):
        w = slotted(seed)
        params, limit = draw(seed)
        sim = Simulation(w, make_policy("fair", params), stall_limit=limit)
        py = run_outcome(sim, sim.run())
        compiled = Simulation(w, make_policy("fair", params), stall_limit=limit)
        mine = run_outcome(compiled, fair_engine.run_compiled(compiled))
        assert not differences(py, mine), (seed, params, limit, differences(py, mine)[:3])
        assert compiled.stalled == sim.stalled, seed
        stalled += sim.stalled
    assert stalled >= 5  # (the draws reach the stall)


def test_runs_with_the_buffers_emptied_at_nearly_every_instant_are_the_python_engines(
    fair_engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the loop pauses when a buffer fills (ended batches, row breaks, utilisation rows: the driver's
    # CHUNK, BREAKS, ROWS); here at nearly every instant, so each pause and resume is crossed
    from mropt.sim.compiled import driver

    for name in ("CHUNK", "BREAKS", "ROWS"):
        monkeypatch.setattr(driver, name, 1)
    for seed in range(500, 520):
        w = slotted(seed)
        params, limit = draw(seed)
        sim = Simulation(w, make_policy("fair", params), stall_limit=limit)
        py = run_outcome(sim, sim.run())
        compiled = Simulation(w, make_policy("fair", params), stall_limit=limit)
        mine = run_outcome(compiled, fair_engine.run_compiled(compiled))
        assert not differences(py, mine), (seed, differences(py, mine)[:3])


@pytest.mark.parametrize("heartbeat", [0.1, 0.3, 0.7, 1.1])
def test_other_heartbeat_intervals_give_the_python_engines_run(fair_engine: Any, heartbeat: float) -> None:
    # with some of these intervals a phase plus whole intervals rounds below the clock (``_next_beat``:
    # the heartbeat is then at now, in both engines)
    for seed in range(40):
        w = slotted(seed)
        compiled = Simulation(w, make_policy("fair", {}), heartbeat=heartbeat)
        mine = run_outcome(compiled, fair_engine.run_compiled(compiled))
        sim = Simulation(w, make_policy("fair", {}), heartbeat=heartbeat)
        py = run_outcome(sim, sim.run())
        assert not differences(py, mine), (seed, heartbeat, differences(py, mine)[:3])
