"""What a policy study's run costs after ``Simulation.run()`` returns, per policy (issue 32).

Run: ``.venv/bin/python benchmarks/post_run_split.py [POLICY ...] [--seed N] [--tree DIR] [--rows FILE]``:
the SWIM Facebook 2009 day (``bench_sim.SWIM_DAY``) as ``benchmarks/swim_day_study.toml`` runs it
(default mode, utilisation recorded), under each POLICY (default: the study's ten).

Each policy is simulated once (``simulate``, its CPU seconds and the summary's ``wall_time``: the
loop), then, the run done, these are timed in CPU seconds (``time.process_time``):

* ``summary``: :func:`mropt.sim.summary.summarise` again on the finished run (what ``simulate`` does after
  the loop: the event-log hash, the utilisation ratio, the job table);
* ``worker``: the study's own row of the run, :func:`mropt.harness.worker.simulate_task` with its
  ``simulate`` handing back the finished run; inside it, wrapped by name, ``columns`` (the job and
  attempt tables' columns), ``verify`` (``verify_simulation``) and ``metrics`` (``run_metrics``,
  with ``as_frames`` where the worker still calls it).

``--tree DIR`` imports ``mropt`` from DIR (a ``git worktree`` of an earlier commit) to time it the
same way under the same load; ``--rows FILE`` writes each row (the summary's ``wall_time`` set to
0, the ``packages`` left out) as JSON lines, so two trees' rows can be compared byte for byte
(``cmp``): the same metrics, summary, verdict and problems.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
STUDY = ("fifo", "fair", "capacity", "mpsa", "drf", "ddrf", "delay", "dc", "minedf-wc", "amb")


def wrap(owner: Any, name: str, label: str, acc: Counter[str]) -> None:
    """Replace ``owner.name`` by a wrapper adding its CPU seconds to ``acc[label]``."""
    inner: Callable[..., Any] = getattr(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        begin = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            acc[label] += time.process_time() - begin

    setattr(owner, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policies", nargs="*", default=list(STUDY))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tree", type=Path, default=HERE.parent, help="the tree whose mropt is imported")
    parser.add_argument("--rows", type=Path, help="write the study's rows here (JSON lines)")
    args = parser.parse_args()
    sys.path.insert(0, str(args.tree.resolve()))
    import mropt  # (first: bench_sim puts this tree on the path)

    sys.path.insert(1, str(HERE))
    import bench_sim

    from mropt.harness import policy_metrics, worker
    from mropt.importers.swim_workload import import_swim_workload
    from mropt.sim import recorder, run, verify

    print(f"mropt from {Path(mropt.__file__).parent}", flush=True)
    acc: Counter[str] = Counter()
    wrap(recorder.Recorder, "jobs_columns", "columns", acc)
    wrap(recorder.Recorder, "tasks_columns", "columns", acc)
    wrap(verify, "verify_simulation", "verify", acc)
    wrap(policy_metrics, "run_metrics", "metrics", acc)
    if hasattr(policy_metrics, "as_frames"):
        wrap(policy_metrics, "as_frames", "metrics", acc)
    workload = import_swim_workload(bench_sim.SWIM_DAY)
    simulate = run.simulate
    rows = []
    print(
        f"{'policy':<10} {'simulate':>9} {'loop wall':>9} {'summary':>8} {'worker':>7} {'columns':>8} {'verify':>7} {'metrics':>8}"
    )
    for policy in args.policies:
        begin = time.process_time()
        done = simulate(workload, policy, {}, seed=args.seed)
        total = time.process_time() - begin
        acc.clear()
        begin = time.process_time()
        run.summarise(done.recorder, policy, done.params, 0.0)
        summary = time.process_time() - begin
        acc.clear()
        done.summary["wall_time"] = 0.0
        run.simulate = lambda *a, _done=done, **k: _done
        begin = time.process_time()
        row = worker.simulate_task({"method": policy, "seed": args.seed}, workload)
        post = time.process_time() - begin
        run.simulate = simulate
        row.pop("packages", None)
        rows.append(json.dumps({"policy": policy, "seed": args.seed, **row}, sort_keys=True))
        loop = done.wall_time
        print(
            f"{policy:<10} {total:9.2f} {loop:9.2f} {summary:8.2f} {post:7.2f} "
            f"{acc['columns']:8.2f} {acc['verify']:7.2f} {acc['metrics']:8.2f}",
            flush=True,
        )
        assert row["status"] == "feasible" and row["verified"], row
    if args.rows:
        args.rows.write_text("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
