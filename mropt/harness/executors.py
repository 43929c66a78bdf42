"""Executors: where the runs of a study execute. Both yield ``(index, result)`` as runs finish.

* :class:`LocalExecutor` — K threads in this process, each owning one reusable worker
  subprocess (:class:`~mropt.harness.worker.WorkerProcess`) and feeding it runs from a
  shared queue; a thread kills and replaces its worker past a run's ``kill_after``.
* :class:`DaskExecutor` — one Dask task per run on a ``distributed`` cluster (an address,
  e.g. one started by dask-jobqueue on SLURM, or a new ``LocalCluster``). Each task runs
  :func:`~mropt.harness.worker.run_task`: the Dask worker process owns the solver's
  process and kills it past ``kill_after``, since a running Dask task cannot be cancelled.

A task is a dict: what :func:`mropt.harness.worker.execute` reads, plus ``kill_after``
(seconds before the kill: the run's time limit plus the experiment's ``kill_grace``).

A result with an ``interrupted`` field (why) is no result: the run was stopped from
outside or never started (a worker process that could not start, a lost Dask worker);
the runner stores nothing for it. Closing the iterator (the study stopped: Ctrl-C,
SIGTERM) kills the runs in flight at once.

A Dask scheduler that cannot be reached within :data:`CONNECT_TIMEOUT` seconds is an
:class:`~mropt.model.errors.InputError` naming its address.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Generator
from typing import Any

from mropt.harness.worker import WorkerProcess, run_task
from mropt.model.errors import InputError

_DONE = object()
#: seconds to wait for a Dask scheduler given by address before giving up (one-line error)
CONNECT_TIMEOUT = 5.0


class LocalExecutor:
    def __init__(self, workers: int = 1) -> None:
        self.workers = max(1, int(workers))
        self.started = 0  # worker processes started (replacements included), for the benchmark

    def map(self, tasks: list[dict[str, Any]]) -> Generator[tuple[int, dict[str, Any]], None, None]:
        todo: queue.Queue = queue.Queue()
        for item in enumerate(tasks):
            todo.put(item)
        results: queue.Queue = queue.Queue()
        stop = threading.Event()
        count = min(self.workers, len(tasks))
        workers = [WorkerProcess(tasks[0].get("paths") if tasks else None) for _ in range(count)]

        def slot(worker: WorkerProcess) -> None:
            try:
                while not stop.is_set():
                    try:
                        index, task = todo.get_nowait()
                    except queue.Empty:
                        break
                    try:
                        result = worker.run(task, task.get("kill_after"))
                    except Exception as exc:  # noqa: BLE001 - the worker would not even start: no run happened
                        why = " ".join(str(exc).split()) or type(exc).__name__
                        result = {
                            "status": "error",
                            "error": f"harness: {type(exc).__name__}: {why}",
                            "interrupted": f"worker process could not start ({type(exc).__name__}: {why})",
                        }
                    if stop.is_set():
                        result.setdefault("interrupted", "the study was stopped")
                    results.put((index, result))
            finally:
                self.started += worker.started
                if stop.is_set():
                    worker.kill()
                else:
                    worker.close()
                results.put(_DONE)

        threads = [threading.Thread(target=slot, args=(w,), daemon=True) for w in workers]
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
            for w in workers:  # the study stopped (or ended): runs in flight end now, not at their kill time
                w.interrupt()
            for t in threads:
                t.join(timeout=30)


class DaskExecutor:
    def __init__(self, workers: int = 1, scheduler: str | None = None, processes: bool = True) -> None:
        self.workers = max(1, int(workers))
        self.scheduler = scheduler
        self.processes = processes

    def map(self, tasks: list[dict[str, Any]]) -> Generator[tuple[int, dict[str, Any]], None, None]:
        from dask.distributed import Client, LocalCluster, as_completed

        cluster = None
        if self.scheduler:
            client = connect(self.scheduler)
        else:
            cluster = LocalCluster(
                n_workers=self.workers, threads_per_worker=1, processes=self.processes, dashboard_address=None
            )
            client = Client(cluster)
        futures = {}
        try:
            for index, task in enumerate(tasks):
                fut = client.submit(run_task, task, pure=False, key=f"mropt-run-{index}-{task['run_digest']}")
                futures[fut] = index
            for fut in as_completed(futures):
                index = futures[fut]
                try:
                    result = fut.result()
                except Exception as exc:  # noqa: BLE001 - a Dask worker lost, for instance: no result
                    why = " ".join(str(exc).split()) or type(exc).__name__
                    result = {
                        "status": "error",
                        "error": f"dask: {type(exc).__name__}: {why}",
                        "interrupted": f"dask: {type(exc).__name__}: {why}",
                    }
                yield index, result
        finally:
            if futures:
                with contextlib.suppress(Exception):  # the cluster may be gone already
                    client.cancel(list(futures))
            client.close()
            if cluster is not None:
                cluster.close()


def connect(address: str, timeout: float = CONNECT_TIMEOUT) -> Any:
    """A Dask client of the scheduler at ``address``; InputError (one line, naming it) if it cannot be reached."""
    import logging

    from dask.distributed import Client

    quiet = [
        logging.getLogger(n)
        for n in ("distributed", "distributed.client", "distributed.comm", "distributed.comm.core", "distributed.core")
    ]
    levels = [lg.level for lg in quiet]
    for lg in quiet:  # distributed logs every failed attempt: the error below says it once
        lg.setLevel(logging.CRITICAL)
    try:
        return Client(address, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        why = " ".join(str(exc).split()) or type(exc).__name__
        raise InputError(
            f"cannot reach the Dask scheduler at {address} (connect timeout {timeout:g} s): {why[:200]}"
        ) from None
    finally:
        for lg, level in zip(quiet, levels):
            lg.setLevel(level)


def make_executor(kind: str, workers: int = 1, scheduler: str | None = None) -> LocalExecutor | DaskExecutor:
    if kind == "dask":
        return DaskExecutor(workers, scheduler)
    return LocalExecutor(workers)
