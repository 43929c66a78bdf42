"""Where a heartbeat-mode day's CPU time goes, by part: the policy's and the engine's (issue 32).

Run: ``.venv/bin/python benchmarks/heartbeat_split.py [SCENARIO ...] [--parts policy|engine]
[--utilisation] [--out FILE]``, each SCENARIO one of ``profile_sim.py``'s (default ``swim-fair``: the
SWIM Facebook 2009 day on 600 nodes under ``fair``; ``swim-fifo``, ``swim-capacity``, ``swim-mpsa``,
...; ``alibaba-fair[-HOURS]``), its policy run in heartbeat mode without the utilisation rows (as
``bench_sim_ab.py`` runs it; ``--utilisation`` records them).

Per scenario, one run without wrappers (CPU seconds of ``Simulation.run``), then one with parts
wrapped by a ``time.thread_time`` pair, their time and calls:

* ``--parts policy``: the policy's heartbeats (its ``assign``) that launched a task and those that
  launched none, and the engine's ``launch_tasks`` (every launch goes through it; the calls that
  started nothing also apart);
* ``--parts engine`` (the default): those, and ``HeartbeatOffers._schedule_all`` (new work schedules
  every idle node's heartbeat) and ``HeldBeats.run`` (the lone heartbeats of
  :mod:`mropt.sim.lone_beats`, the heartbeats and passes it runs included).

Two rows follow from them: the policy's own time (its heartbeats less the ``launch_tasks`` inside
them) and the rest of the wrapped run (the engine's: completions, the recorder, the lone-heartbeat
loop, new work's passes). The wrappers' own cost (a Python call and two clock reads a wrapped call,
about 1.5-2.5 us) is in the wrapped run's numbers, and a part holding wrapped calls (a heartbeat
holds its launches) carries theirs: the two totals say how much, so the rows rank and split, they
do not time. The event-log hashes of both runs must be equal (the decisions are not touched).
Writes the tables to ``--out`` (default ``benchmarks/results/profiles/SCENARIO[+...]-PARTS-split.txt``)
and stdout.

Before 2026-11-26 this was two scripts: ``heartbeat_split.py SCENARIO`` (now ``--parts engine``,
under ``fair`` only) and ``policy_split.py POLICY ...`` (now ``swim-POLICY ... --parts policy``); the
files they wrote stay in ``benchmarks/results/profiles/`` as they were.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from profile_sim import _scenario  # noqa: E402  (beside this file)

from mropt.sim import heartbeat_offers, lone_beats  # noqa: E402
from mropt.sim.engine import Simulation  # noqa: E402
from mropt.sim.policy import make_policy  # noqa: E402

PARTS = ("policy", "engine")
#: the engine's methods ``--parts engine`` wraps: (class, method, row)
ENGINE_PARTS = (
    (heartbeat_offers.HeartbeatOffers, "_schedule_all", "HeartbeatOffers._schedule_all"),
    (lone_beats.HeldBeats, "run", "HeldBeats.run (its heartbeats included)"),
)
BEATS = ("heartbeat, launched", "heartbeat, none launched")


def wrapped_run(sim: Simulation, engine: bool) -> tuple[float, str, Counter[str]]:
    """``sim`` run with its parts wrapped (``engine``: the engine's too): its CPU seconds, its event-log
    hash, and seconds (``acc[row]``) and calls (``acc[row + " #"]``) by row."""
    clock = time.thread_time
    acc: Counter[str] = Counter()
    assign, launch = sim.policy.assign, sim.launch_tasks

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
        row = BEATS[0] if sim.next_attempt != before else BEATS[1]
        acc[row] += clock() - start
        acc[row + " #"] += 1

    def timed(inner: Callable[[Any], None], row: str) -> Callable[[Any], None]:
        def call(self: Any) -> None:
            start = clock()
            inner(self)
            acc[row] += clock() - start
            acc[row + " #"] += 1

        return call

    sim.launch_tasks = timed_launch  # type: ignore[method-assign]
    sim.policy.assign = timed_assign  # type: ignore[method-assign]
    originals = [(cls, name, getattr(cls, name)) for cls, name, _ in ENGINE_PARTS] if engine else []
    for cls, name, row in ENGINE_PARTS if engine else ():
        setattr(cls, name, timed(getattr(cls, name), row))
    try:
        start = time.process_time()
        rec = sim.run()
        cpu = time.process_time() - start
    finally:
        for cls, name, inner in originals:
            setattr(cls, name, inner)
    return cpu, rec.event_log_hash(), acc


def split(scenario: str, parts: str, utilisation: bool) -> list[str]:
    """The scenario's lines: its two runs' totals, then its table of parts."""
    workload, make = _scenario(scenario)
    chosen = make().policy  # the scenario's policy and parameters, run here in heartbeat mode

    def fresh() -> Simulation:
        policy = make_policy(chosen.name, chosen.params)
        return Simulation(workload, policy, mode="heartbeat", record_utilisation=utilisation)

    sim = fresh()
    start = time.process_time()
    plain_hash = sim.run().event_log_hash()
    plain = time.process_time() - start
    cpu, wrapped_hash, acc = wrapped_run(fresh(), parts == "engine")
    assert wrapped_hash == plain_hash, f"heartbeat_split {scenario}: the wrapped run's event log differs"
    beats = acc[BEATS[0]] + acc[BEATS[1]]
    lines = [
        f"## {scenario} ({chosen.name}, --parts {parts})",
        "",
        f"tasks: {sum(s.n for j in sim.jobs for s in j.stages):,}; events: {sim.events:,}",
        f"CPU s of Simulation.run: {plain:.2f} without wrappers, {cpu:.2f} wrapped; same event log: yes",
        "",
        "| part | CPU s | calls | us a call |",
        "|---|---:|---:|---:|",
    ]
    for row in sorted((k for k in acc if not k.endswith(" #")), key=lambda k: -acc[k]):
        calls = acc[row + " #"]
        lines.append(f"| {row} | {acc[row]:.2f} | {calls:,} | {1e6 * acc[row] / max(calls, 1):.1f} |")
    lines.append(f"| {chosen.name}'s own (its heartbeats less launch_tasks) | {beats - acc['launch_tasks']:.2f} | | |")
    lines.append(f"| the rest (the engine's: the wrapped run less the heartbeats) | {cpu - beats:.2f} | | |")
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", default=["swim-fair"], metavar="SCENARIO")
    parser.add_argument("--parts", choices=PARTS, default="engine", help="the parts wrapped (default engine)")
    parser.add_argument("--utilisation", action="store_true", help="record the utilisation rows")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    command = " ".join([*args.scenarios, "--parts", args.parts] + (["--utilisation"] if args.utilisation else []))
    head = [
        f"# heartbeat_split {command}",
        "",
        f"command: .venv/bin/python benchmarks/heartbeat_split.py {command}",
        f"machine: {platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load {os.getloadavg()[0]:.1f} at the start, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "",
    ]
    print("\n".join(head), flush=True)
    lines = list(head)
    for scenario in args.scenarios:
        got = split(scenario, args.parts, args.utilisation)
        print("\n".join(got), flush=True)
        lines += got
    name = f"{'+'.join(args.scenarios)}-{args.parts}-split.txt"
    out = args.out or ROOT / "benchmarks" / "results" / "profiles" / name
    out.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
