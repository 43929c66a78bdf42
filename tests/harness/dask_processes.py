"""A Dask cluster of separate processes, started the way a user starts one (not a test module).

``dask scheduler`` and ``dask worker``, the commands of the ``distributed`` package (dask-jobqueue's
SLURM jobs run the same worker command), each in its own process group so that stopping one ends
its nanny, its worker and the worker's solver processes. Everything listens on free ports of
127.0.0.1, with no dashboard; each worker has one thread and its scratch folder under ``folder``.
Used by ``test_dask_cluster.py`` and ``benchmarks/bench_dask_study.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

#: the ``dask`` command beside this interpreter (the virtual environment's), else on PATH
DASK = shutil.which("dask", path=str(Path(sys.executable).parent)) or shutil.which("dask")
#: the HTTP server (health, metrics) listens even with --no-dashboard: on a free port, not on 8787
NO_DASHBOARD = ("--no-dashboard", "--dashboard-address", "127.0.0.1:0")


class ClusterStartError(RuntimeError):
    """The scheduler gave no address, or the workers did not register, in time (the logs' tails attached)."""


class DaskProcesses:
    """``with DaskProcesses(folder, workers=2) as cluster: ... cluster.address ...``; ``stop`` always ends them."""

    def __init__(self, folder: Path, workers: int, timeout: float = 60.0) -> None:
        if DASK is None:
            raise ClusterStartError("the `dask` command of the package distributed is not installed")
        self.folder = Path(folder)
        self.workers = workers
        self.timeout = timeout  # seconds for the address and for the workers to register (a loaded machine)
        self.procs: list[subprocess.Popen] = []
        self.address = ""

    def __enter__(self) -> DaskProcesses:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _spawn(self, name: str, *args: str) -> subprocess.Popen:
        env = {**os.environ, "DASK_TEMPORARY_DIRECTORY": str(self.folder)}
        with open(self.folder / f"{name}.log", "wb") as log:
            proc = subprocess.Popen(
                [str(DASK), *args],
                cwd=self.folder,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.procs.append(proc)
        return proc

    def start(self) -> str:
        """Start the scheduler, then the workers; return once they are registered."""
        from dask.distributed import Client

        self.folder.mkdir(parents=True, exist_ok=True)
        address_file = self.folder / "scheduler.json"
        scheduler = self._spawn(
            "scheduler",
            "scheduler",
            *("--host", "127.0.0.1", "--port", "0", *NO_DASHBOARD),
            *("--scheduler-file", str(address_file)),
            *("--idle-timeout", "600"),  # one orphaned by a killed caller ends on its own
        )
        deadline = time.monotonic() + self.timeout
        while not self.address:
            try:
                self.address = json.loads(address_file.read_text())["address"]
            except (OSError, ValueError, KeyError):  # not written yet, or half written
                if _exited(scheduler.pid) or time.monotonic() > deadline:
                    why = f"dask scheduler gave no address within {self.timeout:g} s\n{self.logs()}"
                    raise ClusterStartError(why) from None
                time.sleep(0.05)
        for i in range(self.workers):
            self._spawn(
                f"worker-{i}",
                "worker",
                self.address,
                *("--name", f"w{i}", "--nthreads", "1", "--host", "127.0.0.1", *NO_DASHBOARD),
                *("--local-directory", str(self.folder / f"worker-{i}")),
                *("--death-timeout", "60"),  # one whose scheduler is gone ends on its own
            )
        with Client(self.address, timeout=self.timeout) as client:
            try:
                client.wait_for_workers(self.workers, timeout=self.timeout)
            except TimeoutError:
                raise ClusterStartError(
                    f"{self.workers} dask workers did not register within {self.timeout:g} s\n{self.logs()}"
                ) from None
        return self.address

    def executed(self) -> dict[str, int]:
        """Tasks each worker has executed so far, by worker name (``w0``, ``w1``, ...)."""
        from dask.distributed import Client

        with Client(self.address, timeout=self.timeout) as client:
            counts = client.run(lambda dask_worker: (dask_worker.name, dask_worker.state.executed_count))
        return dict(counts.values())

    def stop(self) -> None:
        """SIGTERM to every process group at once, then SIGKILL to what is left of each after 10 s.

        A group leader is reaped only after its group's SIGKILL, so that its id, the group's, cannot
        have been reused by then."""
        live = [p for p in self.procs if p.returncode is None]
        for proc in live:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)  # a nanny closes its worker on SIGTERM
        deadline = time.monotonic() + 10
        for proc in live:
            while not _exited(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # whatever the group left behind
            proc.wait()
        self.procs.clear()

    def logs(self) -> str:
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-1500:]}" for p in sorted(self.folder.glob("*.log"))
        )


def _exited(pid: int) -> bool:
    """Whether child ``pid`` has exited, without reaping it (``Popen.poll`` would)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True
