"""DRF progressive filling, exact leximin methods and their gaps (DDRF paper sec. 3.1).

Run: ``.venv/bin/python benchmarks/bench_drf.py [--quick] [--sizes 10 100 1000 10000 100000]
[--exact-max 256] [--exact-limit 60] [--seeds 3]`` (``--quick``: sizes up to 10,000,
exact sizes up to 32 with 5 s, one seed -- a smoke run of a minute or so).

Prints, measured in one run:

1. progressive filling's cost per decision (heap pop + fit test + push) for n users,
   as a ratio to the smallest n, beside log2(n) / log2(n_min) and n / n_min: O(log n)
   per decision shows as a ratio that grows far slower than n (the fixed numpy fit test
   dominates); beside it a linear scan (numpy argmin) for the smallest share, O(n) per
   decision. Users of two types (CPU- or memory-heavy, demands 1-4 units) with a
   cluster of 6.25 n units of each resource, so about 2.5 tasks per user are launched;
2. the exact methods (drf-lp, drf-milp, drf-cpsat; without and with nodes) on generated
   instances (``generate_fairness``, 10 nodes of 16 cores and 64 GB, tasks 5-50 per
   user) of n = 4, 8, 16, ... users with a time limit (``--exact-limit``, 60 s by the
   issue): wall time and status, up to the first n not solved to optimality, and a
   summary of the largest n each solves within the limit;
3. gaps of progressive filling (first-fit and best-fit with nodes) to drf-cpsat (to
   drf-milp where CP-SAT is not optimal without nodes: rounded Alibaba shares) on
   generated instances and on Alibaba-derived ones (``import_alibaba``: the first 10
   jobs of hour-long windows, on 2 machines so they compete): minimum weighted dominant
   share, lexicographic comparison of the sorted share vectors (1 = exact better),
   largest gap in the sorted vector, utilisation gap and envy pairs;
4. one scheduling round (generated instance with nodes and inputs, 2 slots per node):
   DRF greedy, delay scheduling and DDRF against the min-cost flow.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from mropt.fairness.ddrf import compare_round
from mropt.fairness.drf import progressive_filling
from mropt.fairness.flow import round_from_instance
from mropt.fairness.metrics import gaps
from mropt.harness.table import render
from mropt.importers.alibaba import import_alibaba
from mropt.instances.fairness_gen import generate_fairness
from mropt.model.fairness import FairnessInstance, User
from mropt.registry import solve, verify_solution

ALIBABA = Path(__file__).resolve().parents[1].parent / "shared" / "traces" / "alibaba-2017" / "batch_task.csv"


def scaling_instance(n: int, seed: int = 0) -> FairnessInstance:
    rng = np.random.default_rng(seed)
    heavy = rng.integers(2, 5, n)
    light = rng.integers(1, 3, n)
    cpu_heavy = rng.integers(0, 2, n).astype(bool)
    users = tuple(
        User(
            f"u{i}",
            {"cpu": int(heavy[i] if cpu_heavy[i] else light[i]), "mem": int(light[i] if cpu_heavy[i] else heavy[i])},
        )
        for i in range(n)
    )
    return FairnessInstance(resources={"cpu": 6.25 * n, "mem": 6.25 * n}, users=users)


def linear_scan_filling(inst: FairnessInstance) -> int:
    """Progressive filling with an O(n) scan for the smallest weighted share (the baseline); returns decisions."""
    keys = np.zeros(inst.n)
    step = inst.dominant_demand / inst.weights
    used = np.zeros_like(inst.capacity)
    tasks = np.zeros(inst.n)
    decisions = 0
    while True:
        i = int(np.argmin(keys))
        if not np.isfinite(keys[i]):
            return decisions
        decisions += 1
        d = inst.demands[i]
        if np.all(used + d <= inst.capacity + 1e-9) and tasks[i] < inst.task_caps[i]:
            used += d
            tasks[i] += 1
            keys[i] = tasks[i] * step[i]
        else:
            keys[i] = np.inf


def _per_decision(run, budget: float = 1.0) -> tuple[float, int]:
    start, reps, decisions = time.perf_counter(), 0, 0
    while True:
        decisions = run()
        reps += 1
        if time.perf_counter() - start >= budget:
            return (time.perf_counter() - start) / reps / decisions, decisions


def bench_scaling(sizes: list[int]) -> None:
    rows, base, base_scan = [], None, None
    for n in sizes:
        inst = scaling_instance(n)
        progressive_filling(inst)  # warm caches (numpy views)
        per, decisions = _per_decision(lambda: progressive_filling(inst).decisions)
        base = base or per
        per_scan, _ = _per_decision(lambda: linear_scan_filling(inst), budget=0.5)
        base_scan = base_scan or per_scan
        scan = [round(per_scan * 1e6, 2), round(per_scan / base_scan, 2)]
        rows.append(
            [
                n,
                decisions,
                round(per * 1e6, 2),
                round(per / base, 2),
                round(math.log2(n) / math.log2(sizes[0]), 2),
                round(n / sizes[0]),
                *scan,
            ]
        )
    print("1. progressive filling: cost per decision (heap), beside a linear scan for the smallest share")
    print(
        render(
            [
                "users n",
                "decisions",
                "heap us/dec",
                "heap ratio",
                "log2 n ratio",
                "n ratio",
                "scan us/dec",
                "scan ratio",
            ],
            rows,
        )
    )


EXACT_METHODS = ("drf-lp", "drf-milp", "drf-cpsat")


def bench_exact(max_n: int, limit: float) -> None:
    rows, largest = [], []
    for with_nodes in (False, True):
        for method in EXACT_METHODS:
            best, n = None, 4
            while n <= max_n:
                inst = generate_fairness(0, users=n, with_nodes=with_nodes)
                sol = solve(inst, method, time_limit=limit)
                ok = verify_solution(inst, sol).ok if sol.decision else False
                rows.append(
                    [
                        method,
                        "10 nodes" if with_nodes else "totals",
                        n,
                        sol.status,
                        round(sol.wall_time, 2),
                        sol.details.get("solves"),
                        ok,
                    ]
                )
                if sol.status != "optimal":
                    break
                best, n = n, n * 2
            largest.append(
                [
                    method,
                    "10 nodes" if with_nodes else "totals",
                    best if best is not None else "< 4",
                    "yes" if n > max_n else "no",
                ]
            )
    print(f"\n2. exact methods on generated instances, time limit {limit:g} s (n doubles until not optimal)")
    print(render(["method", "cluster", "users n", "status", "wall s", "solves", "verified"], rows))
    print(f"\n   largest n solved to optimality within {limit:g} s")
    print(render(["method", "cluster", "largest n", f"reached --exact-max {max_n}"], largest))


def gap_row(label: str, inst: FairnessInstance, placement: str, limit: float) -> list:
    drf = solve(inst, "drf", placement=placement)
    exact = solve(inst, "drf-cpsat", time_limit=limit)
    if exact.status != "optimal" and inst.nodes is None:  # e.g. CP-SAT's rounded shares (Alibaba)
        milp = solve(inst, "drf-milp", time_limit=limit)
        exact = milp if milp.status == "optimal" else exact
    head = [label, placement if inst.nodes is not None else "-", f"{exact.method} {exact.status}"]
    if not exact.decision:
        return head + ["-"] * 7
    assert verify_solution(inst, drf).ok and verify_solution(inst, exact).ok
    g = gaps(inst, drf, exact)
    util = max(g["utilisation_gap"].values())
    return head + [
        round(g["min_share_heuristic"], 4),
        round(g["min_share_exact"], 4),
        g["lex"],
        round(g["max_sorted_share_gap"], 4),
        round(util, 4),
        g["envy_heuristic"],
        g["envy_exact"],
    ]


def bench_gaps(seeds: int, limit: float) -> None:
    rows = []
    for seed in range(seeds):
        inst = generate_fairness(seed, users=8, nodes=4, tasks_max=40)
        rows.append(gap_row(f"generated s{seed} n=8", inst, "first-fit", limit))
        inst = generate_fairness(seed, users=6, nodes=4, tasks_max=40, with_nodes=True)
        for rule in ("first-fit", "best-fit"):
            rows.append(gap_row(f"generated+nodes s{seed} n=6", inst, rule, limit))
    if ALIBABA.is_file():
        for start in (0, 3600 * 6, 3600 * 12):
            inst = import_alibaba(ALIBABA, start=start, duration=3600, machines=2, max_users=10)
            rows.append(gap_row(f"alibaba t={start // 3600}h n={inst.n}", inst, "first-fit", limit))
            inst = import_alibaba(ALIBABA, start=start, duration=3600, machines=2, max_users=8, with_nodes=True)
            for rule in ("first-fit", "best-fit"):
                rows.append(gap_row(f"alibaba+nodes t={start // 3600}h n={inst.n}", inst, rule, limit))
    else:
        print(f"(Alibaba trace not found at {ALIBABA}: its rows are left out)")
    print(
        "\n3. gaps of progressive filling to the exact leximin (min weighted dominant share, sorted vector, utilisation, envy)"
    )
    print(
        render(
            [
                "instance",
                "placement",
                "exact",
                "min share PF",
                "min share exact",
                "lex",
                "max vec gap",
                "util gap",
                "envy PF",
                "envy exact",
            ],
            rows,
        )
    )


def bench_round() -> None:
    inst = generate_fairness(1, users=6, nodes=20, rack_size=5, with_nodes=True, replicas=3, tasks_min=5, tasks_max=15)
    rnd = round_from_instance(inst, slots_per_node=2)
    rows = compare_round(rnd, E1=3, E2=8, D=5, seed=0, instance=inst)
    print(
        f"\n4. one round: {sum(rnd.slots.values())} free slots, {len(rnd.tasks)} pending tasks (costs node 0, rack 1, any 3, unscheduled 10)"
    )
    print(render(list(rows[0]), [list(r.values()) for r in rows]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--quick", action="store_true", help="smoke run: sizes to 10,000, exact to 32 users with 5 s, 1 seed"
    )
    ap.add_argument("--sizes", type=int, nargs="+", default=None, help="users for part 1 (default 10 .. 100000)")
    ap.add_argument("--exact-max", type=int, default=None, help="largest n tried in part 2 (default 256)")
    ap.add_argument("--exact-limit", type=float, default=None, help="time limit of each exact solve, s (default 60)")
    ap.add_argument("--seeds", type=int, default=None, help="seeds of the generated gap instances (default 3)")
    args = ap.parse_args()
    quick = args.quick
    sizes = args.sizes or ([10, 100, 1000, 10000] if quick else [10, 100, 1000, 10000, 100000])
    exact_max = args.exact_max or (32 if quick else 256)
    limit = args.exact_limit or (5.0 if quick else 60.0)
    seeds = args.seeds or (1 if quick else 3)
    print(f"# command: .venv/bin/python benchmarks/{Path(__file__).name} {' '.join(sys.argv[1:])}".rstrip())
    print(
        f"# {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d')}\n"
    )
    t0 = time.perf_counter()
    bench_scaling(sizes)
    bench_exact(exact_max, limit)
    bench_gaps(seeds, limit)
    bench_round()
    print(f"\n# total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
