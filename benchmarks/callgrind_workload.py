"""Instructions of one run of a saved workload (a JSON instance), counted by callgrind (issue 32).

``callgrind_run.py`` counts the SWIM day's first jobs and section 1's FIFO model; this script counts
any workload saved as JSON, such as a prefix of the Alibaba 2017 file (its import, too slow under
valgrind, is done once beforehand)::

    .venv/bin/python -c "import json, sys; sys.path.insert(0, 'benchmarks'); import bench_sim;
        from mropt.importers.alibaba_workload import import_alibaba_workload as imp;
        json.dump(imp(bench_sim.ALIBABA, duration=1200.0).to_dict(), open('/tmp/ali1200.json', 'w'))"
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/dev/null \\
        .venv/bin/python benchmarks/callgrind_workload.py /tmp/ali1200.json drf --tree TREE

Callgrind counts only while ``Simulation.run`` runs (``callgrind_control -i on``/``off``); a run of
the first 20 jobs before it imports every module. The ``I refs`` line on stderr is the count; the
script prints the tree it imported (``select_tree.py``: ``--tree`` selects it), the policy, the
jobs, the event-log hash and the event count, to check that two trees made the same decisions.
The run is in the policy's own mode without utilisation rows, as ``bench_sim_ab.py``'s are.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess

from select_tree import add_tree_option, select_tree  # (beside this file)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", help="a workload instance saved as JSON")
    parser.add_argument("policy")
    parser.add_argument("--mode", choices=["event", "heartbeat"], help="default: the policy's own")
    add_tree_option(parser)
    args = parser.parse_args()
    print("mropt from", select_tree(args.tree, "callgrind_workload.py"), flush=True)
    from mropt.model.workload import WorkloadInstance
    from mropt.sim.engine import Simulation
    from mropt.sim.policy import make_policy

    with open(args.workload) as f:
        data = json.load(f)
    options = {"mode": args.mode, "record_utilisation": False}
    warm = WorkloadInstance.from_dict({**data, "jobs": data["jobs"][:20]})
    Simulation(warm, make_policy(args.policy), **options).run()
    sim = Simulation(WorkloadInstance.from_dict(data), make_policy(args.policy), **options)
    pid = str(os.getpid())
    subprocess.run(["callgrind_control", "-i", "on", pid], capture_output=True, check=False)
    recorder = sim.run()
    subprocess.run(["callgrind_control", "-i", "off", pid], capture_output=True, check=False)
    print(args.policy, len(data["jobs"]), recorder.event_log_hash(), sim.events)


if __name__ == "__main__":
    main()
