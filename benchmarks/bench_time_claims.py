"""How soon the methods stop at their time limit, and the other speed claims the unit tests left.

    .venv/bin/python benchmarks/bench_time_claims.py [--only NAME ...] [--repeat 1]

The unit tests check what a run did (its status ``time_limit``, where it stopped, a refusal
before any work: ``tests/admission/test_amb.py``, ``test_exact.py``, ``test_cpsat_direct.py``,
``tests/fairness/test_drf_limits.py``, ``tests/importers/test_swim_workload.py``), never how long
it took, which depends on the machine and its load. The wall-clock promises they once asserted
are measured here: per case, the time limit given, the claim (the method's ``wall_time``, or the
call's where the method has none, must stay under it; the claims are the tests' former bounds)
and the best of ``--repeat`` runs. Run it on a quiet machine; it exits 1 when a claim fails.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import mropt
from mropt.instances.admission_gen import generate_admission
from mropt.model.io import instance_from_dict
from mropt.registry import solve

SHARED = Path(os.environ.get("MROPT_SHARED", Path(__file__).resolve().parents[2] / "shared"))
SWIM_DAY = SHARED / "traces" / "swim" / "FB-2009_samples_24_times_1hr_0.tsv"


def method_time(
    name: str, instance_of: Callable[[], object], time_limit: float, **params: object
) -> Callable[[], float]:
    """The method's own ``wall_time`` on the instance (built before the clock starts)."""

    def run() -> float:
        inst = instance_of()
        return solve(inst, name, time_limit=time_limit, **params).wall_time

    return run


def drf_filling() -> float:
    """``drf`` on 5,000,000 launches (tests/fairness/test_drf_limits.py), 0.3 s: the call's time."""
    users = [
        {"id": "A", "demand": {"cpu": 1, "mem": 1e-9}, "max_tasks": 9_000_000},
        {"id": "B", "demand": {"cpu": 3, "mem": 1}, "max_tasks": 10},
    ]
    inst = instance_from_dict(
        {"kind": "fairness", "schema_version": 1, "resources": {"cpu": 5_000_000, "mem": 18}, "users": users}
    )
    start = time.perf_counter()
    mropt.solve(inst, "drf", time_limit=0.3)
    return time.perf_counter() - start


def swim_day() -> float:
    """The SWIM day's import and its JSON (tests/importers/test_swim_workload.py)."""
    from mropt.importers.swim_workload import import_swim_workload
    from mropt.model import instance_to_json

    start = time.perf_counter()
    instance_to_json(import_swim_workload(SWIM_DAY))
    return time.perf_counter() - start


#: name -> (time limit given, claim in seconds, the measurement)
CASES: dict[str, tuple[float | None, float, Callable[[], float]]] = {
    "amb enumerate, N=30": (
        1.0,
        2.0,
        method_time("amb", lambda: generate_admission(1, jobs=30), 1.0, search="enumerate"),
    ),
    "amb, N=60000": (1.0, 2.0, method_time("amb", lambda: generate_admission(0, jobs=60000), 1.0)),
    **{
        f"{m}, N=60": (1.0, 15.0, method_time(m, lambda: generate_admission(3, jobs=60), 1.0, threads=1))
        for m in ("milp-cbc", "milp-highs", "cpsat", "cpsat-direct", "cpsat-portfolio")
    },
    **{
        f"{m}, N=1000": (1.0, 2.5, method_time(m, lambda: generate_admission(2, jobs=1000), 1.0))
        for m in ("cpsat", "milp-cbc", "milp-highs", "cpsat-portfolio")
    },
    "cpsat-direct, N=1000": (1.0, 2.0, method_time("cpsat-direct", lambda: generate_admission(2, jobs=1000), 1.0)),
    **{
        f"{m}, N=1000": (0.5, 2.0, method_time(m, lambda: generate_admission(1, jobs=1000), 0.5))
        for m in ("bound-lp", "bound-energy")
    },
    "drf, 5,000,000 launches": (0.3, 2.0, drf_filling),
    "import-swim, the SWIM day": (None, 10.0, swim_day),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="cases whose name starts with one of these")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each case; the best counts (default 1)")
    args = parser.parse_args()
    failed = 0
    print(f"{'case':<30} {'limit (s)':>9} {'claim (s)':>9} {'best (s)':>9}  within")
    for name, (limit, claim, measure) in CASES.items():
        if args.only and not any(name.startswith(o) for o in args.only):
            continue
        if name.startswith("import-swim") and not SWIM_DAY.is_file():
            print(f"{name:<30} skipped: {SWIM_DAY} is absent")
            continue
        best = min(measure() for _ in range(args.repeat))
        failed += best >= claim
        shown = "-" if limit is None else f"{limit:g}"
        print(f"{name:<30} {shown:>9} {claim:>9g} {best:>9.2f}  {'yes' if best < claim else 'NO'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
