"""Benchmark of the exact SEQ admission methods and the bounds (issue 5).

For paper-default instances (``generate_admission(seed, jobs=N)``), per N and exact
method: median wall time to proven optimality (over the runs that proved it; "-" if
none), the share proven within the time limit, the mean gap of the heuristic (AMB if
registered, else edf-greedy; the column says which) below the optimum, and the mean
gap of each bound (ideal, bound-lp, bound-energy) above it. Gaps use the best proven
optimum of the methods; instances no method proved are left out of the gap means
(their count is printed).

    python benchmarks/bench_exact.py                      # full: N = 10..100, 5 seeds, 60 s
    python benchmarks/bench_exact.py --sizes 10,20,30 --seeds 3 --time-limit 20
    python benchmarks/bench_exact.py --quick              # N = 10, 20, 30; 3 seeds; 20 s
"""

from __future__ import annotations

import argparse
import statistics
import sys
import warnings

from mropt.instances.admission_gen import generate_admission
from mropt.registry import get_method, solve

warnings.filterwarnings("ignore")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,20,30,40,60,80,100")
    ap.add_argument("--seeds", type=int, default=5, help="seeds 0..K-1")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--methods", default="milp-cbc,milp-highs,cpsat")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="N = 10, 20, 30; 3 seeds; 20 s per run")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.seeds, args.time_limit = "10,20,30", 3, 20.0
    sizes = [int(x) for x in args.sizes.split(",")]
    methods = args.methods.split(",")
    try:
        get_method("amb")
        heuristic = "amb"
    except Exception:  # noqa: BLE001
        heuristic = "edf-greedy"
    bounds = ["ideal", "bound-lp", "bound-energy"]
    print(f"time limit {args.time_limit:g} s, seeds 0..{args.seeds - 1}, threads {args.threads}, heuristic {heuristic}")
    head = f"{'N':>4} {'method':<11} {'median s':>9} {'proven':>7} | {heuristic + ' gap%':>12} " + " ".join(
        f"{b + ' gap%':>17}" for b in bounds
    )
    print(head)
    print("-" * len(head))
    for n in sizes:
        runs: dict[str, list] = {m: [] for m in methods}
        optimum: dict[int, float] = {}
        extra: dict[int, dict[str, float]] = {}
        for seed in range(args.seeds):
            inst = generate_admission(seed, jobs=n)
            for m in methods:
                sol = solve(inst, m, time_limit=args.time_limit, threads=args.threads)
                runs[m].append(sol)
                if sol.status == "optimal":
                    optimum[seed] = float(sol.objective)
                print(
                    f"  N={n} seed={seed} {m}: {sol.status} {sol.objective:g} bound {sol.bound:g} {sol.wall_time:.2f}s",
                    file=sys.stderr,
                    flush=True,
                )
            extra[seed] = {b: float(solve(inst, b).objective) for b in [heuristic, *bounds]}
        proven = [s for s in optimum]

        def gap(key: str, above: bool) -> str:
            if not proven:
                return "-"
            vals = []
            for s in proven:
                opt = optimum[s]
                v = extra[s][key]
                vals.append(100.0 * ((v - opt) if above else (opt - v)) / opt if opt else 0.0)
            return f"{statistics.fmean(vals):.2f}"

        cols = f"{gap(heuristic, False):>{len(heuristic) + 5}} " + " ".join(f"{gap(b, True):>17}" for b in bounds)
        for m in methods:
            times = [s.wall_time for s in runs[m] if s.status == "optimal"]
            med = f"{statistics.median(times):.2f}" if times else "-"
            share = f"{len(times)}/{len(runs[m])}"
            print(f"{n:>4} {m:<11} {med:>9} {share:>7} | {cols}", flush=True)
        if len(proven) < args.seeds:
            print(f"     ({args.seeds - len(proven)} instance(s) of N={n} not proven by any method: left out of gaps)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
