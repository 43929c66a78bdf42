"""The policy's share of a heartbeat-mode SWIM day: the run beside a replay of its launches (issue 32).

A first run of the policy records, at each ``assign(node)`` the engine makes, the ``launch_tasks``
calls that started something. A replay policy then does only that: at the engine's n-th
``assign`` it makes the n-th heartbeat's recorded calls, and hears nothing else (``Policy``'s
empty hooks). The engine sees the same launches at the same heartbeats, so it makes the same
decisions (the event-log hash and event count are checked), and the replay's time is the
engine's share of the run plus a loop over a list per heartbeat: what is left of the day with the
policy's own work at zero. (The policy's launch calls that found no task are not replayed: their
cost is the policy's choice.)

Run: ``.venv/bin/python benchmarks/policy_share.py [POLICY] [--tree TREE] [--jobs N] [--rows]
[--reps 3]``: CPU seconds of ``Simulation.run`` for the policy and the replay, alternated, each
rep; or, with ``--callgrind policy|replay``, one run of that side counted by callgrind (``valgrind
--tool=callgrind --instr-atstart=no --callgrind-out-file=/dev/null .venv/bin/python
benchmarks/policy_share.py fair --jobs 600 --rows --callgrind replay``; the recording run is not
counted). The traces are read from ``../shared/traces`` (``MROPT_SHARED`` to move it).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from collections.abc import Callable
from typing import Any

from select_tree import add_tree_option, select_tree  # (beside this file)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policy", nargs="?", default="fair")
    parser.add_argument("--jobs", type=int, default=0, help="the day's first JOBS jobs (0: all)")
    parser.add_argument("--rows", action="store_true", help="record the utilisation rows")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--callgrind", choices=("policy", "replay"))
    add_tree_option(parser)
    args = parser.parse_args()
    print("mropt from", select_tree(args.tree, "policy_share.py"), flush=True)
    import bench_sim  # (beside this file)

    from mropt.importers.swim_workload import import_swim_workload
    from mropt.model.workload import WorkloadInstance
    from mropt.sim.engine import Simulation
    from mropt.sim.policy import HEARTBEAT, Policy, make_policy

    data = import_swim_workload(bench_sim.SWIM_DAY).to_dict()
    if args.jobs:
        data["jobs"] = data["jobs"][: args.jobs]
    workload = WorkloadInstance.from_dict(data)
    options = {"mode": "heartbeat", "record_utilisation": args.rows}
    warm = WorkloadInstance.from_dict({**data, "jobs": data["jobs"][:20]})
    Simulation(warm, make_policy(args.policy), **options).run()

    beats: list[tuple[tuple[Any, ...], ...]] = []  # per assign: the launch calls that started something
    policy = make_policy(args.policy)
    start = policy.start

    def recording_start(sim: Any) -> None:
        start(sim)
        assign, launch_tasks = policy.assign, sim.launch_tasks
        calls: list[tuple[Any, ...]] = []

        def launch(*call: Any) -> Any:
            got = launch_tasks(*call)
            if got[0] >= 0:
                calls.append(call)
            return got

        def recorded(node: int) -> None:
            calls.clear()
            assign(node)
            beats.append(tuple(calls))

        sim.launch_tasks = launch
        policy.assign = recorded  # type: ignore[method-assign]

    policy.start = recording_start  # type: ignore[method-assign]
    sim = Simulation(workload, policy, **options)
    want = (sim.run().event_log_hash(), sim.events)

    class Replay(Policy):
        """The recorded launches, heartbeat by heartbeat, and nothing else."""

        mode = HEARTBEAT

        def start(self, sim: Any) -> None:
            super().start(sim)
            calls, launch_tasks = iter(beats), sim.launch_tasks

            def replay(node: int) -> None:
                for call in next(calls):
                    launch_tasks(*call)

            self.assign = replay  # type: ignore[method-assign]

    makers: dict[str, Callable[[], Policy]] = {"policy": lambda: make_policy(args.policy), "replay": Replay}
    if args.callgrind:
        sim = Simulation(workload, makers[args.callgrind](), **options)
        pid = str(os.getpid())
        subprocess.run(["callgrind_control", "-i", "on", pid], capture_output=True, check=False)
        rec = sim.run()
        subprocess.run(["callgrind_control", "-i", "off", pid], capture_output=True, check=False)
        print(args.callgrind, args.policy, args.jobs, (rec.event_log_hash(), sim.events) == want, sim.events)
        return
    for rep in range(args.reps):
        cpu = {}
        for side in ("policy", "replay") if rep % 2 == 0 else ("replay", "policy"):
            sim = Simulation(workload, makers[side](), **options)
            begin = time.process_time()
            rec = sim.run()
            cpu[side] = time.process_time() - begin
            assert (rec.event_log_hash(), sim.events) == want, f"{side}: another event log"
        print(f"rep {rep}: {args.policy} {cpu['policy']:.2f} s, replay {cpu['replay']:.2f} s (same log)", flush=True)


if __name__ == "__main__":
    main()
