"""What a study run costs besides its simulation, from the Dask task to the stored row (issue 32).

Run: ``.venv/bin/python benchmarks/run_cost_split.py [--policy fifo] [--seed 0] [--tree DIR]``:
one run of ``benchmarks/swim_day_study.toml`` (the SWIM Facebook 2009 day), taken apart into the
steps ``mropt gap STUDY --scheduler ADDRESS`` pays for it, each timed in CPU seconds
(``time.process_time``) with the project's own functions:

* parent (``mropt gap``): the study's trace import and instances (once a study),
  :func:`~mropt.harness.runner.make_task` (each run), the task's pickle (``dumps``/``loads``, and
  its size: Dask pickles each task at the client, the scheduler and each worker read it, the
  Dask worker pickles it again to its solver process, which reads it);
* the solver process (:mod:`mropt.harness.worker`): its start (imports and the method registry:
  the child's CPU until it said it was ready, once per process), then
  :func:`~mropt.harness.worker.execute` split into the instance rebuilt from the task (the
  first run of a process only: cached by content hash; the rebuilt instance's content hash is
  checked against the study's), the simulation (``simulate``: ``Simulation.run()``, the summary,
  the rest: checks and building the run) and what follows it (tables, ``verify_simulation``, the
  study's measures, the row's JSON);
* parent again: the stored row (:func:`~mropt.harness.runner.make_row`, the reference's gaps and
  :meth:`~mropt.harness.store.Store.write_row`).

``--tree DIR`` imports ``mropt`` from DIR (a ``git worktree`` of an earlier commit) to time it the
same way under the same load. The Dask scheduler's and workers' own share (their event loops,
heartbeats, the task messages) is not in this split: ``bench_dask_study.py`` times the whole.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
STUDY = HERE / "swim_day_study.toml"


def cpu(fn: Callable[[], Any]) -> tuple[Any, float]:
    """``fn()`` and its CPU seconds."""
    begin = time.process_time()
    out = fn()
    return out, time.process_time() - begin


def child_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", default="fifo", help="the run's policy (default fifo)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tree", type=Path, default=HERE.parent, help="the tree whose mropt is imported")
    parser.add_argument("--dask", type=int, default=0, metavar="N", help="also move N tasks through Dask")
    args = parser.parse_args()
    sys.path.insert(0, str(args.tree.resolve()))
    import mropt
    from mropt.harness import worker
    from mropt.harness.experiment import load_experiment
    from mropt.harness.reference import Reference
    from mropt.harness.runner import make_row, make_task
    from mropt.harness.store import Store
    from mropt.sim import run as sim_run

    print(f"mropt from {Path(mropt.__file__).parent}; load {os.getloadavg()[0]:.1f}", flush=True)
    parts: list[tuple[str, str, float]] = []  # (where, what, CPU s)

    exp = load_experiment(STUDY)
    entries, seconds = cpu(exp.instances)
    parts.append(("parent, once a study", "trace import, instances, their hashes", seconds))
    run = next(r for r in exp.runs(entries) if r.method.name == args.policy and r.seed == args.seed)
    task, seconds = cpu(lambda: make_task(exp, run))
    parts.append(("parent, each run", "make_task", seconds))
    data, seconds = cpu(lambda: pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL))
    parts.append(("each hop, each run", f"pickle.dumps(task) ({len(data) / 2**20:.1f} MiB)", seconds))
    _, seconds = cpu(lambda: pickle.loads(data))
    parts.append(("each hop, each run", "pickle.loads(task)", seconds))

    proc = worker.WorkerProcess()
    begin = time.perf_counter()
    proc._start()
    assert proc.proc is not None
    wall = time.perf_counter() - begin
    parts.append(("solver process, once", f"start: imports, registry (wall {wall:.2f} s)", child_cpu(proc.proc.pid)))
    proc.close()

    simulate, loop, summarise = sim_run.simulate, sim_run.Simulation.run, sim_run.summarise
    timed: dict[str, float] = {}

    def timed_simulate(*a: Any, **k: Any) -> Any:
        done, timed["simulate"] = cpu(lambda: simulate(*a, **k))
        return done

    def timed_loop(self: Any) -> Any:
        done, timed["loop"] = cpu(lambda: loop(self))
        return done

    def timed_summarise(*a: Any, **k: Any) -> Any:
        done, timed["summary"] = cpu(lambda: summarise(*a, **k))
        return done

    sim_run.simulate = timed_simulate  # (simulate_task imports it from mropt.sim.run at each call)
    sim_run.Simulation.run, sim_run.summarise = timed_loop, timed_summarise
    cache: dict[str, Any] = {}
    if "instance_data" in task:  # packed JSON (this tree)
        instance, seconds = cpu(lambda: worker.unpack_instance(task["instance_data"]))
    else:  # the dict (a tree before pack_instance)
        from mropt.model.io import instance_from_dict

        instance, seconds = cpu(lambda: instance_from_dict(task["instance"]))
    assert instance.content_hash() == entries[0].instance.content_hash()  # the same content
    parts.append(("solver process, first run", "the instance rebuilt (cached by hash)", seconds))
    cache[task["instance_hash"]] = instance
    result, seconds = cpu(lambda: worker.execute(task, cache))
    sim_run.simulate, sim_run.Simulation.run, sim_run.summarise = simulate, loop, summarise
    assert result["status"] == "feasible" and result["verified"], result
    parts.append(("solver process, each run", "simulate: Simulation.run()", timed["loop"]))
    parts.append(("solver process, each run", "simulate: its summary (summarise)", timed["summary"]))
    rest = timed["simulate"] - timed["loop"] - timed["summary"]
    parts.append(("solver process, each run", "simulate: the rest (checks, building the run)", rest))
    parts.append(("solver process, each run", "execute besides simulate", seconds - timed["simulate"]))

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(tmp)
        store.create()
        ref = Reference()

        def stored() -> None:
            row = make_row(exp, run, {**result, "run_time": 1.0})
            ref.add_row(row)
            row.update(ref.gaps(row))
            store.write_row(row)

        _, seconds = cpu(stored)
    parts.append(("parent, each run", "make_row, gaps, write_row", seconds))

    print(f"one run of {args.policy} (seed {args.seed}) on {STUDY.name}, CPU seconds:")
    for where, what, seconds in parts:
        print(f"  {where:<26} {what:<52} {seconds:7.3f}")
    if args.dask:
        dask_hops(exp, entries, make_task, args.dask)


def dask_hops(exp: Any, entries: Any, make_task: Callable[..., dict[str, Any]], count: int) -> None:
    """The study's first ``count`` tasks through a cluster of a ``dask scheduler`` and 2 ``dask worker``
    processes (``tests/harness/dask_processes.py``), each task run as ``len(task)`` instead of its run:
    the CPU seconds of the client (``make_task`` and ``submit``), the scheduler and the workers
    (their process's, read before and after) that moving the tasks cost."""
    sys.path.insert(0, str(HERE.parent))
    from dask.distributed import Client, wait

    from tests.harness.dask_processes import DaskProcesses

    runs = list(exp.runs(entries))[:count]
    with tempfile.TemporaryDirectory() as tmp, DaskProcesses(Path(tmp), 2) as cluster:
        client = Client(cluster.address)
        client.submit(len, [0]).result()  # (the first task's one-time costs out of the count)

        def seconds() -> tuple[float, float]:
            return (
                float(client.run_on_scheduler(time.process_time)),
                float(sum(client.run(time.process_time).values())),
            )

        scheduler0, workers0 = seconds()
        begin = time.process_time()
        packed: dict[str, bytes] = {}
        try:
            tasks = [make_task(exp, r, packed) for r in runs]
        except TypeError:  # a tree before the shared packing
            tasks = [make_task(exp, r) for r in runs]
        futures = [client.submit(len, t, pure=False) for t in tasks]
        wait(futures)
        client_s = time.process_time() - begin
        scheduler1, workers1 = seconds()
        client.close()
    print(f"{count} tasks through Dask (2 workers, len for the run), CPU seconds:")
    print(f"  client (make_task, submit) {client_s:7.3f}")
    print(f"  scheduler                  {scheduler1 - scheduler0:7.3f}")
    print(f"  workers                    {workers1 - workers0:7.3f}")


if __name__ == "__main__":
    main()
