"""Harness benchmark: overhead per run, and the speed-up from 1 to K workers.

    .venv/bin/python benchmarks/bench_harness.py [--workers K] [--runs N] [--executor local|dask]

1. overhead: a trivial method (``test-trivial``: returns at once) run N times through a
   whole study (worker processes, pipes, verify, one Parquet file per run), local executor,
   1 worker: (study time - worker start-up) / N. Target: under 50 ms per run.
2. speed-up: a CPU-bound study (``test-spin``: 0.25 s of CPU per run, 8 x K runs) with 1 and
   with K workers; speed-up = time(1) / time(K). On a 16-core machine use ``--workers 16
   --executor dask`` (target at least 12x).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.chdir(ROOT)  # the workers import tests.harness.fake_methods from here

from mropt.harness.experiment import load_experiment  # noqa: E402
from mropt.harness.runner import run_study  # noqa: E402
from mropt.harness.table import render  # noqa: E402
from mropt.harness.worker import WorkerProcess  # noqa: E402


def study(tmp: Path, name: str, method: str, runs: int) -> object:
    path = tmp / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\nimports = ["tests.harness.fake_methods"]\ntime_limit = 60\n'
        f"methods = [{method}]\nmethod_seeds = {{start = 0, count = {runs}}}\n"
        '[[instances]]\ngenerator = "admission"\nseeds = [1]\n'
    )
    return load_experiment(path)


def timed(exp: object, out: Path, workers: int, executor: str) -> float:
    start = time.perf_counter()
    run_study(exp, out, workers=workers, executor=executor, progress=False, compact=False)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--executor", choices=("local", "dask"), default="local")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        # worker start-up (subtracted from the overhead study)
        w = WorkerProcess([str(ROOT)])
        s = time.perf_counter()
        w._start()
        startup = time.perf_counter() - s
        w.close()
        trivial = study(tmp, "overhead", '"test-trivial"', args.runs)
        total = timed(trivial, tmp / "o", 1, "local")
        overhead = (total - startup) / args.runs
        runs = 8 * args.workers
        spin = study(tmp, "spin", '{name = "test-spin", params = {work = 0.25}}', runs)
        t1 = timed(spin, tmp / "s1", 1, args.executor)
        tk = timed(spin, tmp / "sk", args.workers, args.executor)
    rows = [
        ["worker start-up (s)", round(startup, 3), "once per worker"],
        [
            f"overhead per run, trivial method ({args.runs} runs, 1 worker)",
            round(overhead * 1000, 2),
            "ms (target < 50)",
        ],
        [f"CPU-bound study, {runs} x 0.25 s, 1 worker ({args.executor})", round(t1, 2), "s"],
        [f"same, {args.workers} workers ({args.executor})", round(tk, 2), "s"],
        [f"speed-up 1 -> {args.workers} workers", round(t1 / tk, 2), f"x (ideal {args.workers})"],
    ]
    print(f"machine: {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(render(["measure", "value", "unit"], rows))


if __name__ == "__main__":
    main()
