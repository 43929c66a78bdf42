"""The AMB paper's experiments on the simulated cluster.

What it measures (AMB paper, ``docs/papers.md``; every simulated run is checked by the independent
:func:`mropt.sim.verify.verify_simulation`, asserted):

1. **Figures 7-9** (sec. 5.1, ``amb-static`` workloads): sweeps of L (mean splits, 100..200),
   N (jobs, 20..40) and D (mean deadline, 800..1600), 5 values each, the other two at the
   preset (L 150, N 30, D 1000). Per point, the mean over seeds of the total benefit (AMB
   eq. 1), the acceptance rate (accepted / jobs) and the completion rate (on time /
   accepted) of the policies ``amb``, ``dc`` and ``minedf-wc`` simulated on the cluster;
   beside them the exact optimum (``--exact``, default ``milp-highs``, on
   :func:`~mropt.instances.workload_convert.to_admission` of the workload, ``--time-limit``
   s) whose plan is executed by the ``seq`` policy on the same workload, and the registered
   ``ideal`` bound (AMB eq. 4) of the admission instance. "proven" counts the points' exact
   solves that ended ``optimal``.
2. **Figure 10** (sec. 5.2, ``amb-dynamic``: 60 jobs over one hour): the same metrics per
   10-minute window of submit time for ``amb``, ``dc`` and ``minedf-wc``, beside the
   offline optimum (the exact method on the same jobs with their submit times, its plan run
   by ``seq``): the cost of being online is offline benefit minus AMB's.
3. **Faults**: ``amb-static`` at the preset; at t = 150 s (inside the first job's map phase
   of the static plan) either one node or 10 of the 40 nodes go down for the rest of the
   run. ``amb`` with ``timeout_handling`` true vs false (and no fault, for reference):
   benefit, accepted, dropped (by timeout handling), late, on time.
4. **The SEQ abstraction**: for the plans of part 1 and 2 that the SEQ model calls valid
   (every accepted job's predicted COTr within its deadline: exact plans and AMB's),
   simulated minus predicted (``plan_times()``: :func:`mropt.admission.seq.evaluate`)
   map-phase end and job completion: min, median, p95, max, and the share of accepted jobs
   that miss their deadline on the cluster.

Run (from the repository root)::

    PYTHONPATH=. python benchmarks/bench_sim_amb.py            # default: 10 seeds a point, a few minutes
    PYTHONPATH=. python benchmarks/bench_sim_amb.py --quick    # ~1 minute smoke run (2 seeds, 3 values)
    PYTHONPATH=. python benchmarks/bench_sim_amb.py --seeds 5 --exact cpsat --time-limit 10

It prints markdown tables; numbers are means over seeds unless said otherwise.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import platform
import sys
import time
from collections import defaultdict
from typing import Any

import numpy as np

import mropt.sim.policies  # noqa: F401  (registers the policies)
from mropt.instances.workload_convert import to_admission
from mropt.instances.workload_gen import WorkloadParams, generate_workload
from mropt.model.workload import Fault, WorkloadInstance
from mropt.registry import solve
from mropt.sim.run import SimRun, simulate
from mropt.sim.verify import verify_simulation

POLICIES = ("amb", "dc", "minedf-wc")
EXACT = "exact→seq"
SWEEPS = {
    "L": ("mean_splits", [100.0, 125.0, 150.0, 175.0, 200.0]),
    "N": ("jobs", [20, 25, 30, 35, 40]),
    "D": ("mean_deadline", [800.0, 1000.0, 1200.0, 1400.0, 1600.0]),
}
QUICK_SWEEPS = {k: (f, [v[0], v[2], v[4]]) for k, (f, v) in SWEEPS.items()}

#: part 4: simulated minus predicted, per plan source
SEQ_GAPS: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))


def run_checked(workload: WorkloadInstance, policy: str, params: dict[str, Any] | None = None, **kw: Any) -> SimRun:
    """simulate + the independent verifier, asserted (benefit recomputed equal too)."""
    run = simulate(workload, policy, params or {}, seed=0, **kw)
    verdict = verify_simulation(workload, run.recorder.jobs_columns(), run.recorder.tasks_columns())
    assert verdict.ok, (policy, verdict.problems[:3])
    assert verdict.objective is None or abs(verdict.objective - run.summary["benefit"]) <= 1e-6 * max(
        1.0, abs(run.summary["benefit"])
    ), (policy, verdict.objective, run.summary["benefit"])
    return run


def seq_gaps(run: SimRun, source: str) -> None:
    """Part 4: record simulated - predicted map end and finish of a plan the SEQ model calls valid."""
    times = run.simulation.policy.plan_times()
    if not times:
        return
    cols = run.recorder.jobs_columns()
    accepted = [bool(a) and not bool(d) for a, d in zip(cols["accepted"], cols["dropped"], strict=True)]
    rows = [k for k, a in enumerate(accepted) if a]
    ids = cols["job_id"]
    deadline = np.asarray(cols["deadline"], dtype=float)
    if any(ids[k] not in times or times[ids[k]][1] > deadline[k] * (1 + 1e-9) for k in rows):
        SEQ_GAPS[source]["invalid_plans"].append(1.0)
        return
    SEQ_GAPS[source]["plans"].append(1.0)
    finish = np.asarray(cols["finish"], dtype=float)
    map_end = np.asarray(cols["map_end"], dtype=float)
    for k in rows:
        cotm, cotr = times[ids[k]]
        SEQ_GAPS[source]["map"].append(float(map_end[k] - cotm))
        SEQ_GAPS[source]["finish"].append(float(finish[k] - cotr))
        SEQ_GAPS[source]["late"].append(float(not cols["on_time"][k]))


def metrics(run: SimRun) -> tuple[float, float, float]:
    s = run.summary
    acc = s["accepted"]
    return float(s["benefit"]), acc / s["jobs"], (s["on_time"] / acc if acc else float("nan"))


def exact_plan(workload: WorkloadInstance, method: str, time_limit: float) -> tuple[Any, bool]:
    adm = to_admission(workload)
    sol = solve(adm, method, time_limit=time_limit)
    assert sol.status in ("optimal", "feasible", "time_limit"), (method, sol.status, sol.details)
    # the plan is for the converted instance: the workload does not record its hash, so unset it
    return dataclasses.replace(sol, instance_hash=None), sol.status == "optimal"


def one_static(overrides: dict[str, Any], seed: int, args: argparse.Namespace) -> dict[str, Any]:
    w = generate_workload("amb-static", seed, **overrides)
    out: dict[str, Any] = {}
    for p in POLICIES:
        run = run_checked(w, p)
        out[p] = metrics(run)
        if p == "amb":
            seq_gaps(run, "amb (static)")
    plan, proven = exact_plan(w, args.exact, args.time_limit)
    run = run_checked(w, "seq", plan=plan)
    out[EXACT] = metrics(run)
    seq_gaps(run, f"{args.exact} (static)")
    out["proven"] = proven
    out["ideal"] = float(solve(to_admission(w), "ideal").objective or 0.0)
    return out


def cell(vals: list[tuple[float, float, float]]) -> str:
    b, a, c = (np.nanmean([v[i] for v in vals]) for i in range(3))
    return f"{b:.0f} / {100 * a:.0f}% / {100 * c:.0f}%"


def part1(args: argparse.Namespace, sweeps: dict[str, tuple[str, list[Any]]]) -> None:
    print("## 1. Figures 7-9: amb-static sweeps (cells: benefit / acceptance / completion, mean over seeds)\n")
    cache: dict[tuple[Any, ...], dict[str, Any]] = {}
    for name, (field, values) in sweeps.items():
        print(f"### Sweep of {name} ({field}); {len(args.seed_list)} seeds a point\n")
        cols = [*POLICIES, EXACT]
        print(f"| {name} | " + " | ".join(cols) + " | ideal (eq. 4) | proven optimal |")
        print("|---" * (len(cols) + 3) + "|")
        for v in values:
            rows = []
            for seed in args.seed_list:
                key = (field, v, seed) if v != getattr(WorkloadParams(), field) else ("preset", seed)
                if key not in cache:
                    cache[key] = one_static({field: v}, seed, args)
                rows.append(cache[key])
            cells = [cell([r[c] for r in rows]) for c in cols]
            ideal = np.mean([r["ideal"] for r in rows])
            proven = sum(r["proven"] for r in rows)
            print(f"| {v:g} | " + " | ".join(cells) + f" | {ideal:.0f} | {proven}/{len(rows)} |")
        print()
        sys.stdout.flush()


def part2(args: argparse.Namespace) -> None:
    window = 600.0
    print(
        f"## 2. Figure 10: amb-dynamic (60 jobs, one hour), per {window / 60:g}-minute window of submit time; "
        f"{len(args.seed_list)} seeds (cells: benefit / acceptance / completion, benefit summed over the window, "
        "mean over seeds)\n"
    )
    cols = [*POLICIES, f"offline {EXACT}"]
    per: dict[str, dict[int, list[tuple[float, float, float]]]] = {c: defaultdict(list) for c in cols}
    totals: dict[str, list[float]] = defaultdict(list)
    njobs: dict[int, list[int]] = defaultdict(list)
    proven = 0
    for seed in args.seed_list:
        w = generate_workload("amb-dynamic", seed)
        runs = {p: run_checked(w, p) for p in POLICIES}
        seq_gaps(runs["amb"], "amb (dynamic)")
        plan, ok = exact_plan(w, args.exact, args.time_limit)
        proven += ok
        runs[cols[-1]] = run_checked(w, "seq", plan=plan)
        seq_gaps(runs[cols[-1]], f"{args.exact} (dynamic, offline)")
        for c, run in runs.items():
            jc = run.recorder.jobs_columns()
            sub = np.asarray(jc["submit_time"], dtype=float)
            acc = np.asarray(jc["accepted"], dtype=bool)
            ben = np.asarray(jc["benefit"], dtype=float)
            ont = np.array([bool(x) for x in jc["on_time"]])
            win = (sub // window).astype(int)
            totals[c].append(float(ben.sum()))
            for k in sorted(set(win.tolist())):
                m = win == k
                if c == cols[0]:
                    njobs[k].append(int(m.sum()))
                na = int((acc & m).sum())
                per[c][k].append(
                    (float(ben[m].sum()), na / int(m.sum()), (int((ont & acc & m).sum()) / na) if na else float("nan"))
                )
    print("| submit window (min) | jobs | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 2) + "|")
    for k in sorted(njobs):
        lo, hi = k * window / 60, (k + 1) * window / 60
        print(f"| {lo:g}-{hi:g} | {np.mean(njobs[k]):.1f} | " + " | ".join(cell(per[c][k]) for c in cols) + " |")
    print("| **total benefit** | 60 | " + " | ".join(f"**{np.mean(totals[c]):.0f}**" for c in cols) + " |")
    off = np.array(totals[cols[-1]])
    print(f"\nOffline exact solves proven optimal: {proven}/{len(args.seed_list)}.")
    for p in POLICIES:
        gap = off - np.array(totals[p])
        print(
            f"Cost of being online, {p}: offline - online benefit = {gap.mean():.0f} on average "
            f"({100 * gap.mean() / off.mean():.1f}% of the offline optimum; per seed min {gap.min():.0f}, "
            f"max {gap.max():.0f})."
        )
    print()
    sys.stdout.flush()


def part3(args: argparse.Namespace) -> None:
    t_fail = 150.0
    seeds = args.seed_list[: args.fault_seeds]
    print(
        f"## 3. Faults: amb-static preset (40 nodes), nodes down at t = {t_fail:g} s for the rest of the run; "
        f"{len(seeds)} seeds (means; dropped = by timeout handling)\n"
    )
    print("| fault | timeout_handling | benefit | accepted | dropped | late | on time |")
    print("|---|---|---|---|---|---|---|")
    for label, nodes in (
        ("none", []),
        ("1 node (r0-0)", ["r0-0"]),
        ("10 nodes (r0-0..r0-9)", [f"r0-{k}" for k in range(10)]),
    ):
        for th in (True, False):
            if not nodes and not th:
                continue
            acc = defaultdict(list)
            for seed in seeds:
                w = generate_workload("amb-static", seed)
                w = dataclasses.replace(w, faults=tuple(Fault(n, t_fail, None) for n in nodes))
                s = run_checked(w, "amb", {"timeout_handling": th}).summary
                for k in ("benefit", "accepted", "dropped", "late", "on_time"):
                    acc[k].append(s[k])
            vals = " | ".join(f"{np.mean(acc[k]):.1f}" for k in ("benefit", "accepted", "dropped", "late", "on_time"))
            print(f"| {label} | {str(th).lower() if nodes else '-'} | {vals} |")
    print()
    sys.stdout.flush()


def part4() -> None:
    print("## 4. How good the SEQ abstraction is: simulated minus SEQ-predicted times (s), plans SEQ calls valid\n")
    print(
        "| plans | valid plans (invalid) | accepted jobs | map end: min / median / p95 / max | "
        "finish: min / median / p95 / max | accepted jobs late on the cluster |"
    )
    print("|---|---|---|---|---|---|")
    for source, g in SEQ_GAPS.items():
        n = len(g["finish"])
        q = lambda xs: " / ".join(f"{v:.1f}" for v in np.percentile(xs, [0, 50, 95, 100])) if xs else "-"  # noqa: E731
        late = f"{100 * np.mean(g['late']):.1f}%" if n else "-"
        print(
            f"| {source} | {len(g['plans'])} ({len(g['invalid_plans'])}) | {n} | {q(g['map'])} | {q(g['finish'])} | {late} |"
        )
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 2 seeds, 3 values a sweep (~1 minute)")
    ap.add_argument("--seeds", type=int, default=None, help="seeds a point (default 10; --quick 2)")
    ap.add_argument("--fault-seeds", type=int, default=5, help="seeds of part 3 (at most --seeds)")
    ap.add_argument("--exact", default="milp-highs", help="exact admission method (default milp-highs)")
    ap.add_argument("--time-limit", type=float, default=10.0, help="time limit of an exact solve, s (default 10)")
    args = ap.parse_args()
    n = args.seeds if args.seeds is not None else (2 if args.quick else 10)
    args.seed_list = list(range(1, n + 1))
    sweeps = QUICK_SWEEPS if args.quick else SWEEPS
    start = time.perf_counter()
    print(
        f"# bench_sim_amb: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {platform.node()}, "
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}; "
        f"seeds {args.seed_list[0]}..{args.seed_list[-1]}, exact {args.exact} ({args.time_limit:g} s)\n"
    )
    part1(args, sweeps)
    part2(args)
    part3(args)
    part4()
    print(f"Total wall time {time.perf_counter() - start:.0f} s.")


if __name__ == "__main__":
    main()
