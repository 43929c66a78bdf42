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

``ddrf`` (E1 <= E2) and ``delay`` (D) run compiled too: on random placed workloads with random
parameters and heartbeats, the same comparisons (the plain rule, until at timers' instants, a watch,
far times), a check that the draws reach the delay machinery (skips, checks with and without a
reoffer, muted passes, rack and off-rack launches, delay's off-node then on-node launches), and a
ddrf scenario worked by hand from the rule. Three known mismatches are strict xfails (their reasons).

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
from mropt.sim.policies.ddrf import Ddrf, Delay  # noqa: E402
from mropt.sim.policies.drf import Drf  # noqa: E402
from mropt.sim.policy import make_policy  # noqa: E402
from mropt.sim.recorder import Recorder  # noqa: E402
from mropt.sim.speculation.table import make_speculation  # noqa: E402
from mropt.sim.verify import verify_simulation  # noqa: E402
from mropt.sim.watch import Watch  # noqa: E402

from sim_helpers import policy_params, workload  # noqa: E402

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
        options: dict[str, Any] = {"batch": False} if k % 8 == 5 else {}  # attempts one by one, without batches
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
# 1b. ddrf and delay: the compiled run is the Python engine's run
#
# The loop runs the delay rules too: a skip count per job, the locality level it allows (ddrf:
# node-local while skips < E1, rack-local while < E2, any after; delay: node-local while skips < D,
# then any), declines, a job offered a node once per call, the ``check`` and ``reoffer`` timers and
# the muted pass after a check. Declines need replicas: the placement is in most workloads here.

DELAY_POLICIES = ("ddrf", "delay")
DELAY_CHUNKS = 4
DELAY_PER_CHUNK = 25  # 100 workloads per policy


def random_params(rng: random.Random, policy: str) -> dict[str, int]:
    """ddrf: E1 0-3, E2 = E1 + 0-3; delay: D 0-4 (0s included: drf's decisions)."""
    if policy == "ddrf":
        e1 = rng.randint(0, 3)
        return {"e1": e1, "e2": e1 + rng.randint(0, 3)}
    return {"d": rng.randint(0, 4)}


def delay_case(rng: random.Random, policy: str) -> tuple[WorkloadInstance, dict[str, int], dict[str, Any]]:
    """A random workload (placed in 85 %), random parameters, and in 1 of 4 another heartbeat interval
    (the reoffer's delay), in 1 of 8 attempts without batches."""
    w = random_workload(rng, placed=0.85)
    params = random_params(rng, policy)
    options: dict[str, Any] = {}
    if rng.random() < 0.25:
        options["heartbeat"] = rng.choice([0.5, 1.0, 2.5, 7.0, 0.1])
    if rng.random() < 0.125:
        options["batch"] = False
    return w, params, options


def delay_cases(policy: str, chunk: int) -> Any:
    rng = random.Random(f"compiled-{policy}-{chunk}")
    for k in range(DELAY_PER_CHUNK):
        yield (k, *delay_case(rng, policy))


@pytest.mark.parametrize("chunk", range(DELAY_CHUNKS))
@pytest.mark.parametrize("policy", DELAY_POLICIES)
def test_compiled_delay_run_is_the_python_engines_run_on_random_workloads(
    compiled: Any, policy: str, chunk: int
) -> None:
    # a failure names its case: delay_cases(policy, chunk), the k-th
    for k, w, params, options in delay_cases(policy, chunk):
        assert_same_runs(compiled, w, f"{policy} chunk {chunk}, workload {k}", policy=policy, params=params, **options)


@pytest.mark.parametrize("policy", ["drf", *DELAY_POLICIES])
def test_compiled_run_with_its_buffers_emptied_often_is_the_python_engines_run(
    compiled: Any, policy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the loop pauses whenever its buffers of ended batches or of row breaks fill (CHUNK, BREAKS: a day's
    # run empties them some 30 times); here at nearly every instant, so every break's count of ended
    # entries crosses an emptying (the rows were wrong so once; a watch's pauses found it)
    from mropt.sim.compiled import drf_engine

    monkeypatch.setattr(drf_engine, "CHUNK", 1)
    monkeypatch.setattr(drf_engine, "BREAKS", 1)
    rng = random.Random(f"compiled-buffers-{policy}")
    for k in range(12):
        w, params, options = delay_case(rng, policy) if policy != "drf" else (random_workload(rng), {}, {})
        assert_same_runs(compiled, w, f"{policy} small buffers, workload {k}", policy=policy, params=params, **options)


@pytest.mark.parametrize("policy", DELAY_POLICIES)
def test_compiled_delay_run_is_the_plain_rules_run(compiled: Any, policy: str) -> None:
    # the Python side by ``_assign_reference``: users sorted afresh at every launch, a set of the jobs
    # offered the node, no accelerations
    rng = random.Random(f"compiled-{policy}-reference")
    for k in range(30):
        w, params, options = delay_case(rng, policy)
        assert_same_runs(compiled, w, f"{policy} reference {k}", True, policy, params, **options)


def _far_delay_case(policy: str, k: int) -> tuple[WorkloadInstance, dict[str, int], dict[str, Any]]:
    """The k-th ``delay_case`` of ``compiled-{policy}-far``, its submit times shifted to 2**52 (a time's ulp
    1: attempts of 0.1 and 0.3 s end at their start, a new instant at the same time value)."""
    rng = random.Random(f"compiled-{policy}-far")
    for _ in range(k + 1):
        w, params, options = delay_case(rng, policy)
    data = w.to_dict()
    for job in data["jobs"]:
        job["submit_time"] = job.get("submit_time", 0.0) + 2.0**52
    return WorkloadInstance.from_dict(data), params, options


#: far cases where the Python engine's accelerated offers differ from its own plain rule (see below)
FAR_SPLITS = {("ddrf", 6), ("delay", 0), ("delay", 4)}


@pytest.mark.parametrize("policy", DELAY_POLICIES)
def test_compiled_delay_run_without_utilisation_or_at_far_times(compiled: Any, policy: str) -> None:
    rng = random.Random(f"compiled-{policy}-far")
    for k in range(8):
        w, params, options = delay_case(rng, policy)
        if k % 2:
            assert_same_runs(compiled, w, f"{policy} {k}", policy=policy, params=params, record_utilisation=False)
            continue
        far, params, options = _far_delay_case(policy, k)
        # the plain rule always; the accelerated Python offers where they agree with it (FAR_SPLITS)
        assert_same_runs(compiled, far, f"{policy} far {k}", True, policy, params, **options)
        if (policy, k) not in FAR_SPLITS:
            assert_same_runs(compiled, far, f"{policy} far {k}", policy=policy, params=params, **options)


@pytest.mark.xfail(
    strict=True,
    reason="Python engine: at far times (ulp 1) ddrf's and delay's accelerated offers differ from the plain "
    "rule (make_policy(reference=True)); the compiled run is the plain rule's run",
)
@pytest.mark.parametrize(("policy", "k"), sorted(FAR_SPLITS))
def test_python_accelerated_offers_are_the_plain_rule_at_far_times(policy: str, k: int) -> None:
    far, params, options = _far_delay_case(policy, k)
    problems = differences(
        python_run(far, True, policy, params, **options), python_run(far, False, policy, params, **options)
    )
    assert not problems, problems[:3]


def _timed_python_run(
    w: WorkloadInstance, policy: str, params: dict[str, Any], reference: bool = False, **options: Any
) -> tuple[Simulation, Recorder, list[tuple[float, Any]], list[Any], int]:
    """A Python run with its timers noted ((time, tag) per ``on_timer`` call), its decision trace
    (``reference`` only: the accelerated offers take no trace here) and its muted passes (``assign``
    calls at the instant of a check: they offer nothing)."""
    trace: list[Any] = []
    pol = make_policy(policy, params, reference=reference, trace=trace if reference else None)
    sim = Simulation(w, pol, **options)
    timers: list[tuple[float, Any]] = []
    muted = [0]
    on_timer, assign = pol.on_timer, pol.assign

    def noting_timer(tag: Any) -> None:
        timers.append((sim.now, tag))
        on_timer(tag)

    def noting_assign(node: int) -> None:
        muted[0] += sim.now == pol._mute  # type: ignore[attr-defined]
        assign(node)

    pol.on_timer = noting_timer  # type: ignore[method-assign]
    pol.assign = noting_assign  # type: ignore[method-assign]
    rec = sim.run()
    return sim, rec, timers, trace, muted[0]


@pytest.mark.parametrize("policy", DELAY_POLICIES)
def test_compiled_delay_run_stopped_at_until_is_the_python_engines_run(compiled: Any, policy: str) -> None:
    # until at an attempt's start or end, at a check or a reoffer (a timer's own instant), between
    # instants, before the first and after the last
    rng = random.Random(f"compiled-{policy}-until")
    stopped = at_timer = clean = 0
    for k in range(20):
        w, params, options = delay_case(rng, policy)
        _, rec, timers, _, _ = _timed_python_run(w, policy, params, **options)
        tasks = rec.tasks_columns()
        times = sorted(set(tasks["start"].tolist()) | set(tasks["end"].tolist()))
        pick = k % 5
        if pick == 0 and timers:
            until = rng.choice(timers)[0]
            at_timer += 1
        elif pick == 1:
            until = rng.choice(times)
        elif pick == 2:
            i = rng.randrange(len(times) - 1) if len(times) > 1 else 0
            until = (times[i] + times[min(i + 1, len(times) - 1)]) / 2
        else:
            until = times[0] - 1.0 if pick == 3 else times[-1] + 1.0
        where = f"{policy} until {k} (until {until!r})"
        assert_same_runs(compiled, w, where, policy=policy, params=params, until=until, **options)
        run, rec = compiled_run(compiled, w, policy, params, until=until, **options)
        stopped += run.stopped is not None
        verdict = verify_simulation(w, rec.jobs_columns(), rec.tasks_columns())
        # (a job left waiting with no cause, the Python engine's too: see the stall test below)
        assert all(STALL in p for p in verdict.problems), (k, until, verdict.problems)
        py = Simulation(w, make_policy(policy, params), until=until, **options)
        py_rec = py.run()
        assert verdict.problems == verify_simulation(w, py_rec.jobs_columns(), py_rec.tasks_columns()).problems, k
        clean += verdict.ok
    assert stopped > 0 and at_timer > 0 and clean >= 15


STALL = "yet unfinished with no stated cause"


@pytest.mark.xfail(
    strict=True,
    reason="Python policy: a job that declined while others ran and fits only nodes no later end frees "
    "is never offered again (no decline, so no check or reoffer): the run ends with it waiting, no cause",
)
@pytest.mark.parametrize("policy", DELAY_POLICIES)
def test_a_job_left_waiting_after_its_decline_is_a_stated_stall(compiled: Any, policy: str) -> None:
    # n0 (cpu 2, mem 2), n1 (cpu 1, mem 1), on two racks; a (user A): one task of (2, 2), its replica on n1
    # (it fits n0 only, never node-local); b (user B): one task of (1, 1), 10 s, its replica on n1.
    # At 0, n0: a declines (node-local only), b declines; n1: a does not fit, b launches (node-local).
    # The check at 0 sees b running: no reoffer. At 10 b ends, n1 is offered: a does not fit it, no
    # decline, no check: the run ends at 10 with a waiting, though n0 has been free all along.
    nodes = [
        {"id": "n0", "rack": "r0", "resources": {"cpu": 2, "mem": 2}},
        {"id": "n1", "rack": "r1", "resources": {"cpu": 1, "mem": 1}},
    ]
    jobs = [_job("a", _group(1.0, 1, 2.0, 2.0), user="A"), _job("b", _group(10.0, 1, 1.0, 1.0), user="B")]
    w = workload(nodes, jobs, placement={"replicas": 1, "seed": 0})
    params = {"ddrf": {"e1": 3, "e2": 3}, "delay": {"d": 3}}[policy]
    sim = Simulation(w, make_policy(policy, params))
    assert [np.asarray(j.stages[0].replicas).tolist() for j in sim.jobs] == [[[1]], [[1]]]
    rec = sim.run()
    assert_same_runs(compiled, w, "a job left waiting", policy=policy, params=params)  # the engines agree
    verdict = verify_simulation(w, rec.jobs_columns(), rec.tasks_columns())
    assert verdict.ok and sim.jobs_finished == 2, verdict.problems  # fails: a never runs, no cause stated


@pytest.mark.parametrize("policy", DELAY_POLICIES)
def test_compiled_delay_run_with_a_watch_is_the_python_engines_run(compiled: Any, policy: str) -> None:
    # the looks count the timers' events as the Python loop counts them
    rng = random.Random(f"compiled-{policy}-watch")
    stopped = 0
    for k in range(16):
        w, params, options = delay_case(rng, policy)
        looks, every = rng.choice([None, 1, 2, 5, 20]), rng.choice([1, 3, 17, 100])
        py = python_run(w, False, policy, params, watch=_counting_watch(looks, every), **options)
        cc = run_outcome(*compiled_run(compiled, w, policy, params, watch=_counting_watch(looks, every), **options))
        problems = differences(py, cc)
        where = f"{policy} watch {k} ({params}, {options}, looks {looks}, every {every})"
        assert not problems, where + ": " + "\n".join(problems[:6])
        stopped += cc["stopped"] is not None
    assert stopped > 0


@pytest.mark.parametrize("policy", DELAY_POLICIES)
def test_compiled_delay_run_with_a_watch_without_utilisation_is_the_python_engines_run(
    compiled: Any, policy: str
) -> None:
    # the same runs, the utilisation rows left out (their mismatch: the xfail above): every other table,
    # the hash, the events, the clock and the stop at the k-th look
    rng = random.Random(f"compiled-{policy}-watch-no-rows")
    stopped = 0
    for k in range(20):
        w, params, options = delay_case(rng, policy)
        looks, every = rng.choice([None, 1, 2, 5, 20]), rng.choice([1, 3, 17, 100])
        py = python_run(
            w, False, policy, params, watch=_counting_watch(looks, every), record_utilisation=False, **options
        )
        cc = run_outcome(
            *compiled_run(
                compiled, w, policy, params, watch=_counting_watch(looks, every), record_utilisation=False, **options
            )
        )
        problems = differences(py, cc)
        where = f"{policy} watch {k} ({params}, {options}, looks {looks}, every {every})"
        assert not problems, where + ": " + "\n".join(problems[:6])
        stopped += cc["stopped"] is not None
    assert stopped > 0


def _nonlocal_then_local(trace: list[Any]) -> int:
    """How many times a job's launch off its node (rack or any) is followed by its node-local launch
    with no skip in between (``delay`` past its wait: the count is reset only by the local launch)."""
    last: dict[str, str] = {}
    found = 0
    for _, job, _, what in trace:
        found += what == "node" and last.get(job) in ("rack", "any")
        last[job] = what
    return found


@pytest.mark.parametrize("policy", DELAY_POLICIES)
def test_the_delay_workloads_reach_the_delay_machinery(compiled: Any, policy: str) -> None:
    # the draws of the comparison above (its chunk 0) are not vacuous: jobs declined (skips in the plain
    # rule's trace), checks fired, some with a reoffer (nothing running), others without, passes were
    # muted, runs had more events than arrivals and completions (the timers' events), launches were
    # rack-local and off-rack; under delay, jobs past their wait launched off their node then on it.
    # The traced plain run is the compiled run (its event log), so the compiled loop went through them.
    seen = dict.fromkeys(
        ("skips", "checks", "reoffers", "checks_busy", "muted", "timer_events", "rack", "any", "far_then_local"), 0
    )
    for k, w, params, options in delay_cases(policy, 0):
        sim, rec, timers, trace, muted = _timed_python_run(w, policy, params, reference=True, **options)
        _, cc = compiled_run(compiled, w, policy, params, **options)
        assert rec.event_log_hash() == cc.event_log_hash(), k
        tags = [tag for _, tag in timers]
        seen["skips"] += sum(what == "skip" for *_, what in trace)
        seen["checks"] += tags.count("check")
        seen["reoffers"] += tags.count("reoffer")
        seen["checks_busy"] += tags.count("check") - tags.count("reoffer") > 0
        seen["muted"] += muted
        completions = len(np.unique(rec.tasks_columns()["end"]))  # at most one event per attempt
        seen["timer_events"] += sim.events > len(w.jobs) + len(rec.tasks_columns()["end"]) or (
            sim.events > len(w.jobs) + completions and bool(timers)
        )
        seen["rack"] += sum(what == "rack" for *_, what in trace)
        seen["any"] += sum(what == "any" for *_, what in trace)
        if policy == "delay" and params["d"] > 0:
            seen["far_then_local"] += _nonlocal_then_local(trace)
        if not params.get("e2", params.get("d")):  # E2 = 0 or D = 0: drf's decisions, no skip
            assert not any(what == "skip" for *_, what in trace), (k, params)
    if policy == "ddrf":
        del seen["far_then_local"]
    assert all(v > 0 for v in seen.values()), seen
    assert seen["checks"] >= seen["reoffers"]


# ---------------------------------------------------------------------------------------------
# 1c. a ddrf scenario worked by hand from the rule


def test_a_hand_worked_ddrf_scenario_with_both_timers(compiled: Any) -> None:
    # The rule (mropt/sim/policies/ddrf.py): a job's skip count allows node-local only while skips < E1,
    # rack-local (or better) while E1 <= skips < E2, any once skips >= E2; a job whose task fits the
    # offered node but has none at the allowed level declines (skips + 1); any launch resets skips to 0.
    # A pass that declined sets a check at the same instant: if nothing runs then, a reoffer one
    # heartbeat later (3 s: 4 nodes) offers every node again; the pass right after a check is muted.
    # A rack-local attempt takes duration x rack_factor (1.5 by default).
    #
    # Nodes n0 (r0, cpu 1, mem 1), n1 (r0, 2, 2), n2 (r1, 2, 2), n3 (r1, 1, 1); ddrf E1 = 1, E2 = 2.
    # Job a (user A) at 0: 2 tasks of (cpu 2, mem 2), 2 s. One replica per task, drawn by the seeded
    # placement (seed 14): task 0 on n0, task 1 on n3 (asserted below) - both on the small nodes, where
    # the tasks do not fit: a is never node-local.
    #  t=0, the arrival's pass, n0..n3: n0 too small (no offer, no skip); n1: skips 0 < E1, node-local
    #       only: n1 holds no replica: decline (skips 1); n2: E1 <= 1 < E2: rack-local: task 1's replica
    #       n3 is in r1, n2's rack: task 1 on n2, rack-local, ends 0 + 2 x 1.5 = 3; skips 0; n3 too
    #       small. The check at 0: task 1 runs: no reoffer; the pass after the check is muted.
    #  t=3: task 1 ends; n2 offered: skips 0: node-local only: task 0's replica is on n0: decline
    #       (skips 1). The check at 3: nothing runs: a reoffer at 3 + 3 = 6; the pass after it muted.
    #  t=6: the reoffer's pass: n0 too small; n1: skips 1: rack-local: task 0's replica n0 is in r0, n1's
    #       rack: task 0 on n1, rack-local, ends 6 + 3 = 9 (skips 0). a finishes at 9.
    #  events: the arrival, check at 0, the end at 3, check at 3, reoffer at 6, the end at 9: 6.
    nodes = [
        {"id": "n0", "rack": "r0", "resources": {"cpu": 1, "mem": 1}},
        {"id": "n1", "rack": "r0", "resources": {"cpu": 2, "mem": 2}},
        {"id": "n2", "rack": "r1", "resources": {"cpu": 2, "mem": 2}},
        {"id": "n3", "rack": "r1", "resources": {"cpu": 1, "mem": 1}},
    ]
    w = workload(nodes, [_job("a", _group(2.0, 2, 2.0, 2.0), user="A")], placement={"replicas": 1, "seed": 14})
    params = {"e1": 1, "e2": 2}
    drawn = Simulation(w, make_policy("ddrf", params)).jobs[0].stages[0].replicas
    assert np.asarray(drawn).tolist() == [[0], [3]]  # what the derivation assumes
    expected = [  # (start, task, node, locality, end) in launch order
        (0.0, 1, "n2", "rack", 3.0),
        (6.0, 0, "n1", "rack", 9.0),
    ]
    sim, rec = compiled_run(compiled, w, "ddrf", params)
    tasks = rec.tasks_columns()
    rows = sorted(
        zip(
            tasks["attempt"].tolist(),
            tasks["start"].tolist(),
            tasks["task"].tolist(),
            tasks["node"],
            tasks["locality"],
            tasks["end"].tolist(),
        )
    )
    assert [r[1:] for r in rows] == expected
    assert rec.jobs_columns()["finish"].tolist() == [9.0]
    assert sim.now == 9.0 and sim.jobs_finished == 1 and sim.events == 6
    # the Python run's timers and decisions are those of the derivation too
    _, _, timers, trace, muted = _timed_python_run(w, "ddrf", params, reference=True)
    assert timers == [(0.0, "check"), (3.0, "check"), (6.0, "reoffer")]
    assert trace == [(0.0, "a", 1, "skip"), (0.0, "a", 2, "rack"), (3.0, "a", 2, "skip"), (6.0, "a", 1, "rack")]
    assert muted > 0
    assert_same_runs(compiled, w, "hand-worked ddrf", policy="ddrf", params=params)
    assert_same_runs(compiled, w, "hand-worked ddrf, plain rule", True, "ddrf", params)
    # E1 = E2 = 0 (drf's decisions): both tasks at once, rack-local on n1 and n2 (n1 first: task 0,
    # whose replica n0 shares r0), no skip, no timer: ends at 3
    sim, rec = compiled_run(compiled, w, "ddrf", {"e1": 0, "e2": 0})
    tasks = rec.tasks_columns()
    assert list(zip(tasks["task"].tolist(), tasks["node"], tasks["locality"])) == [(0, "n1", "rack"), (1, "n2", "rack")]
    assert sim.now == 3.0 and sim.events == 2  # the arrival and the two ends (one batch: one event)


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


class _DrfKind(Drf):
    """A subclass of drf: it may change any rule, so the loop does not run it."""


class _DdrfKind(Ddrf):
    pass


class _DelayKind(Delay):
    pass


def _subclass_sim(cls: type, name: str, **params: Any) -> Simulation:
    return Simulation(supported(placement={"replicas": 2, "seed": 3}), cls(**policy_params(name, **params)))


#: the policies the loop does not run, and the name its reason gives
POLICY_REASONS = {
    "policy fair": "fair",
    "a subclass of drf": "_drfkind",
    "a subclass of ddrf": "_ddrfkind",
    "a subclass of delay": "_delaykind",
}

UNSUPPORTED: dict[str, Callable[[], Simulation]] = {
    "policy fair": lambda: _sim(supported(), "fair"),
    "a subclass of drf": lambda: _subclass_sim(_DrfKind, "drf"),
    "a subclass of ddrf": lambda: _subclass_sim(_DdrfKind, "ddrf", e1=1, e2=2),
    "a subclass of delay": lambda: _subclass_sim(_DelayKind, "delay", d=1),
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
    "a ddrf trace": lambda: Simulation(supported(), make_policy("ddrf", {"e1": 1, "e2": 1}, trace=[])),
    "a delay trace": lambda: Simulation(supported(), make_policy("delay", {"d": 2}, reference=True, trace=[])),
    "ddrf in heartbeat mode": lambda: _sim(supported(), "ddrf", {"e1": 0, "e2": 2}, mode="heartbeat"),
    "delay with speculation": lambda: _sim(supported(), "delay", {"d": 1}, speculation=make_speculation("late")),
    "delay with listed replicas": lambda: _sim(
        workload(NODES, [_job("a", _group(replicas=["n0"]), user="u0"), _job("b", _group(), user="u1")]),
        "delay",
        {"d": 3},
    ),
}


@pytest.mark.parametrize("case", list(UNSUPPORTED))
def test_why_not_names_a_reason_and_run_compiled_refuses(compiled: Any, case: str) -> None:
    sim = UNSUPPORTED[case]()
    reason = compiled.why_not(sim)
    assert isinstance(reason, str) and reason, case
    if case in POLICY_REASONS:  # drf, ddrf and delay themselves, not a subclass (it may change a rule)
        assert reason == f"policy {POLICY_REASONS[case]} (only drf, ddrf and delay run compiled)", reason
    else:
        assert "only drf, ddrf and delay" not in reason, (case, reason)
    with pytest.raises(ValueError, match="cannot run"):
        compiled.run_compiled(sim)
    assert sim.events == 0 and sim.now == 0.0 and not sim.record.job_end_order  # refused before running


def test_why_not_refuses_a_simulation_already_run(compiled: Any) -> None:
    sim = _sim(supported())
    assert compiled.why_not(sim) is None
    sim.run()
    assert compiled.why_not(sim) is not None


@pytest.mark.parametrize("placed", [False, True])
@pytest.mark.parametrize(
    ("policy", "params"), [("drf", {}), ("ddrf", {"e1": 1, "e2": 2}), ("ddrf", {"e1": 0, "e2": 0}), ("delay", {"d": 2})]
)
def test_why_not_is_none_for_a_supported_simulation_and_it_runs(
    compiled: Any, placed: bool, policy: str, params: dict[str, Any]
) -> None:
    extra = {"placement": {"replicas": 2, "seed": 3}} if placed else {}
    w = supported(**extra)
    assert compiled.why_not(_sim(w, policy, params)) is None
    assert compiled.why_not(Simulation(w, make_policy(policy, params, reference=True))) is None
    assert compiled.why_not(_sim(w, policy, params, heartbeat=0.5)) is None
    assert_same_runs(compiled, w, "supported", policy=policy, params=params)
    assert_same_runs(compiled, w, "supported, plain rule", reference=True, policy=policy, params=params)


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
