"""The MPSA paper's experiments on the simulated cluster.

MPSA paper (``docs/papers.md``), sec. 5, Figs 5-9. Workloads: the ``mpsa`` preset
(:func:`mropt.instances.workload_gen.generate_mpsa_workload`: 150 jobs, Poisson arrivals, the
three patterns simple / iterative / chain and the three priorities T1-T3 with deadlines 10 / 20
/ 40 min in equal thirds, 25 nodes x 4 map + 2 reduce slots, SleepJob tasks: map tasks of 1 min,
100 per map stage, a reduce stage of 50 slot-min as 50 tasks). Every simulated run is checked by
the independent :func:`mropt.sim.verify.verify_simulation` (asserted). Arrival rates are in jobs
per minute; sojourn = finish - submit; a job *fails* when its sojourn exceeds its priority's
deadline (Fig. 8).

1. **Figs 5-6**: the slots per priority that the ``mpsa`` policy computes (Algorithm 1 on its
   AR(1) forecasts, every ``interval`` = 600 s), averaged over the run's recomputations, and
   "share" = the slots left shared; against the arrival rate (Fig. 5) and, at 0.3 jobs/min,
   against the workload (Fig. 6: reduce work per reduce stage, then map tasks per map stage).
   Beside them, Algorithm 1 on the workload's true parameters (the rate and work it was drawn
   with), i.e. what a perfect forecast would give.
2. **Fig 7**: mean sojourn per priority of ``mpsa`` against the arrival rate.
3. **Figs 8-9**: failed jobs per priority (T1/T2/T3 and total, mean per run) and mean sojourn
   per priority for ``mpsa``, ``mpsa`` with ``method=mpsa-exact``, ``mpsa`` under the two
   work-conserving readings of sec. 4.4 (``lend_idle=task_end``: idle reserved slots lent, back
   as the borrowers' tasks end; ``lend_idle=preempt``: lent, reclaimed at once by killing
   borrowed tasks; the ``mpsa`` column is the paper's rule, idle reserved slots kept idle),
   ``fair`` (three equal pools, FIFO inside) and ``capacity`` (three queues of 33 %).
4. **The queueing model against the cluster**: beside each simulated mean sojourn of ``mpsa``,
   the Jackson-network prediction (:func:`mropt.priority.queueing.priority_sojourn`, MPSA eq. 16)
   for the same allocation (the mean reservation of part 1) and the true rates and works, and
   the relative error (model - simulated) / simulated. The model serves each priority on its
   reserved slots only, with exponential service; the cluster has Poisson arrivals but
   deterministic task times, waves of tasks, and shared slots.

Run (from the repository root)::

    PYTHONPATH=. python benchmarks/bench_sim_mpsa.py            # default: 6 rates x 5 seeds, a few minutes
    PYTHONPATH=. python benchmarks/bench_sim_mpsa.py --quick    # smoke run: 3 rates x 2 seeds
    PYTHONPATH=. python benchmarks/bench_sim_mpsa.py --seeds 10 --rates 0.1,0.3,0.5
    PYTHONPATH=. python benchmarks/bench_sim_mpsa.py --seeds 3 --no-sweep   # Figs 5 and 7-9 only
    PYTHONPATH=. python benchmarks/bench_sim_mpsa.py --policies mpsa,mpsa-preempt,fair

It prints markdown tables (means over seeds unless said otherwise) and, last, the wall time of
the Figs 7-9 runs of mpsa, fair and capacity (the speed goal: under 10 minutes for 3
policies x 6 rates x 5 seeds).
"""

from __future__ import annotations

import argparse
import datetime
import math
import platform
import sys
import time
from collections import defaultdict
from typing import Any

import numpy as np

import mropt.sim.policies  # noqa: F401  (registers the policies)
from mropt.instances.workload_gen import MPSA_DEADLINES, MPSA_QUEUES, WorkloadParams, generate_workload
from mropt.model.priority import Priority, PriorityInstance
from mropt.priority.queueing import priority_sojourn, routing_from_pattern_mix
from mropt.registry import solve
from mropt.sim.run import SimRun, simulate
from mropt.sim.verify import verify_simulation

RATES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)
QUICK_RATES = (0.1, 0.3, 0.5)
#: (label, policy, params)
POLICIES = (
    ("mpsa", "mpsa", {}),
    ("mpsa-exact", "mpsa", {"method": "mpsa-exact"}),
    ("mpsa-task_end", "mpsa", {"lend_idle": "task_end"}),
    ("mpsa-preempt", "mpsa", {"lend_idle": "preempt"}),
    ("fair", "fair", {}),
    ("capacity", "capacity", {}),
)
TIMED = ("mpsa", "fair", "capacity")  # the speed goal's three policies
REDUCE_WORKS = (1500.0, 3000.0, 4500.0, 6000.0)  # slot-s per reduce stage (Table 2: 3000 = 50 min)
MAP_TASKS = (50, 100, 150)  # map tasks per map stage (Table 2: 100)
ROUTING = routing_from_pattern_mix({"simple": 1.0, "iterative": 1.0, "chain": 1.0}, 3)
PRIORITIES = len(MPSA_QUEUES)


def run_checked(rate: float, seed: int, policy: str, params: dict[str, Any], **overrides: Any) -> SimRun:
    """One simulated run of the preset, checked by the independent verifier (asserted)."""
    w = generate_workload("mpsa", seed, arrival_rate=rate, **overrides)
    run = simulate(w, policy, params, seed=0)
    verdict = verify_simulation(w, run.recorder.jobs_columns(), run.recorder.tasks_columns())
    assert verdict.ok, (policy, params, rate, seed, verdict.problems[:3])
    assert run.summary["unfinished"] == 0, (policy, rate, seed)
    return run


def per_priority(run: SimRun) -> tuple[list[float], list[int]]:
    """Mean sojourn (s) and failed jobs (sojourn > deadline) of T1, T2, T3."""
    jc = run.recorder.jobs_columns()
    sub = np.asarray(jc["submit_time"], dtype=float)
    fin = np.asarray(jc["finish"], dtype=float)
    dl = np.asarray(jc["deadline"], dtype=float)
    queue = list(jc["queue"])
    sojourn, failed = [], []
    for name in MPSA_QUEUES:
        m = np.array([q == name for q in queue])
        sojourn.append(float((fin[m] - sub[m]).mean()) if m.any() else math.nan)
        failed.append(int((fin[m] - sub[m] > (dl[m] - sub[m]) * (1 + 1e-12)).sum()))
    return sojourn, failed


def mean_allocation(run: SimRun) -> tuple[list[float], list[float]]:
    """The policy's map and reduce reservations per priority (T1 first), averaged over its recomputations."""
    allocs = run.simulation.policy.allocations  # type: ignore[attr-defined]
    levels = run.simulation.policy.levels  # type: ignore[attr-defined]
    assert list(levels) == [3, 2, 1], levels  # queue 0 = priority 3 = T1
    if not allocs:
        return [0.0] * PRIORITIES, [0.0] * PRIORITIES
    m = np.mean([a["map"] for a in allocs], axis=0)
    r = np.mean([a["reduce"] for a in allocs], axis=0)
    return [float(x) for x in m], [float(x) for x in r]


def true_parameters(rate: float, **overrides: Any) -> tuple[float, float, float]:
    """Per priority: arrival rate (jobs/s), work of one map visit and one reduce visit (slot-s)."""
    p = WorkloadParams(**{k: v for k, v in overrides.items() if k in WorkloadParams.__dataclass_fields__})
    return rate / 60.0 / PRIORITIES, p.map_tasks * p.map_task_time, p.reduce_work


def algorithm1_true(rate: float, method: str = "mpsa", **overrides: Any) -> tuple[list[int], list[int]]:
    """Algorithm 1 (or the exact method) on the preset's true parameters: 100 map and 50 reduce slots."""
    lam, wm, wr = true_parameters(rate, **overrides)
    instance = PriorityInstance(
        map_slots=100,
        reduce_slots=50,
        priorities=tuple(
            Priority(id=q, deadline=d, arrival_rate=lam, map_work=wm, reduce_work=wr)
            for q, d in zip(MPSA_QUEUES, MPSA_DEADLINES, strict=True)
        ),
        routing={"q11": ROUTING.q11, "q12": ROUTING.q12, "q21": ROUTING.q21},
    )
    alloc = solve(instance, method).decision["allocation"]  # type: ignore[index]
    return [int(alloc[q]["map_slots"]) for q in MPSA_QUEUES], [int(alloc[q]["reduce_slots"]) for q in MPSA_QUEUES]


def fmt_alloc(m: list[float], r: list[float], total: tuple[int, int] = (100, 50)) -> str:
    cells = [f"{a:.1f} / {b:.1f}" for a, b in zip(m, r, strict=True)]
    cells.append(f"{total[0] - sum(m):.1f} / {total[1] - sum(r):.1f}")
    return " | ".join(cells)


def fmt_int_alloc(m: list[int], r: list[int]) -> str:
    return " ".join(f"{a}/{b}" for a, b in zip(m, r, strict=True)) + f" (share {100 - sum(m)}/{50 - sum(r)})"


def minutes(x: float) -> str:
    return "inf" if not math.isfinite(x) else f"{x / 60:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 rates x 2 seeds, a short workload sweep")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per point (default 5; --quick 2)")
    ap.add_argument("--rates", default=None, help="comma-separated arrival rates, jobs/min")
    ap.add_argument("--policies", default=None, help="comma-separated labels to run (default: all of POLICIES)")
    ap.add_argument("--no-sweep", action="store_true", help="skip Fig 6's workload sweep")
    args = ap.parse_args()
    known = [p[0] for p in POLICIES]
    wanted = args.policies.split(",") if args.policies else known
    unknown = [x for x in wanted if x not in known]
    if unknown:
        ap.error(f"--policies: unknown label {unknown[0]!r} (known: {', '.join(known)})")
    policies = [p for p in POLICIES if p[0] in wanted]
    seeds = list(range(args.seeds if args.seeds else (2 if args.quick else 5)))
    rates = tuple(float(x) for x in args.rates.split(",")) if args.rates else (QUICK_RATES if args.quick else RATES)
    reduce_works = (REDUCE_WORKS[0], REDUCE_WORKS[1], REDUCE_WORKS[3]) if args.quick else REDUCE_WORKS
    map_tasks = (MAP_TASKS[0], MAP_TASKS[2]) if args.quick else MAP_TASKS

    started = time.perf_counter()
    print("# MPSA's experiments on the simulated cluster\n")
    print(
        f"`{' '.join(sys.argv)}`; {datetime.date.today()}; {platform.machine()}, "
        f"Python {platform.python_version()}; seeds {seeds[0]}..{seeds[-1]}; rates {', '.join(map(str, rates))} jobs/min; "
        f"routing q11 {ROUTING.q11:.3f}, q12 {ROUTING.q12:.3f}, q21 {ROUTING.q21:.3f}\n"
    )

    # -- the runs of Figs 5 and 7-9 ------------------------------------------------------------
    soj: dict[tuple[str, float], list[list[float]]] = defaultdict(list)
    fail: dict[tuple[str, float], list[list[int]]] = defaultdict(list)
    alloc: dict[tuple[str, float], list[tuple[list[float], list[float]]]] = defaultdict(list)
    killed: dict[tuple[str, float], list[int]] = defaultdict(list)
    wall: dict[str, float] = defaultdict(float)
    for rate in rates:
        for seed in seeds:
            for label, policy, params in policies:
                t0 = time.perf_counter()
                run = run_checked(rate, seed, policy, params)
                wall[label] += time.perf_counter() - t0
                s, f = per_priority(run)
                soj[(label, rate)].append(s)
                fail[(label, rate)].append(f)
                if policy == "mpsa":
                    alloc[(label, rate)].append(mean_allocation(run))
                    killed[(label, rate)].append(list(run.recorder.tasks_columns()["outcome"]).count("killed"))
        print(f"<!-- rate {rate} done at {time.perf_counter() - started:.0f} s -->", file=sys.stderr, flush=True)

    def avg_alloc(key: tuple[str, float]) -> tuple[list[float], list[float]]:
        rows = alloc[key]
        return (
            [float(np.mean([r[0][i] for r in rows])) for i in range(PRIORITIES)],
            [float(np.mean([r[1][i] for r in rows])) for i in range(PRIORITIES)],
        )

    labels = [p[0] for p in policies]
    mpsa_labels = [p[0] for p in policies if p[1] == "mpsa"]
    print("## 1. Fig 5: slots per priority against the arrival rate\n")
    if "mpsa" not in labels:
        print("(`mpsa` not run)\n")
    print(
        "Cells: map / reduce slots reserved by `mpsa` (mean over the run's 600-s recomputations and over seeds; "
        "0 before the first one). Last column: Algorithm 1 on the true parameters (a perfect forecast).\n"
    )
    print("| rate (jobs/min) | T1 | T2 | T3 | share | Algorithm 1, true parameters (T1 T2 T3 map/reduce) |")
    print("|---|---|---|---|---|---|")
    for rate in rates if "mpsa" in labels else ():
        m, r = avg_alloc(("mpsa", rate))
        print(f"| {rate:g} | {fmt_alloc(m, r)} | {fmt_int_alloc(*algorithm1_true(rate))} |")
    print()
    if "mpsa-exact" in labels:
        print("`mpsa-exact` (the exact allocation in the same policy):\n")
        print("| rate (jobs/min) | T1 | T2 | T3 | share | exact, true parameters |")
        print("|---|---|---|---|---|---|")
        for rate in rates:
            m, r = avg_alloc(("mpsa-exact", rate))
            print(f"| {rate:g} | {fmt_alloc(m, r)} | {fmt_int_alloc(*algorithm1_true(rate, 'mpsa-exact'))} |")
        print()
    sys.stdout.flush()

    # -- Fig 6: the workload at 0.3 jobs/min ---------------------------------------------------
    print("## 2. Fig 6: slots per priority against the workload (0.3 jobs/min, `mpsa`)\n")
    if args.no_sweep:
        print("(skipped: `--no-sweep`)\n")
    else:
        print("| workload | T1 | T2 | T3 | share | Algorithm 1, true parameters | failed T1/T2/T3 |")
        print("|---|---|---|---|---|---|---|")
    sweeps: list[tuple[str, dict[str, Any]]] = [
        (f"reduce work {w / 60:g} slot-min", {"reduce_work": w}) for w in reduce_works
    ]
    sweeps += [(f"map tasks {n}", {"map_tasks": n}) for n in map_tasks]
    for name, over in () if args.no_sweep else sweeps:
        rows, fails = [], []
        for seed in seeds:
            run = run_checked(0.3, seed, "mpsa", {}, **over)
            rows.append(mean_allocation(run))
            fails.append(per_priority(run)[1])
        m = [float(np.mean([r[0][i] for r in rows])) for i in range(PRIORITIES)]
        r = [float(np.mean([x[1][i] for x in rows])) for i in range(PRIORITIES)]
        fcell = "/".join(f"{np.mean([f[i] for f in fails]):.1f}" for i in range(PRIORITIES))
        print(f"| {name} | {fmt_alloc(m, r)} | {fmt_int_alloc(*algorithm1_true(0.3, **over))} | {fcell} |")
    print()
    sys.stdout.flush()

    # -- Fig 7 and part 4 -----------------------------------------------------------------------
    print("## 3. Fig 7: mean sojourn per priority of `mpsa`, beside the Jackson-network model\n")
    print(
        "Minutes. sim: simulated mean over the seeds' jobs of the priority (mean of per-run means); model: MPSA eq. 16 "
        "for the mean reservation of part 1 and the true rate and work per visit; err = (model - sim) / sim. "
        "Deadlines T1 10, T2 20, T3 40 min. Under `lend_idle` a queue also runs on lent slots, which the model "
        "does not count.\n"
    )
    head = " | ".join(f"{q} sim | {q} model | {q} err" for q in MPSA_QUEUES)
    for label in mpsa_labels:
        print(f"`{label}`:\n")
        print(f"| rate | {head} |")
        print("|---" * (1 + 3 * PRIORITIES) + "|")
        for rate in rates:
            m, r = avg_alloc((label, rate))
            lam, wm, wr = true_parameters(rate)
            cells = []
            for i in range(PRIORITIES):
                sim_t = float(np.mean([s[i] for s in soj[(label, rate)]]))
                model_t = priority_sojourn(ROUTING, lam, wm, wr, m[i], r[i])
                err = (model_t - sim_t) / sim_t if math.isfinite(model_t) else math.inf
                cells.append(
                    f"{minutes(sim_t)} | {minutes(model_t)} | {err:+.0%}"
                    if math.isfinite(err)
                    else f"{minutes(sim_t)} | inf (unstable) | -"
                )
            print(f"| {rate:g} | " + " | ".join(cells) + " |")
        print()
    sys.stdout.flush()

    # -- Figs 8-9 --------------------------------------------------------------------------------
    print("## 4. Figs 8-9: failed jobs and mean sojourn per policy\n")
    print(
        f"Failed = sojourn over the priority's deadline; cells T1/T2/T3 (total), mean per run of 150 jobs "
        f"({len(seeds)} seeds).\n"
    )
    print("| rate | " + " | ".join(labels) + " |")
    print("|---" * (1 + len(labels)) + "|")
    for rate in rates:
        cells = []
        for label in labels:
            f = fail[(label, rate)]
            per = [float(np.mean([x[i] for x in f])) for i in range(PRIORITIES)]
            cells.append("/".join(f"{v:.1f}" for v in per) + f" ({sum(per):.1f})")
        print(f"| {rate:g} | " + " | ".join(cells) + " |")
    print()
    print("Mean sojourn, minutes: T1/T2/T3 (all jobs)\n")
    print("| rate | " + " | ".join(labels) + " |")
    print("|---" * (1 + len(labels)) + "|")
    for rate in rates:
        cells = []
        for label in labels:
            s = soj[(label, rate)]
            per = [float(np.mean([x[i] for x in s])) for i in range(PRIORITIES)]
            cells.append("/".join(f"{v / 60:.1f}" for v in per) + f" ({np.mean(per) / 60:.1f})")
        print(f"| {rate:g} | " + " | ".join(cells) + " |")
    print()
    if "mpsa-preempt" in labels:
        print(
            "Attempts killed by `mpsa-preempt` to reclaim lent slots, mean per run: "
            + ", ".join(f"{rate:g}: {np.mean(killed[('mpsa-preempt', rate)]):.0f}" for rate in rates)
            + "\n"
        )

    timed_labels = [p for p in TIMED if p in labels]
    timed = sum(wall[p] for p in timed_labels)
    n = len(rates) * len(seeds)
    print(
        "Wall time of the runs: "
        + ", ".join(f"{p} {wall[p]:.0f} s ({wall[p] / n:.2f} s a run)" for p in labels)
        + f"; Figs 7-9 of {', '.join(timed_labels)} ({len(timed_labels) * n} runs): {timed:.0f} s; "
        f"whole benchmark {time.perf_counter() - started:.0f} s.\n"
    )


if __name__ == "__main__":
    main()
