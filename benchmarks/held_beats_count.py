"""Counts of the held heartbeats on the SWIM day in heartbeat mode (issue 32; ``mropt.sim.lone_beats``).

Run: ``.venv/bin/python benchmarks/held_beats_count.py [POLICY ...] [--jobs N]`` (default: ``fifo``
and ``fair``, the whole day). For each policy, one run with counting wrappers (no timing) prints:
the new-work passes that held heartbeats (``HeartbeatOffers._schedule_all`` calls that held one
or more through ``HeldBeats.add``) and the heartbeats they held; the calls of ``HeldBeats._run``; the events they counted, of which the
heartbeats that ran (a policy offer inside ``_run``) and those that found no room (the rest,
ended without an offer); and the run's event count and event-log hash.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_sim  # noqa: E402  (beside this file)

from mropt.importers.swim_workload import import_swim_workload  # noqa: E402
from mropt.model.workload import WorkloadInstance  # noqa: E402
from mropt.sim import lone_beats  # noqa: E402
from mropt.sim.engine import Simulation  # noqa: E402
from mropt.sim.heartbeat_offers import HeartbeatOffers  # noqa: E402
from mropt.sim.policy import make_policy  # noqa: E402


def count(data: dict[str, Any], policy: str) -> dict[str, Any]:
    """One run of ``data`` under ``policy`` with the counting wrappers (taken off after)."""
    held_cls = lone_beats.HeldBeats
    counts: dict[str, Any] = {"passes": 0, "held": 0, "runs": 0, "counted": 0, "ran": 0}
    inside = [False]
    add, run_ = held_cls.add, held_cls._run
    schedule_all = HeartbeatOffers._schedule_all

    def counting_add(self: Any, times: list[float]) -> None:
        counts["held"] += len(times)
        add(self, times)

    def counting_pass(self: Any) -> None:  # (a pass may call ``add`` twice: a time already held)
        before = counts["held"]
        schedule_all(self)
        counts["passes"] += counts["held"] > before

    def counting_run(self: Any) -> int:
        counts["runs"] += 1
        inside[0] = True
        try:
            n = run_(self)
        finally:
            inside[0] = False
        counts["counted"] += n
        return n

    held_cls.add = counting_add  # type: ignore[method-assign]
    held_cls._run = counting_run  # type: ignore[method-assign]
    HeartbeatOffers._schedule_all = counting_pass  # type: ignore[method-assign]
    try:
        chosen = make_policy(policy)
        start = chosen.start

        def counting_start(sim: Any) -> None:  # (a policy may bind its ``assign`` at its start)
            start(sim)
            assign = chosen.assign

            def counting_assign(node: int) -> None:
                if inside[0]:
                    counts["ran"] += 1
                assign(node)

            chosen.assign = counting_assign  # type: ignore[method-assign]

        chosen.start = counting_start  # type: ignore[method-assign]
        sim = Simulation(WorkloadInstance.from_dict(data), chosen, mode="heartbeat")
        rec = sim.run()
    finally:
        held_cls.add, held_cls._run = add, run_  # type: ignore[method-assign]
        HeartbeatOffers._schedule_all = schedule_all  # type: ignore[method-assign]
    counts["no_room"] = counts["counted"] - counts["ran"]
    counts["events"] = sim.events
    counts["hash"] = rec.event_log_hash()[:16]
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policies", nargs="*", default=["fifo", "fair"])
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()
    data = import_swim_workload(bench_sim.SWIM_DAY).to_dict()
    if args.jobs is not None:
        data = {**data, "jobs": data["jobs"][: args.jobs]}
    for policy in args.policies:
        c = count(data, policy)
        print(
            f"{policy}: {c['passes']:,} passes held {c['held']:,} heartbeats; {c['runs']:,} _run calls counted "
            f"{c['counted']:,} events: {c['ran']:,} ran, {c['no_room']:,} found no room; "
            f"{c['events']:,} events in all, log {c['hash']}"
        )


if __name__ == "__main__":
    main()
