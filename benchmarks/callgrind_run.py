"""Instructions of one heartbeat-mode run of the SWIM day's first jobs, counted by callgrind (issue 32).

On a loaded machine the CPU seconds of two trees' runs spread by 10-30 % (``bench_sim_ab.py``),
more than a cut of the engine's per-event cost gains; the instructions a run executes do not
depend on the load. Run, for each tree (a folder holding ``mropt/``)::

    PYTHONPATH=TREE valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/dev/null \\
        .venv/bin/python benchmarks/callgrind_run.py POLICY [--jobs 600] [--no-utilisation]

Callgrind counts only while ``Simulation.run`` runs (``callgrind_control -i on``/``off`` around
it; a run of the first 20 jobs before it imports every module): its ``I refs`` line on stderr is
the count. The script prints the policy, the jobs, the event-log hash and the event count, to
check that both trees made the same decisions. The run records the utilisation rows, as the
study's runs do (``--no-utilisation``: none, as ``bench_sim_ab.py`` runs by default). Python's
interpreter runs about 50 times slower under callgrind: 600 jobs of the day (481 k events under
``fair``) take 2-3 minutes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_sim  # noqa: E402  (beside this file)

from mropt.importers.swim_workload import import_swim_workload  # noqa: E402
from mropt.model.workload import WorkloadInstance  # noqa: E402
from mropt.sim.engine import Simulation  # noqa: E402
from mropt.sim.policy import make_policy  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policy")
    parser.add_argument("--jobs", type=int, default=600)
    parser.add_argument("--no-utilisation", action="store_true")
    args = parser.parse_args()
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
