"""Speed of the cluster simulator, ratios measured in one run.

Run: ``.venv/bin/python benchmarks/bench_sim.py [--quick] [--section simpy amb swim alibaba]``
(SimPy comes with the ``bench`` extra: ``.venv/bin/pip install -e '.[bench]'``).

Prints:

1. **mropt against SimPy** on the same FIFO MapReduce model: jobs of map tasks then reduce
   tasks arriving over time, homogeneous slots, no locality, a freed slot going to the first
   job in submit order with a task of that type. The SimPy model is written plainly: one
   process per task requesting a ``simpy.PriorityResource`` of map (or reduce) slots with
   its job's arrival rank as priority. Both are run on the same jobs; the table gives task
   events (a start and an end per task) per second and their ratio, and checks that the two
   simulations give the same mean job completion time. mropt runs ``fifo`` in event mode,
   which assigns per freed slot like the SimPy model, with the engine's batches on (its
   default: tasks of one stage that start at the same instant with the same running time
   share one attempt object and one completion event, on one node or several; the tables
   are those of unbatched runs, see ``mropt/sim/engine.py``), so a wave of maps is one
   event; the SimPy model has one process, one request and one timeout per task. Each side
   is timed as the best of three runs in the same process, the sides interleaved, in
   CPU seconds of the process (``time.process_time``: the machine's other load otherwise
   dominates the ratio, and disturbs wall time more, a longer run being preempted more often),
   each run after ``gc.collect()`` (so that a full collection made due by another side's
   garbage, 45 ms on the 1,000-job row, falls in no side's timing).
   mropt is timed twice: by its Python engine (``Simulation(...).run()``) and by the compiled
   ``fifo`` loop (``run_simulation(sim, "fifo", "compiled")``, :mod:`mropt.sim.compiled.fifo_core`),
   each including the simulation's construction; the compiled side is called once on a small
   workload before any timing, so numba's compile (or its cache's load) is outside the timings.
   Both mropt columns are checked for the same mean job completion time.
   ``--section phases`` (not run by default) splits the Python engine's run into its phases at each size
   (construction, the policy's start, the loop, the recorder's finish; the run again without
   its attempt rows; the jobs table, which the timing leaves out) beside the heapq simulator.
2. **One AMB-paper static run** (``mropt generate workload --preset amb-static``: 30 jobs on
   40 nodes of 2 + 2 slots) under ``amb``, ``dc``, ``minedf-wc``, ``fifo``: wall time each.
3. **The SWIM Facebook 2009 day** (``docs/papers.md``, the traces) imported as a workload on 600
   nodes with HDFS-placed replicas, under ``fair`` with delay scheduling and under ``capacity``
   (heartbeat mode), by the Python engine and by the compiled loop (``run_simulation(sim, policy,
   "compiled")``, :mod:`mropt.sim.compiled.fair_core` and ``capacity_core``, after a warm-up run on a
   small workload, so numba's compile or its cache's load is untimed), each in a child process that
   does only this run: wall and CPU
   (``time.process_time``) seconds of the construction and run, events, attempts, peak memory
   (ru_maxrss) and the event log's hash, and whether the two hashes and event counts are equal.
4. **The Alibaba 2017 day under DRF, DDRF and Fair** (the trace's
   ``batch_task.csv`` imported by ``mropt import-alibaba
   --workload``'s defaults: 1,300 machines of 64 CPUs, each row's instances one task group,
   seeded HDFS-default synthetic replica placement, R = 3, since the trace has none) under
   ``drf``, ``ddrf`` (E1 = 1, E2 = 2) and ``fair`` (the slot-counting Fair Scheduler: the
   same machines with ``--slots 64``, one map slot per CPU, a task holding a slot and its
   requests): import and simulate wall time, events, peak memory (ru_maxrss of a child
   process that does only this run), CPU and memory utilisation (demand-seconds of the
   attempts over capacity times the makespan), mean and 95th-percentile job completion time
   (finish - submit), the node-, rack- and off-rack-local fractions of tasks, and the
   dominant shares over time (:mod:`mropt.sim.shares`) every 2 h; ``--plot PNG`` draws them.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import heapq_fifo  # noqa: E402  (beside this file)

from mropt.model.workload import WorkloadInstance  # noqa: E402
from mropt.sim.engine import Simulation  # noqa: E402
from mropt.sim.engines import run_simulation  # noqa: E402
from mropt.sim.policy import make_policy  # noqa: E402

SHARED = Path(os.environ.get("MROPT_SHARED", ROOT.parent / "shared"))
ALIBABA = SHARED / "traces" / "alibaba-2017" / "batch_task.csv"
SWIM_DAY = SHARED / "traces" / "swim" / "FB-2009_samples_24_times_1hr_0.tsv"


def fifo_jobs(n_jobs: int, seed: int) -> list[tuple[float, int, float, int, float]]:
    """(submit, maps, map time, reduces, reduce time) per job: 50-150 maps, 5-30 reduces."""
    rng = np.random.default_rng(seed)
    submit = np.cumsum(rng.exponential(20.0, n_jobs))
    return [
        (
            float(round(submit[i], 3)),
            int(rng.integers(50, 151)),
            float(rng.integers(10, 41)),
            int(rng.integers(5, 31)),
            float(rng.integers(20, 61)),
        )
        for i in range(n_jobs)
    ]


def as_workload(jobs: list[tuple[float, int, float, int, float]], nodes: int) -> WorkloadInstance:
    return WorkloadInstance.from_dict(
        {
            "kind": "workload",
            "schema_version": 1,
            "cluster": {"nodes": [{"id": "n", "count": nodes, "map_slots": 2, "reduce_slots": 2}]},
            "jobs": [
                {
                    "id": f"j{i}",
                    "submit_time": s,
                    "stages": [
                        {"type": "map", "tasks": [{"duration": mt, "count": m}]},
                        {"type": "reduce", "tasks": [{"duration": rt, "count": r}]},
                    ],
                }
                for i, (s, m, mt, r, rt) in enumerate(jobs)
            ],
        }
    )


def run_simpy(jobs: list[tuple[float, int, float, int, float]], nodes: int) -> tuple[float, float]:
    """The same FIFO model in SimPy: (CPU seconds, mean job completion time)."""
    import simpy

    env = simpy.Environment()
    map_slots = simpy.PriorityResource(env, capacity=2 * nodes)
    reduce_slots = simpy.PriorityResource(env, capacity=2 * nodes)
    finish: list[float] = [0.0] * len(jobs)

    def task(resource: simpy.PriorityResource, rank: int, duration: float):  # type: ignore[no-untyped-def]
        with resource.request(priority=rank) as slot:
            yield slot
            yield env.timeout(duration)

    def job(rank: int, submit: float, maps: int, map_time: float, reduces: int, reduce_time: float):  # type: ignore[no-untyped-def]
        yield env.timeout(submit)
        yield env.all_of([env.process(task(map_slots, rank, map_time)) for _ in range(maps)])
        yield env.all_of([env.process(task(reduce_slots, rank, reduce_time)) for _ in range(reduces)])
        finish[rank] = env.now

    for rank, spec in enumerate(jobs):
        env.process(job(rank, *spec))
    start = time.process_time()
    env.run()
    wall = time.process_time() - start
    return wall, float(np.mean([f - j[0] for f, j in zip(finish, jobs)]))


def run_mropt(workload: WorkloadInstance) -> tuple[float, float]:
    start = time.process_time()
    rec = Simulation(workload, make_policy("fifo"), mode="event", record_utilisation=False).run()
    wall = time.process_time() - start
    cols = rec.jobs_columns()
    return wall, float(np.mean(cols["finish"] - cols["submit_time"]))


def run_mropt_compiled(workload: WorkloadInstance) -> tuple[float, float]:
    """:func:`run_mropt` by the compiled ``fifo`` loop (``mropt.sim.engines.run_simulation``, engine ``compiled``)."""
    start = time.process_time()
    sim = Simulation(workload, make_policy("fifo"), mode="event", record_utilisation=False)
    rec, engine = run_simulation(sim, "fifo", "compiled")
    wall = time.process_time() - start
    assert engine == "compiled"
    cols = rec.jobs_columns()
    return wall, float(np.mean(cols["finish"] - cols["submit_time"]))


def run_heapq(jobs: list[tuple[float, int, float, int, float]], nodes: int) -> tuple[float, float]:
    """The same FIFO model in a plain heapq simulator (``heapq_fifo.py``): (CPU seconds, mean JCT)."""
    start = time.process_time()
    finish = heapq_fifo.simulate(jobs, 2 * nodes)
    wall = time.process_time() - start
    return wall, float(np.mean([f - j[0] for f, j in zip(finish, jobs)]))


def section_simpy(quick: bool) -> None:
    print("## 1. mropt against SimPy and a plain heapq simulator: the same FIFO MapReduce model\n")
    print(
        "Task events (a start and an end per task) per CPU second (best of 3); ratios are mropt's speed over the other's.\n"
    )
    print(
        "| jobs | nodes | tasks | SimPy s | heapq s | mropt python engine s | mropt compiled s | SimPy ev/s "
        "| heapq ev/s | mropt python engine ev/s | mropt compiled ev/s | python/SimPy | python/heapq "
        "| compiled/heapq | same mean JCT |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|")
    run_mropt_compiled(as_workload(fifo_jobs(5, seed=1), 5))  # (numba's compile, or its cache's load, untimed)
    sizes = [(100, 50)] if quick else [(100, 50), (400, 100), (1000, 200)]
    for n_jobs, nodes in sizes:
        jobs = fifo_jobs(n_jobs, seed=7)
        tasks = sum(m + r for _, m, _, r, _ in jobs)
        workload = as_workload(jobs, nodes)
        simpy_runs, heapq_runs, mropt_runs, compiled_runs = [], [], [], []
        for _ in range(3):  # interleaved: a burst of load slows all four alike
            # each run starts from a collected heap: a full collection of the process's objects (45 ms
            # here) that another side's garbage made due lands in no one's timing (benchmarks/RESULTS.md)
            gc.collect()
            simpy_runs.append(run_simpy(jobs, nodes))
            gc.collect()
            heapq_runs.append(run_heapq(jobs, nodes))
            gc.collect()
            mropt_runs.append(run_mropt(workload))
            gc.collect()
            compiled_runs.append(run_mropt_compiled(workload))
        (simpy_wall, simpy_jct), (heapq_wall, heapq_jct) = min(simpy_runs), min(heapq_runs)
        (mropt_wall, mropt_jct), (compiled_wall, compiled_jct) = min(mropt_runs), min(compiled_runs)
        events = 2 * tasks
        jcts = (simpy_jct, heapq_jct, mropt_jct, compiled_jct)
        same = max(jcts) - min(jcts) <= 1e-6 * simpy_jct
        print(
            f"| {n_jobs} | {nodes} | {tasks:,} | {simpy_wall:.2f} | {heapq_wall:.4f} | {mropt_wall:.4f} "
            f"| {compiled_wall:.4f} | {events / simpy_wall:,.0f} | {events / heapq_wall:,.0f} "
            f"| {events / mropt_wall:,.0f} | {events / compiled_wall:,.0f} "
            f"| {simpy_wall / mropt_wall:.1f}x | {heapq_wall / mropt_wall:.2f}x | {heapq_wall / compiled_wall:.2f}x "
            f"| {'yes' if same else 'no (SimPy, heapq, python, compiled: ' + ', '.join(f'{v:.2f}' for v in jcts) + ')'} |"
        )
    print()


def section_phases(quick: bool) -> None:
    """Section 1's mropt run in phases (issue 32: where the small rows' time goes), CPU ms, best of 5.

    Construction is ``Simulation(...)`` with ``make_policy`` (the jobs' state, the capacity, the
    offers, the recorder); then ``run``: the policy's ``start``, the loop (the arrivals pushed and
    every instant), the recorder's ``finish`` (attempts still running: none here). Section 1 times
    construction and run together. Outside that timing: the jobs table its mean JCT is read from.
    "Without attempt rows" is the run with ``Recorder.ended`` made a no-op on that run's recorder
    (a measurement only: the attempts table and event log are then empty, no decision changes).
    """
    print("## 1b. Section 1's mropt run in phases (CPU ms, best of 5)\n")
    print(
        "| jobs | tasks | construction | policy start | loop | finish | construction + run (section 1's) | "
        "run without attempt rows | jobs table (untimed) | heapq |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n_jobs, nodes in [(100, 50)] if quick else [(100, 50), (400, 100), (1000, 200)]:
        jobs = fifo_jobs(n_jobs, seed=7)
        workload = as_workload(jobs, nodes)
        best: dict[str, float] = {}
        for _ in range(5):
            times: dict[str, float] = {}
            gc.collect()  # (as section 1)

            def timed(name: str, call: Any) -> Any:
                def wrapper(*args: Any) -> None:
                    start = time.process_time()
                    call(*args)
                    times[name] = time.process_time() - start

                return wrapper

            start = time.process_time()
            sim = Simulation(workload, make_policy("fifo"), mode="event", record_utilisation=False)
            times["construction"] = time.process_time() - start
            sim.policy.start = timed("policy start", sim.policy.start)  # type: ignore[method-assign]
            sim.record.finish = timed("finish", sim.record.finish)  # type: ignore[method-assign]
            start = time.process_time()
            rec = sim.run()
            run = time.process_time() - start
            times["loop"] = run - times["policy start"] - times["finish"]
            times["total"] = times["construction"] + run
            start = time.process_time()
            rec.jobs_columns()
            times["jobs table"] = time.process_time() - start
            gc.collect()
            bare = Simulation(workload, make_policy("fifo"), mode="event", record_utilisation=False)
            bare.record.ended = lambda *args: None  # type: ignore[method-assign]
            start = time.process_time()
            bare.run()
            times["no rows"] = time.process_time() - start
            gc.collect()
            start = time.process_time()
            heapq_fifo.simulate(jobs, 2 * nodes)
            times["heapq"] = time.process_time() - start
            best = {k: min(v, best.get(k, v)) for k, v in times.items()}
        tasks = sum(m + r for _, m, _, r, _ in jobs)
        ms = {k: f"{1000 * v:.2f}" for k, v in best.items()}
        print(
            f"| {n_jobs} | {tasks:,} | {ms['construction']} | {ms['policy start']} | {ms['loop']} | {ms['finish']} "
            f"| {ms['total']} | {ms['no rows']} | {ms['jobs table']} | {ms['heapq']} |"
        )
    print()


def section_amb(quick: bool) -> None:
    from mropt.instances.workload_gen import generate_workload

    print("## 2. One AMB-paper static run (30 jobs, 40 nodes x 2 + 2 slots)\n")
    print("| policy | seed | wall s | events | accepted | on time | benefit |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for policy in ("amb", "dc", "minedf-wc", "fifo"):
        for seed in (1,) if quick else (1, 2, 3):
            workload = generate_workload("amb-static", seed=seed)
            start = time.perf_counter()
            sim = Simulation(workload, make_policy(policy))
            rec = sim.run()
            wall = time.perf_counter() - start
            cols = rec.jobs_columns()
            on_time = sum(1 for v in cols["on_time"] if v)
            print(
                f"| {policy} | {seed} | {wall:.3f} | {sim.events:,} | {int(cols['accepted'].sum())} | {on_time} | "
                f"{cols['benefit'].sum():.0f} |"
            )
    print()


#: section 3's policies (each run by both engines)
SWIM_POLICIES = ("fair", "capacity")


def _swim_warm_up() -> None:
    """The compiled ``fair`` and ``capacity`` loops run once on a small workload of the SWIM day's shape (map
    and reduce slots, no resources, map and reduce stages, a placement): numba's compile, or its cache's
    load, untimed."""
    nodes = [{"id": f"n{i}", "rack": f"r{i % 2}", "map_slots": 2, "reduce_slots": 2} for i in range(4)]
    stages = [
        {"type": "map", "tasks": [{"duration": 3.0, "count": 6}]},
        {"type": "reduce", "tasks": [{"duration": 2.0, "count": 2}]},
    ]
    jobs = [{"id": f"j{i}", "submit_time": float(i), "stages": stages} for i in range(3)]
    data = {"kind": "workload", "schema_version": 1, "cluster": {"nodes": nodes}, "jobs": jobs}
    small = WorkloadInstance.from_dict({**data, "placement": {"replicas": 2, "seed": 0}})
    for policy in SWIM_POLICIES:
        run_simulation(Simulation(small, make_policy(policy), mode="heartbeat"), policy, "compiled")


def swim_child(engine: str, policy: str) -> None:
    """Runs in a child process: import the SWIM day, simulate it under ``policy`` by ``engine`` (``python``:
    its ``run``; ``compiled``: ``run_simulation(sim, policy, "compiled")``, after a warm-up), construction
    included, print one line (wall and CPU seconds, the event log's hash)."""
    from mropt.importers.swim_workload import import_swim_workload

    if engine == "compiled":
        _swim_warm_up()
    start = time.perf_counter()
    workload = import_swim_workload(SWIM_DAY)
    loaded = time.perf_counter() - start
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    sim = Simulation(workload, make_policy(policy), mode="heartbeat")
    if engine == "compiled":
        rec, ran = run_simulation(sim, policy, "compiled")
        assert ran == "compiled"
    else:
        rec = sim.run()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB on Linux
    print(
        f"{len(workload.jobs)} {workload.n_tasks} {loaded:.2f} {wall:.2f} {cpu:.2f} {sim.events} "
        f"{len(rec.a_job)} {peak:.0f} {rec.event_log_hash()}"
    )


def section_swim() -> None:
    print("## 3. The SWIM Facebook 2009 day on 600 nodes under fair (with delay scheduling) and capacity\n")
    if not SWIM_DAY.exists():
        print(f"skipped: {SWIM_DAY} not found\n")
        return
    rows = {}
    for policy in SWIM_POLICIES:
        for engine in ("python", "compiled"):
            rows[policy, engine] = subprocess.run(
                [sys.executable, __file__, "--swim-child", engine, "--swim-policy", policy],
                capture_output=True,
                text=True,
                check=True,
                cwd=ROOT,
            ).stdout.split()
    print(
        "| policy | engine | jobs | tasks | import s | simulate s (wall) | simulate s (CPU) | events | attempts "
        "| peak memory MiB | event log hash |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for (policy, engine), (jobs, tasks, loaded, wall, cpu, events, attempts, peak, digest) in rows.items():
        print(
            f"| {policy} | {engine} | {int(jobs):,} | {int(tasks):,} | {loaded} | {wall} | {cpu} | {int(events):,} "
            f"| {int(attempts):,} | {peak} | `{digest[:16]}...` |"
        )
    for policy in SWIM_POLICIES:
        py, cc = rows[policy, "python"], rows[policy, "compiled"]
        same = py[-1] == cc[-1] and py[5] == cc[5]
        print(f"\n{policy}: the same event log hash and events by both engines: {'yes' if same else 'NO'}")
    print()


#: the Fair Scheduler counts slots: the Alibaba machines get one map slot per CPU for it
ALIBABA_FAIR_SLOTS = 64
#: sampling step of the dominant shares (s) and the rows of the printed series (every 2 h)
SHARE_STEP, SHARE_ROW = 600.0, 7200.0


def alibaba_child(policy: str, plot_data: str | None, duration: float = 0.0) -> None:
    """Runs in a child process: import the Alibaba day, simulate it under ``policy``, print one JSON line."""
    import json

    from mropt.importers.alibaba_workload import import_alibaba_workload
    from mropt.sim.shares import cluster_totals, dominant_shares

    start = time.perf_counter()
    workload = import_alibaba_workload(ALIBABA, duration=duration, slots=ALIBABA_FAIR_SLOTS if policy == "fair" else 0)
    loaded = time.perf_counter() - start
    params = {"e1": 1, "e2": 2} if policy == "ddrf" else {}
    start = time.perf_counter()
    sim = Simulation(workload, make_policy(policy, params), record_utilisation=False)
    sim.run()
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB on Linux
    spans = sim.record.spans()
    count, duration = spans["count"], spans["end"] - spans["start"]
    makespan = sim.now
    caps = cluster_totals(workload, sim.resources)
    used = (spans["demand"] * (count * duration)[:, None]).sum(axis=0)
    util = {name: float(used[r] / (caps[r] * makespan)) for r, name in enumerate(sim.resources)}
    levels = [int(count[spans["level"] == level].sum()) for level in (0, 1, 2)]
    jct = np.array([j.finish - j.submit for j in sim.jobs if j.finish is not None])
    shares = dominant_shares(sim, SHARE_STEP)
    if plot_data:
        np.savez(plot_data, **shares)
    rows = [i for i, t in enumerate(shares["time"]) if t % SHARE_ROW == 0]
    out = {
        "jobs": len(workload.jobs),
        "tasks": workload.n_tasks,
        "import_s": round(loaded, 1),
        "simulate_s": round(wall, 1),
        "events": sim.events,
        "peak_mib": round(peak),
        "cpu_util": round(util.get("cpu", 0.0), 3),
        "mem_util": round(util.get("mem", 0.0), 3),
        "jct_mean": round(float(jct.mean())) if len(jct) else None,
        "jct_p95": round(float(np.percentile(jct, 95))) if len(jct) else None,
        "unfinished": len(sim.jobs) - len(jct),
        "makespan": round(makespan),
        "locality": [round(x / max(sum(levels), 1), 3) for x in levels],
        "shares": [
            [int(shares["time"][i]), int(shares["users"][i])]
            + [round(float(shares[k][i]), 4) for k in ("max_share", "mean_share", "jain", "use_cpu", "use_mem")]
            for i in rows
        ],
    }
    print(json.dumps(out))


def section_alibaba(policies: list[str], plot: str | None, duration: float = 0.0) -> None:
    import json
    import tempfile

    window = "day" if not duration else f"first {duration / 3600:g} h"
    print(
        f"## 4. The Alibaba 2017 {window} (1,300 machines of 64 CPUs, HDFS-placed replicas) under DRF, DDRF and Fair\n"
    )
    if not ALIBABA.exists():
        print(f"skipped: {ALIBABA} not found\n")
        return
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for policy in policies:
            data = str(Path(tmp) / f"{policy}.npz")
            line = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--alibaba-child",
                    policy,
                    "--plot-data",
                    data,
                    "--alibaba-duration",
                    str(duration),
                ],
                capture_output=True,
                text=True,
                check=True,
                cwd=ROOT,
            ).stdout.splitlines()[-1]
            results[policy] = json.loads(line)
            results[policy]["_data"] = dict(np.load(data))
            # each child's result as it lands (stderr), so a run stopped later keeps the finished rows
            print(f"{policy}: {line}", file=sys.stderr, flush=True)
    print(
        "| policy | jobs | tasks | import s | simulate s | events | peak memory MiB | CPU util | mem util "
        "| mean JCT s | p95 JCT s | makespan s | node-local | rack-local | off-rack |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for policy, r in results.items():
        node, rack, off = r["locality"]
        print(
            f"| {policy} | {r['jobs']:,} | {r['tasks']:,} | {r['import_s']} | {r['simulate_s']} | {r['events']:,} "
            f"| {r['peak_mib']} | {r['cpu_util']} | {r['mem_util']} | {r['jct_mean']} | {r['jct_p95']} "
            f"| {r['makespan']} | {node} | {rack} | {off} |"
        )
    print(
        "\nDominant shares over time (mropt.sim.shares: users holding resources, their largest and mean "
        "dominant share, Jain's index of those shares, CPU and memory in use), every 2 h of simulated time:\n"
    )
    print("| policy | t (h) | users | max share | mean share | Jain | CPU in use | memory in use |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for policy, r in results.items():
        for t, users, mx, mean, jain, cpu, mem in r["shares"]:
            print(f"| {policy} | {t / 3600:g} | {users:,} | {mx} | {mean} | {jain} | {cpu} | {mem} |")
    print()
    if plot:
        _plot_shares(results, plot, window)
        print(f"figure: {plot}\n")


def _plot_shares(results: dict[str, dict], path: str, window: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(9, 8), sharex=True)
    for policy, r in results.items():
        d = r["_data"]
        hours = d["time"] / 3600
        axes[0].plot(hours, d["use_mem"], label=f"{policy} memory")
        axes[0].plot(hours, d["use_cpu"], linestyle="--", label=f"{policy} CPU")
        axes[1].plot(hours, d["max_share"], label=policy)
        axes[2].plot(hours, d["jain"], label=policy)
    axes[0].set_ylabel("fraction in use")
    axes[1].set_ylabel("largest dominant share")
    axes[2].set_ylabel("Jain's index of\ndominant shares")
    axes[2].set_xlabel("simulated time (h)")
    for ax in axes:
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.suptitle(f"Alibaba 2017 {window} on 1,300 machines: DRF, DDRF (E1=1, E2=2), Fair (64 slots a machine)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--section",
        nargs="*",
        default=["simpy", "amb", "swim", "alibaba"],
        choices=["simpy", "phases", "amb", "swim", "alibaba"],
        help="sections to run (default: all but phases, section 1's mropt run split into phases)",
    )
    parser.add_argument(
        "--alibaba-policies",
        nargs="*",
        default=["drf", "ddrf", "fair"],
        choices=["drf", "ddrf", "fair"],
        help="policies of section 4",
    )
    parser.add_argument("--plot", help="section 4: draw utilisation and dominant shares over time to this PNG")
    parser.add_argument("--plot-data", help=argparse.SUPPRESS)
    parser.add_argument(
        "--alibaba-duration",
        type=float,
        default=0.0,
        help="section 4: replay the first SECONDS of the file's jobs (default 0: the whole day)",
    )
    parser.add_argument("--swim-child", choices=["python", "compiled"], help=argparse.SUPPRESS)
    parser.add_argument("--swim-policy", choices=SWIM_POLICIES, default="fair", help=argparse.SUPPRESS)
    parser.add_argument("--alibaba-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    # killed with SIGTERM, exit through Python (SystemExit): ``subprocess.run`` then kills the
    # running child instead of leaving it to run on alone
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    if args.swim_child:
        swim_child(args.swim_child, args.swim_policy)
        return
    if args.alibaba_child:
        alibaba_child(args.alibaba_child, args.plot_data, args.alibaba_duration)
        return
    print(f"# bench_sim on {platform.node()} ({os.cpu_count()} cores, Python {platform.python_version()})\n")
    if "simpy" in args.section:
        section_simpy(args.quick)
    if "phases" in args.section:
        section_phases(args.quick)
    if "amb" in args.section:
        section_amb(args.quick)
    if "swim" in args.section:
        section_swim()
    if "alibaba" in args.section:
        section_alibaba(args.alibaba_policies, args.plot, args.alibaba_duration)


if __name__ == "__main__":
    main()
