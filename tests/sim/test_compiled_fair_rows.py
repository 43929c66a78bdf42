"""The compiled ``fair`` run's cluster utilisation rows (``Recorder.keep_cluster_rows``) and the summary.

A compiled ``fair`` run records the cluster-wide rows (pool ``*``) as it runs, so that the summary's
utilisation ratio does not build every pool's rows (``mropt.sim.utilisation.utilisation_ratio``). They must
be exactly the rows the Python engine's run builds for pool 0, and the summary the same, on random
workloads of the shape the loop runs (``drf``'s random workloads, with map and some reduce slots).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy
from mropt.sim.run import simulate
from mropt.sim.utilisation import utilisation_ratio

from compiled_helpers import random_workload

pytest.importorskip("numba")


@pytest.fixture(scope="module", name="fair_engine")
def fair_engine_fixture() -> Any:
    from mropt.sim.compiled import fair_engine

    return fair_engine


def slotted(seed: int) -> WorkloadInstance:
    """``compiled_helpers.random_workload`` with 1-6 map slots a node and, on some, 2 reduce slots."""
    rng = random.Random(seed)
    data = random_workload(rng).to_dict()
    for node in data["cluster"]["nodes"]:
        node["map_slots"] = rng.randint(1, 6)
        node["reduce_slots"] = rng.choice([0, 0, 2])
    return WorkloadInstance.from_dict(data)


@pytest.mark.parametrize("chunk", range(4))
def test_cluster_rows_are_the_python_runs_pool_0_rows(fair_engine: Any, chunk: int) -> None:
    for seed in range(chunk * 30, chunk * 30 + 30):
        w = slotted(seed)
        sim = Simulation(w, make_policy("fair", {}))
        rec = sim.run()
        time, stype, pool, busy, cap = rec.utilisation_arrays()
        cluster = pool == 0
        compiled = Simulation(w, make_policy("fair", {}))
        kept = fair_engine.run_compiled(compiled).cluster_rows()
        assert kept, seed
        got = [np.concatenate(column) for column in zip(*kept, strict=True)]
        for mine, theirs in zip(got, (time, stype, busy, cap), strict=True):
            assert np.array_equal(mine, theirs[cluster]), seed
        horizon = max(sim.now, 1.0)
        assert repr(utilisation_ratio(compiled.record, horizon)) == repr(utilisation_ratio(rec, horizon)), seed


def test_the_summary_of_both_engines_is_the_same_and_the_rows_are_dropped_after_it(fair_engine: Any) -> None:
    for seed in range(10):
        w = slotted(seed)
        py = simulate(w, "fair", engine="python")
        cc = simulate(w, "fair", engine="compiled")
        assert cc.summary.pop("engine") == "compiled"
        for summary in (py.summary, cc.summary):
            summary.pop("wall_time")
        assert repr(cc.summary) == repr(py.summary), seed
        assert cc.recorder.cluster_rows() is None  # (simulate dropped them once its summary read them)
        # and a second read builds them from every row: the same ratio
        horizon = max(cc.summary["makespan"] or 0.0, 1.0)
        assert repr(utilisation_ratio(cc.recorder, horizon)) == repr(utilisation_ratio(py.recorder, horizon))
