"""A/B speed of the simulator: two source trees, the same runs interleaved in one session.

Run: ``.venv/bin/python benchmarks/bench_sim_ab.py OLD_TREE NEW_TREE [--reps 5] [--cases simpy swim
alibaba]``, a tree being a folder holding ``mropt/`` (the code before a change: ``git worktree add
/tmp/old-engine COMMIT``; the current one: ``.``). SimPy comes with the ``bench`` extra.

The workloads are built once, by this tree's importers, and given to both sides as JSON:

* ``simpy``: ``bench_sim.py``'s section 1 model at its largest row (FIFO, 1,000 jobs, 200 nodes,
  event mode, batches on), beside the same model written with SimPy: the SimPy ratio;
* ``simpy-100``, ``simpy-400``: the same model at its two smaller rows (100 jobs on 50 nodes, 400
  on 100), where a completion batches fewer tasks and the cost per event shows most;
* ``swim``: the SWIM Facebook 2009 day on 600 nodes under ``fair`` (heartbeat mode, section 3);
* ``swim-mpsa``, ``swim-capacity``, ``swim-fifo``: the same day under that policy (heartbeat mode);
* ``swim-dc``, ``swim-delay``, ``swim-drf``, ``swim-ddrf``, ``swim-amb``, ``swim-minedf-wc``: the same
  day under that policy, default parameters (their own mode: event);
* ``alibaba``: the first 2 hours of the Alibaba 2017 file under ``drf`` (section 4's import);
* ``alibaba-capacity``: the same 2 hours at ``ALIBABA_FAIR_SLOTS`` map slots a machine under
  ``capacity`` (heartbeat mode);
* ``alibaba-fair``: the first 30 minutes at ``ALIBABA_FAIR_SLOTS`` map slots a machine under ``fair``
  (heartbeat mode; the first hour takes some 40 s a run on a loaded machine).

The runs record no utilisation rows unless ``MROPT_AB_UTILISATION=1`` is set (``bench_sim.py``'s
section 3 records them). Each run is a child process that times ``Simulation.run`` alone, in CPU
seconds of the process
(the machine's other load disturbs them less than wall time), after a run of the first 20 jobs
(so that no module is imported inside the timing). Old and new alternate, the order flipping at
each repetition; the table gives the medians and every run, and whether both trees gave the same
event-log hash and event count.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: case -> (policy, mode); the workloads are written by ``build``
CASES = {
    "simpy": ("fifo", "event"),
    "simpy-100": ("fifo", "event"),
    "simpy-400": ("fifo", "event"),
    "swim": ("fair", "heartbeat"),
    "swim-mpsa": ("mpsa", "heartbeat"),
    "swim-capacity": ("capacity", "heartbeat"),
    "swim-fifo": ("fifo", "heartbeat"),
    "swim-dc": ("dc", ""),
    "swim-delay": ("delay", ""),
    "swim-drf": ("drf", ""),
    "swim-ddrf": ("ddrf", ""),
    "swim-amb": ("amb", ""),
    "swim-minedf-wc": ("minedf-wc", ""),
    "alibaba": ("drf", ""),
    "alibaba-capacity": ("capacity", ""),
    "alibaba-fair": ("fair", ""),
}


def child(path: str, policy: str, mode: str) -> None:
    """Runs with PYTHONPATH=TREE: time one run of the workload at ``path``, print one JSON line."""
    from mropt.model.workload import WorkloadInstance
    from mropt.sim.engine import Simulation
    from mropt.sim.policy import make_policy

    data = json.loads(Path(path).read_text())
    options = {"mode": mode or None, "record_utilisation": os.environ.get("MROPT_AB_UTILISATION") == "1"}
    warm = WorkloadInstance.from_dict({**data, "jobs": data["jobs"][:20]})
    Simulation(warm, make_policy(policy), **options).run()
    sim = Simulation(WorkloadInstance.from_dict(data), make_policy(policy), **options)
    start = time.process_time()
    rec = sim.run()
    cpu = time.process_time() - start
    print(json.dumps({"cpu": cpu, "hash": rec.event_log_hash(), "events": sim.events}))


def build(case: str, folder: Path) -> Path:
    """The case's workload as JSON, made by this tree (``bench_sim.py``'s own builders and imports)."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_sim

    if case.startswith("simpy"):
        jobs, nodes = {"simpy": (1000, 200), "simpy-100": (100, 50), "simpy-400": (400, 100)}[case]
        workload = bench_sim.as_workload(bench_sim.fifo_jobs(jobs, seed=7), nodes)
    elif case.startswith("swim"):
        from mropt.importers.swim_workload import import_swim_workload

        workload = import_swim_workload(bench_sim.SWIM_DAY)
    else:
        from mropt.importers.alibaba_workload import import_alibaba_workload

        slots = bench_sim.ALIBABA_FAIR_SLOTS if case in ("alibaba-capacity", "alibaba-fair") else 0
        duration = 1800.0 if case == "alibaba-fair" else 7200.0
        workload = import_alibaba_workload(bench_sim.ALIBABA, duration=duration, slots=slots)
    path = folder / f"{case}.json"
    path.write_text(json.dumps(workload.to_dict()))
    return path


def simpy_cpu(reps: int) -> float:
    """Median CPU seconds of the SimPy model of the ``simpy`` case (``bench_sim.run_simpy``)."""
    import bench_sim

    jobs = bench_sim.fifo_jobs(1000, seed=7)
    times = []
    for _ in range(reps):
        start = time.process_time()
        bench_sim.run_simpy(jobs, 200)
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", nargs="?")
    parser.add_argument("new", nargs="?")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if not args.old or not args.new:
        parser.error("give the two trees: OLD_TREE NEW_TREE")
    trees = {"old": str(Path(args.old).resolve()), "new": str(Path(args.new).resolve())}
    runs: dict[tuple[str, str], list[dict]] = {(c, t): [] for c in args.cases for t in trees}
    with tempfile.TemporaryDirectory() as tmp:
        paths = {case: build(case, Path(tmp)) for case in args.cases}
        for rep in range(args.reps):
            for case in args.cases:
                for side in ("old", "new") if rep % 2 == 0 else ("new", "old"):
                    policy, mode = CASES[case]
                    out = subprocess.run(
                        [sys.executable, __file__, "--child", str(paths[case]), policy, mode],
                        capture_output=True,
                        text=True,
                        check=True,
                        env={**os.environ, "PYTHONPATH": trees[side]},
                    ).stdout
                    runs[(case, side)].append(json.loads(out.splitlines()[-1]))
                    print(f"rep {rep} {case} {side} {runs[(case, side)][-1]['cpu']:.2f}", file=sys.stderr, flush=True)
    print("| case | old s | new s | new / old | old runs | new runs | same log |")
    print("|---|---:|---:|---:|---|---|:---:|")
    medians = {}
    for case in args.cases:
        old, new = runs[(case, "old")], runs[(case, "new")]
        medians[case] = (statistics.median(r["cpu"] for r in old), statistics.median(r["cpu"] for r in new))
        same = len({(r["hash"], r["events"]) for r in old + new}) == 1
        listed = [" ".join(format(r["cpu"], ".2f") for r in side) for side in (old, new)]
        o, n = medians[case]
        print(f"| {case} | {o:.3f} | {n:.3f} | {n / o:.3f} | {listed[0]} | {listed[1]} | {'yes' if same else 'NO'} |")
    if "simpy" in args.cases:
        simpy = simpy_cpu(args.reps)
        old, new = medians["simpy"]
        print(
            f"\nSimPy on the simpy case: {simpy:.2f} s; ratio SimPy / mropt: old {simpy / old:.1f}x, new {simpy / new:.1f}x"
        )


if __name__ == "__main__":
    main()
