"""Exact SEQ admission with a MILP master through PuLP: ``milp-cbc`` and ``milp-highs``.

Formulation: the logic-based Benders decomposition of
:mod:`mropt.admission.exact_benders` (why: a direct MILP of Horn's condition needs
ordering variables and O(n^3) big-M rows; the decomposition keeps the MILP a small
set-selection problem over ``x_j`` with energy-window valid inequalities and no-good
cuts, and leaves the sequencing to an exact combinatorial oracle). The master is one
PuLP model, rebuilt each iteration and solved in this process either by CBC (PuLP's
``COIN_CMD`` pointed at a ``cbc`` on PATH, else the binary bundled with PuLP) or by
HiGHS (``pulp.HiGHS``, highspy), with ``threads`` threads and the time left. Solver
failures are caught here and reported in ``details`` (status ``time_limit`` with the
best order found), never as a traceback.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import sys
from collections.abc import Iterator

import pulp
from pulp.apis import coin_api

from mropt.admission.exact_benders import MasterResult, benders
from mropt.admission.exact_master import MasterData
from mropt.model.admission import AdmissionInstance
from mropt.model.solution import Solution
from mropt.registry import THREADS, register

_PARAMS = {"threads": THREADS}


def cbc_path() -> str:
    """A CBC executable: ``cbc`` on PATH, else the one bundled with PuLP.

    ``COIN_CMD`` with an explicit path is PuLP 3.3's non-deprecated way to run CBC
    (``PULP_CBC_CMD``, which used the bundled binary, is deprecated).
    """
    found = shutil.which("cbc")
    if found:
        return found
    return os.path.normpath(pulp.COIN_CMD.executableExtension(coin_api.pulp_cbc_path))


def cbc_solver(*, time_limit: float | None, threads: int) -> pulp.COIN_CMD:
    # both gaps 0: the master optimum must be exact, it is the Benders upper bound
    return pulp.COIN_CMD(msg=False, timeLimit=time_limit, threads=threads, gapRel=0.0, gapAbs=0.0, path=cbc_path())


def highs_solver(*, time_limit: float | None, threads: int, mip: bool = True) -> pulp.HiGHS:
    # both gaps 0 (HiGHS's default absolute gap, 1e-6, is not relative to the data)
    return pulp.HiGHS(mip=mip, msg=False, timeLimit=time_limit, threads=threads, gapRel=0.0 if mip else None,
                      gapAbs=0.0 if mip else None, random_seed=0)


def build_pulp_model(data: MasterData, cuts: list[list[int]], *, relax: bool = False) -> tuple[pulp.LpProblem, dict]:
    """The master of :mod:`mropt.admission.exact_master` as a PuLP problem (LP if ``relax``).

    Normalised (exactly, by powers of two): the objective is in units of
    ``1 / data.benefit_unit`` (divide its value by the unit), rows as
    :meth:`MasterData.scaled_rows`.
    """
    prob = pulp.LpProblem("seq_admission_master", pulp.LpMaximize)
    cat = pulp.LpContinuous if relax else pulp.LpBinary
    x = {j: prob.add_variable(f"x_{j}", lowBound=0, upBound=1, cat=cat) for j in data.candidates}
    unit = data.benefit_unit
    prob += pulp.lpSum(data.benefits[j] * unit * x[j] for j in data.candidates)
    for k, (coefs, rhs) in enumerate(data.scaled_rows()):
        prob += pulp.lpSum(c * x[j] for j, c in coefs.items() if j in x) <= rhs, f"energy_{k}"
    for k, (i, j) in enumerate(data.conflicts):
        prob += x[i] + x[j] <= 1, f"pair_{k}"
    for k, cut in enumerate(cuts):
        prob += pulp.lpSum(x[j] for j in cut) <= len(cut) - 1, f"cut_{k}"
    return prob, x


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


def solve_pulp(prob: pulp.LpProblem, backend: str, *, time_limit: float | None, threads: int,
               mip: bool = True) -> tuple[bool, bool, float | None, str]:
    """Solve ``prob`` in place: (has a solution, proven optimal, proven bound or None, message).

    Raises nothing: a solver failure comes back as a message.
    """
    limit = None if time_limit is None else max(0.05, float(time_limit))
    try:
        if backend == "cbc":
            prob.solve(cbc_solver(time_limit=limit, threads=threads))
        else:
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
        if mip:
            bound = highs_mip_bound(prob)
        if not optimal:
            message = f"HiGHS: {model.modelStatusToString(model.getModelStatus())}"
    if optimal:
        value = float(pulp.value(prob.objective) or 0.0)
        bound = value if bound is None else max(value, bound)
    return has_solution, optimal, bound, message


def solver_record(backend: str) -> dict[str, str]:
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


def _master(backend: str, threads: int):  # noqa: ANN202
    def solve_master(data: MasterData, cuts: list[list[int]], time_left: float | None, hint: list[int]) -> MasterResult:
        if not data.candidates:
            return MasterResult([], 0.0, 0.0, True)
        prob, x = build_pulp_model(data, cuts)
        has_solution, optimal, bound, message = solve_pulp(prob, backend, time_limit=time_left, threads=threads)
        if bound is not None:
            bound /= data.benefit_unit
        if not has_solution:
            return MasterResult(None, None, bound, False, message)
        chosen = [j for j, v in x.items() if (v.value() or 0.0) > 0.5]
        obj = float(sum(data.benefits[j] for j in chosen))
        return MasterResult(chosen, obj, None if bound is None else max(obj, bound), optimal, message)

    return solve_master


def _run(instance: AdmissionInstance, backend: str, time_limit: float | None, threads: int) -> Solution:
    return benders(instance, _master(backend, int(threads)), time_limit=time_limit, solver=solver_record(backend))


@register("milp-cbc", kind="admission", exact=True, params=_PARAMS,
          summary="exact SEQ optimum: Benders with a CBC master MILP (PuLP) and an order oracle")
def milp_cbc(instance: AdmissionInstance, *, time_limit: float | None = None, seed: int = 0, threads: int = 1) -> Solution:
    return _run(instance, "cbc", time_limit, threads)


@register("milp-highs", kind="admission", exact=True, params=_PARAMS,
          summary="exact SEQ optimum: Benders with a HiGHS master MILP (PuLP) and an order oracle")
def milp_highs(instance: AdmissionInstance, *, time_limit: float | None = None, seed: int = 0, threads: int = 1) -> Solution:
    return _run(instance, "highs", time_limit, threads)
