"""Where the simulator's time goes: a cProfile of one run, kept as a benchmark output.

Run: ``.venv/bin/python benchmarks/profile_sim.py SCENARIO [--out FILE] [--rows 40]``, with
SCENARIO one of

* ``fifo``: ``bench_sim.py``'s FIFO model, 400 jobs on 100 nodes (section 1), event mode;
* ``swim-fair``: the SWIM Facebook 2009 day on 600 nodes under ``fair`` (section 3);
* ``swim-mpsa``, ``swim-capacity``, ``swim-fifo``: the same day under that policy (heartbeat mode);
* ``swim-dc``, ``swim-delay``, ``swim-drf``, ``swim-ddrf``, ``swim-amb``, ``swim-minedf-wc``: the same
  day under that policy (default parameters) in the policy's own mode (event);
* ``alibaba-POLICY[-HOURS]``: the Alibaba 2017 day (or its first HOURS) under ``drf``, ``ddrf``,
  ``fair`` or ``capacity`` as ``bench_sim.py`` section 4 imports it.

Writes the command, the machine, the wall time with and without the profiler (the profiler's
own cost inflates Python-heavy calls, so the table ranks, it does not time), and the top rows
by own time and by cumulative time, to ``--out`` (default
``benchmarks/results/profiles/SCENARIO.txt``) and stdout. The traces are read from
``../shared/traces`` (``MROPT_SHARED`` to move it).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import platform
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bench_sim  # noqa: E402  (beside this file)

from mropt.model.workload import WorkloadInstance  # noqa: E402
from mropt.sim.engine import Simulation  # noqa: E402
from mropt.sim.policy import make_policy  # noqa: E402

#: the SWIM day's scenarios and their assignment mode (None: the policy's own)
SWIM_SCENARIOS: dict[str, str | None] = {
    **{f"swim-{p}": "heartbeat" for p in ("fair", "mpsa", "capacity", "fifo")},
    **{f"swim-{p}": None for p in ("dc", "delay", "drf", "ddrf", "amb", "minedf-wc")},
}


def _scenario(name: str) -> tuple[WorkloadInstance, Callable[[], Simulation]]:
    """The workload of ``name`` (imported before profiling) and a maker of its simulation."""
    if name == "fifo":
        workload = bench_sim.as_workload(bench_sim.fifo_jobs(400, seed=7), 100)
        return workload, lambda: Simulation(workload, make_policy("fifo"), mode="event", record_utilisation=False)
    if name in SWIM_SCENARIOS:
        from mropt.importers.swim_workload import import_swim_workload

        workload = import_swim_workload(bench_sim.SWIM_DAY)
        policy = name.split("-", 1)[1]
        mode = SWIM_SCENARIOS[name]
        return workload, lambda: Simulation(workload, make_policy(policy), mode=mode)
    parts = name.split("-")
    if parts[0] == "alibaba" and len(parts) in (2, 3) and parts[1] in ("drf", "ddrf", "fair", "capacity"):
        from mropt.importers.alibaba_workload import import_alibaba_workload

        policy = parts[1]
        hours = float(parts[2]) if len(parts) == 3 else 0.0
        slots = bench_sim.ALIBABA_FAIR_SLOTS if policy in ("fair", "capacity") else 0
        workload = import_alibaba_workload(bench_sim.ALIBABA, duration=hours * 3600, slots=slots)
        params = {"e1": 1, "e2": 2} if policy == "ddrf" else {}
        return workload, lambda: Simulation(workload, make_policy(policy, params), record_utilisation=False)
    raise SystemExit(
        f"profile_sim: unknown scenario {name!r} (fifo, {', '.join(SWIM_SCENARIOS)}, alibaba-POLICY[-HOURS])"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario")
    parser.add_argument("--out", help="default benchmarks/results/profiles/SCENARIO.txt")
    parser.add_argument("--rows", type=int, default=40)
    args = parser.parse_args()
    workload, make = _scenario(args.scenario)
    start = time.perf_counter()
    make().run()
    plain = time.perf_counter() - start
    profile = cProfile.Profile()
    start = time.perf_counter()
    profile.runcall(lambda: make().run())
    profiled = time.perf_counter() - start
    text = io.StringIO()
    text.write(f"# profile_sim {args.scenario}\n\n")
    text.write(f"command: .venv/bin/python benchmarks/profile_sim.py {args.scenario}\n")
    text.write(f"machine: {platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}, ")
    text.write(f"load {os.getloadavg()[0]:.1f} at the end, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    text.write(f"tasks: {workload.n_tasks:,}; wall: {plain:.2f} s plain, {profiled:.2f} s under cProfile\n")
    for key in ("tottime", "cumulative"):
        text.write(f"\n## by {key}\n")
        stats = pstats.Stats(profile, stream=text)
        stats.strip_dirs().sort_stats(key).print_stats(args.rows)
    out = Path(args.out) if args.out else ROOT / "benchmarks" / "results" / "profiles" / f"{args.scenario}.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text.getvalue())
    print(text.getvalue())


if __name__ == "__main__":
    main()
