"""Executors: where the runs of a study execute. Both yield ``(index, result)`` as runs finish.

* :class:`LocalExecutor` — K threads in this process, each owning one reusable worker
  subprocess (:class:`~mropt.harness.worker.WorkerProcess`) and feeding it runs from a
  shared queue; a thread kills and replaces its worker past a run's deadline.
* :class:`DaskExecutor` — one Dask task per run on a ``distributed`` cluster (an address,
  e.g. one started by dask-jobqueue on SLURM, or a new ``LocalCluster``). Each task runs
  :func:`~mropt.harness.worker.run_task`: the Dask worker process owns the solver's
  process and kills it past the deadline, since a running Dask task cannot be cancelled.

A task is a dict: what :func:`mropt.harness.worker.execute` reads, plus ``deadline``
(seconds before the kill: the run's time limit plus the experiment's ``kill_grace``).

A failure of the harness itself -- a worker process that cannot start, a lost Dask
worker -- is not a result of the run (issue 14, item 5): the run is not yielded, so it
is never stored as finished, and once the other runs are done :meth:`map` raises one
:class:`~mropt.model.errors.InputError` saying how many runs were left and why
(running the same command again resumes them). A slot whose worker cannot start
takes no further runs.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

from mropt.harness.worker import WorkerProcess, WorkerStartError, run_task
from mropt.model.errors import InputError

_DONE = object()


class LocalExecutor:
    def __init__(self, workers: int = 1) -> None:
        self.workers = max(1, int(workers))
        self.started = 0  # worker processes started (replacements included), for the benchmark

    def map(self, tasks: list[dict[str, Any]]) -> Iterator[tuple[int, dict[str, Any]]]:
        todo: queue.Queue = queue.Queue()
        for item in enumerate(tasks):
            todo.put(item)
        results: queue.Queue = queue.Queue()
        stop = threading.Event()
        count = min(self.workers, len(tasks))
        failures: list[str] = []  # harness failures (list.append is atomic)
        yielded = 0

        def slot() -> None:
            worker = WorkerProcess(tasks[0].get("paths") if tasks else None)
            try:
                while not stop.is_set():
                    try:
                        index, task = todo.get_nowait()
                    except queue.Empty:
                        break
                    try:
                        result = worker.run(task, task.get("deadline"))
                    except Exception as exc:  # noqa: BLE001 - the worker would not even start
                        why = str(exc) if isinstance(exc, WorkerStartError) else f"{type(exc).__name__}: {exc}"
                        failures.append(why)
                        break  # this slot stops; the run stays to do
                    results.put((index, result))
            finally:
                self.started += worker.started
                if stop.is_set():
                    worker.kill()
                else:
                    worker.close()
                results.put(_DONE)

        threads = [threading.Thread(target=slot, daemon=True) for _ in range(count)]
        for t in threads:
            t.start()
        running = count
        try:
            while running:
                item = results.get()
                if item is _DONE:
                    running -= 1
                else:
                    yielded += 1
                    yield item
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=30)
        if failures:
            raise harness_failure(len(tasks) - yielded, failures[0])


class DaskExecutor:
    def __init__(self, workers: int = 1, scheduler: str | None = None, processes: bool = True) -> None:
        self.workers = max(1, int(workers))
        self.scheduler = scheduler
        self.processes = processes

    def map(self, tasks: list[dict[str, Any]]) -> Iterator[tuple[int, dict[str, Any]]]:
        from dask.distributed import Client, LocalCluster, as_completed

        cluster = None
        if self.scheduler:
            client = Client(self.scheduler)
        else:
            cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=self.processes,
                                   dashboard_address=None)
            client = Client(cluster)
        try:
            futures = {}
            failures: list[str] = []
            for index, task in enumerate(tasks):
                fut = client.submit(run_task, task, pure=False, key=f"mropt-run-{index}-{task['run_digest']}")
                futures[fut] = index
            for fut in as_completed(futures):
                index = futures[fut]
                try:
                    result = fut.result()
                except Exception as exc:  # noqa: BLE001 - a Dask worker lost, for instance
                    failures.append(f"dask: {type(exc).__name__}: {exc}")
                    continue
                if "harness_failure" in result:
                    failures.append(result["harness_failure"])
                    continue
                yield index, result
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
        if failures:
            raise harness_failure(len(failures), failures[0])


def harness_failure(left: int, why: str) -> InputError:
    """The one-line error of runs left undone by a harness failure (they are not stored)."""
    why = " ".join(why.split())
    return InputError(f"harness failure: {left} run(s) not run and not stored ({why}); "
                      "run the same command again to resume them")


def make_executor(kind: str, workers: int = 1, scheduler: str | None = None) -> LocalExecutor | DaskExecutor:
    if kind == "dask":
        return DaskExecutor(workers, scheduler)
    return LocalExecutor(workers)
