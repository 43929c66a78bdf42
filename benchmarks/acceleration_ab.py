"""One acceleration of a policy on and off, on the SWIM Facebook 2009 day in one tree (issue 32).

A policy's accelerations (``Policy.accelerations``, e.g. ``fair``'s ``quiet_runs``) are speed only:
``make_policy(POLICY, without={NAME})`` runs the same decisions without it. This runs the day under
both, alternated (the first side swapped at every rep), and prints each run's CPU seconds of
``Simulation.run`` (utilisation rows recorded), its event count and event-log hash (they must be
equal), then the medians and their ratio.

Run: ``.venv/bin/python benchmarks/acceleration_ab.py fair quiet_runs [--reps 4] [--mode heartbeat]``.
The trace is read from ``../shared/traces`` (``MROPT_SHARED`` to move it).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time

import bench_sim  # (beside this file)

from mropt.importers.swim_workload import import_swim_workload
from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policy")
    parser.add_argument("acceleration")
    parser.add_argument("--reps", type=int, default=4)
    parser.add_argument("--mode", default="heartbeat")
    args = parser.parse_args()
    if args.acceleration not in make_policy(args.policy).accelerations:
        sys.exit(f"acceleration_ab: {args.policy} has no acceleration {args.acceleration!r}")
    workload = import_swim_workload(bench_sim.SWIM_DAY)
    runs: dict[str, list[float]] = {"with": [], "without": []}
    logs: set[tuple[int, str]] = set()
    for rep in range(args.reps):
        for side in ("with", "without") if rep % 2 == 0 else ("without", "with"):
            off = {args.acceleration} if side == "without" else set()
            policy = make_policy(args.policy, without=off)
            gc.collect()
            start = time.process_time()
            sim = Simulation(workload, policy, mode=args.mode, record_utilisation=True)
            sim.run()
            runs[side].append(time.process_time() - start)
            logs.add((sim.events, sim.record.event_log_hash()))
            print(f"rep {rep} {side:7} {runs[side][-1]:.2f} s, {sim.events} events", flush=True)
    if len(logs) != 1:
        sys.exit(f"acceleration_ab: the two sides made different runs: {sorted(logs)}")
    with_, without = (statistics.median(runs[k]) for k in ("with", "without"))
    print(f"median with {with_:.3f} s, without {without:.3f} s; with / without {with_ / without:.3f}; same log")


if __name__ == "__main__":
    main()
