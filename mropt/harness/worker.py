"""Isolated runs: a long-lived worker process per slot, killed from outside past its limit.

:class:`WorkerProcess` (the parent side) owns one ``python -m mropt.harness.worker``
subprocess and feeds it one run at a time over its stdin/stdout pipes (length-prefixed
pickles). The parent waits for the answer until ``kill_after`` seconds (the run's time
limit plus a grace); past it, it kills the process (SIGKILL) and reports ``time_limit``;
when the process dies (a crash, ``os.kill``, out of memory), it reports ``error`` with
the signal or exit status. Either way the next run starts a fresh process, so a study
goes on. Workers are reused between runs: the cost of one run is a pickle through a pipe.

An *interrupted* run is not a result: a worker that got SIGINT, SIGTERM or SIGHUP (Ctrl-C
reaches every process of the terminal's group), a worker killed by :meth:`interrupt`
(the study stopping), or one that could not start answers with an ``interrupted`` field
(why), and the runner stores nothing for it, so the next invocation runs it again.

The worker side imports the experiment's plug-in modules (only those named in
``imports``, never ahead of the standard library: see ``_BOOT`` and
:func:`mropt.harness.experiment.import_modules`), rebuilds the instance from its
packed JSON form (:func:`pack_instance`) on the first run of that instance in this
process only (a cache by content hash), calls :func:`mropt.registry.solve` (which turns exceptions into ``error``),
and checks every solution with the problem package's independent ``verify``. It writes
nothing: the parent stores the result. It exits when its parent goes away.

The same class serves the Dask executor: each Dask task runs its run in a
:class:`WorkerProcess` owned by the Dask worker process (see :func:`run_task`), because a
running Dask task cannot be cancelled.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
import zlib
from typing import IO, Any, BinaryIO

_HEADER = struct.Struct("!Q")
START_TIMEOUT = 120.0
#: a worker dead by one of these was interrupted from outside (Ctrl-C, kill): not a result
INTERRUPT_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

#: the folder holding the parent's ``mropt`` package: the worker runs the same code
_MROPT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: The worker's start. ``python -P`` puts neither the working folder nor
#: anything else ahead of the standard library, and the package ``mropt`` alone is loaded
#: from ``_MROPT_ROOT`` (argv[1]) without putting that folder on ``sys.path``: a
#: ``select.py`` in the working folder or beside the experiment is never imported. The
#: experiment's ``imports`` are imported per task by :func:`execute` (import_modules).
_BOOT = (
    "import importlib.machinery, importlib.util, sys\n"
    "spec = importlib.machinery.PathFinder.find_spec('mropt', [sys.argv[1]])\n"
    "module = importlib.util.module_from_spec(spec)\n"
    "sys.modules['mropt'] = module\n"
    "spec.loader.exec_module(module)\n"
    "from mropt.harness.worker import main\n"
    "main()\n"
)


# -- wire format ----------------------------------------------------------------------------
def _send(stream: IO[bytes], obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def pack_instance(instance: Any) -> bytes:
    """The instance as a task carries it: its JSON (``to_dict``), zlib-compressed.

    One bytes object per instance, made once in the parent and shared by its runs' tasks, so that
    Dask's client (which walks a task's arguments for futures), its scheduler and workers, and the
    pipe to the worker process copy it whole instead of walking and pickling the instance's dict
    in every task: 50 tasks of the SWIM day cost 12 CPU s there with the dict, 0.4 s packed
    (issue 32, ``benchmarks/run_cost_split.py --dask 50``). :func:`unpack_instance` gives the
    instance back, with the same content hash."""
    text = json.dumps(instance.to_dict(), separators=(",", ":"), allow_nan=False)
    return zlib.compress(text.encode(), 1)


def unpack_instance(data: bytes) -> Any:
    """The instance :func:`pack_instance` packed (:func:`mropt.model.io.instance_from_dict`)."""
    from mropt.model.io import instance_from_dict

    return instance_from_dict(json.loads(zlib.decompress(data)))


def _recv_blocking(stream: BinaryIO) -> Any:
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(head)
    return pickle.loads(stream.read(size))


def _read_exact(fd: int, n: int, stop_at: float | None) -> bytes | None:
    """``n`` bytes from ``fd``; None at end of file; TimeoutError past ``stop_at`` (monotonic clock)."""
    chunks, got = [], 0
    while got < n:
        wait = None if stop_at is None else max(0.0, stop_at - time.monotonic())
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            raise TimeoutError
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


# -- parent side ----------------------------------------------------------------------------
class WorkerStartError(RuntimeError):
    """A worker process could not be started: a failure of the harness, not of the run.

    The executors never store such a run as finished: it stays to
    do, and the study ends with one line saying how many runs were left and why.
    """


class WorkerProcess:
    """One reusable worker subprocess; :meth:`run` never raises for what a method does."""

    def __init__(self, extra_paths: list[str] | None = None) -> None:
        self.proc: subprocess.Popen | None = None
        self.extra_paths = list(extra_paths or [])  # kept for callers; no longer put on the worker's path
        self.started = 0  # processes started so far (1 + replacements)
        self.interrupted = False  # set by interrupt(): what runs now is not a result

    def _start(self) -> None:
        env = dict(os.environ)  # PYTHONPATH as the user set it: no folder of the experiment's added
        stderr = None if env.get("MROPT_WORKER_STDERR") else subprocess.DEVNULL
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-P", "-c", _BOOT, _MROPT_ROOT],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=env,
                bufsize=0,
            )
        except OSError as exc:
            raise WorkerStartError(f"worker process did not start ({exc.strerror or exc})") from None
        self.started += 1
        try:
            hello = self._receive(time.monotonic() + START_TIMEOUT)
        except TimeoutError:
            self.kill()
            raise WorkerStartError(f"worker process did not start within {START_TIMEOUT:g} s") from None
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            hello = f"{type(exc).__name__}: {exc}"
        if not isinstance(hello, dict) or not hello.get("ready"):
            try:  # at end of file the process is exiting: its status says why
                code = self.proc.wait(timeout=5) if hello is None else self.proc.poll()
            except subprocess.TimeoutExpired:
                code = None
            self.kill()
            why = f"exit status {code}" if code is not None else f"{hello!r:.200}"
            raise WorkerStartError(f"worker process did not start ({why})")

    def _receive(self, stop_at: float | None) -> Any:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        head = _read_exact(fd, _HEADER.size, stop_at)
        if head is None:
            return None
        body = _read_exact(fd, _HEADER.unpack(head)[0], stop_at)
        return None if body is None else pickle.loads(body)

    def run(self, task: dict[str, Any], limit: float | None) -> dict[str, Any]:
        """Run ``task`` in the worker; kill it when no answer came within ``limit`` seconds.

        Raises :class:`WorkerStartError` (a RuntimeError) when no worker process could be
        started: no run happened.
        """
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        proc = self.proc
        assert proc is not None and proc.stdin is not None  # _start made it, with a pipe to its input
        start = time.monotonic()
        try:
            _send(proc.stdin, task)
            answer = self._receive(None if limit is None else start + limit)
        except TimeoutError:
            self.kill()
            out = {
                "status": "time_limit",
                "error": f"killed after {time.monotonic() - start:.1f} s (time limit plus grace: {limit:g} s)",
                "run_time": time.monotonic() - start,
            }
            if self.interrupted:
                out["interrupted"] = "the study was stopped"
            return out
        except (BrokenPipeError, OSError, EOFError, pickle.UnpicklingError) as exc:
            answer = None
            why = f"{type(exc).__name__}: {exc}"
        else:
            why = ""
        if answer is None:
            code = proc.wait(timeout=10) if proc.poll() is None else proc.returncode
            self.proc = None
            signum = -code if code is not None and code < 0 else None
            if signum is not None:
                try:
                    why = f"killed by signal {signal.Signals(signum).name}"
                except ValueError:
                    why = f"killed by signal {signum}"
            elif not why:
                why = f"exit status {code}"
            out = {"status": "error", "error": f"worker process died ({why})", "run_time": time.monotonic() - start}
            if self.interrupted:
                out["interrupted"] = "the study was stopped"
            elif signum in INTERRUPT_SIGNALS:
                out["interrupted"] = f"worker process interrupted ({why})"
            return out
        answer["run_time"] = time.monotonic() - start
        if answer.get("interrupted"):
            self.kill()  # its state after a KeyboardInterrupt is not to be trusted: the next run gets a fresh one
        return answer

    def kill(self) -> None:
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self.proc = None

    def interrupt(self) -> None:
        """Stop the run in flight from another thread: kill the process (the thread in
        :meth:`run` sees it die and reports the run as interrupted)."""
        self.interrupted = True
        proc = self.proc
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.kill()

    def close(self) -> None:
        """Ask the worker to exit (end of input), kill it if it does not."""
        proc = self.proc
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()
        self.proc = None


_local = threading.local()


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """Run one task in a worker process owned by this (Dask worker) thread; reused between tasks."""
    worker = getattr(_local, "worker", None)
    if worker is None:
        worker = _local.worker = WorkerProcess(task.get("paths"))
    try:
        return worker.run(task, task.get("kill_after"))
    except WorkerStartError as exc:  # no run happened: not a result (the runner stores nothing)
        return {"status": "error", "error": f"harness: {exc}", "interrupted": str(exc)}


# -- worker side ----------------------------------------------------------------------------
_VERSIONS: dict[str, str] = {}


def _versions() -> dict[str, str]:
    from importlib import metadata

    if _VERSIONS:
        return _VERSIONS
    out = _VERSIONS
    for name in ("numpy", "ortools", "highspy", "pulp"):
        try:  # noqa: SIM105  (a package that is not installed is left out)
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


def simulate_task(task: dict[str, Any], instance: Any) -> dict[str, Any]:
    """One simulation of a policy study (``task["policy"]``): the row's fields from the summary.

    The objective is the benefit earned (AMB eq. 1), ``status`` ``feasible``; the run's tables
    are checked by the independent :func:`mropt.sim.verify.verify_simulation` (``verified``,
    ``verify_problems``; its recomputed benefit must equal the recorded one), ``accepted`` and ``on_time`` the
    job counts, ``metrics`` the whole summary (:mod:`mropt.sim.run`) but the policy's name
    and parameters (columns of their own), with the study's own measures of the run
    (:func:`mropt.harness.policy_metrics.run_metrics`: completion times, slowdown, on-time
    share, locality). ``task["options"]``: the entry's speculation rule, its parameters and
    straggler draws. A policy's exception is an ``error`` row.
    """
    from mropt.sim.run import simulate

    try:
        run = simulate(
            instance,
            task["method"],
            task.get("params", {}),
            seed=task.get("seed", 0),
            mode=task.get("mode"),
            **task.get("options", {}),
        )
    except Exception as exc:  # noqa: BLE001 - a policy's bug or bad params: an error row
        return {"status": "error", "error": f"{type(exc).__name__}: {' '.join(str(exc).split())}"}
    from mropt.harness.policy_metrics import run_metrics
    from mropt.model.tolerance import same_value
    from mropt.sim.verify import verify_simulation

    s = run.summary
    jobs, tasks = run.recorder.jobs_columns(), run.recorder.tasks_columns()
    run.close()  # (a compiled run's rows' file, now: a worker runs many)
    verdict = verify_simulation(run.workload, jobs, tasks)
    problems = list(verdict.problems)
    if verdict.objective is not None and not same_value(verdict.objective, s["benefit"], atol=1e-6):
        problems.append(f"benefit {s['benefit']!r}, verify recomputes {verdict.objective!r}")
    metrics = {k: v for k, v in s.items() if k not in ("policy", "params")}
    metrics.update(run_metrics(run.workload, jobs, tasks))
    return {
        "status": "feasible",
        "objective": s["benefit"],
        "bound": None,
        "wall_time": s["wall_time"],
        "accepted": s["accepted"],
        "on_time": s["on_time"],
        "kind": "workload",
        "solver": "mropt-sim",
        "solver_version": "",
        "error": None,
        "verified": not problems,
        "verify_problems": "; ".join(problems) or None,
        "metrics": json.dumps(metrics, sort_keys=True),
        "packages": _versions(),
    }


def execute(task: dict[str, Any], cache: dict[str, Any]) -> dict[str, Any]:
    """Solve and verify one run (or simulate one, ``task["policy"]``); everything a method does is caught."""
    from mropt.harness.experiment import import_modules
    from mropt.registry import solve, verify_solution

    try:
        import_modules(task.get("imports", []), task.get("paths", []))
        instance = cache.get(task["instance_hash"])
        if instance is None:  # the first run of this instance in this process: unpacked once
            instance = unpack_instance(task["instance_data"])
            if len(cache) > 16:
                cache.clear()
            cache[task["instance_hash"]] = instance
        if task.get("policy"):
            return simulate_task(task, instance)
        sol = solve(
            instance,
            task["method"],
            time_limit=task.get("time_limit"),
            seed=task.get("seed", 0),
            **task.get("params", {}),
        )
    except Exception as exc:  # noqa: BLE001 - InputError from bad params, failed imports
        return {"status": "error", "error": f"{type(exc).__name__}: {' '.join(str(exc).split())}"}
    out: dict[str, Any] = {
        "status": sol.status,
        "objective": sol.objective,
        "bound": sol.bound,
        "wall_time": sol.wall_time,
        "accepted": len(sol.accepted),
        "kind": instance.kind,
        "solver": str(sol.solver.get("name", "")),
        "solver_version": str(sol.solver.get("version", "")),
        "error": sol.details.get("error"),
        "packages": _versions(),
    }
    if sol.status == "error":
        return out
    try:
        verdict = verify_solution(instance, sol)
        out["verified"] = bool(verdict.ok)
        out["verify_problems"] = "; ".join(verdict.problems) or None
        metrics = {**sol.summary(), **verdict.summary()}
        out["on_time"] = metrics.get("on_time")
        out["metrics"] = json.dumps(metrics, sort_keys=True)
    except Exception as exc:  # noqa: BLE001
        out["verified"] = False
        out["verify_problems"] = f"verify failed: {type(exc).__name__}: {exc}"
    return out


def _watch_parent() -> None:
    parent = os.getppid()
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(3)


_BUSY = False  # a task is running (the signal handler interrupts it)


def _on_signal(signum: int, frame: Any) -> None:
    """SIGINT/SIGTERM/SIGHUP: stop the task in flight (answered as interrupted); idle, die by the signal."""
    if _BUSY:
        raise _Interrupted(signum)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


class _Interrupted(BaseException):
    """Raised in the worker by a signal during a task (not an Exception: methods do not catch it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def main() -> None:
    global _BUSY
    out = os.fdopen(os.dup(1), "wb", buffering=0)  # the protocol's channel
    os.dup2(2, 1)  # whatever a solver prints goes to stderr, not into the protocol
    inp = sys.stdin.buffer
    threading.Thread(target=_watch_parent, daemon=True).start()
    for signum in INTERRUPT_SIGNALS:
        signal.signal(signum, _on_signal)
    import mropt.registry  # noqa: F401  (import cost paid once, before the first run)

    mropt.registry.methods()
    _send(out, {"ready": True, "pid": os.getpid(), "versions": _versions()})
    cache: dict[str, Any] = {}
    while True:
        task = _recv_blocking(inp)
        if task is None:
            return
        try:
            _BUSY = True
            try:
                answer = execute(task, cache)
            finally:
                _BUSY = False
        except (_Interrupted, KeyboardInterrupt) as exc:
            name = signal.Signals(exc.signum).name if isinstance(exc, _Interrupted) else "SIGINT"
            answer = {"status": "error", "error": f"interrupted by {name}", "interrupted": f"worker got {name}"}
        _send(out, answer)


if __name__ == "__main__":
    main()
