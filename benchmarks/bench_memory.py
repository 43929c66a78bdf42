"""Peak memory of ``mropt simulate WORKLOAD --policy P --out DIR``, step by step (issue 32).

    .venv/bin/mropt import-alibaba ../shared/traces/alibaba-2017/batch_task.csv --workload -o day.json
    .venv/bin/python benchmarks/bench_memory.py day.json [--policy drf] [--out DIR] [--tree TREE]

Runs what the CLI runs (``load_instance``, :func:`mropt.sim.run.simulate`, then
:func:`mropt.sim.outputs.write_outputs`) in this process and prints, after each step, the
process's peak resident memory so far (``VmHWM``), its resident memory then (``VmRSS``) and the
step's CPU seconds; then the size of the recorder's store of ended attempts (its blocks' bytes,
entries, rows) and the run's event-log hash, by which two trees' runs are compared. Linux only
(``/proc/self/status``). ``/usr/bin/time -v`` around the CLI itself gives the same peak as the
last row, within about 10 MiB (the CLI's own imports; on the Alibaba day 811 and 810 MiB at
``5912bf3``, 886 and 897 at ``d282bae``); around this script, the same peak (one high-water mark).

``--tree TREE`` (a folder holding ``mropt/``, e.g. ``git worktree add /tmp/old COMMIT``; default:
this script's own tree) is the code measured, and the first line printed names the ``mropt`` it
imported (``select_tree.py``). ``PYTHONPATH=TREE`` alone does not select it: the script's own
tree comes first.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from select_tree import add_tree_option, select_tree  # (beside this file)


def memory_mib() -> tuple[int, int]:
    """(VmHWM, VmRSS) of this process, MiB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return int(fields["VmHWM"].split()[0]) // 1024, int(fields["VmRSS"].split()[0]) // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", help="workload JSON file (e.g. from `mropt import-alibaba --workload`)")
    parser.add_argument("--policy", default="drf")
    parser.add_argument("--out", help="folder for the run's files (default: a temporary one, removed)")
    add_tree_option(parser)
    args = parser.parse_args()
    print("mropt from", select_tree(args.tree, "bench_memory.py"), flush=True)
    from mropt.model.io import load_instance
    from mropt.sim.outputs import write_outputs
    from mropt.sim.run import as_workload, simulate

    rows: list[tuple[str, int, int, float]] = []

    def step(name: str, start: float) -> None:
        rows.append((name, *memory_mib(), time.process_time() - start))

    start = time.process_time()
    workload = as_workload(load_instance(args.workload))
    step("workload loaded", start)
    start = time.process_time()
    run = simulate(workload, args.policy)
    step(f"simulate() under {args.policy} (run, summary)", start)
    store = run.recorder.ended_attempts
    blocks = [b for column in store.entry.values() for b in column] + store.task + store.node
    stored = sum(b.itemsize * len(b) for b in blocks) / 2**20
    with tempfile.TemporaryDirectory() as scratch:
        start = time.process_time()
        write_outputs(run, args.out or Path(scratch) / "run")
        step("--out (the three tables, the summary)", start)
    print("| step | peak (VmHWM) MiB | resident MiB | CPU s |\n|---|---:|---:|---:|")
    for name, peak, resident, cpu in rows:
        print(f"| {name} | {peak:,} | {resident:,} | {cpu:.1f} |")
    print(f"\nstore of ended attempts: {stored:.1f} MiB, {len(store):,} entries, {store.n_rows:,} rows")
    print(f"event-log hash: {run.summary['event_log_sha256']}")


if __name__ == "__main__":
    main()
