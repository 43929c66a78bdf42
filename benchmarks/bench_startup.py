"""Start-up time of the ``mropt`` command and of ``import mropt`` (issue 31, item 5: under 0.3 s).

    .venv/bin/python benchmarks/bench_startup.py [--repeat 5]
    .venv/bin/python benchmarks/bench_startup.py --simulate   # and two simulate commands

Each command runs ``--repeat`` times as a fresh process; the table gives the best and the median
wall time (the best is the figure to compare: other work on the machine only adds to it), and,
for reference, a bare ``python -c pass``. The commands that run a method or a simulation import
what they need on dispatch (``mropt.cli.main``); these measure what every command pays first.
``--simulate`` adds ``mropt simulate --help`` and a simulation of a generated 5-job workload (the
start-up of every simulation, and of every Dask worker's task of a simulation study; no target).
The CPU columns (user + sys of the process) move less with the machine's load than the wall
clock; to compare two trees, run it with ``PYTHONPATH=OTHER_TREE`` and without.
What ``import mropt`` loads is checked structurally by ``tests/test_startup.py``; for where the
time goes, ``.venv/bin/python -X importtime -c "import mropt.cli.main"``.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 0.3  # seconds, issue 31


def wall(argv: list[str], repeat: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + sys) seconds of ``repeat`` runs of ``argv``, each a fresh process."""
    times, cpu = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return times, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each command (default 5)")
    parser.add_argument("--simulate", action="store_true", help="also time two simulate commands (no target)")
    args = parser.parse_args()
    here = Path(sys.executable).parent
    mropt = str(here / "mropt") if (here / "mropt").exists() else shutil.which("mropt") or "mropt"
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import mropt'": [sys.executable, "-c", "import mropt"],
        "mropt --version": [mropt, "--version"],
        "mropt --help": [mropt, "--help"],
    }
    untargeted: dict[str, list[str]] = {}
    tmp = tempfile.TemporaryDirectory()
    if args.simulate:
        workload = str(Path(tmp.name) / "w.json")
        subprocess.run([mropt, "generate", "workload", "--jobs", "5", "--nodes", "4", "-o", workload], check=True)
        untargeted = {
            "mropt simulate --help": [mropt, "simulate", "--help"],
            "mropt simulate (5 jobs)": [mropt, "simulate", workload, "--policy", "fifo", "--no-progress"],
        }
    print(f"{'command':<28} {'best (s)':>9} {'median (s)':>11}  under {TARGET} s  {'CPU best':>9} {'CPU median':>11}")
    for name, argv in {**cases, **untargeted}.items():
        times, cpu = wall(argv, args.repeat)
        best = min(times)
        ok = "-" if name in untargeted else "yes" if best < TARGET else "NO"
        print(
            f"{name:<28} {best:>9.3f} {statistics.median(times):>11.3f}  {ok:<11} "
            f"{min(cpu):>9.3f} {statistics.median(cpu):>11.3f}"
        )
    tmp.cleanup()


if __name__ == "__main__":
    main()
