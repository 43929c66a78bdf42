"""The compiled ``fifo`` loop (``mropt.sim.compiled.fifo_engine``) runs a simulation as the Python engine does.

``fifo_engine.run_compiled(sim)`` runs a built :class:`~mropt.sim.engine.Simulation` of ``fifo`` in event
mode (Hadoop 1.0.3's ``JobQueueTaskScheduler``) by a numba loop and leaves it as ``sim.run()`` would. On
seeded random workloads of the shape it supports (1-30 nodes of 0-4 map and 0-4 reduce slots, speeds in
1 of 5, 1-60 jobs of a map stage and, in most, a reduce stage, each of one task group without demands;
whole and inexact durations, so batches form and split; tied submit times; priorities in 1 of 3; a
backlog in 1 of 4, so the load factor caps the trackers) the compiled run must give the Python engine's
event log, event count, clock, finished count, end order, stop and every column of the job, attempt and
utilisation tables, bit for bit, against both the accelerated policy (its offer runs) and its plain rule
(``reference=True``), with batches on and off; stopped at ``until`` or by a watch; at far times (attempts
of no time: instants that share a time); ``simulate``'s summary is the same; ``verify_simulation`` passes
on its tables. The draws must reach the cases they are drawn for. ``why_not`` names what the loop does
not run, and ``--engine compiled`` turns that into a one-line InputError.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from mropt.model.errors import InputError  # noqa: E402
from mropt.model.workload import WorkloadInstance  # noqa: E402
from mropt.sim.engine import Simulation  # noqa: E402
from mropt.sim.engines import run_simulation  # noqa: E402
from mropt.sim.policies.fifo import Fifo  # noqa: E402
from mropt.sim.policy import make_policy  # noqa: E402
from mropt.sim.run import simulate  # noqa: E402
from mropt.sim.speculation.table import make_speculation  # noqa: E402
from mropt.sim.verify import verify_simulation  # noqa: E402

from compiled_helpers import ODD, WHOLE, _counting_watch, differences, run_outcome  # noqa: E402
from sim_helpers import policy_params  # noqa: E402


@pytest.fixture(scope="module", name="fifo_engine")
def fifo_engine_fixture() -> Any:
    """``mropt.sim.compiled.fifo_engine``, its core imported (compiled or loaded from numba's cache)."""
    import mropt.sim.compiled.fifo_core  # noqa: F401
    from mropt.sim.compiled import fifo_engine

    return fifo_engine


def fifo_workload(rng: random.Random, nodes: int | None = None) -> WorkloadInstance:
    """A random workload of the loop's shape (module docstring)."""
    n_nodes = nodes if nodes is not None else rng.randint(1, 30)
    speeds = rng.random() < 0.2
    cluster: list[dict[str, Any]] = []
    for i in range(n_nodes):
        node: dict[str, Any] = {"id": f"n{i}", "map_slots": rng.randint(1, 4), "reduce_slots": rng.randint(0, 4)}
        if rng.random() < 0.1 and i:
            node["map_slots"] = 0  # (a node of reduce slots alone; node 0 keeps its maps)
        if speeds:
            node["speed"] = rng.choice([0.5, 1.0, 2.0])
        cluster.append(node)
    reduces = any(node["reduce_slots"] for node in cluster)
    durations = WHOLE + ODD if rng.random() < 0.4 else WHOLE
    priorities = rng.random() < 1 / 3
    backlog = rng.random() < 0.25
    jobs: list[dict[str, Any]] = []
    for i in range(rng.randint(1, 60)):
        stages = [{"type": "map", "tasks": [{"duration": rng.choice(durations), "count": rng.randint(1, 40)}]}]
        if reduces and rng.random() < 0.75:
            stages.append(
                {"type": "reduce", "tasks": [{"duration": rng.choice(durations), "count": rng.randint(1, 15)}]}
            )
        submit = float(rng.randint(0, 3)) if backlog else rng.randint(0, 120) / 4
        job: dict[str, Any] = {"id": f"j{i}", "submit_time": submit, "stages": stages}
        if priorities and rng.random() < 0.5:
            job["priority"] = rng.randint(-2, 2)
        jobs.append(job)
    return WorkloadInstance.from_dict(
        {"kind": "workload", "schema_version": 1, "cluster": {"nodes": cluster}, "jobs": jobs}
    )


def _sim(w: WorkloadInstance, reference: bool = False, **options: Any) -> Simulation:
    return Simulation(w, make_policy("fifo", {}, reference=reference), mode="event", **options)


def compiled_outcome(fifo_engine: Any, w: WorkloadInstance, **options: Any) -> dict[str, Any]:
    sim = _sim(w, **options)
    assert fifo_engine.why_not(sim) is None, fifo_engine.why_not(sim)
    rec = fifo_engine.run_compiled(sim)
    assert rec is sim.record
    return run_outcome(sim, rec)


def python_outcome(w: WorkloadInstance, reference: bool = False, **options: Any) -> dict[str, Any]:
    sim = _sim(w, reference, **options)
    return run_outcome(sim, sim.run())


def assert_same(fifo_engine: Any, w: WorkloadInstance, where: str, **options: Any) -> dict[str, Any]:
    """The compiled run is the accelerated Python run's and the plain rule's; the compiled outcome."""
    mine = compiled_outcome(fifo_engine, w, **options)
    for reference in (False, True):
        problems = differences(python_outcome(w, reference, **options), mine)
        assert not problems, f"{where} (reference={reference}, {options or 'defaults'}): " + "\n".join(problems[:6])
    return mine


# ---------------------------------------------------------------------------------------------
# 1. the compiled run is the Python engine's run


CHUNKS = 4
PER_CHUNK = 25  # 100 workloads in all


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_compiled_run_is_the_python_engines_run_on_random_workloads(fifo_engine: Any, chunk: int) -> None:
    # a failure names its workload: fifo_workload(random.Random(f"compiled-fifo-{chunk}")) drawn k + 1 times
    rng = random.Random(f"compiled-fifo-{chunk}")
    for k in range(PER_CHUNK):
        w = fifo_workload(rng)
        options: dict[str, Any] = {"batch": False} if k % 6 == 5 else {}  # attempts one by one, without batches
        assert_same(fifo_engine, w, f"chunk {chunk}, workload {k}", **options)


def test_the_random_workloads_reach_the_cases_they_are_drawn_for(fifo_engine: Any) -> None:
    # the draws above are not vacuous: batches of several tasks and over several nodes, jobs left waiting,
    # reduces run, a job of higher priority started before one submitted earlier, tied ends
    rng = random.Random("compiled-fifo-0")
    seen = dict.fromkeys(("batched", "spread", "waited", "reduces", "overtaken", "tied_ends"), 0)
    for _ in range(PER_CHUNK):
        w = fifo_workload(rng)
        sim = _sim(w)
        rec = fifo_engine.run_compiled(sim)
        jobs, tasks = rec.jobs_columns(), rec.tasks_columns()
        seen["batched"] += len(tasks["task"]) - len(rec.ended_attempts)  # (an entry a batch)
        starts = {}
        for job, start, node in zip(tasks["job_id"], tasks["start"].tolist(), tasks["node"], strict=True):
            starts.setdefault((job, start), set()).add(node)
        seen["spread"] += sum(len(nodes) > 1 for nodes in starts.values())
        seen["waited"] += int(np.sum(jobs["first_start"] > jobs["submit_time"]))
        seen["reduces"] += int(np.sum(np.asarray(tasks["stage_type"]) == "reduce"))
        ends = tasks["end"]
        seen["tied_ends"] += len(ends) - len(np.unique(ends))
        order = np.argsort(jobs["first_start"], kind="stable")
        prio, submit = jobs["priority"][order], jobs["submit_time"][order]
        seen["overtaken"] += int(np.sum((prio[1:] < prio[:-1]) & (submit[1:] < submit[:-1])))
    assert all(v > 0 for v in seen.values()), seen


def test_compiled_run_is_the_python_engines_run_on_backlogs_of_few_nodes(fifo_engine: Any) -> None:
    # many jobs on 1-3 nodes: long queues, the load factor below the slots at the end of each wave
    rng = random.Random("compiled-fifo-backlog")
    for k in range(20):
        w = fifo_workload(rng, nodes=rng.randint(1, 3))
        assert_same(fifo_engine, w, f"backlog workload {k}")


def test_compiled_run_is_the_python_engines_run_on_the_benchmark_model(fifo_engine: Any) -> None:
    # benchmarks/bench_sim.py section 1's shape: 2 + 2 slots a node, 50-150 maps and 5-30 reduces a job
    rng = np.random.default_rng(7)
    submit = np.cumsum(rng.exponential(20.0, 40))
    jobs = [
        {
            "id": f"j{i}",
            "submit_time": float(round(submit[i], 3)),
            "stages": [
                {
                    "type": "map",
                    "tasks": [{"duration": float(rng.integers(10, 41)), "count": int(rng.integers(50, 151))}],
                },
                {
                    "type": "reduce",
                    "tasks": [{"duration": float(rng.integers(20, 61)), "count": int(rng.integers(5, 31))}],
                },
            ],
        }
        for i in range(40)
    ]
    w = WorkloadInstance.from_dict(
        {
            "kind": "workload",
            "schema_version": 1,
            "cluster": {"nodes": [{"id": "n", "count": 40, "map_slots": 2, "reduce_slots": 2}]},
            "jobs": jobs,
        }
    )
    assert_same(fifo_engine, w, "the benchmark's model")
    assert_same(fifo_engine, w, "the benchmark's model, no utilisation", record_utilisation=False)


@pytest.mark.parametrize("base", [2.0**52, 1e16])
def test_compiled_run_is_the_python_engines_run_at_far_times(fifo_engine: Any, base: float) -> None:
    # submit times shifted to 2**52 (a time's ulp 1) or 1e16 (ulp 2): a duration below half an ulp ends
    # its attempt at its start (a new instant at the same time value: the utilisation rows' breaks)
    rng = random.Random(f"compiled-fifo-far-{base}")
    instant = 0
    for k in range(10):
        data = fifo_workload(rng).to_dict()
        for job in data["jobs"]:
            job["submit_time"] = job.get("submit_time", 0.0) + base
        w = WorkloadInstance.from_dict(data)
        tasks = assert_same(fifo_engine, w, f"far workload {k}")["tasks"]
        instant += int(np.sum(tasks["end"] == tasks["start"]))
    assert instant > 0  # attempts of no time were run


def test_compiled_run_stopped_at_until_is_the_python_engines_run(fifo_engine: Any) -> None:
    # ``until`` at an instant's own time, between instants, before the first and after the last
    rng = random.Random("compiled-fifo-until")
    stopped = 0
    for k in range(24):
        w = fifo_workload(rng)
        tasks = _sim(w).run().tasks_columns()
        times = sorted(set(tasks["start"].tolist()) | set(tasks["end"].tolist()))
        pick = k % 4
        if pick == 0:
            until = rng.choice(times)
        elif pick == 1:
            i = rng.randrange(len(times) - 1) if len(times) > 1 else 0
            until = (times[i] + times[min(i + 1, len(times) - 1)]) / 2
        else:
            until = times[0] - 1.0 if pick == 2 else times[-1] + 1.0
        got = assert_same(fifo_engine, w, f"until workload {k} (until {until!r})", until=until)
        stopped += got["stopped"] is not None
        sim = _sim(w, until=until)
        rec = fifo_engine.run_compiled(sim)
        verdict = verify_simulation(w, rec.jobs_columns(), rec.tasks_columns())  # a stopped run's tables
        assert verdict.ok, (k, until, verdict.problems)
    assert stopped > 0


def test_compiled_run_with_a_watch_is_the_python_engines_run(fifo_engine: Any) -> None:
    # the looks at the watch come at the same instants, and a stop at the k-th look leaves the same run
    rng = random.Random("compiled-fifo-watch")
    stopped = 0
    for k in range(20):
        w = fifo_workload(rng)
        looks, every = rng.choice([None, 1, 2, 5, 20]), rng.choice([1, 3, 17, 100])
        py = python_outcome(w, watch=_counting_watch(looks, every))
        cc = compiled_outcome(fifo_engine, w, watch=_counting_watch(looks, every))
        problems = differences(py, cc)
        assert not problems, f"watch workload {k} (looks {looks}, every {every}): " + "\n".join(problems[:6])
        stopped += cc["stopped"] is not None
    assert stopped > 0


def test_verify_passes_and_the_summary_is_the_python_engines(fifo_engine: Any) -> None:
    rng = random.Random("compiled-fifo-summary")
    for k in range(8):
        w = fifo_workload(rng)
        rec = fifo_engine.run_compiled(_sim(w))
        jobs, tasks = rec.jobs_columns(), rec.tasks_columns()
        verdict = verify_simulation(w, jobs, tasks)
        assert verdict.ok, (k, verdict.problems)
        assert len(tasks["task"]) == sum(g.count for job in w.jobs for st in job.stages for g in st.tasks)
        py = simulate(w, "fifo", mode="event", engine="python")
        cc = simulate(w, "fifo", mode="event", engine="compiled")
        assert cc.summary.pop("engine") == "compiled"
        for summary in (py.summary, cc.summary):
            summary.pop("wall_time")
        assert repr(cc.summary) == repr(py.summary), k


def _left(sim: Simulation) -> tuple[Any, ...]:
    """What a run leaves in the simulation besides its tables (``tests/sim/test_compiled_state.py``'s)."""
    jobs = [
        (j.status, j.reason, j.cur, j.remaining, j.runnable, j.running, j.first_start, j.map_end, j.finish,
         [(st.pending, st.finished, st.running, st.end_time, bytes(st.state)) for st in j.stages])
        for j in sim.jobs
    ]  # fmt: skip
    counts = (sim.busy, sim.runnable, sim.remaining, sim.free, list(sim.active), sim.jobs_finished)
    return (*counts, jobs, sim.next_attempt, sim.events, sim.now, sim.stopped)


def test_the_simulation_left_by_a_compiled_run_is_the_python_engines(fifo_engine: Any) -> None:
    # the cluster's counts and free slots, ``active`` in arrival order, each job's and stage's counts,
    # times and tasks' states, run to the end or stopped by ``until``
    rng = random.Random("compiled-fifo-state")
    for k in range(30):
        w = fifo_workload(rng)
        until = rng.choice([None, None, 2.0, 4.5, 9.0, 20.0])
        py = _sim(w, until=until)
        py.run()
        cc = _sim(w, until=until)
        fifo_engine.run_compiled(cc)
        assert _left(cc) == _left(py), f"workload {k}, until {until}"


# ---------------------------------------------------------------------------------------------
# 2. what the loop does not run


def _one(**extra: Any) -> dict[str, Any]:
    """A workload's dict: two nodes of 2 + 1 slots, two jobs of a map and a reduce stage."""
    stages = [
        {"type": "map", "tasks": [{"duration": 2.0, "count": 3}]},
        {"type": "reduce", "tasks": [{"duration": 1.0, "count": 1}]},
    ]
    return {
        "kind": "workload",
        "schema_version": 1,
        "cluster": {"nodes": [{"id": f"n{i}", "map_slots": 2, "reduce_slots": 1} for i in range(2)]},
        "jobs": [{"id": "a", "stages": stages}, {"id": "b", "submit_time": 1.0, "stages": stages}],
        **extra,
    }


def _edited(edit: Any) -> WorkloadInstance:
    data = _one()
    edit(data)
    return WorkloadInstance.from_dict(data)


def _set_group(**fields: Any) -> Any:
    def edit(data: dict[str, Any]) -> None:
        data["jobs"][0]["stages"][0]["tasks"][0].update(fields)
        for node in data["cluster"]["nodes"]:
            node["resources"] = {"cpu": 4, "mem": 4}

    return edit


class _FifoKind(Fifo):
    """A subclass of fifo: it may change any rule, so the loop does not run it."""


REFUSED: dict[str, tuple[Any, str]] = {
    "policy fair": (lambda: Simulation(WorkloadInstance.from_dict(_one()), make_policy("fair", {})), "policy fair"),
    "a subclass": (
        lambda: Simulation(WorkloadInstance.from_dict(_one()), _FifoKind(**policy_params("fifo")), mode="event"),
        "policy _fifokind",
    ),
    "heartbeat mode": (
        lambda: Simulation(WorkloadInstance.from_dict(_one()), make_policy("fifo", {})),
        "mode heartbeat",
    ),
    "demands": (lambda: _sim(_edited(_set_group(demand={"cpu": 1.0, "mem": 1.0}))), "a task with a demand"),
    "two task groups": (
        lambda: _sim(_edited(lambda d: d["jobs"][0]["stages"][0]["tasks"].append({"duration": 3.0, "count": 1}))),
        "several task groups",
    ),
    "a reduce stage alone": (
        lambda: _sim(_edited(lambda d: d["jobs"][0].update(stages=d["jobs"][0]["stages"][1:]))),
        "stages other than",
    ),
    "a placement": (lambda: _sim(WorkloadInstance.from_dict(_one(placement={"replicas": 2, "seed": 1}))), "replicas"),
    "listed replicas": (lambda: _sim(_edited(_set_group(replicas=["n0"]))), "replicas"),
    "speculation": (
        lambda: _sim(WorkloadInstance.from_dict(_one()), speculation=make_speculation("late")),
        "a speculation rule",
    ),
    "faults": (lambda: _sim(WorkloadInstance.from_dict(_one(faults=[{"node": "n1", "down": 1.0}]))), "node faults"),
    "stragglers": (
        lambda: _sim(WorkloadInstance.from_dict(_one(timing={"straggler_rate": 0.2}))),
        "straggler draws or a reduce slow-start",
    ),
    "slow-start": (
        lambda: _sim(WorkloadInstance.from_dict(_one(timing={"reduce_slowstart": 0.5}))),
        "straggler draws or a reduce slow-start",
    ),
    "live rows": (lambda: _sim(WorkloadInstance.from_dict(_one()), utilisation_rows="live"), "live utilisation rows"),
    "a trace": (
        lambda: Simulation(WorkloadInstance.from_dict(_one()), make_policy("fifo", {}, trace=[]), mode="event"),
        "a decision trace",
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_why_not_names_a_reason_and_compiled_refuses_it(fifo_engine: Any, case: str) -> None:
    make, why = REFUSED[case]
    sim = make()
    reason = fifo_engine.why_not(sim)
    assert isinstance(reason, str) and why in reason and "\n" not in reason, (case, reason)
    with pytest.raises(ValueError, match="cannot run"):
        fifo_engine.run_compiled(sim)
    assert sim.events == 0 and sim.now == 0.0 and not sim.record.job_end_order  # refused before running
    if case != "policy fair":  # ``--engine compiled``: a one-line InputError naming the reason
        with pytest.raises(InputError, match="engine 'compiled' cannot run this simulation") as caught:
            run_simulation(make(), "fifo", "compiled")
        assert why in str(caught.value) and "\n" not in str(caught.value)
        assert run_simulation(make(), "fifo", "auto")[1] == "python"  # (auto runs it by the Python engine)


def test_why_not_refuses_a_simulation_already_run_and_runs_a_supported_one(fifo_engine: Any) -> None:
    w = WorkloadInstance.from_dict(_one())
    sim = _sim(w)
    assert fifo_engine.why_not(sim) is None
    sim.run()
    assert fifo_engine.why_not(sim) == "a simulation already run"
    assert run_simulation(_sim(w), "fifo", "compiled")[1] == "compiled"
    assert_same(fifo_engine, w, "the supported workload")
