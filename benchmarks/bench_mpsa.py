"""MPSA's allocation (Algorithm 1, ``mpsa``) against the exact optimum of eq. 17 (``mpsa-exact``).

Run: ``.venv/bin/python benchmarks/bench_mpsa.py [--seeds 20]``

Prints three Markdown tables, measured in one run, on the paper's Table 2 setting
(``generate_priority``: 100 map and 50 reduce slots, deadlines 10/20/40 min, 6000
slot-seconds of map work and 3000 of reduce work per visit, Table 1's pattern mix):

* Figure 5 style: reserved map/reduce slots per priority and the shared remainder
  against the arrival rate per priority (jobs per minute), for both methods;
* Figure 6 style: the same against the workload scale (multiplying both works) at the
  paper's 0.3 jobs/min in all (0.1 per priority);
* gap: over seeded instances with +/-30% jitter on each priority's rate and works, the
  total reserved slots of mpsa over those of mpsa-exact where both meet every deadline,
  how often mpsa misses a deadline that an allocation exists for, and run times.

Each cell is "map/reduce"; "x" marks a priority that misses its deadline.
"""

from __future__ import annotations

import argparse
import statistics
import time

import mropt
from mropt.instances.priority_gen import generate_priority

METHODS = ("mpsa", "mpsa-exact")


def _cells(sol) -> list[str]:
    late = set(sol.decision["infeasible"])
    out = []
    for pid, entry in sol.decision["allocation"].items():
        out.append(f"{entry['map_slots']}/{entry['reduce_slots']}{' x' if pid in late else ''}")
    shared = sol.decision["shared"]
    out.append(f"{shared['map_slots']}/{shared['reduce_slots']}")
    out.append(f"{sol.objective:g}")
    return out


def _sweep(title: str, label: str, points: list[tuple[str, dict]]) -> None:
    print(f"\n### {title}\n")
    header = [label, "method", "T1", "T2", "T3", "shared", "total"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for value, overrides in points:
        inst = generate_priority(**overrides)
        for method in METHODS:
            sol = mropt.solve(inst, method)
            assert mropt.verify(inst, sol).ok
            print("| " + " | ".join([value, method, *_cells(sol)]) + " |")


def _gap(seeds: int) -> None:
    print(f"\n### mpsa against mpsa-exact (jitter 0.3, seeds 0..{seeds - 1})\n")
    header = [
        "rate/min per priority",
        "instances",
        "both feasible",
        "mean mpsa/exact",
        "max mpsa/exact",
        "mpsa misses, exact meets",
        "both infeasible",
        "mpsa ms",
        "exact ms",
    ]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for rate_pm in (0.01, 0.02, 0.03, 0.04, 0.045):
        ratios, misses, none, times = [], 0, 0, {m: [] for m in METHODS}
        for seed in range(seeds):
            inst = generate_priority(seed, arrival_rate=rate_pm / 60, jitter=0.3)
            sols = {}
            for method in METHODS:
                start = time.perf_counter()
                sols[method] = mropt.solve(inst, method)
                times[method].append((time.perf_counter() - start) * 1000)
                assert mropt.verify(inst, sols[method]).ok
            heur, exact = sols["mpsa"], sols["mpsa-exact"]
            if heur.status == "feasible" and exact.status == "optimal":
                ratios.append(heur.objective / exact.objective)
            elif exact.status == "optimal":
                misses += 1
            else:
                none += 1
        mean = f"{statistics.fmean(ratios):.3f}" if ratios else "-"
        worst = f"{max(ratios):.3f}" if ratios else "-"
        row = [
            f"{rate_pm:g}",
            str(seeds),
            str(len(ratios)),
            mean,
            worst,
            str(misses),
            str(none),
            f"{statistics.median(times['mpsa']):.2f}",
            f"{statistics.median(times['mpsa-exact']):.2f}",
        ]
        print("| " + " | ".join(row) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="instances per rate in the gap table (default 20)")
    args = parser.parse_args()
    rates = (0.005, 0.01, 0.02, 0.03, 0.04, 0.05, 0.1)
    _sweep(
        "Figure 5 style: slots (map/reduce) against the arrival rate",
        "rate/min per priority",
        [(f"{r:g}", {"arrival_rate": r / 60}) for r in rates],
    )
    scales = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 1.0)
    _sweep(
        "Figure 6 style: slots (map/reduce) against the workload, 0.1 jobs/min per priority",
        "workload scale",
        [(f"{s:g}", {"workload_scale": s}) for s in scales],
    )
    _gap(args.seeds)


if __name__ == "__main__":
    main()
