"""MILP and LP through PuLP, set up once for every problem package: CBC and HiGHS.

* CBC runs through PuLP's ``COIN_CMD`` pointed at a ``cbc`` on PATH, else the binary
  bundled with PuLP (``PULP_CBC_CMD``, which used the bundled binary, is deprecated);
* HiGHS runs in-process (``pulp.HiGHS``, highspy pinned to the HiGHS inside OR-Tools:
  see pyproject.toml);
* both with relative and absolute MIP gap 0 by default (an optimum that serves as a
  proof must be exact; HiGHS's default absolute gap, 1e-6, is not relative to the data),
  ``threads`` threads and the time left;
* :func:`solve_pulp` maps the outcome to (has a solution, proven optimal, proven bound,
  message) and never raises for a solver failure; the bound is read in the problem's
  own sense (:func:`highs_mip_bound`: PuLP hands HiGHS a maximisation negated), and only
  where it is proven: CBC through ``COIN_CMD`` reports no bound, so its bound
  is the objective at a proven optimum and None otherwise; HiGHS's ``mip_dual_bound`` is
  taken under a model status of :data:`HIGHS_BOUND_STATUSES` only, when it is finite and
  on the right side of the solution found (a time limit reached in presolve leaves it
  infinite or meaningless); an LP's bound is its optimum, nothing else;
* HiGHS's global thread pool keeps the thread count of the first solve of the process,
  and HiGHS refuses (model status "Not Set", a dual bound of 0) every later solve that
  asks for another count: :func:`solve_pulp` restarts the pool when the count changes,
  and trusts HiGHS's bound only under a status that proves one;
* :func:`solver_record` names the solver the same way for every method.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import shutil
import sys
from collections.abc import Iterator

import pulp
from pulp.apis import coin_api

from mropt.backends.starve import starvable
from mropt.model.tolerance import OBJECTIVE_RTOL

#: PuLP back ends by name
BACKENDS = ("cbc", "highs")

#: HiGHS model statuses under which its dual bound is proven (a failed solve reports 0)
HIGHS_BOUND_STATUSES = ("kOptimal", "kTimeLimit", "kIterationLimit", "kSolutionLimit", "kInterrupt")

#: threads of HiGHS's global scheduler in this process (None: not started by mropt yet)
_highs_threads: int | None = None


def highs_threads(threads: int) -> None:
    """Make HiGHS's process-wide thread pool run ``threads`` threads (restarting it if it runs another count).

    HiGHS starts the pool once, with the first solve's ``threads``, and a later solve
    asking for another count fails with model status "Not Set" (HiGHS 1.12): a method
    run with ``--threads 2`` after one with 1 thread in the same process (a harness
    worker, a Benders run whose LP bound used 1 thread) would have had no answer, and
    its bound of 0 read as a proof.
    """
    global _highs_threads
    if _highs_threads is not None and _highs_threads != threads:
        import highspy

        highspy.Highs.resetGlobalScheduler(True)
    _highs_threads = threads


def cbc_path() -> str:
    """A CBC executable: ``cbc`` on PATH, else the one bundled with PuLP.

    ``COIN_CMD`` with an explicit path is PuLP 3.3's non-deprecated way to run CBC
    (``PULP_CBC_CMD``, which used the bundled binary, is deprecated).
    """
    found = shutil.which("cbc")
    if found:
        return found
    return os.path.normpath(pulp.COIN_CMD.executableExtension(coin_api.pulp_cbc_path))


def cbc_solver(*, time_limit: float | None, threads: int, **options: object) -> pulp.COIN_CMD:
    """CBC with both gaps 0 (``options`` go to ``COIN_CMD``, e.g. ``options=[...]`` for CBC flags)."""
    kwargs: dict = {"msg": False, "timeLimit": time_limit, "gapRel": 0.0, "gapAbs": 0.0, "path": cbc_path()}
    if threads != 1:  # CBC's default is one thread; "-threads 1" was seen to stall CBC 2.10.3
        kwargs["threads"] = threads
    kwargs.update(options)
    return starvable(pulp.COIN_CMD(**kwargs), "cbc")


def highs_solver(*, time_limit: float | None, threads: int, mip: bool = True) -> pulp.HiGHS:
    """HiGHS in-process, both gaps 0 for a MIP, seed 0."""
    solver = pulp.HiGHS(
        mip=mip,
        msg=False,
        timeLimit=time_limit,
        threads=threads,
        gapRel=0.0 if mip else None,
        gapAbs=0.0 if mip else None,
        random_seed=0,
    )
    return starvable(solver, "highs")


@contextlib.contextmanager
def native_stdout_silenced() -> Iterator[None]:
    """Send file descriptor 1 to /dev/null while HiGHS runs.

    HiGHS 1.12 prints some diagnostics (``HighsMipSolverData::transformNewInteger...``)
    with C ``printf`` even with ``output_flag`` off; on the CLI they would corrupt
    ``--json`` output on stdout.
    """
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        _flush_c_stdio()  # what C buffered goes to /dev/null, not to the restored stdout
        os.dup2(saved, 1)
        os.close(saved)


def _flush_c_stdio() -> None:
    with contextlib.suppress(OSError, AttributeError):  # no C library handle (not on Linux/macOS)
        ctypes.CDLL(None).fflush(None)


def highs_mip_bound(prob: pulp.LpProblem) -> float | None:
    """HiGHS's proven bound on ``prob``'s objective, in ``prob``'s own sense (None if none).

    PuLP hands HiGHS a maximisation as the minimisation of the negated objective, so
    HiGHS's ``mip_dual_bound`` (a lower bound there) is negated back into an upper bound.
    """
    bound = float(prob.solverModel.getInfo().mip_dual_bound)
    if not abs(bound) < 1e300:
        return None
    return -bound if prob.sense == pulp.LpMaximize else bound


def solve_pulp(
    prob: pulp.LpProblem, backend: str, *, time_limit: float | None, threads: int, mip: bool = True
) -> tuple[bool, bool, float | None, str]:
    """Solve ``prob`` in place: (has a solution, proven optimal, proven bound or None, message).

    Raises nothing: a solver failure comes back as a message.
    """
    limit = None if time_limit is None else max(0.05, float(time_limit))
    try:
        if backend == "cbc":
            prob.solve(cbc_solver(time_limit=limit, threads=threads))
        else:
            highs_threads(threads)
            with native_stdout_silenced():
                prob.solve(highs_solver(time_limit=limit, threads=threads, mip=mip))
    except Exception as exc:  # noqa: BLE001 - a solver failure, reported, not raised
        return False, False, None, f"{backend} failed: {' '.join(str(exc).split())}"
    optimal = prob.sol_status == pulp.LpSolutionOptimal
    has_solution = prob.sol_status in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible)
    bound = None
    message = "" if optimal else f"{backend}: {pulp.LpStatus.get(prob.status, prob.status)}"
    if backend == "highs" and getattr(prob, "solverModel", None) is not None:
        model = prob.solverModel
        info = model.getInfo()
        has_solution = has_solution and info.primal_solution_status == 2  # kSolutionStatusFeasible
        if mip and model.getModelStatus().name in HIGHS_BOUND_STATUSES:
            bound = highs_mip_bound(prob)
        if not optimal:
            message = f"HiGHS: {model.modelStatusToString(model.getModelStatus())}"
    maximise = prob.sense == pulp.LpMaximize
    if optimal:
        value = float(pulp.value(prob.objective) or 0.0)
        bound = value if bound is None else (max if maximise else min)(value, bound)
    elif bound is not None and has_solution:
        bound = _bound_past(bound, float(pulp.value(prob.objective) or 0.0), maximise)
    return has_solution, optimal, bound, message


def _bound_past(bound: float, value: float, maximise: bool) -> float | None:
    """``bound`` if it is on the right side of a solution of value ``value`` (within
    OBJECTIVE_RTOL, then moved onto it), else None: a bound that cuts off a solution
    the solver found proves nothing."""
    short = (value - bound) if maximise else (bound - value)
    if short > OBJECTIVE_RTOL * max(abs(value), abs(bound)):
        return None
    return (max if maximise else min)(value, bound)


@functools.cache
def _record(backend: str) -> tuple[tuple[str, str], ...]:
    return tuple(_solver_record(backend).items())


def solver_record(backend: str) -> dict[str, str]:
    """``{"name", "version"}`` of a PuLP back end (``"cbc"`` or ``"highs"``), asked once per process."""
    return dict(_record(backend))


def _solver_record(backend: str) -> dict[str, str]:
    """The record, computed (CBC: runs the binary to read its version)."""
    if backend == "cbc":
        try:
            version = cbc_solver(time_limit=None, threads=1).version() or ""
        except Exception:  # noqa: BLE001
            version = ""
        return {"name": "CBC (PuLP)", "version": f"pulp {pulp.__version__}; {version}".strip("; ")}
    try:
        import highspy

        h = highspy.Highs()
        version = f"{h.versionMajor()}.{h.versionMinor()}.{h.versionPatch()}"
    except Exception:  # noqa: BLE001
        version = ""
    return {"name": "HiGHS (PuLP)", "version": f"pulp {pulp.__version__}; highs {version}".strip("; ")}
