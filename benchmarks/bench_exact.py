"""Benchmark of the exact SEQ admission methods and the bounds.

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

The exact admission frontier, ``--frontier``: AMB Table 2 defaults, seeds 1-20,
N = 40, 60, 100, 150, 200, 300, 500, 1000, the methods cpsat, cpsat-direct and
cpsat-portfolio run one after another on each instance (one machine, one process), 60 s
and 1 thread each. Per N and method: the share proven optimal, the median wall time
to the proof (over the proven runs), the mean final gap ``100 (bound - objective) /
bound`` (0 for a proof; over every run) and the instances (seeds) the method proves and
no other does. Every plan goes through ``mropt.verify``; a plan it refuses, or two
proofs of different optima, are reported and count as not proven. Each run is one
JSON line of ``--runs-out`` (rewritten after every run). Reduce with ``--sizes``,
``--seed-list`` and ``--time-limit``:

    python benchmarks/bench_exact.py --frontier                         # hours: 480 runs of up to 60 s
    python benchmarks/bench_exact.py --frontier --sizes 40,60,100 --seed-list 1-3 --time-limit 30

``--jobs K`` runs K of them at once, each in its own process (``--threads`` threads each: on a
machine with more cores than K times that, the runs do not compete for a core). Runs split
over separate commands (``--runs-out`` each) are put into one table with ``--tables-from``:

    python benchmarks/bench_exact.py --frontier --tables-from a.jsonl b.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from mropt.admission.verify import verify
from mropt.instances.admission_gen import generate_admission
from mropt.model.files import write_text
from mropt.model.tolerance import same_value
from mropt.registry import get_method, solve

warnings.filterwarnings("ignore")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", help="N values (default 10,20,30,40,60,80,100; --frontier: 40,...,1000)")
    ap.add_argument("--seeds", type=int, default=5, help="seeds 0..K-1")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument(
        "--methods",
        help="default milp-cbc,milp-highs,cpsat; --frontier: cpsat,cpsat-direct,cpsat-portfolio "
        "(--frontier: a method may carry parameters, NAME:KEY=VALUE+KEY=VALUE, e.g. cpsat:dominance=false)",
    )
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="N = 10, 20, 30; 3 seeds; 20 s per run")
    ap.add_argument("--frontier", action="store_true", help="the exact admission frontier (module docstring)")
    ap.add_argument("--seed-list", help="seeds as a list of numbers and ranges, e.g. 1-3,7 (overrides --seeds)")
    ap.add_argument("--runs-out", default="frontier-runs.jsonl", help="--frontier: one JSON line per run")
    ap.add_argument("--tables-from", nargs="+", metavar="JSONL", help="--frontier: print the table of these runs files")
    ap.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="--frontier: runs at once, each in its own process with --threads threads (default 1: one after another)",
    )
    args = ap.parse_args(argv)
    if args.frontier and args.tables_from:
        return frontier_tables(args.tables_from)
    if args.frontier:
        return frontier(args, sys.argv[1:] if argv is None else argv)
    args.sizes, args.methods = args.sizes or "10,20,30,40,60,80,100", args.methods or "milp-cbc,milp-highs,cpsat"
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
    seeds = parse_seeds(args.seed_list) if args.seed_list else list(range(args.seeds))
    print(f"time limit {args.time_limit:g} s, seeds {seeds}, threads {args.threads}, heuristic {heuristic}")
    head = f"{'N':>4} {'method':<11} {'median s':>9} {'proven':>7} | {heuristic + ' gap%':>12} " + " ".join(
        f"{b + ' gap%':>17}" for b in bounds
    )
    print(head)
    print("-" * len(head))
    for n in sizes:
        runs: dict[str, list] = {m: [] for m in methods}
        optimum: dict[int, float] = {}
        extra: dict[int, dict[str, float]] = {}
        for seed in seeds:
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
        if len(proven) < len(seeds):
            print(f"     ({len(seeds) - len(proven)} instance(s) of N={n} not proven by any method: left out of gaps)")
    return 0


FRONTIER_SIZES = "40,60,100,150,200,300,500,1000"
FRONTIER_METHODS = "cpsat,cpsat-direct,cpsat-portfolio"


def parse_seeds(text: str) -> list[int]:
    """``1-3,7`` -> [1, 2, 3, 7]."""
    seeds: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        seeds.extend(range(int(lo), int(hi or lo) + 1))
    return seeds


def method_spec(spec: str) -> tuple[str, dict]:
    """``cpsat:dominance=false+k=v`` -> ("cpsat", {"dominance": False, "k": "v"}): a method with
    parameters (values read as JSON, else as text), for A/B runs of one parameter (``--methods
    cpsat,cpsat:dominance=false``)."""
    name, _, rest = spec.partition(":")
    params = {}
    for item in filter(None, rest.split("+")):
        key, _, text = item.partition("=")
        try:
            params[key] = json.loads(text)
        except json.JSONDecodeError:
            params[key] = text
    return name, params


def frontier_run(n: int, seed: int, method: str, time_limit: float, threads: int) -> dict:
    """One run of the frontier: what it proved, its final gap, whether mropt.verify accepts its plan.
    ``method`` may carry parameters (:func:`method_spec`); the runs are labelled with it whole."""
    inst = generate_admission(seed, jobs=n)  # cheap (milliseconds at N = 1000)
    name, params = method_spec(method)
    sol = solve(inst, name, time_limit=time_limit, threads=threads, **params)
    verified = verify(inst, sol).ok
    objective, bound = float(sol.objective), float(sol.bound if sol.bound is not None else "inf")
    gap = 0.0 if sol.status == "optimal" else 100.0 * (bound - objective) / bound if bound > 0 else 0.0
    return {
        "n": n,
        "seed": seed,
        "method": method,
        "status": sol.status,
        "objective": objective,
        "bound": bound,
        "gap_pct": gap,
        "wall_time": sol.wall_time,
        "verified": verified,
        "proven": sol.status == "optimal" and verified,
        "incumbent_from": sol.details.get("incumbent_from"),
        "bound_from": sol.details.get("bound_from"),
    }


def frontier(args: argparse.Namespace, argv: list[str]) -> int:
    """The exact admission frontier of the module docstring; prints the table, writes the runs."""
    sizes = [int(x) for x in (args.sizes or FRONTIER_SIZES).split(",")]
    methods = (args.methods or FRONTIER_METHODS).split(",")
    seeds = parse_seeds(args.seed_list or "1-20")
    limit = args.time_limit
    print(f"frontier: AMB Table 2 defaults, N {sizes}, seeds {seeds}, {limit:g} s, {args.threads} thread(s)")
    print(f"command: python benchmarks/bench_exact.py {' '.join(argv)}", flush=True)
    tasks = [(n, seed, m) for n in sizes for seed in seeds for m in methods]
    runs: list[dict] = []

    def done(row: dict) -> None:
        runs.append(row)
        write_text(args.runs_out, "".join(json.dumps(r) + "\n" for r in runs))
        print(
            f"  N={row['n']} seed={row['seed']} {row['method']}: {row['status']} {row['objective']:g} "
            f"bound {row['bound']:g} gap {row['gap_pct']:.2f}% {row['wall_time']:.2f}s"
            f"{'' if row['verified'] else ' VERIFY FAILED'}",
            file=sys.stderr,
            flush=True,
        )

    if args.jobs <= 1:
        for n, seed, m in tasks:
            done(frontier_run(n, seed, m, limit, args.threads))
    else:  # largest N first, so that the long runs do not come last and leave processes idle
        tasks.sort(key=lambda t: -t[0])
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            futures = [pool.submit(frontier_run, n, seed, m, limit, args.threads) for n, seed, m in tasks]
            for future in as_completed(futures):
                done(future.result())
    print_frontier(runs, sizes, seeds, methods)
    return 0


def frontier_tables(paths: list[str]) -> int:
    """The frontier table of runs read back from ``--runs-out`` files (one process each)."""
    runs = [json.loads(line) for path in paths for line in Path(path).read_text("utf-8").splitlines() if line.strip()]
    sizes = sorted({r["n"] for r in runs})
    seeds = sorted({r["seed"] for r in runs})
    methods = list(dict.fromkeys(r["method"] for r in runs))
    print(f"frontier from {', '.join(paths)}: {len(runs)} runs, N {sizes}, seeds {seeds[0]}-{seeds[-1]}")
    print_frontier(runs, sizes, seeds, methods)
    return 0


def print_frontier(runs: list[dict], sizes: list[int], seeds: list[int], methods: list[str]) -> None:
    """The frontier table: proven share, median time to proof, mean final gap, instances only one method closes."""
    for n in sizes:  # two proofs of different optima: neither counts
        for seed in seeds:
            proofs = [r for r in runs if r["n"] == n and r["seed"] == seed and r["proven"]]
            if any(not same_value(r["objective"], proofs[0]["objective"]) for r in proofs):
                print(f"DISAGREE N={n} seed={seed}: " + ", ".join(f"{r['method']} {r['objective']:g}" for r in proofs))
                for r in proofs:
                    r["proven"] = False
    width = max(len(m) for m in methods)
    head = (
        f"{'N':>5} {'method':<{width}} {'proven':>7} {'median s':>9} {'mean gap%':>10}  only this method proves (seeds)"
    )
    print(head)
    print("-" * len(head))
    for n in [*sizes, None]:
        for m in methods:
            mine = [r for r in runs if r["method"] == m and n in (None, r["n"])]
            times = [r["wall_time"] for r in mine if r["proven"]]
            only = [
                f"{r['seed']}" if n is not None else f"{r['n']}/{r['seed']}"
                for r in mine
                if r["proven"]
                and not any(
                    o["proven"] and o["n"] == r["n"] and o["seed"] == r["seed"] for o in runs if o["method"] != m
                )
            ]
            med = f"{statistics.median(times):.2f}" if times else "-"
            gap = f"{statistics.fmean(r['gap_pct'] for r in mine):.3f}" if mine else "-"
            label = "all" if n is None else str(n)
            print(f"{label:>5} {m:<{width}} {len(times):>3}/{len(mine):<3} {med:>9} {gap:>10}  {' '.join(only) or '-'}")
    unverified = [r for r in runs if not r["verified"]]
    if unverified:
        print(
            "plans mropt.verify refused: " + ", ".join(f"{r['method']} N={r['n']} seed={r['seed']}" for r in unverified)
        )


if __name__ == "__main__":
    raise SystemExit(main())
