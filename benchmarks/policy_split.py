"""A heartbeat-mode day's CPU time split into the policy's part and the engine's (issue 32).

Run: ``.venv/bin/python benchmarks/policy_split.py POLICY [POLICY ...] [--out FILE]``: the SWIM
Facebook 2009 day on 600 nodes (``profile_sim.py``'s ``swim-POLICY``), in heartbeat mode without the
utilisation rows (as ``bench_sim_ab.py`` runs it), under each POLICY (``fifo``, ``capacity``,
``mpsa``, ``fair``, ...).

One run without wrappers (CPU seconds of ``Simulation.run``), then one with the policy's ``assign``
(its heartbeats: those that launched a task and those that launched none) and the engine's
``launch_tasks`` (every launch goes through it) each wrapped by a ``time.thread_time`` pair. The
policy's own time is its heartbeats less the launches inside them; the rest of the wrapped run is
the engine's (the lone-heartbeat loop, the passes of new work, completions, the recorder). The
wrappers' own cost (a Python call and two clock reads a wrapped call, about 1.5 us) is in the
wrapped run's numbers: the rows split, they do not time. The event-log hashes of both runs must be
equal. Writes the table to ``--out`` (default ``benchmarks/results/profiles/swim-split.txt``) and stdout.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_sim  # noqa: E402  (beside this file)

from mropt.importers.swim_workload import import_swim_workload  # noqa: E402
from mropt.model.workload import WorkloadInstance  # noqa: E402
from mropt.sim.engine import Simulation  # noqa: E402
from mropt.sim.policy import make_policy  # noqa: E402


def split(workload: WorkloadInstance, policy: str) -> str:
    """One row of the table: the plain run's CPU seconds, then the wrapped run's parts."""

    def make() -> Simulation:
        return Simulation(workload, make_policy(policy), mode="heartbeat", record_utilisation=False)

    sim = make()
    start = time.process_time()
    plain_hash = sim.run().event_log_hash()
    plain = time.process_time() - start
    sim = make()
    clock = time.thread_time
    acc: Counter[str] = Counter()
    assign, launch_tasks = sim.policy.assign, sim.launch_tasks

    def timed_launch(*args: Any) -> Any:
        begin = clock()
        got = launch_tasks(*args)
        acc["launch s"] += clock() - begin
        acc["launch n"] += 1
        return got

    def timed_assign(node: int) -> None:
        before = sim.next_attempt
        begin = clock()
        assign(node)
        took = clock() - begin
        part = "launched" if sim.next_attempt != before else "none"
        acc[f"{part} s"] += took
        acc[f"{part} n"] += 1

    sim.launch_tasks = timed_launch  # type: ignore[method-assign]
    sim.policy.assign = timed_assign  # type: ignore[method-assign]
    start = time.process_time()
    wrapped_hash = sim.run().event_log_hash()
    wrapped = time.process_time() - start
    assert wrapped_hash == plain_hash, f"policy_split {policy}: the wrapped run's event log differs"
    beats = acc["launched s"] + acc["none s"]
    return (
        f"| {policy} | {plain:.2f} | {wrapped:.2f} | {acc['launched n']:,} ({acc['launched s']:.2f} s) "
        f"| {acc['none n']:,} ({acc['none s']:.2f} s) | {acc['launch n']:,} ({acc['launch s']:.2f} s) "
        f"| {beats - acc['launch s']:.2f} | {wrapped - beats:.2f} | {sim.events:,} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policies", nargs="+")
    parser.add_argument("--out", help="default benchmarks/results/profiles/swim-split.txt")
    args = parser.parse_args()
    workload = import_swim_workload(bench_sim.SWIM_DAY)
    lines = [
        f"# policy_split {' '.join(args.policies)}",
        "",
        f"command: .venv/bin/python benchmarks/policy_split.py {' '.join(args.policies)}",
        f"machine: {platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load {os.getloadavg()[0]:.1f} at the start, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "",
        "CPU seconds; heartbeats: the policy's assign calls (those that launched a task, those that launched",
        "none) with their seconds; own: the heartbeats less launch_tasks inside them; rest: the engine's",
        "",
        "| policy | plain s | wrapped s | heartbeats launching | launching none | launch_tasks | own s | rest s | events |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    print("\n".join(lines), flush=True)
    for policy in args.policies:
        lines.append(split(workload, policy))
        print(lines[-1], flush=True)
    out = Path(args.out) if args.out else ROOT / "benchmarks" / "results" / "profiles" / "swim-split.txt"
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
