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
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

from mropt.harness.worker import WorkerProcess, run_task

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
                        result = {"status": "error", "error": f"harness: {type(exc).__name__}: {exc}"}
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
                    yield item
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=30)


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
            for index, task in enumerate(tasks):
                fut = client.submit(run_task, task, pure=False, key=f"mropt-run-{index}-{task['run_digest']}")
                futures[fut] = index
            for fut in as_completed(futures):
                index = futures[fut]
                try:
                    result = fut.result()
                except Exception as exc:  # noqa: BLE001 - a Dask worker lost, for instance
                    result = {"status": "error", "error": f"dask: {type(exc).__name__}: {exc}"}
                yield index, result
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def make_executor(kind: str, workers: int = 1, scheduler: str | None = None) -> LocalExecutor | DaskExecutor:
    if kind == "dask":
        return DaskExecutor(workers, scheduler)
    return LocalExecutor(workers)
