"""Shared helpers of the compiled core's tests: test_compiled_drf.py, _delay.py and _refusals.py.

The ``compiled`` fixture (imported by name into each test module, so pytest finds it there), seeded
random workloads of the shape the compiled loop supports, the comparison of a Python run with a
compiled run (every table bit for bit), a counting watch, and the small hand-written workloads
(``_job``, ``_group``, ``supported``, ``_sim``). Not a test module: pytest collects nothing here.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import numpy as np
import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy
from mropt.sim.recorder import Recorder
from mropt.sim.watch import Watch

from sim_helpers import workload

CPUS = (2, 3, 4, 6, 8, 64)
MEMS = (1, 2, 4, 6, 16)
DEMANDS = ((0.25, 0.5, 1.0, 2.0, 3.0), (0.016, 0.3, 0.5, 1.0, 2.0))
#: capacities and demands whose sums are inexact (0.1 + 0.2 > 0.3): fits within the engine's epsilon,
#: shares that differ in their last bits (the DRF key rounds them to 12 digits)
FINE_CPUS = (0.3, 0.9, 1.0, 2.1, 3.3)
FINE_MEMS = (0.3, 0.7, 1.0, 2.1)
FINE_DEMANDS = ((0.05, 0.1, 0.2, 0.3, 1 / 3, 0.7), (0.1, 0.2, 0.3, 1 / 3, 0.7))
#: durations whose ends coincide often, and some whose sums do not (0.1 + 0.1 + 0.1 != 0.3)
WHOLE = (1.0, 2.0, 3.0, 5.0)
ODD = (0.1, 0.3, 3.5, 2.7, 37.0)


#: the test modules import this fixture by name (``from compiled_helpers import compiled_fixture``) and
#: take it as ``compiled``: a parameter of that name does not shadow the import
@pytest.fixture(scope="module", name="compiled")
def compiled_fixture() -> Any:
    """``mropt.sim.compiled.drf_engine``, its core imported (compiled or loaded from numba's cache)."""
    import mropt.sim.compiled.drf_core  # noqa: F401
    from mropt.sim.compiled import drf_engine

    return drf_engine


# ---------------------------------------------------------------------------------------------
# random workloads of the supported shape


def _fits_some(demand: dict[str, float], caps: list[dict[str, float]]) -> bool:
    return any(all(cap.get(k, 0.0) >= v for k, v in demand.items()) for cap in caps)


def _demand(
    rng: random.Random, caps: list[dict[str, float]], choices: tuple[tuple[float, ...], ...]
) -> dict[str, float]:
    """A task demand that fits some node: often small, sometimes a node's whole capacity (it fills the
    node exactly, and may fit that node only), a whole fraction of one, or cpu alone (mem 0)."""
    while True:
        r = rng.random()
        cap = rng.choice(caps)
        if r < 0.12:  # a node's whole capacity
            demand = {"cpu": float(cap["cpu"]), "mem": float(cap["mem"])}
        elif r < 0.24:  # 1/k of a node: k tasks fill it exactly
            k = rng.choice([2, 3, 4])
            demand = {"cpu": cap["cpu"] / k, "mem": cap["mem"] / k}
        elif r < 0.3:
            demand = {"cpu": rng.choice(choices[0])}
        elif r < 0.36:  # the largest cpu of the cluster and the largest mem: a node of both, or redrawn
            demand = {"cpu": float(max(c["cpu"] for c in caps)), "mem": float(max(c["mem"] for c in caps))}
        else:
            demand = {"cpu": rng.choice(choices[0]), "mem": rng.choice(choices[1])}
        if _fits_some(demand, caps):
            return demand


def random_workload(rng: random.Random, placed: float = 0.5) -> WorkloadInstance:
    """2-8 nodes of cpu and mem on 1-3 racks (speeds in 1 of 5), 3-40 map-only jobs of one task group
    (1-30 tasks), a few users (some jobs without one, some naming ``default``), submit times with
    ties, and a generated placement (sometimes other locality factors) in a share ``placed`` of them
    (the same draws whatever ``placed``); in 1 of 4, capacities and demands of inexact sums (``FINE_*``)."""
    racks = rng.randint(1, 3)
    speeds = rng.random() < 0.2
    fine = rng.random() < 0.25
    cpus, mems, demands = (FINE_CPUS, FINE_MEMS, FINE_DEMANDS) if fine else (CPUS, MEMS, DEMANDS)
    nodes: list[dict[str, Any]] = []
    for i in range(rng.randint(2, 8)):
        node: dict[str, Any] = {
            "id": f"n{i}",
            "rack": f"r{i % racks}",
            "resources": {"cpu": rng.choice(cpus), "mem": rng.choice(mems)},
        }
        if speeds:
            node["speed"] = rng.choice([0.5, 1.0, 2.0])
        nodes.append(node)
    caps = [node["resources"] for node in nodes]
    durations = WHOLE + ODD if rng.random() < 0.4 else WHOLE
    users = rng.randint(1, 4)
    fine_submits = rng.random() < 0.3
    jobs: list[dict[str, Any]] = []
    for i in range(rng.randint(3, 40)):
        group = {"duration": rng.choice(durations), "count": rng.randint(1, 30), "demand": _demand(rng, caps, demands)}
        submit = rng.randint(0, 80) / 4 if fine_submits else float(rng.randint(0, 20))
        job: dict[str, Any] = {"id": f"j{i}", "submit_time": submit, "stages": [{"type": "map", "tasks": [group]}]}
        r = rng.random()
        if r < 0.85:
            job["user"] = f"u{rng.randrange(users)}"
        elif r < 0.9:
            job["user"] = "default"  # the user of the jobs that name none
        jobs.append(job)
    extra: dict[str, Any] = {}
    if rng.random() < placed:
        extra["placement"] = {"replicas": rng.randint(1, 3), "seed": rng.randint(0, 9)}
        if rng.random() < 0.3:
            extra["timing"] = {"rack_factor": rng.choice([1.0, 1.2, 2.5]), "remote_factor": rng.choice([1.0, 3.0, 4.5])}
    return workload(nodes, jobs, **extra)


def slotted(seed: int) -> WorkloadInstance:
    """:func:`random_workload` of seed ``seed`` on nodes with 1-6 map slots and, on some, 2 reduce slots: the
    shape the compiled ``fair`` loop runs (``mropt.sim.compiled.fair_engine``)."""
    rng = random.Random(seed)
    data = random_workload(rng).to_dict()
    for node in data["cluster"]["nodes"]:
        node["map_slots"] = rng.randint(1, 6)
        node["reduce_slots"] = rng.choice([0, 0, 2])
    return WorkloadInstance.from_dict(data)


# ---------------------------------------------------------------------------------------------
# comparing two runs


def _same_column(a: Any, b: Any) -> bool:
    """Equal, exactly: arrays of one dtype and shape, equal element by element (floats bit for bit, the
    sign of zero included, NaN equal to NaN), lists and scalars by ``repr``."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype.kind != "f":
            return bool(np.array_equal(a, b))
        na, nb = np.isnan(a), np.isnan(b)
        bits = f"u{a.dtype.itemsize}"
        return bool(
            np.array_equal(na, nb) and np.array_equal(np.where(na, 0, a).view(bits), np.where(nb, 0, b).view(bits))
        )
    return repr(a) == repr(b)


def _diff_tables(name: str, a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    if list(a) != list(b):
        return [f"{name}: columns {list(a)} != {list(b)}"]
    return [f"{name}.{k}: {a[k]!r} != {b[k]!r}" for k in a if not _same_column(a[k], b[k])]


def run_outcome(sim: Simulation, rec: Recorder) -> dict[str, Any]:
    """Everything a run leaves that the compiled run must reproduce."""
    return {
        "hash": rec.event_log_hash(),
        "events": sim.events,
        "now": sim.now,
        "jobs_finished": sim.jobs_finished,
        "job_end_order": list(rec.job_end_order),
        "stopped": sim.stopped,
        "jobs": rec.jobs_columns(),
        "tasks": rec.tasks_columns(),
        "utilisation": rec.utilisation_columns(),
    }


SCALARS = ("hash", "events", "now", "jobs_finished", "job_end_order", "stopped")


def differences(py: dict[str, Any], cc: dict[str, Any]) -> list[str]:
    """What differs between two :func:`run_outcome` (floats by ``repr``: exactly)."""
    out = [f"{k}: {py[k]!r} != {cc[k]!r}" for k in SCALARS if repr(py[k]) != repr(cc[k])]
    for table in ("jobs", "tasks", "utilisation"):
        out += _diff_tables(table, py[table], cc[table])
    return out


def python_run(
    w: WorkloadInstance,
    reference: bool = False,
    policy: str = "drf",
    params: dict[str, Any] | None = None,
    **options: Any,
) -> dict[str, Any]:
    sim = Simulation(w, make_policy(policy, params or {}, reference=reference), **options)
    return run_outcome(sim, sim.run())


def compiled_run(
    compiled: Any, w: WorkloadInstance, policy: str = "drf", params: dict[str, Any] | None = None, **options: Any
) -> tuple[Simulation, Recorder]:
    sim = Simulation(w, make_policy(policy, params or {}), **options)
    assert compiled.why_not(sim) is None, compiled.why_not(sim)
    rec = compiled.run_compiled(sim)
    assert rec is sim.record
    return sim, rec


def assert_same_runs(
    compiled: Any,
    w: WorkloadInstance,
    where: str,
    reference: bool = False,
    policy: str = "drf",
    params: dict[str, Any] | None = None,
    **options: Any,
) -> None:
    py = python_run(w, reference, policy, params, **options)
    cc = run_outcome(*compiled_run(compiled, w, policy, params, **options))
    problems = differences(py, cc)
    assert not problems, f"{where} ({policy} {params or ''}, {options or 'defaults'}): " + "\n".join(problems[:6])


def _counting_watch(looks: int | None, every: int) -> Watch:
    """A watch whose clock ticks 1 at each read: it stops the run at its ``looks``-th look (None: never),
    a look once ``every`` events have passed since the last."""
    ticks = itertools.count()
    return Watch(time_limit=looks, clock=lambda: float(next(ticks)), every=every)


# ---------------------------------------------------------------------------------------------
# small workloads by hand

NODES = [
    {"id": "n0", "rack": "r0", "resources": {"cpu": 4, "mem": 4}},
    {"id": "n1", "rack": "r1", "resources": {"cpu": 2, "mem": 8}},
]


def _job(jid: str, *groups: dict[str, Any], submit: float = 0.0, **fields: Any) -> dict[str, Any]:
    return {"id": jid, "submit_time": submit, "stages": [{"type": "map", "tasks": list(groups)}], **fields}


def _group(duration: float = 2.0, count: int = 3, cpu: float = 1.0, mem: float = 1.0, **fields: Any) -> dict[str, Any]:
    return {"duration": duration, "count": count, "demand": {"cpu": cpu, "mem": mem}, **fields}


def supported(**extra: Any) -> WorkloadInstance:
    jobs = [_job("a", _group(), user="u0"), _job("b", _group(3.0, 5, 2.0, 0.5), submit=1.0, user="u1")]
    return workload(NODES, jobs, **extra)


def _sim(w: WorkloadInstance, policy: str = "drf", params: dict[str, Any] | None = None, **options: Any) -> Simulation:
    return Simulation(w, make_policy(policy, params or {}), **options)
