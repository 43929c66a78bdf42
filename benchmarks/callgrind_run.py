"""Instructions of one heartbeat-mode run of the SWIM day's first jobs, counted by callgrind (issue 32);
or, with ``--section1 JOBS``, of one event-mode run of ``bench_sim.py`` section 1's FIFO model.

On a loaded machine the CPU seconds of two trees' runs spread by 10-30 % (``bench_sim_ab.py``),
more than a cut of the engine's per-event cost gains; the instructions a run executes do not
depend on the load. Run, for each tree (a folder holding ``mropt/``: ``git worktree add /tmp/old
COMMIT`` for the code before a change; default: the tree this script is in)::

    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/dev/null \\
        .venv/bin/python benchmarks/callgrind_run.py POLICY --tree TREE [--jobs 600] [--no-utilisation]

``--tree`` goes first on ``sys.path`` before anything of mropt is imported, and the script's first
line names the ``mropt`` it imported (``select_tree.py``; ``PYTHONPATH=TREE`` alone does not select
the tree: the script's own tree, which ``bench_sim`` puts first, would win).

Callgrind counts only while ``Simulation.run`` runs (``callgrind_control -i on``/``off`` around
it; a run of the first 20 jobs before it imports every module): its ``I refs`` line on stderr is
the count. The script prints the policy, the jobs, the event-log hash and the event count, to
check that both trees made the same decisions. The run records the utilisation rows, as the
study's runs do (``--no-utilisation``: none, as ``bench_sim_ab.py`` runs by default). Python's
interpreter runs about 50 times slower under callgrind: 600 jobs of the day (481 k events under
``fair``) take 2-3 minutes.

``--section1 JOBS`` (100, 400 or 1000: section 1's rows, on 50, 100 or 200 nodes, seed 7) runs that
model instead (the POLICY argument, ``fifo``, is the model's), in event mode without rows, as
section 1 runs it.
"""

from __future__ import annotations

import argparse
import os
import subprocess

from select_tree import add_tree_option, select_tree  # (beside this file)

#: ``bench_sim.py`` section 1's rows: jobs -> nodes
SECTION1 = {100: 50, 400: 100, 1000: 200}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policy")
    parser.add_argument("--jobs", type=int, default=600)
    parser.add_argument("--no-utilisation", action="store_true")
    parser.add_argument("--section1", type=int, choices=sorted(SECTION1), help="section 1's FIFO model, JOBS jobs")
    add_tree_option(parser)
    args = parser.parse_args()
    print("mropt from", select_tree(args.tree, "callgrind_run.py"), flush=True)
    import bench_sim  # (beside this file; it puts its own tree first on sys.path, after mropt's import)

    from mropt.importers.swim_workload import import_swim_workload
    from mropt.model.workload import WorkloadInstance
    from mropt.sim.engine import Simulation
    from mropt.sim.policy import make_policy

    if args.section1:
        jobs = args.jobs = args.section1
        data = bench_sim.as_workload(bench_sim.fifo_jobs(jobs, seed=7), SECTION1[jobs]).to_dict()
        options = {"mode": "event", "record_utilisation": False}
    else:
        data = import_swim_workload(bench_sim.SWIM_DAY).to_dict()
        options = {"mode": "heartbeat", "record_utilisation": not args.no_utilisation}
    warm = WorkloadInstance.from_dict({**data, "jobs": data["jobs"][:20]})
    Simulation(warm, make_policy(args.policy), **options).run()
    sim = Simulation(
        WorkloadInstance.from_dict({**data, "jobs": data["jobs"][: args.jobs]}), make_policy(args.policy), **options
    )
    pid = str(os.getpid())
    subprocess.run(["callgrind_control", "-i", "on", pid], capture_output=True, check=False)
    recorder = sim.run()
    subprocess.run(["callgrind_control", "-i", "off", pid], capture_output=True, check=False)
    print(args.policy, args.jobs, recorder.event_log_hash(), sim.events)


if __name__ == "__main__":
    main()
