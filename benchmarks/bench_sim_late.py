"""Speculative execution on a heterogeneous cluster: none / Hadoop 0.20 / LATE (0.21) / percentile
LATE / clairvoyant, on FIFO and Fair.

Workloads: ``mropt generate workload --preset late`` (20 jobs of the AMB draws, 40 maps on
average, submitted over 10 minutes; 40 nodes of 2 + 2 slots; reduce slow-start 0.05), swept
over the fraction of slow nodes (``--slow-fraction``, speed 0.5) and the straggler rate
(``--straggler-rate``, slowdown 3), several seeds. Every run uses per-task straggler draws
(``straggler_draws="task"``, the rule runs' default; given to the ``none`` run too), so the
five runs of a cell meet the same stragglers, and every run is checked by the independent
:func:`mropt.sim.verify.verify_simulation` (asserted), with the wasted work recomputed from the
attempt table (:func:`mropt.sim.verify.wasted_work`, asserted equal).

Columns, per policy x slow fraction x straggler rate x rule, averaged over the seeds: mean
job response time (finish - submit), its 95th percentile (over the jobs of all seeds), the
backups launched and the wasted work (slot-seconds of attempts killed because their twin
won), per run; and the headline: each rule's mean response time over clairvoyant's (the gap
to the reference, 1.00 = as good as clairvoyant) and over none's.

Usage: ``python benchmarks/bench_sim_late.py [--seeds 3] [--quick]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mropt.instances.workload_gen import generate_workload
from mropt.sim.run import simulate
from mropt.sim.verify import verify_simulation, wasted_work

RULES = ("none", "hadoop-0.20", "late", "late-percentile", "clairvoyant")


def one(policy: str, rule: str, slow: float, rate: float, seed: int) -> tuple[np.ndarray, int, float]:
    w = generate_workload("late", seed, slow_fraction=slow, straggler_rate=rate)
    run = simulate(w, policy, seed=seed, speculation=rule, straggler_draws="task")
    rec = run.recorder
    jobs, tasks = rec.jobs_columns(), rec.tasks_columns()
    verdict = verify_simulation(w, jobs, tasks)
    assert verdict.ok, verdict.problems
    sim = run.simulation
    assert abs(wasted_work(tasks) - sim.wasted_work) <= 1e-6 * max(1.0, sim.wasted_work)
    response = np.asarray(jobs["finish"], dtype=float) - np.asarray(jobs["submit_time"], dtype=float)
    assert not np.isnan(response).any()
    return response, sim.backups, sim.wasted_work


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="one slow fraction and one straggler rate")
    args = ap.parse_args()
    slows = (0.25,) if args.quick else (0.0, 0.25, 0.5)
    rates = (0.05,) if args.quick else (0.0, 0.05, 0.15)
    t0 = time.perf_counter()
    runs = 0
    print(
        f"{'policy':6} {'slow':>4} {'strag':>5} {'rule':15} {'mean RT':>8} {'p95 RT':>8} "
        f"{'backups':>7} {'wasted':>8} {'/clairv':>7} {'/none':>6}"
    )
    gaps: dict[tuple[str, str], list[float]] = {}
    for policy in ("fifo", "fair"):
        for slow in slows:
            for rate in rates:
                stats = {}
                for rule in RULES:
                    rts, bk, ww = [], [], []
                    for seed in range(args.seeds):
                        r, b, w = one(policy, rule, slow, rate, seed)
                        rts.append(r)
                        bk.append(b)
                        ww.append(w)
                        runs += 1
                    allr = np.concatenate(rts)
                    means = [float(np.mean(x)) for x in rts]
                    stats[rule] = (float(np.mean(means)), float(np.percentile(allr, 95)), np.mean(bk), np.mean(ww))
                ref, base = stats["clairvoyant"][0], stats["none"][0]
                for rule in RULES:
                    m, p95, b, w = stats[rule]
                    gaps.setdefault((policy, rule), []).append(m / ref)
                    print(
                        f"{policy:6} {slow:4.2f} {rate:5.2f} {rule:15} {m:8.1f} {p95:8.1f} "
                        f"{b:7.1f} {w:8.0f} {m / ref:7.3f} {m / base:6.3f}"
                    )
    print()
    print("mean response time over clairvoyant's, averaged over the cells (the gap to the reference):")
    for policy in ("fifo", "fair"):
        print(f"  {policy}: " + ", ".join(f"{rule} {np.mean(gaps[(policy, rule)]):.3f}" for rule in RULES))
    print(f"{runs} runs, each verified, in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
