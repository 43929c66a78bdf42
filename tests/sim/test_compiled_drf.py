"""The compiled ``drf`` loop (``mropt.sim.compiled``) runs a simulation as the Python engine does, exactly.

``run_compiled(sim)`` runs a built :class:`~mropt.sim.engine.Simulation` of ``drf`` by a numba loop
and leaves the simulation as ``sim.run()`` would. On seeded random workloads of the shape the loop
supports (two resources named cpu and mem, no slots, jobs of one map stage of one task group) the
compiled run must give the Python engine's event log, event count, clock, finished count, end order,
stop and every column of the job, attempt and utilisation tables, bit for bit (NaN equal to NaN);
against the plain rule (``reference=True``) too; stopped at ``until`` or by a watch; at far times
(attempts of no time); and the independent ``verify_simulation`` must pass on its tables.
``why_not`` must name a reason for every simulation it cannot run (and ``run_compiled`` refuse it),
and two hand-worked scenarios check the compiled run against DRF's definition with no engine.

numba compiles the core once per process (then loads its cache): one module-scoped fixture imports it.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from mropt.model.errors import InputError  # noqa: E402
from mropt.model.workload import WorkloadInstance  # noqa: E402
from mropt.sim.engine import Simulation  # noqa: E402
from mropt.sim.policy import make_policy  # noqa: E402
from mropt.sim.recorder import Recorder  # noqa: E402
from mropt.sim.speculation.table import make_speculation  # noqa: E402
from mropt.sim.verify import verify_simulation  # noqa: E402
from mropt.sim.watch import Watch  # noqa: E402

from sim_helpers import workload  # noqa: E402

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


@pytest.fixture(scope="module")
def compiled() -> Any:
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


def random_workload(rng: random.Random) -> WorkloadInstance:
    """2-8 nodes of cpu and mem on 1-3 racks (speeds in 1 of 5), 3-40 map-only jobs of one task group
    (1-30 tasks), a few users (some jobs without one, some naming ``default``), submit times with
    ties, and a generated placement (sometimes other locality factors) in half of them; in 1 of 4,
    capacities and demands of inexact sums (``FINE_*``)."""
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
    if rng.random() < 0.5:
        extra["placement"] = {"replicas": rng.randint(1, 3), "seed": rng.randint(0, 9)}
        if rng.random() < 0.3:
            extra["timing"] = {"rack_factor": rng.choice([1.0, 1.2, 2.5]), "remote_factor": rng.choice([1.0, 3.0, 4.5])}
    return workload(nodes, jobs, **extra)


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


def python_run(w: WorkloadInstance, reference: bool = False, **options: Any) -> dict[str, Any]:
    sim = Simulation(w, make_policy("drf", {}, reference=reference), **options)
    return run_outcome(sim, sim.run())


def compiled_run(compiled: Any, w: WorkloadInstance, **options: Any) -> tuple[Simulation, Recorder]:
    sim = Simulation(w, make_policy("drf", {}), **options)
    assert compiled.why_not(sim) is None, compiled.why_not(sim)
    rec = compiled.run_compiled(sim)
    assert rec is sim.record
    return sim, rec


def assert_same_runs(compiled: Any, w: WorkloadInstance, where: str, reference: bool = False, **options: Any) -> None:
    py = python_run(w, reference, **options)
    cc = run_outcome(*compiled_run(compiled, w, **options))
    problems = differences(py, cc)
    assert not problems, f"{where} ({options or 'defaults'}): " + "\n".join(problems[:6])


# ---------------------------------------------------------------------------------------------
# 1. the compiled run is the Python engine's run


CHUNKS = 6
PER_CHUNK = 25  # 150 workloads in all


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_compiled_run_is_the_python_engines_run_on_random_workloads(compiled: Any, chunk: int) -> None:
    # a failure names its workload: random_workload(random.Random(f"compiled-drf-{chunk}")) drawn k + 1 times
    rng = random.Random(f"compiled-drf-{chunk}")
    for k in range(PER_CHUNK):
        w = random_workload(rng)
        options = {"batch": False} if k % 8 == 5 else {}  # attempts one by one, without batches
        assert_same_runs(compiled, w, f"chunk {chunk}, workload {k}", **options)


def test_the_random_workloads_reach_the_cases_they_are_drawn_for(compiled: Any) -> None:
    # the draws above are not vacuous: jobs left waiting, nodes exactly full, tied ends, placement, jobs
    # whose demand fits one node only
    rng = random.Random("compiled-drf-0")
    seen = {"placed": 0, "waited": 0, "full": 0, "tied_ends": 0, "one_node": 0, "no_user": 0}
    for _ in range(PER_CHUNK):
        w = random_workload(rng)
        sim, rec = compiled_run(compiled, w)
        seen["placed"] += w.placement is not None
        jobs, tasks = rec.jobs_columns(), rec.tasks_columns()
        seen["waited"] += int(np.sum(jobs["first_start"] > jobs["submit_time"]))
        ends = tasks["end"]
        seen["tied_ends"] += len(ends) - len(np.unique(ends))
        seen["no_user"] += sum(j.user == "default" for j in sim.jobs)
        caps = {n.id: n.resources for n in w.nodes}
        for job in w.jobs:
            d = job.stages[0].tasks[0].demand
            fitting = [n for n, c in caps.items() if all(c.get(r, 0.0) >= v for r, v in d.items())]
            seen["one_node"] += len(fitting) == 1
            seen["full"] += any(all(c.get(r, 0.0) == d.get(r, 0.0) for r in ("cpu", "mem")) for c in caps.values())
    assert all(v > 0 for v in seen.values()), seen


@pytest.mark.parametrize("base", [2.0**52, 1e16])
def test_compiled_run_is_the_python_engines_run_at_far_times(compiled: Any, base: float) -> None:
    # submit times shifted to 2**52 (a time's ulp 1) or 1e16 (ulp 2): a duration below half an ulp ends
    # its attempt at its start (a new instant at the same time value: the utilisation rows' breaks),
    # others round to whole ulps (many ends coincide)
    rng = random.Random(f"compiled-drf-far-{base}")
    instant = 0
    for k in range(10):
        data = random_workload(rng).to_dict()
        for job in data["jobs"]:
            job["submit_time"] = job.get("submit_time", 0.0) + base
        w = WorkloadInstance.from_dict(data)
        assert_same_runs(compiled, w, f"far workload {k}")
        tasks = compiled_run(compiled, w)[1].tasks_columns()
        instant += int(np.sum(tasks["end"] == tasks["start"]))
    assert instant > 0  # attempts of no time were run


def test_compiled_run_is_the_plain_rules_run(compiled: Any) -> None:
    # make_policy("drf", reference=True): users sorted afresh at every launch, none of the accelerations
    rng = random.Random("compiled-drf-reference")
    for k in range(30):
        assert_same_runs(compiled, random_workload(rng), f"reference workload {k}", reference=True)


def test_compiled_run_without_utilisation_records_the_same_tables(compiled: Any) -> None:
    rng = random.Random("compiled-drf-no-utilisation")
    for k in range(5):
        assert_same_runs(compiled, random_workload(rng), f"workload {k}", record_utilisation=False)


def test_compiled_run_stopped_at_until_is_the_python_engines_run(compiled: Any) -> None:
    # ``until`` (the first instant after it is not run; the attempts running then end killed): at an
    # instant's own time, between instants, before the first and after the last
    if compiled.why_not(_sim(supported(), until=2.0)) is not None:
        pytest.skip("run_compiled does not take until yet")
    rng = random.Random("compiled-drf-until")
    stopped = 0
    for k in range(24):
        w = random_workload(rng)
        sim = Simulation(w, make_policy("drf", {}))
        tasks = sim.run().tasks_columns()
        times = sorted(set(tasks["start"].tolist()) | set(tasks["end"].tolist()))
        pick = k % 4
        if pick == 0:
            until = rng.choice(times)
        elif pick == 1:
            i = rng.randrange(len(times) - 1) if len(times) > 1 else 0
            until = (times[i] + times[min(i + 1, len(times) - 1)]) / 2
        else:
            until = times[0] - 1.0 if pick == 2 else times[-1] + 1.0
        assert_same_runs(compiled, w, f"until workload {k} (until {until!r})", until=until)
        run, rec = compiled_run(compiled, w, until=until)
        stopped += run.stopped is not None
        verdict = verify_simulation(w, rec.jobs_columns(), rec.tasks_columns())  # a stopped run's tables
        assert verdict.ok, (k, until, verdict.problems)
    assert stopped > 0


def _counting_watch(looks: int | None, every: int) -> Watch:
    """A watch whose clock ticks 1 at each read: it stops the run at its ``looks``-th look (None: never),
    a look once ``every`` events have passed since the last."""
    ticks = itertools.count()
    return Watch(time_limit=looks, clock=lambda: float(next(ticks)), every=every)


def test_compiled_run_with_a_watch_is_the_python_engines_run(compiled: Any) -> None:
    # the looks at the watch come at the same instants (events counted as the Python loop counts them),
    # and a stop at the k-th look leaves the same run
    if compiled.why_not(_sim(supported(), watch=_counting_watch(None, 5))) is not None:
        pytest.skip("run_compiled does not take a watch yet")
    rng = random.Random("compiled-drf-watch")
    stopped = 0
    for k in range(20):
        w = random_workload(rng)
        looks, every = rng.choice([None, 1, 2, 5, 20]), rng.choice([1, 3, 17, 100])
        py = python_run(w, watch=_counting_watch(looks, every))
        cc = run_outcome(*compiled_run(compiled, w, watch=_counting_watch(looks, every)))
        problems = differences(py, cc)
        assert not problems, f"watch workload {k} (looks {looks}, every {every}): " + "\n".join(problems[:6])
        stopped += cc["stopped"] is not None
    assert stopped > 0


# ---------------------------------------------------------------------------------------------
# 2. the independent verify passes on the compiled run's tables


def test_verify_simulation_passes_on_the_compiled_tables(compiled: Any) -> None:
    rng = random.Random("compiled-drf-verify")
    for k in range(25):
        w = random_workload(rng)
        _, rec = compiled_run(compiled, w)
        jobs, tasks = rec.jobs_columns(), rec.tasks_columns()
        verdict = verify_simulation(w, jobs, tasks)
        assert verdict.ok, (k, verdict.problems)
        assert all(f == f for f in jobs["finish"]), k  # every job finished (none fits no node: see below)
        assert len(tasks["task"]) == sum(job.stages[0].tasks[0].count for job in w.jobs)


def test_a_job_whose_demand_fits_no_node_is_refused_with_the_workload() -> None:
    # the compiled loop never sees one: the workload itself is refused (so every job above can finish)
    nodes = [{"id": "n0", "resources": {"cpu": 4, "mem": 1}}, {"id": "n1", "resources": {"cpu": 1, "mem": 4}}]
    job = {"id": "j", "stages": [{"type": "map", "tasks": [{"duration": 1, "demand": {"cpu": 2, "mem": 2}}]}]}
    with pytest.raises(InputError, match="fits on no node"):
        workload(nodes, [job])


# ---------------------------------------------------------------------------------------------
# 3. why_not: a reason for every simulation the loop cannot run

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


def _with_three_resources() -> WorkloadInstance:
    nodes = [{"id": f"n{i}", "resources": {"cpu": 4, "mem": 4, "disk": 2}} for i in range(2)]
    return workload(nodes, [_job("a", {"duration": 1.0, "count": 2, "demand": {"cpu": 1, "mem": 1, "disk": 1}})])


UNSUPPORTED: dict[str, Callable[[], Simulation]] = {
    "policy ddrf": lambda: _sim(supported(), "ddrf", {"e1": 1, "e2": 2}),
    "policy fair": lambda: _sim(supported(), "fair"),
    "policy delay": lambda: _sim(supported(), "delay", {"d": 1}),
    "heartbeat mode": lambda: _sim(supported(), mode="heartbeat"),
    "slots and resources": lambda: _sim(
        workload(
            [{**n, "map_slots": 2, "reduce_slots": 1} for n in NODES],
            [_job("a", _group(), user="u0")],
        )
    ),
    "slots only": lambda: _sim(
        workload(
            [{"id": "n0", "map_slots": 2, "reduce_slots": 1}], [_job("a", {"duration": 2.0, "count": 3}, user="u0")]
        )
    ),
    "one resource": lambda: _sim(
        workload(
            [{"id": "n0", "resources": {"cpu": 4}}],
            [_job("a", {"duration": 1.0, "count": 2, "demand": {"cpu": 1}})],
        )
    ),
    "three resources": lambda: _sim(_with_three_resources()),
    "two stages": lambda: _sim(
        workload(
            NODES,
            [
                {
                    "id": "a",
                    "stages": [
                        {"type": "map", "tasks": [_group()]},
                        {"type": "reduce", "tasks": [_group(count=1)]},
                    ],
                }
            ],
        )
    ),
    "two durations in one stage": lambda: _sim(workload(NODES, [_job("a", _group(2.0), _group(3.0))])),
    "two demands in one stage": lambda: _sim(workload(NODES, [_job("a", _group(2.0), _group(2.0, cpu=2.0))])),
    "speculation": lambda: _sim(supported(), speculation=make_speculation("late")),
    "faults": lambda: _sim(supported(faults=[{"node": "n1", "down": 1.0, "up": 5.0}])),
    "stragglers": lambda: _sim(supported(timing={"straggler_rate": 0.2})),
    "reduce slow-start": lambda: _sim(supported(timing={"reduce_slowstart": 0.5})),
    "live utilisation rows": lambda: _sim(supported(), utilisation_rows="live"),
    "listed replicas": lambda: _sim(
        workload(NODES, [_job("a", _group(replicas=["n0"]), user="u0"), _job("b", _group(), user="u1")])
    ),
    "listed replicas with a placement": lambda: _sim(
        workload(
            NODES,
            [_job("a", _group(replicas=["n1"]), user="u0"), _job("b", _group(), user="u1")],
            placement={"replicas": 2, "seed": 1},
        )
    ),
    "a trace": lambda: Simulation(supported(), make_policy("drf", {}, trace=[])),
}


@pytest.mark.parametrize("case", list(UNSUPPORTED))
def test_why_not_names_a_reason_and_run_compiled_refuses(compiled: Any, case: str) -> None:
    sim = UNSUPPORTED[case]()
    reason = compiled.why_not(sim)
    assert isinstance(reason, str) and reason, case
    with pytest.raises(ValueError, match="cannot run"):
        compiled.run_compiled(sim)
    assert sim.events == 0 and sim.now == 0.0 and not sim.record.job_end_order  # refused before running


def test_why_not_refuses_a_simulation_already_run(compiled: Any) -> None:
    sim = _sim(supported())
    assert compiled.why_not(sim) is None
    sim.run()
    assert compiled.why_not(sim) is not None


@pytest.mark.parametrize("placed", [False, True])
def test_why_not_is_none_for_a_supported_simulation_and_it_runs(compiled: Any, placed: bool) -> None:
    extra = {"placement": {"replicas": 2, "seed": 3}} if placed else {}
    w = supported(**extra)
    assert compiled.why_not(_sim(w)) is None
    assert compiled.why_not(Simulation(w, make_policy("drf", {}, reference=True))) is None
    assert_same_runs(compiled, w, "supported")


# ---------------------------------------------------------------------------------------------
# 4. a scenario worked by hand from DRF's definition


def test_a_hand_worked_scenario(compiled: Any) -> None:
    # one node of cpu 4, mem 4 (the totals); three users, one job each, all submitted at 0:
    #   a (user A, index 0): 4 tasks of (cpu 1, mem 1), 3 s: dominant share 1/4 a task
    #   b (user B, index 1): 3 tasks of (cpu 2, mem 0.5), 5 s: dominant share 1/2 a task (cpu)
    #   c (user C, index 2): 2 tasks of (cpu 0.5, mem 2), 4 s: dominant share 1/2 a task (mem)
    # The user of the lowest dominant share launches next; ties: the larger dominant demand of the next
    # task, then the user index; a user whose next task does not fit the free capacity is passed by.
    #  t=0: shares 0,0,0; B and C (1/2) before A (1/4), B before C (index): b0 (free 2, 3.5, B 1/2);
    #       c0 (A 0, C 0: C's larger demand; free 1.5, 1.5, C 1/2); a0 (free .5, .5, A 1/4); nothing fits
    #  t=3: a0 ends (A 0; free 1.5, 1.5): a1 (free .5, .5)
    #  t=4: c0 ends (C 0; free 1, 2.5): C lowest: c1 (free .5, .5); c is all started
    #  t=5: b0 ends (B 0; free 2.5, 1): b1 (free .5, .5)
    #  t=6: a1 ends (A 0; free 1.5, 1.5): a2 (free .5, .5)
    #  t=8: c1 ends, c finishes (free 1, 2.5): A (1/4) before B (1/2): a3 (free 0, 1.5); b2 does not fit
    #  t=9: a2 ends (free 1, 2.5): A has nothing pending; b2 (cpu 2) does not fit
    #  t=10: b1 ends (free 3, 3): b2 (free 1, 2.5)
    #  t=11: a3 ends, a finishes; t=15: b2 ends, b finishes
    nodes = [{"id": "n0", "resources": {"cpu": 4, "mem": 4}}]
    jobs = [
        _job("a", _group(3.0, 4, 1.0, 1.0), user="A"),
        _job("b", _group(5.0, 3, 2.0, 0.5), user="B"),
        _job("c", _group(4.0, 2, 0.5, 2.0), user="C"),
    ]
    w = workload(nodes, jobs)
    expected = [  # (start, job, task, end) in launch order
        (0.0, "b", 0, 5.0),
        (0.0, "c", 0, 4.0),
        (0.0, "a", 0, 3.0),
        (3.0, "a", 1, 6.0),
        (4.0, "c", 1, 8.0),
        (5.0, "b", 1, 10.0),
        (6.0, "a", 2, 9.0),
        (8.0, "a", 3, 11.0),
        (10.0, "b", 2, 15.0),
    ]
    sim, rec = compiled_run(compiled, w)
    tasks = rec.tasks_columns()
    rows = sorted(
        zip(
            tasks["attempt"].tolist(),
            tasks["start"].tolist(),
            tasks["job_id"],
            tasks["task"].tolist(),
            tasks["end"].tolist(),
            tasks["node"],
        )
    )
    assert [r[1:5] for r in rows] == expected
    assert {r[5] for r in rows} == {"n0"}
    assert [a for a, *_ in rows] == list(range(len(expected)))  # attempt ids in launch order
    jobs_table = rec.jobs_columns()
    assert jobs_table["finish"].tolist() == [11.0, 15.0, 8.0]
    assert [sim.jobs[j].id for j in rec.job_end_order] == ["c", "a", "b"]
    assert sim.now == 15.0 and sim.jobs_finished == 3
    assert sim.events == 3 + len(expected)  # the arrivals and one completion per attempt
    assert_same_runs(compiled, w, "hand-worked")


def test_a_hand_worked_scenario_on_two_nodes_with_runs_and_ties(compiled: Any) -> None:
    # two nodes of (cpu 2, mem 2): totals (4, 4); users X (index 0) and Y (index 1), all at 0:
    #   x: 6 tasks of (cpu 1, mem 0.5), 2 s: 1/4 a task (cpu); y: 4 tasks of (cpu 0.5, mem 1), 2 s: 1/4 (mem)
    # New work offers every node in order, n0 first. Equal shares and equal dominant demands: X by index.
    #  t=0, n0: X 0 -> x0 (X 1/4; n0 free 1, 1.5); Y 0 -> y0 (Y 1/4; free .5, .5); X 1/4 = Y 1/4, X by index:
    #       x's (1, .5) does not fit, y's (.5, 1) does not fit: n0 done.
    #       n1: X (1/4) -> x1 (X 1/2; free 1, 1.5); Y (1/4) -> y1 (Y 1/2; free .5, .5); nothing fits.
    #  t=2: all four end (shares 0); n0 then n1 are offered as at 0: x2, y2 on n0; x3, y3 on n1
    #  t=4: all four end; y (4 tasks) is done; x alone: n0: x4 (free 1, 1.5), x5 (free 0, 1); n1 idle
    #  t=6: x4, x5 end: x finishes; y finished at 4
    nodes = [{"id": f"n{i}", "resources": {"cpu": 2, "mem": 2}} for i in range(2)]
    jobs = [_job("x", _group(2.0, 6, 1.0, 0.5), user="X"), _job("y", _group(2.0, 4, 0.5, 1.0), user="Y")]
    w = workload(nodes, jobs)
    expected = [  # (start, job, task, node) in launch order
        (0.0, "x", 0, "n0"),
        (0.0, "y", 0, "n0"),
        (0.0, "x", 1, "n1"),
        (0.0, "y", 1, "n1"),
        (2.0, "x", 2, "n0"),
        (2.0, "y", 2, "n0"),
        (2.0, "x", 3, "n1"),
        (2.0, "y", 3, "n1"),
        (4.0, "x", 4, "n0"),
        (4.0, "x", 5, "n0"),
    ]
    sim, rec = compiled_run(compiled, w)
    tasks = rec.tasks_columns()
    rows = sorted(
        zip(tasks["attempt"].tolist(), tasks["start"].tolist(), tasks["job_id"], tasks["task"].tolist(), tasks["node"])
    )
    assert [r[1:] for r in rows] == expected
    assert tasks["end"].tolist() == [s + 2.0 for s in tasks["start"].tolist()]
    assert rec.jobs_columns()["finish"].tolist() == [6.0, 4.0]
    assert sim.now == 6.0 and sim.jobs_finished == 2
    assert_same_runs(compiled, w, "hand-worked, two nodes")
