"""The compiled core against the Python engine (issue 32): the Alibaba 2017 runs, side by side in one session.

Run: ``.venv/bin/python benchmarks/bench_compiled.py [--day] [--python-day] [--hours 2]``.

Each line is one ``mropt simulate FILE --policy P [--param ...] --engine E --out DIR --json`` in a child
process (the whole command, as a researcher types it: start-up, loading the workload, the run, the
summary and the ``--out`` files), measured by the parent as the child's user + system CPU seconds and
its peak resident memory (``os.wait4``); the table gives both engines' numbers,
their ratio, the events and whether the event-log hashes are the same (a case run compiled only: its hash's
first 16 digits, to compare with those RESULTS records). Cases:

* the first ``--hours`` hours (default 2) of the Alibaba 2017 file (``mropt import-alibaba --duration``)
  under ``drf`` and ``ddrf`` (E1 1, E2 2: ``bench_sim.py``'s), and imported with ``--slots 64`` under
  ``fair`` and ``capacity`` (heartbeat mode), both engines;
* with ``--day``, the whole file (10.5 M tasks) under the same four, compiled only, unless
  ``--python-day`` (the Python engine takes 4 to 7 minutes a run there).

With ``--split``, each case's compiled run is also split, in a child process of its own, into loading
the workload file, building the ``Simulation``, the compiled run (the loop, with the driver's
moves into the recorder), the summary and the ``--out`` files, in CPU seconds (what ``simulate``
and ``write_outputs`` do, called one by one: the whole command less its start-up).

The first compiled run of a session may include numba's compile of the core (some 15 s) when its
cache is cold: the script runs one small compiled run first, untimed, so that none of the lines does.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALIBABA = ROOT.parent / "shared" / "traces" / "alibaba-2017" / "batch_task.csv"
MROPT = str(Path(sys.executable).parent / "mropt")
#: (policy, params, the import's map slots a machine: None, a cluster of resources only)
POLICIES: tuple[tuple[str, tuple[str, ...], int | None], ...] = (
    ("drf", (), None),
    ("ddrf", ("e1=1", "e2=2"), None),
    ("fair", (), 64),
    ("capacity", (), 64),
)


def run(workload: Path, policy: str, params: tuple[str, ...], engine: str, out: Path) -> dict[str, object]:
    """One whole command in a child process: its CPU seconds and peak KiB (``os.wait4``: that child's
    own), events and hash."""
    cmd = [MROPT, "simulate", str(workload), "--policy", policy, "--engine", engine, "--out", str(out), "--force"]
    cmd += [x for p in params for x in ("--param", p)] + ["--no-progress", "--json"]
    with tempfile.TemporaryFile("w+") as stdout:
        child = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode:
            err = child.stderr.read() if child.stderr is not None else ""
            raise SystemExit(f"bench_compiled: {' '.join(cmd)} exited {child.returncode}: {err}")
        stdout.seek(0)
        summary = json.loads(stdout.read())
    return {
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak": usage.ru_maxrss,
        "events": summary["events"],
        "hash": summary["event_log_sha256"],
        "engine": summary.get("engine", "python"),
    }


SPLIT = """
import sys, tempfile, time
from mropt.model.io import load_instance
from mropt.sim.engine import Simulation
from mropt.sim.engines import run_simulation
from mropt.sim.outputs import write_outputs
from mropt.sim.policy import make_policy
from mropt.sim.run import SimRun, release_locality, return_freed_memory
from mropt.sim.summary import summarise
t0 = time.process_time()
w = load_instance(sys.argv[1])
t1 = time.process_time()
params = {k: int(v) for k, v in (p.split("=") for p in sys.argv[3:])}
policy = make_policy(sys.argv[2], params)
sim = Simulation(w, policy)
t2 = time.process_time()
rec, _ = run_simulation(sim, sys.argv[2], "compiled")
t3 = time.process_time()
release_locality(sim)
summary = summarise(rec, sys.argv[2], policy.params, 0.0)
return_freed_memory()
t4 = time.process_time()
with tempfile.TemporaryDirectory() as out:
    write_outputs(SimRun(w, sys.argv[2], rec, summary, 0.0, dict(policy.params)), out)
t5 = time.process_time()
print(" ".join(f"{b - a:.2f}" for a, b in zip((t0, t1, t2, t3, t4), (t1, t2, t3, t4, t5))))
"""


def split(workload: Path, policy: str, params: tuple[str, ...]) -> list[str]:
    """Load, build, loop, summary and ``--out`` CPU seconds of one compiled run, in a child process (``SPLIT``)."""
    done = subprocess.run(
        [sys.executable, "-c", SPLIT, str(workload), policy, *params], capture_output=True, text=True, check=True
    )
    return done.stdout.split()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, default=2.0, help="the window of the file's first hours (default 2)")
    ap.add_argument("--day", action="store_true", help="the whole file too, compiled")
    ap.add_argument("--python-day", action="store_true", help="with --day, the Python engine on the day too")
    ap.add_argument(
        "--split", action="store_true", help="each compiled run's load, build, loop, summary and --out CPU seconds too"
    )
    args = ap.parse_args()
    if not ALIBABA.exists():
        print(f"bench_compiled: {ALIBABA} is missing (../shared/traces)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        imp = [MROPT, "import-alibaba", str(ALIBABA), "--workload"]
        cases = [(f"{args.hours:g} h", ["--duration", str(args.hours * 3600)])] + ([("day", [])] if args.day else [])
        files: dict[tuple[str, int | None], Path] = {}
        for case, window in cases:
            for slots in sorted({s for _, _, s in POLICIES}, key=lambda s: -1 if s is None else s):
                path = files[case, slots] = folder / f"{case.replace(' ', '')}-{slots}.json"
                extra = [] if slots is None else ["--slots", str(slots)]
                subprocess.run([*imp, *window, *extra, "-o", str(path)], check=True)
        warm = (("drf", []), ("fair", ["--slots", "64"]), ("capacity", ["--slots", "64"]))
        for policy, slots in warm:  # numba's caches made (untimed)
            small = folder / f"small-{policy}.json"
            subprocess.run([*imp, "--jobs", "50", *slots, "-o", str(small)], check=True)
            run(small, policy, (), "compiled", folder / "warm")
        print(
            "| case | policy | python CPU s | compiled CPU s | python / compiled | events | same hash | peak KiB (python, compiled) |"
        )
        print("|---|---|---:|---:|---:|---:|:---:|---|")
        for case, _ in cases:
            for policy, params, slots in POLICIES:
                workload = files[case, slots]
                name = policy + (f" ({', '.join(params)})" if params else "") + (f", {slots} slots" if slots else "")
                c = run(workload, policy, params, "compiled", folder / "c")
                if case == "day" and not args.python_day:
                    # (no Python run to compare: the compiled run's hash, for RESULTS' known ones)
                    hash16 = str(c["hash"])[:16]
                    print(
                        f"| {case} | {name} | - | {c['cpu']:.1f} | - | {c['events']:,} | {hash16} | -, {c['peak']:,} |"
                    )
                    continue
                p = run(workload, policy, params, "python", folder / "p")
                same = "yes" if p["hash"] == c["hash"] and p["events"] == c["events"] else "NO"
                ratio = p["cpu"] / c["cpu"]  # type: ignore[operator]
                print(
                    f"| {case} | {name} | {p['cpu']:.1f} | {c['cpu']:.1f} | {ratio:.2f}x | {c['events']:,} | {same} "
                    f"| {p['peak']:,}, {c['peak']:,} |"
                )
        if args.split:
            print("\n| case | policy | load CPU s | build CPU s | compiled run CPU s | summary CPU s | --out CPU s |")
            print("|---|---|---:|---:|---:|---:|---:|")
            for case, _ in cases:
                for policy, params, slots in POLICIES:
                    load, build, loop, summary, out = split(files[case, slots], policy, params)
                    name = (
                        policy + (f" ({', '.join(params)})" if params else "") + (f", {slots} slots" if slots else "")
                    )
                    print(f"| {case} | {name} | {load} | {build} | {loop} | {summary} | {out} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
