"""DRF progressive filling, exact leximin methods and their gaps (DDRF paper sec. 3.1).

Run: ``.venv/bin/python benchmarks/bench_drf.py [--sizes 10 100 1000 10000 100000]
[--exact-sizes 4 8 16 32] [--exact-limit 60] [--seeds 3]``

Prints, measured in one run:

1. progressive filling's cost per decision (heap pop + fit test + push) for n users,
   as a ratio to the smallest n, beside log2(n) / log2(n_min): O(log n) per decision
   shows as a ratio that grows far slower than n (the fixed numpy fit test dominates);
   users of two types (CPU- or memory-heavy, demands 1-4 units) with a cluster of
   2.5 n units of each resource, so about 1.5 tasks per user are launched;
2. the exact methods (drf-milp, drf-cpsat) on generated instances (``generate_fairness``,
   10 nodes, tasks 5-50 per user) of growing n with a time limit (``--exact-limit``,
   60 s by the issue; smaller to spare a shared machine): wall time and status;
   the largest n solved to optimality within the limit is the last "optimal" row;
3. gaps of progressive filling (first-fit and best-fit with nodes) to drf-cpsat on
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
import time
from pathlib import Path

import numpy as np

from mropt.cli.table import render
from mropt.fairness.ddrf import compare_round
from mropt.fairness.drf import progressive_filling
from mropt.fairness.flow import round_from_instance
from mropt.fairness.metrics import gaps
from mropt.instances.alibaba import import_alibaba
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
        User(f"u{i}", {"cpu": int(heavy[i] if cpu_heavy[i] else light[i]), "mem": int(light[i] if cpu_heavy[i] else heavy[i])})
        for i in range(n)
    )
    return FairnessInstance(resources={"cpu": 2.5 * 2.5 * n, "mem": 2.5 * 2.5 * n}, users=users)


def bench_scaling(sizes: list[int]) -> None:
    rows, base = [], None
    for n in sizes:
        inst = scaling_instance(n)
        progressive_filling(inst)  # warm caches (numpy views)
        reps = max(1, 200_000 // (4 * n))
        start = time.perf_counter()
        for _ in range(reps):
            res = progressive_filling(inst)
        per = (time.perf_counter() - start) / reps / res.decisions
        base = base or per
        rows.append([n, res.decisions, round(per * 1e6, 3), round(per / base, 2), round(math.log2(n) / math.log2(sizes[0]), 2), round(n / sizes[0])])
    print("1. progressive filling: cost per decision")
    print(render(["users n", "decisions", "us/decision", "ratio", "log2 n ratio", "n ratio"], rows))


def bench_exact(sizes: list[int], limit: float) -> None:
    rows = []
    for method in ("drf-milp", "drf-cpsat"):
        for n in sizes:
            inst = generate_fairness(0, users=n)
            sol = solve(inst, method, time_limit=limit)
            ok = verify_solution(inst, sol).ok if sol.status != "error" else False
            rows.append([method, n, sol.status, round(sol.wall_time, 2), sol.details.get("solves"), ok])
            if sol.status != "optimal":
                break
    print(f"\n2. exact methods, time limit {limit:g} s")
    print(render(["method", "users n", "status", "wall s", "solves", "verified"], rows))


def gap_row(label: str, inst: FairnessInstance, placement: str, limit: float) -> list:
    drf = solve(inst, "drf", placement=placement)
    exact = solve(inst, "drf-cpsat", time_limit=limit)
    assert verify_solution(inst, drf).ok and verify_solution(inst, exact).ok
    g = gaps(inst, drf, exact)
    util = max(g["utilisation_gap"].values())
    return [label, placement if inst.nodes is not None else "-", exact.status, round(g["min_share_heuristic"], 4),
            round(g["min_share_exact"], 4), g["lex"], round(g["max_sorted_share_gap"], 4), round(util, 4),
            g["envy_heuristic"], g["envy_exact"]]


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
    print("\n3. gaps of progressive filling to drf-cpsat (min weighted dominant share, sorted vector, utilisation, envy)")
    print(render(["instance", "placement", "exact", "min share PF", "min share exact", "lex", "max vec gap", "util gap", "envy PF", "envy exact"], rows))


def bench_round() -> None:
    inst = generate_fairness(1, users=6, nodes=20, rack_size=5, with_nodes=True, replicas=3, tasks_min=5, tasks_max=15)
    rnd = round_from_instance(inst, slots_per_node=2)
    rows = compare_round(rnd, E1=3, E2=8, D=5, seed=0, instance=inst)
    print(f"\n4. one round: {sum(rnd.slots.values())} free slots, {len(rnd.tasks)} pending tasks (costs node 0, rack 1, any 3, unscheduled 10)")
    print(render(list(rows[0]), [list(r.values()) for r in rows]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 10000, 100000])
    ap.add_argument("--exact-sizes", type=int, nargs="+", default=[4, 8, 16, 32, 64])
    ap.add_argument("--exact-limit", type=float, default=60.0)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    bench_scaling(args.sizes)
    bench_exact(args.exact_sizes, args.exact_limit)
    bench_gaps(args.seeds, args.exact_limit)
    bench_round()


if __name__ == "__main__":
    main()
