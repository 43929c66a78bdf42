"""DDRF's locality on the simulated cluster against the paper's analysis, and its speed.

What it measures (DDRF paper, ``docs/papers.md``; every simulated run is checked by the
independent :func:`mropt.sim.verify.verify_simulation`, asserted on every run, the largest
included):

1. **Locality against the analysis** (sec. 3.2 and 4.2, Figs 1-4). ``ddrf`` preset workloads
   (N = 20 map tasks per job, R = 3 replicas with HDFS's default placement, seeded; racks of
   G = 20 nodes; load 0.95; 10 users) on M in {100, 200, 500, 1000} nodes, ``jobs = max(200,
   waves x M / 5)`` (M / 5 jobs fill the cluster's 4 M places once, so ``--waves`` is the
   number of times the cluster is filled). Per M: ``drf``; ``ddrf`` on a reduced grid of
   (E1, E2) taken from Figs 1-2 (E1 in 1..10 as in Fig 1, E2 up to 200 as its x axis; four
   points instead of Fig 1's 6 x 20, for time); ``delay`` with D in {10, 50, 200} from Fig 2's
   axis (its node-only curve is delay scheduling); and ``ddrf`` with E1 = E2 = D for D = 10,
   50: delay scheduling with the count reset at every launch, as the paper's model assumes
   (Zaharia's ``delay`` resets it only at a node-local launch). Columns:
   the node-, rack- and non-local fractions of the map tasks launched on the cluster
   ("sim"), beside the exact probabilities under the paper's model
   (:func:`~mropt.fairness.locality.ddrf_locality_exact`, G = 20, theta = 0.05; for
   ``delay``, :func:`~mropt.fairness.locality.delay_locality_exact`) and the paper's bound as
   printed (``ddrf_locality_bound`` L(E) = L(E1) + L(E2), ``delay_locality_bound``; can
   exceed 1 or be negative), and sim minus model in points. **Matching the rule**: the
   policy counts one skip per declined offer and launches at any level once skips >= E2,
   i.e. at the (E2 + 1)-th offer, while the model's task launches at its E2-th offer
   whatever it is; the cluster's (E1, E2) is the model's (E1, E2 + 1), which is the exact
   column (``drf`` = the model's (0, 1): the first offer is taken, node-local if it can be;
   ``delay`` D: the cluster takes the (D + 1)-th offer at its best level, so beside the
   paper's L(D) there is the model's (D, D + 1) node fraction). The gap sim - model is
   where the model departs from the cluster: tasks of one job are launched back to back on
   one freed node (the model draws every offer independently), other jobs compete for the
   same free places, and HDFS puts a task's three replicas on two racks (the model's rack
   fraction assumes three).
2. **The cost of waiting**, from the same runs: mean job response time (finish - submit),
   makespan, utilisation (busy place-seconds over the 4 M places x makespan, from the tasks
   table; a node can hold 5 tasks of mixed kinds, so it can pass 100%) and idle-while-waiting
   (place-seconds free while some task waits, over capacity x makespan: capacity declined by
   waiting jobs or fragmented), beside plain ``drf``. The preset runs a rack-local task 1.5
   times and an off-rack one 3 times slower (Mumak's factors), so waiting also buys shorter
   tasks; for the two smallest M the grid is run again with both factors 1, where waiting
   only costs.
3. **Decision cost per launch against the number of users** n = 10 .. 100,000: n users, each
   one job of ``--tasks-per-user`` (2) tasks of <1 cpu, 1 mem> and 10 s, no replicas,
   Poisson-free uniform arrivals at load 0.9 on 100 nodes of <4 cpu, 8 mem> (400 places);
   the time spent in the ``drf`` policy's hooks (assign, on_arrival, on_attempt_end,
   on_stage_end, on_job_end; ``time.perf_counter`` around each call) per launch, and the
   whole simulation's wall time per launch (small n: the run repeated until 20,000 launches
   are timed; the whole-sim time then includes each run's set-up), each as a ratio to the smallest n, beside
   log2(n) / log2(10) and n / 10 (as benchmarks/bench_drf.py does for progressive filling).

Run (from the repository root)::

    PYTHONPATH=. python benchmarks/bench_sim_ddrf.py            # default: 3.5 minutes on 2 cores (measured), 0.7 GB
    PYTHONPATH=. python benchmarks/bench_sim_ddrf.py --quick    # smoke run, under a minute (17 s measured)
    PYTHONPATH=. python benchmarks/bench_sim_ddrf.py --nodes 100 1000 --waves 4 --sizes 10 1000

``--quick``: M in {100, 200}, 4 waves, a smaller grid, users up to 10,000. One seed per
point (``--seed``); the workloads are the ``ddrf`` preset's, byte for byte reproducible.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import math
import platform
import sys
import time
from typing import Any

import numpy as np

import mropt.sim.policies  # noqa: F401  (registers the policies)
from mropt.fairness.locality import (
    ddrf_locality_bound,
    ddrf_locality_exact,
    delay_locality_bound,
    delay_locality_exact,
)
from mropt.instances.workload_gen import generate_workload
from mropt.model.workload import NodeSpec, Stage, TaskGroup, WorkloadInstance, WorkloadJob
from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy
from mropt.sim.run import simulate
from mropt.sim.verify import verify_simulation

N, R, G, THETA, PLACES = 20, 3, 20, 0.05, 4
MIN_LAUNCHES = 20_000  # part 3 repeats a small run until this many launches are timed
#: (policy, params) grid of part 1; E1/E2 from Figs 1-2 (reduced), D from Fig 2's axis
GRID = (
    ("drf", {}),
    ("ddrf", {"e1": 1, "e2": 10}),
    ("ddrf", {"e1": 2, "e2": 50}),
    ("ddrf", {"e1": 6, "e2": 100}),
    ("ddrf", {"e1": 10, "e2": 200}),
    ("ddrf", {"e1": 10, "e2": 10}),  # delay D = 10 with a reset at every launch
    ("ddrf", {"e1": 50, "e2": 50}),
    ("delay", {"d": 10}),
    ("delay", {"d": 50}),
    ("delay", {"d": 200}),
)
QUICK_GRID = (GRID[0], GRID[1], GRID[3], GRID[5], GRID[7], GRID[8])


def render(headers: list[str], rows: list[list[Any]]) -> str:
    """A markdown pipe table; numbers right-aligned."""
    num = [all(isinstance(r[k], (int, float)) for r in rows) for k in range(len(headers))]
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---:" if n else "---" for n in num) + "|"]
    out += ["| " + " | ".join(f"{v:,}" if isinstance(v, int) else str(v) for v in r) + " |" for r in rows]
    return "\n".join(out)


def pct(x: float) -> float:
    return round(100.0 * x, 1)


def waiting_cost(workload: WorkloadInstance, jobs: Any, tasks: Any, capacity: int) -> dict[str, float]:
    """Response time, makespan, utilisation and idle-while-waiting from the run's tables."""
    submit = dict(zip(jobs["job_id"], jobs["submit_time"]))
    finish = np.asarray(jobs["finish"], dtype=float)
    resp = finish - np.asarray(jobs["submit_time"], dtype=float)
    start = np.asarray(tasks["start"], dtype=float)
    end = np.asarray(tasks["end"], dtype=float)
    sub = np.array([submit[j] for j in tasks["job_id"]], dtype=float)
    makespan = float(finish.max())
    busy = float((end - start).sum())
    # sweep: w(t) tasks waiting (submitted, not started), b(t) tasks running
    times = np.concatenate([sub, start, start, end])
    dw = np.concatenate([np.ones_like(sub), -np.ones_like(start), np.zeros_like(start), np.zeros_like(end)])
    db = np.concatenate([np.zeros_like(sub), np.zeros_like(start), np.ones_like(start), -np.ones_like(end)])
    order = np.argsort(times, kind="stable")
    t, w, b = times[order], np.cumsum(dw[order]), np.cumsum(db[order])
    seg = np.diff(t)
    idle = np.maximum(0.0, capacity - b[:-1])
    idle_waiting = float((seg * idle * (w[:-1] > 0)).sum())
    return {
        "response": float(resp.mean()),
        "makespan": makespan,
        "util": busy / (capacity * makespan),
        "idle_waiting": idle_waiting / (capacity * makespan),
    }


def run_point(
    M: int, waves: int, seed: int, policy: str, params: dict[str, int], penalty: bool = True
) -> dict[str, Any]:
    jobs_n = max(200, waves * M // 5)
    w = generate_workload("ddrf", seed, nodes=M, jobs=jobs_n)
    if not penalty:  # locality costs nothing: what waiting alone costs
        w = dataclasses.replace(w, timing=dataclasses.replace(w.timing, rack_factor=1.0, remote_factor=1.0))
    run = simulate(w, policy, params, seed=seed)
    jobs, tasks = run.recorder.jobs_columns(), run.recorder.tasks_columns()
    verdict = verify_simulation(w, jobs, tasks)
    assert verdict.ok, verdict.problems
    loc = np.asarray(tasks["locality"])
    n = len(loc)
    frac = {k: float((loc == k).sum()) / n for k in ("node", "rack", "any")}
    return {
        "M": M,
        "jobs": jobs_n,
        "factors": "1.5 / 3" if penalty else "1 / 1",
        "policy": policy,
        "params": params,
        "wall": run.wall_time,
        **frac,
        **waiting_cost(w, jobs, tasks, PLACES * M),
    }


def model(policy: str, params: dict[str, int], M: int) -> dict[str, Any]:
    """The paper's model at the cluster's equivalent setting, and the paper's bound (module docstring)."""
    if policy == "drf":
        e1, e2 = 0, 0
    elif policy == "ddrf":
        e1, e2 = params["e1"], params["e2"]
    else:
        e1 = e2 = params["d"]
    ex = ddrf_locality_exact(e1, e2 + 1, N, R, M, G, THETA)
    out = {"node": ex["node"], "rack": ex["rack"], "L": ex["L"]}
    if policy == "delay":
        out["paper_exact"] = delay_locality_exact(e1, N, R, M)
        out["bound"] = delay_locality_bound(e1, N, R, M)
    else:
        out["paper_exact"] = ddrf_locality_exact(e1, max(e2, 1), N, R, M, G, THETA)["L"]
        out["bound"] = ddrf_locality_bound(e1, e2, N, R, M, THETA)["L"]
    return out


def label(policy: str, params: dict[str, int]) -> tuple[str, str]:
    if policy == "ddrf":
        return policy, f"E1={params['e1']}, E2={params['e2']}"
    if policy == "delay":
        return policy, f"D={params['d']}"
    return policy, "-"


def part12(nodes: list[int], waves: int, seed: int, grid: tuple) -> None:
    results = []
    for M in nodes:
        for policy, params in grid:
            results.append(run_point(M, waves, seed, policy, params))
    rows = []
    for r in results:
        m = model(r["policy"], r["params"], r["M"])
        sim_l = r["node"] + THETA * r["rack"]
        rows.append(
            [
                r["M"],
                *label(r["policy"], r["params"]),
                pct(r["node"]),
                pct(r["rack"]),
                pct(r["any"]),
                pct(m["node"]),
                pct(m["rack"]),
                round(100 * (r["node"] - m["node"]), 1),
                round(100 * (r["rack"] - m["rack"]), 1),
                pct(sim_l),
                pct(m["L"]),
                pct(m["paper_exact"]),
                pct(m["bound"]),
            ]
        )
    print("## 1. Locality on the cluster against the paper's model (N = 20, R = 3, G = 20, theta = 0.05)\n")
    print(f"jobs per run = max(200, {waves} x M / 5), seed {seed}; percentages of the map tasks launched\n")
    print(
        render(
            [
                "M",
                "policy",
                "setting",
                "sim node %",
                "sim rack %",
                "sim any %",
                "exact node % (E1, E2+1)",
                "exact rack % (E1, E2+1)",
                "node sim-model pts",
                "rack sim-model pts",
                "sim L %",
                "exact L % (E1, E2+1)",
                "paper's exact at (E1, E2) / L(D) %",
                "paper's bound L(E) / L(D) %",
            ],
            rows,
        )
    )
    for M in nodes[:2]:
        for policy, params in grid:
            results.append(run_point(M, waves, seed, policy, params, penalty=False))
    rows2 = []
    base = {(r["M"], r["factors"]): r for r in results if r["policy"] == "drf"}
    for r in results:
        b = base.get((r["M"], r["factors"]))
        rows2.append(
            [
                r["M"],
                r["jobs"],
                r["factors"],
                *label(r["policy"], r["params"]),
                round(r["response"], 1),
                round(r["response"] / b["response"], 2) if b else "-",
                round(r["makespan"], 1),
                pct(r["util"]),
                pct(r["idle_waiting"]),
                pct(r["node"]),
                round(r["wall"], 2),
            ]
        )
    print("\n## 2. The cost of waiting (same runs; and, for the two smallest M, rack / off-rack factors 1)\n")
    print(
        render(
            [
                "M",
                "jobs",
                "rack / remote factor",
                "policy",
                "setting",
                "mean response s",
                "response / drf",
                "makespan s",
                "utilisation %",
                "idle while waiting %",
                "sim node %",
                "sim wall s",
            ],
            rows2,
        )
    )


# -- 3. decision cost per launch --------------------------------------------------------------
def users_workload(n: int, tasks_per_user: int, seed: int, nodes: int = 100, load: float = 0.9) -> WorkloadInstance:
    rng = np.random.default_rng([seed, n])
    duration = 10.0
    horizon = n * tasks_per_user * duration / (load * nodes * PLACES)
    submits = np.sort(rng.uniform(0.0, horizon, size=n))
    group = TaskGroup(duration=duration, count=tasks_per_user, demand={"cpu": 1.0, "mem": 1.0})
    jobs = tuple(
        WorkloadJob(id=f"j{i}", stages=(Stage("map", (group,)),), submit_time=round(float(s), 3), user=f"u{i}")
        for i, s in enumerate(submits)
    )
    node = NodeSpec(id="n", resources={"cpu": 4.0, "mem": 8.0}, count=nodes)
    return WorkloadInstance(nodes=(node,), jobs=jobs, name=f"users-{n}")


def _timed(policy: Any, names: tuple[str, ...], clock: list[float]) -> None:
    for name in names:
        inner = getattr(policy, name)

        def wrapper(*args: Any, _inner: Any = inner) -> Any:
            t0 = time.perf_counter()
            try:
                return _inner(*args)
            finally:
                clock[0] += time.perf_counter() - t0

        setattr(policy, name, wrapper)


def part3(sizes: list[int], tasks_per_user: int, seed: int) -> None:
    rows, base_pol, base_all = [], None, None
    for n in sizes:
        w = users_workload(n, tasks_per_user, seed)
        reps = max(1, math.ceil(MIN_LAUNCHES / (n * tasks_per_user)))  # small n: repeat the run
        clock, wall, verify_s = [0.0], 0.0, 0.0
        for _ in range(reps):
            policy = make_policy("drf")
            _timed(policy, ("assign", "on_arrival", "on_attempt_end", "on_stage_end", "on_job_end"), clock)
            t0 = time.perf_counter()
            rec = Simulation(w, policy, seed=seed).run()
            wall += time.perf_counter() - t0
            jobs, tasks = rec.jobs_columns(), rec.tasks_columns()
            t1 = time.perf_counter()
            verdict = verify_simulation(w, jobs, tasks)
            verify_s += time.perf_counter() - t1
            assert verdict.ok, verdict.problems
        launches = len(tasks["start"]) * reps
        per_pol, per_all = clock[0] / launches, wall / launches
        base_pol, base_all = base_pol or per_pol, base_all or per_all
        rows.append(
            [
                n,
                reps,
                launches,
                round(per_pol * 1e6, 2),
                round(per_pol / base_pol, 2),
                round(per_all * 1e6, 2),
                round(per_all / base_all, 2),
                round(math.log2(n) / math.log2(sizes[0]), 2),
                round(n / sizes[0]),
                round(wall, 2),
                round(verify_s, 2),
            ]
        )
    print("\n## 3. Decision cost per launch of `drf` against the number of users\n")
    print(f"n users x 1 job of {tasks_per_user} tasks (10 s, <1 cpu, 1 mem>), 100 nodes of 4 places, load 0.9\n")
    print(
        render(
            [
                "users n",
                "runs",
                "launches timed",
                "policy us/launch",
                "policy ratio",
                "whole sim us/launch",
                "sim ratio",
                "log2 n ratio",
                "n ratio",
                "sim wall s",
                "verify s",
            ],
            rows,
        )
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="~1 minute smoke run")
    ap.add_argument("--nodes", type=int, nargs="+", default=None, help="M values (default 100 200 500 1000)")
    ap.add_argument("--waves", type=int, default=None, help="times the cluster is filled (default 10; quick 4)")
    ap.add_argument("--sizes", type=int, nargs="+", default=None, help="user counts of part 3")
    ap.add_argument("--tasks-per-user", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--parts", default="123", help="which parts to run (default 123)")
    a = ap.parse_args(argv)
    nodes = a.nodes or ([100, 200] if a.quick else [100, 200, 500, 1000])
    waves = a.waves or (4 if a.quick else 10)
    sizes = a.sizes or ([10, 100, 1000, 10000] if a.quick else [10, 100, 1000, 10000, 100000])
    grid = QUICK_GRID if a.quick else GRID
    print(f"# bench_sim_ddrf {' '.join(sys.argv[1:])}")
    print(
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, Python {platform.python_version()}\n"
    )
    t0 = time.perf_counter()
    if "1" in a.parts or "2" in a.parts:
        part12(nodes, waves, a.seed, grid)
    if "3" in a.parts:
        part3(sizes, a.tasks_per_user, a.seed)
    print(f"\ntotal wall time {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
