"""Start-up time of the ``mropt`` command and of ``import mropt`` (issue 31, item 5: under 0.3 s).

    .venv/bin/python benchmarks/bench_startup.py [--repeat 5]

Each command runs ``--repeat`` times as a fresh process; the table gives the best and the median
wall time (the best is the figure to compare: other work on the machine only adds to it), and,
for reference, a bare ``python -c pass``. The commands that run a method or a simulation import
what they need on dispatch (``mropt.cli.main``); these measure what every command pays first.
What ``import mropt`` loads is checked structurally by ``tests/test_startup.py``; for where the
time goes, ``.venv/bin/python -X importtime -c "import mropt.cli.main"``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET = 0.3  # seconds, issue 31


def wall(argv: list[str], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each command (default 5)")
    args = parser.parse_args()
    here = Path(sys.executable).parent
    mropt = str(here / "mropt") if (here / "mropt").exists() else shutil.which("mropt") or "mropt"
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import mropt'": [sys.executable, "-c", "import mropt"],
        "mropt --version": [mropt, "--version"],
        "mropt --help": [mropt, "--help"],
    }
    print(f"{'command':<28} {'best (s)':>9} {'median (s)':>11}  under {TARGET} s")
    for name, argv in cases.items():
        times = wall(argv, args.repeat)
        best = min(times)
        ok = "yes" if best < TARGET else "NO"
        print(f"{name:<28} {best:>9.3f} {statistics.median(times):>11.3f}  {ok}")


if __name__ == "__main__":
    main()
