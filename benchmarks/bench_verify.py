"""The independent check of a run (``mropt.sim.verify``) on trace-sized runs, before and after its
vectorisation (issue 32), side by side in one process.

Run: ``.venv/bin/python benchmarks/bench_verify.py [--old REV] [--cases swim-fifo swim-drf alibaba-drf-2]``

Each case is simulated once with the tree as it is: ``swim-POLICY`` the SWIM Facebook 2009 day on
its 600 nodes (``bench_sim.SWIM_DAY``), ``alibaba-POLICY-HOURS`` the first HOURS of the Alibaba
2017 file as ``bench_sim.py`` section 4 imports it. Its tables are then checked by
``verify_simulation``, ``wasted_work`` and ``check_stop`` (as of a run stopped at its last end)
of this tree and of ``mropt/sim/verify.py`` at REV (default: the commit before the vectorisation),
read from a git worktree of REV and loaded beside this tree's (it imports only ``mropt.model``).
Times are CPU seconds (``time.process_time``), the best of ``--repeats`` runs for this tree and one
for REV; the verdicts (problems, objective, late jobs) and results must be equal.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_sim  # noqa: E402  (beside this file)

from mropt.sim import verify as new_verify  # noqa: E402
from mropt.sim.run import simulate  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: the tree before verify_simulation was vectorised
BEFORE = "8cb597d^"


def old_module(rev: str, where: Path) -> ModuleType:
    """``mropt/sim/verify.py`` of ``rev`` from a worktree at ``where``, loaded as ``old_verify``."""
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), rev], check=True, capture_output=True
    )
    spec = importlib.util.spec_from_file_location("old_verify", where / "mropt" / "sim" / "verify.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tables(case: str) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The workload, job and attempt tables of one case."""
    parts = case.split("-")
    if parts[0] == "swim" and len(parts) == 2:
        from mropt.importers.swim_workload import import_swim_workload

        workload = import_swim_workload(bench_sim.SWIM_DAY)
    elif parts[0] == "alibaba" and len(parts) == 3:
        from mropt.importers.alibaba_workload import import_alibaba_workload

        slots = bench_sim.ALIBABA_FAIR_SLOTS if parts[1] in ("fair", "capacity") else 0  # as profile_sim.py
        workload = import_alibaba_workload(bench_sim.ALIBABA, duration=float(parts[2]) * 3600, slots=slots)
    else:
        raise SystemExit(f"bench_verify: unknown case {case!r} (swim-POLICY, alibaba-POLICY-HOURS)")
    run = simulate(workload, parts[1], {}, seed=0)
    return run.workload, run.recorder.jobs_columns(), run.recorder.tasks_columns()


def best(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """The least CPU seconds of ``repeats`` calls, and the result."""
    times, out = [], None
    for _ in range(repeats):
        t = time.process_time()
        out = fn()
        times.append(time.process_time() - t)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", default=BEFORE, help=f"the revision to compare with (default {BEFORE})")
    parser.add_argument("--cases", nargs="+", default=["swim-fifo", "swim-drf", "alibaba-drf-2"])
    parser.add_argument("--repeats", type=int, default=3, help="runs of this tree's check per case (best kept)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
        where = Path(tmp) / "old"
        try:
            old = old_module(args.old, where)
            rows = []
            for case in args.cases:
                workload, jobs, tasks = tables(case)
                n = len(tasks["job_id"])
                stop = {"stopped": "until", "stopped_at": float(max(tasks["end"]))}
                checks: list[tuple[str, Callable[[ModuleType], Any]]] = [
                    ("verify_simulation", lambda m: m.verify_simulation(workload, jobs, tasks)),
                    ("wasted_work", lambda m: m.wasted_work(tasks)),
                    ("check_stop", lambda m: m.check_stop(stop, jobs, tasks)),
                ]
                for name, check in checks:
                    t_old, v_old = best(lambda check=check: check(old), 1)
                    t_new, v_new = best(lambda check=check: check(new_verify), args.repeats)
                    if name == "verify_simulation":
                        same = (v_old.problems, v_old.objective, v_old.late) == (
                            v_new.problems,
                            v_new.objective,
                            v_new.late,
                        )
                    else:
                        same = v_old == v_new
                    rows.append((case, name, n, t_old, t_new, same))
                    print(f"{case} {name}: old {t_old:.2f} s, new {t_new:.2f} s", file=sys.stderr, flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)], capture_output=True)
    print(f"old: mropt/sim/verify.py at {args.old}; new: this tree; CPU s (new: best of {args.repeats})\n")
    print("| workload | check | tasks | old s | new s | ratio | same result |")
    print("|---|---|---:|---:|---:|---:|:---:|")
    for case, name, n, t_old, t_new, same in rows:
        print(
            f"| {case} | {name} | {n:,} | {t_old:.3f} | {t_new:.3f} | {t_old / t_new:.1f}x | {'yes' if same else 'NO'} |"
        )
    if not all(r[-1] for r in rows):
        raise SystemExit("bench_verify: a check's result changed")


if __name__ == "__main__":
    main()
