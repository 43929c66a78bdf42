"""Dask benchmark: a 40-run policy study through ``mropt gap --scheduler`` on 1 and on 2 workers.

    .venv/bin/python benchmarks/bench_dask_study.py [--workers 1,2] [--repeats 2] [--jobs 800] [--seeds 10]
    .venv/bin/python benchmarks/bench_dask_study.py --study benchmarks/swim_day_study.toml --workers 2 --repeats 1

The study: 4 policies (``fifo``, ``fair``, ``capacity``, ``dc``) x 10 simulation seeds on one
generated workload (``generator = "workload"``, preset ``late``: 800 jobs, one every 30 s on
average, 40 nodes of which a quarter at half speed, 5 % of the attempts stragglers), so each run
is a simulation of about 1 s of CPU. For each worker count N a cluster is started as a user starts
one, ``dask scheduler`` and N ``dask worker --nthreads 1`` processes (the helper
``tests/harness/dask_processes.py``), and the study runs as a user runs it, ``mropt gap STUDY
--scheduler ADDRESS`` into a fresh folder; the time is that command's wall-clock time, its start-up
and each Dask worker's first solver-process start included, the cluster's start-up not. Speed-up =
time(1 worker) / time(N). The counts are interleaved (1, 2, 1, 2, ...) ``--repeats`` times and the
median is reported, with the machine's 1-minute load average at each study's start and end (other
work on the machine lowers the speed-up). Every study must store the same rows (all but the
wall-clock columns) as the first.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mropt.harness.runner import results_frame  # noqa: E402
from mropt.harness.table import render  # noqa: E402
from tests.harness.dask_processes import DaskProcesses  # noqa: E402

POLICIES = ("fifo", "fair", "capacity", "dc")
#: columns that measure wall-clock time
WALL_CLOCK = ["wall_time", "run_time", "finished_at"]


def study_file(folder: Path, jobs: int, seeds: int) -> Path:
    path = folder / "dask_study.toml"
    path.write_text(
        'name = "dask_study"\n'
        "time_limit = 600\n"
        f"method_seeds = {{start = 0, count = {seeds}}}\n"
        f"policies = {json.dumps(list(POLICIES))}\n"
        "[[instances]]\n"
        'generator = "workload"\n'
        'preset = "late"\n'
        "seeds = [0]\n"
        f"params = {{jobs = {jobs}, mean_interarrival = 30}}\n"
    )
    return path


def rows_without_times(out: Path) -> Any:
    """The stored rows, by run key, without the wall-clock columns and the summary's ``wall_time``."""
    df = results_frame(out).drop(columns=WALL_CLOCK).sort_values("run_key").reset_index(drop=True)
    df["metrics"] = [json.dumps({k: v for k, v in json.loads(m).items() if k != "wall_time"}) for m in df["metrics"]]
    return df


def timed_study(study: Path, out: Path, workers: int, scratch: Path) -> tuple[float, float, float, float]:
    """(wall s of ``mropt gap --scheduler``, sum of the runs' own seconds, load at start, load at end)."""
    with DaskProcesses(scratch, workers) as cluster:
        load0 = os.getloadavg()[0]
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "mropt.cli.main", "gap", str(study), "--scheduler", cluster.address]
            + ["--out", str(out), "--no-progress", "--strict"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - start
        load1 = os.getloadavg()[0]
        ran = cluster.executed()
    if done.returncode != 0:
        sys.exit(f"mropt gap failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    runs = len(results_frame(out))
    if sum(ran.values()) != runs:
        sys.exit(f"{runs} runs stored, but the {workers} Dask workers executed {ran}")
    return wall, float(results_frame(out)["run_time"].sum()), load0, load1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", default="1,2", help="worker counts, comma-separated (default 1,2)")
    ap.add_argument("--repeats", type=int, default=2, help="studies per worker count, interleaved (default 2)")
    ap.add_argument("--jobs", type=int, default=800, help="jobs of the generated workload (default 800)")
    ap.add_argument("--seeds", type=int, default=10, help="simulation seeds per policy (default 10)")
    ap.add_argument(
        "--study",
        type=Path,
        help="run this experiment file instead of the generated study (--jobs, --seeds unused), e.g. "
        "benchmarks/swim_day_study.toml: the SWIM day under 10 policies x 5 seeds (issue 32: under 5 min on 2 workers)",
    )
    args = ap.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    walls: dict[int, list[float]] = {n: [] for n in counts}
    busy: dict[int, list[float]] = {n: [] for n in counts}
    loads: dict[int, list[float]] = {n: [] for n in counts}
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        study = args.study.resolve() if args.study else study_file(tmp, args.jobs, args.seeds)
        first = None
        for rep in range(args.repeats):
            for n in counts:
                out = tmp / f"w{n}-r{rep}"
                wall, run_seconds, load0, load1 = timed_study(study, out, n, tmp / f"dask-w{n}-r{rep}")
                rows = rows_without_times(out)
                if first is None:
                    first = rows
                elif not rows.equals(first):  # NaN equal to NaN
                    sys.exit(f"the study on {n} workers (repeat {rep}) stored other rows than the first study")
                walls[n].append(wall)
                busy[n].append(run_seconds)
                loads[n] += [load0, load1]
                print(f"  {n} worker(s), repeat {rep}: {wall:.1f} s (load {load0:.1f} -> {load1:.1f})", flush=True)
    runs = len(first) if first is not None else 0
    what = (
        f"{args.study}"
        if args.study
        else f"{len(POLICIES)} policies x {args.seeds} seeds, workload preset late, {args.jobs} jobs"
    )
    base = statistics.median(walls[counts[0]])
    table = []
    for n in counts:
        wall = statistics.median(walls[n])
        table.append(
            [
                n,
                round(wall, 1),
                " ".join(f"{w:.1f}" for w in walls[n]),
                round(statistics.median(busy[n]), 1),
                round(base / wall, 2),
                f"{min(loads[n]):.1f}-{max(loads[n]):.1f}",
            ]
        )
    print(
        f"machine: {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; {runs} runs ({what})"
    )
    print(render(["workers", "wall s (median)", "each repeat s", "runs' own s", "speed-up", "load 1 min"], table))


if __name__ == "__main__":
    main()
