"""The compiled ``capacity`` core (``mropt.sim.compiled.capacity_engine``) runs a simulation as the Python engine does.

``capacity_engine.run_compiled(sim)`` runs a built :class:`~mropt.sim.engine.Simulation` of ``capacity``
(Hadoop 1.0.3's Capacity Scheduler, heartbeat mode, one default queue) by a numba loop and leaves it as
``sim.run()`` would. On seeded random workloads of the shape it supports (nodes of map slots and cpu and
mem, jobs of one map stage of one task group with a demand, a generated placement or none, backlogs of
many jobs on few nodes; ``locality_wait_factor`` random) the compiled run must give the Python engine's
event log, events, clock, stop and every column of the job, attempt and utilisation tables, bit for
bit, against both the accelerated policy and its plain rule (``reference=True``); stopped at ``until``
or stalled (``stall_limit``) too; its utilisation rows (written by the loop) must be the rows the
Python run builds, and ``simulate``'s summary the same. The draws must reach the cases they are drawn
for (off-switch launches, rack-local ones, runs without placement). ``why_not`` names what the core
does not run.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from mropt.model.workload import WorkloadInstance  # noqa: E402
from mropt.sim.engine import Simulation  # noqa: E402
from mropt.sim.engines import run_simulation  # noqa: E402
from mropt.sim.policy import make_policy  # noqa: E402
from mropt.sim.run import simulate  # noqa: E402
from mropt.sim.utilisation import utilisation_ratio  # noqa: E402

from compiled_helpers import differences, random_workload, run_outcome  # noqa: E402

#: ``locality_wait_factor`` values: Hadoop's own (-1: input hosts / cluster hosts), 0 (an off-switch map
#: at the first miss), small and large, and one so large its bound overflows to infinity (never due)
FACTORS = (-1.0, -1.0, 0.0, 0.3, 1.0, 2.5, 1e308)


@pytest.fixture(scope="module", name="capacity_engine")
def capacity_engine_fixture() -> Any:
    """``mropt.sim.compiled.capacity_engine``, its core imported (compiled or loaded from numba's cache)."""
    import mropt.sim.compiled.capacity_core  # noqa: F401
    from mropt.sim.compiled import capacity_engine

    return capacity_engine


def capacity_workload(seed: int) -> WorkloadInstance:
    """``compiled_helpers.random_workload`` (placed in 2 of 3) with 1-6 map slots a node and, on some, 2
    reduce slots; in 1 of 3 a backlog: 30-90 jobs of up to 40 tasks on the same nodes, submitted within
    a few seconds."""
    rng = random.Random(seed)
    data = random_workload(rng, placed=0.67).to_dict()
    for node in data["cluster"]["nodes"]:
        node["map_slots"] = rng.randint(1, 6)
        node["reduce_slots"] = rng.choice([0, 0, 2])
    if rng.random() < 1 / 3:
        jobs = data["jobs"]
        for i in range(rng.randint(30, 90)):
            job = dict(rng.choice(jobs[: max(1, len(jobs) // 2)]))
            group = dict(job["stages"][0]["tasks"][0])
            group["count"] = rng.randint(1, 40)
            job.update(id=f"b{i}", submit_time=float(rng.randint(0, 6)), stages=[{"type": "map", "tasks": [group]}])
            jobs.append(job)
    return WorkloadInstance.from_dict(data)


def capacity_params(seed: int) -> dict[str, Any]:
    factor = random.Random(seed * 7 + 1).choice(FACTORS)
    return {} if factor == -1.0 else {"locality_wait_factor": factor}


def compiled_outcome(engine: Any, w: WorkloadInstance, params: dict[str, Any], **options: Any) -> dict[str, Any]:
    sim = Simulation(w, make_policy("capacity", params), **options)
    assert engine.why_not(sim) is None, engine.why_not(sim)
    rec = engine.run_compiled(sim)
    assert rec is sim.record
    return run_outcome(sim, rec)


def python_outcome(w: WorkloadInstance, params: dict[str, Any], reference: bool, **options: Any) -> dict[str, Any]:
    sim = Simulation(w, make_policy("capacity", params, reference=reference), **options)
    return run_outcome(sim, sim.run())


def assert_same(engine: Any, seed: int, references: tuple[bool, ...] = (False, True), **options: Any) -> dict[str, Any]:
    """The compiled run of seed ``seed`` against the Python engine's (each of ``references``); the outcome."""
    w, params = capacity_workload(seed), capacity_params(seed)
    mine = compiled_outcome(engine, w, params, **options)
    for reference in references:
        problems = differences(python_outcome(w, params, reference, **options), mine)
        assert not problems, f"seed {seed} {params} {options} reference={reference}: " + "\n".join(problems[:6])
    return mine


# ---------------------------------------------------------------------------------------------
# 1. the compiled run is the Python engine's run


@pytest.mark.parametrize("chunk", range(4))
def test_the_compiled_run_is_the_python_runs_and_the_plain_rules(capacity_engine: Any, chunk: int) -> None:
    levels = {"rack": 0, "any": 0, "none": 0}
    for seed in range(chunk * 25, chunk * 25 + 25):
        tasks = assert_same(capacity_engine, seed)["tasks"]
        locality = list(tasks["locality"])
        levels["rack"] += locality.count("rack")
        levels["any"] += locality.count("any")
        levels["none"] += locality.count(None)
    assert all(levels.values()), levels  # (rack-local and off-switch launches, runs without placement)


def test_runs_stopped_at_until_or_stalled_are_the_python_runs(capacity_engine: Any) -> None:
    stalled = 0
    for seed in range(24):
        assert_same(capacity_engine, seed, (False,), until=float(seed % 9 + 1))
        got = assert_same(capacity_engine, seed, (False,), stall_limit=seed % 4)
        stalled += got["stopped"] is None and got["jobs_finished"] < len(capacity_workload(seed).jobs)
    assert stalled, "no run stalled"


# ---------------------------------------------------------------------------------------------
# 2. the rows the loop writes, the summary


def test_the_rows_are_the_python_runs_rows(capacity_engine: Any) -> None:
    for seed in range(20):
        w = capacity_workload(seed)
        sim = Simulation(w, make_policy("capacity", {}))
        rec = sim.run()
        compiled = Simulation(w, make_policy("capacity", {}))
        mine = capacity_engine.run_compiled(compiled)
        assert mine._spilled is not None and mine._spilled.n > 0, seed  # (the rows came from the loop)
        for got, want in zip(mine.utilisation_arrays(), rec.utilisation_arrays(), strict=True):
            assert got.dtype == want.dtype and np.array_equal(got, want), seed
        time, _, pool, _, _ = mine.utilisation_arrays()
        assert np.count_nonzero(pool == 0) and len(time), seed  # (the cluster's rows, pool 0, among them)
        assert mine.pools == rec.pools, seed
        horizon = max(sim.now, 1.0)
        assert repr(utilisation_ratio(mine, horizon)) == repr(utilisation_ratio(rec, horizon)), seed


def test_the_summary_of_both_engines_is_the_same(capacity_engine: Any) -> None:
    for seed in range(6):
        w = capacity_workload(seed)
        py = simulate(w, "capacity", capacity_params(seed), engine="python")
        cc = simulate(w, "capacity", capacity_params(seed), engine="compiled")
        assert cc.summary.pop("engine") == "compiled"
        for summary in (py.summary, cc.summary):
            summary.pop("wall_time")
        assert repr(cc.summary) == repr(py.summary), seed


# ---------------------------------------------------------------------------------------------
# 3. what the core does not run


def test_why_not_names_what_the_core_does_not_run(capacity_engine: Any) -> None:
    w = capacity_workload(0)
    assert capacity_engine.why_not(Simulation(w, make_policy("capacity", {}))) is None
    data = w.to_dict()
    data["queues"] = [{"id": "a", "capacity": 60.0}, {"id": "b", "capacity": 40.0}]
    for job in data["jobs"]:
        job["queue"] = "a"
    queued = WorkloadInstance.from_dict(data)
    assert capacity_engine.why_not(Simulation(queued, make_policy("capacity", {}))) == "queues listed by the workload"
    assert "only capacity" in str(capacity_engine.why_not(Simulation(w, make_policy("fair", {}))))
    assert (
        capacity_engine.why_not(Simulation(w, make_policy("capacity", {}), mode="event"))
        == "mode event (only heartbeat)"
    )
    # run_simulation routes capacity to the core, and runs what it refuses by the Python engine under auto
    assert run_simulation(Simulation(w, make_policy("capacity", {})), "capacity", "compiled")[1] == "compiled"
    assert run_simulation(Simulation(queued, make_policy("capacity", {})), "capacity", "auto")[1] == "python"


def test_fair_workloads_shapes_are_the_python_runs(capacity_engine: Any) -> None:
    # the shapes of test_compiled_fair.py's workloads (nodes of 0 map slots, priorities, reduce slots, jobs
    # naming pools, exactly full nodes, zero-mem demands), under capacity: the Python engine's run and its
    # plain rule's
    from fair_compiled_helpers import fair_workload

    rng = random.Random("compiled-capacity-fair-shapes")
    for k in range(40):
        w = fair_workload(rng)
        params = capacity_params(k)
        mine = compiled_outcome(capacity_engine, w, params)
        for reference in (False, True):
            problems = differences(python_outcome(w, params, reference), mine)
            assert not problems, f"fair-shaped workload {k} reference={reference}: " + "\n".join(problems[:6])
