"""Where a heartbeat-mode day's CPU time goes, by part (cProfile ranks but inflates Python calls).

Run: ``.venv/bin/python benchmarks/heartbeat_split.py [SCENARIO] [--utilisation] [--out FILE]``,
SCENARIO one of ``profile_sim.py``'s under ``fair`` (default ``swim-fair``: the SWIM Facebook 2009
day on 600 nodes; ``alibaba-fair[-HOURS]``), run in heartbeat mode without the utilisation rows
(as ``bench_sim_ab.py`` runs it; ``--utilisation`` records them).

One run without wrappers (CPU seconds of ``Simulation.run``), then one with each part wrapped by a
``time.thread_time`` pair, the time and the calls of:

* ``fair`` heartbeats (``Fair._assign_fast``) that launched a task, and those that launched none;
* ``launch_tasks`` (inside those heartbeats), and the calls of it that started nothing;
* ``HeartbeatOffers._schedule_all``: new work schedules every idle node's heartbeat;
* ``HeldBeats.run``: the lone heartbeats (:mod:`mropt.sim.lone_beats`), the heartbeats and
  passes it runs included; the rest of the wrapped run is the engine's own instants.

The wrappers' own cost (a Python call and two clock reads a wrapped call) is in the wrapped
run's numbers, and a part holding wrapped calls (a heartbeat holds its launches) carries theirs:
the two totals say how much (the SWIM day: 22.5 s wrapped against 15.7 s, about 1.6 us a
wrapped call), so the rows rank and split, they do not time. Writes the table to ``--out`` (default
``benchmarks/results/profiles/SCENARIO-split.txt``) and stdout; the decisions are not touched
(the event-log hashes of both runs are printed and must be equal).
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

from profile_sim import _scenario  # noqa: E402  (beside this file)

from mropt.sim import lone_beats, offers  # noqa: E402
from mropt.sim.engine import Simulation  # noqa: E402
from mropt.sim.policies.fair import Fair  # noqa: E402
from mropt.sim.policy import make_policy  # noqa: E402


def wrapped_run(make: Any) -> tuple[float, str, Counter[str]]:
    """One run with the parts wrapped: (its CPU seconds, its event-log hash, seconds and calls by part)."""
    clock = time.thread_time
    acc: Counter[str] = Counter()
    sim = make()
    policy = sim.policy
    assert isinstance(policy, Fair), "heartbeat_split: the scenario's policy must be fair"
    assign, launch = policy._assign_fast, sim.launch_tasks

    def timed_launch(*args: Any) -> Any:
        start = clock()
        got = launch(*args)
        took = clock() - start
        acc["launch_tasks"] += took
        acc["launch_tasks #"] += 1
        if got[0] < 0:
            acc["launch_tasks, nothing started"] += took
            acc["launch_tasks, nothing started #"] += 1
        return got

    def timed_assign(node: int) -> None:
        before = sim.next_attempt
        start = clock()
        assign(node)
        part = "fair heartbeat, launched" if sim.next_attempt != before else "fair heartbeat, none launched"
        acc[part] += clock() - start
        acc[part + " #"] += 1

    sim.launch_tasks = timed_launch
    policy._assign_fast = policy.assign = timed_assign  # type: ignore[method-assign]
    originals = {
        "_schedule_all": offers.HeartbeatOffers._schedule_all,
        "run": lone_beats.HeldBeats.run,
    }
    names = {"_schedule_all": "HeartbeatOffers._schedule_all", "run": "HeldBeats.run (its heartbeats included)"}

    def timed(name: str) -> Any:
        inner = originals[name]

        def call(self: Any) -> None:
            start = clock()
            inner(self)
            acc[names[name]] += clock() - start
            acc[names[name] + " #"] += 1

        return call

    offers.HeartbeatOffers._schedule_all = timed("_schedule_all")  # type: ignore[method-assign]
    lone_beats.HeldBeats.run = timed("run")  # type: ignore[method-assign]
    try:
        start = time.process_time()
        rec = sim.run()
        cpu = time.process_time() - start
    finally:
        offers.HeartbeatOffers._schedule_all = originals["_schedule_all"]  # type: ignore[method-assign]
        lone_beats.HeldBeats.run = originals["run"]  # type: ignore[method-assign]
    return cpu, rec.event_log_hash(), acc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", nargs="?", default="swim-fair")
    parser.add_argument("--utilisation", action="store_true", help="record the utilisation rows")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if not (args.scenario == "swim-fair" or args.scenario.startswith("alibaba-fair")):
        raise SystemExit(
            f"heartbeat_split: a scenario under fair (swim-fair, alibaba-fair[-HOURS]), not {args.scenario!r}"
        )
    workload, _ = _scenario(args.scenario)

    def make() -> Simulation:
        return Simulation(workload, make_policy("fair"), mode="heartbeat", record_utilisation=args.utilisation)

    sim = make()
    start = time.process_time()
    plain_hash = sim.run().event_log_hash()
    plain = time.process_time() - start
    events = sim.events
    cpu, wrapped_hash, acc = wrapped_run(make)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        f"# heartbeat_split {args.scenario}",
        "",
        f"command: .venv/bin/python benchmarks/heartbeat_split.py {args.scenario}"
        + (" --utilisation" if args.utilisation else ""),
        f"machine: {platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load {load:.1f} at the end, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"tasks: {sum(s.n for j in sim.jobs for s in j.stages):,}; events: {events:,}",
        f"CPU s of Simulation.run: {plain:.2f} without wrappers, {cpu:.2f} wrapped; "
        f"same event log: {'yes' if plain_hash == wrapped_hash else 'NO'}",
        "",
        "| part | CPU s | calls | us a call |",
        "|---|---:|---:|---:|",
    ]
    for part in sorted((k for k in acc if not k.endswith(" #")), key=lambda k: -acc[k]):
        calls = acc[part + " #"]
        lines.append(f"| {part} | {acc[part]:.2f} | {calls:,} | {1e6 * acc[part] / max(calls, 1):.1f} |")
    text = "\n".join(lines) + "\n"
    out = args.out or ROOT / "benchmarks" / "results" / "profiles" / f"{args.scenario}-split.txt"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
