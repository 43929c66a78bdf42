"""HiGHS (highspy) in a worker process, for ``milp-highs`` and the LP/MILP bounds.

Why a worker: OR-Tools bundles its own ``libhighs.so.1`` (another HiGHS version with
the same soname), so highspy and OR-Tools cannot be loaded in one process: whichever
comes second fails with an undefined symbol. PuLP's in-process ``HiGHS`` API imports
highspy, so it has the same problem. This module starts ``python exact_highs.py``
(run by path, so it imports nothing of mropt, hence no OR-Tools) and sends it models as
JSON lines; the worker solves them with highspy and answers. One worker per process is
kept and reused; it is restarted if it dies, and killed if it overruns its time limit.

This file's top level imports only the standard library, so it can run as the worker.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from typing import Any

_LOCK = threading.Lock()
_PROC: subprocess.Popen | None = None
_VERSION: str = ""


class HighsError(RuntimeError):
    """The HiGHS worker could not answer."""


def _start() -> subprocess.Popen:
    global _PROC, _VERSION
    if _PROC is not None and _PROC.poll() is None:
        return _PROC
    env = dict(os.environ)
    _PROC = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        bufsize=1,
        env=env,
    )
    hello = _read(_PROC, 60.0)
    if not hello.get("ok"):
        _stop()
        raise HighsError(f"HiGHS worker did not start: {hello.get('error', 'no answer')}")
    _VERSION = hello.get("version", "")
    return _PROC


def _stop() -> None:
    global _PROC
    if _PROC is not None:
        try:
            _PROC.kill()
            _PROC.wait(timeout=5)
        except Exception:  # noqa: BLE001
            pass
    _PROC = None


def _read(proc: subprocess.Popen, timeout: float) -> dict:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        _stop()
        raise HighsError(f"HiGHS worker gave no answer within {timeout:.0f} s")
    line = proc.stdout.readline()
    if not line:
        _stop()
        raise HighsError("HiGHS worker exited")
    return json.loads(line)


def highs_version() -> str:
    """HiGHS version of the worker ("" when it cannot start)."""
    with _LOCK:
        try:
            _start()
        except HighsError:
            return ""
        return _VERSION


def solve(
    n: int,
    objective: list[float],
    rows: list[tuple[list[int], list[float], float]],
    *,
    integer: bool,
    time_limit: float | None,
    threads: int = 1,
) -> dict[str, Any]:
    """Maximise ``objective . x`` s.t. ``rows`` (sum coef x <= rhs), 0 <= x <= 1.

    Returns ``{"status": "optimal"|"time_limit"|"error", "x": [...]|None,
    "objective": float|None, "bound": float|None, "message": str}``; raises
    :class:`HighsError` only when the worker cannot be reached.
    """
    request = {
        "n": n,
        "objective": objective,
        "rows": rows,
        "integer": integer,
        "time_limit": time_limit,
        "threads": threads,
    }
    with _LOCK:
        proc = _start()
        assert proc.stdin is not None
        try:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
        except OSError as exc:
            _stop()
            raise HighsError(f"HiGHS worker pipe failed: {exc}") from None
        wait = 3600.0 * 24 if time_limit is None else float(time_limit) + 30.0
        return _read(proc, wait)


# -- worker side ------------------------------------------------------------------------
def _worker_main() -> None:  # pragma: no cover - runs in the child process
    try:
        import highspy
        import numpy as np

        h0 = highspy.Highs()
        version = f"{h0.versionMajor()}.{h0.versionMinor()}.{h0.versionPatch()}"
    except Exception as exc:  # noqa: BLE001
        print(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"}), flush=True)
        return
    print(json.dumps({"ok": True, "version": version}), flush=True)
    for line in sys.stdin:
        try:
            req = json.loads(line)
            print(json.dumps(_worker_solve(highspy, np, req)), flush=True)
        except Exception as exc:  # noqa: BLE001
            msg = " ".join(f"{type(exc).__name__}: {exc}".split())
            print(json.dumps({"status": "error", "x": None, "objective": None, "bound": None, "message": msg}),
                  flush=True)


def _worker_solve(highspy, np, req: dict) -> dict:  # noqa: ANN001  # pragma: no cover
    n = req["n"]
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", int(req.get("threads") or 1))
    h.setOptionValue("random_seed", 0)
    if req.get("time_limit") is not None:
        h.setOptionValue("time_limit", max(0.01, float(req["time_limit"])))
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.col_cost_ = np.array(req["objective"], dtype=float)
    lp.col_lower_ = np.zeros(n)
    lp.col_upper_ = np.ones(n)
    lp.sense_ = highspy.ObjSense.kMaximize
    rows = req["rows"]
    lp.num_row_ = len(rows)
    lp.row_lower_ = np.full(len(rows), -inf)
    lp.row_upper_ = np.array([r[2] for r in rows], dtype=float)
    starts, index, value = [0], [], []
    for idx, coef, _ in rows:
        index.extend(idx)
        value.extend(coef)
        starts.append(len(index))
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(value, dtype=float)
    lp.a_matrix_.num_col_ = n
    lp.a_matrix_.num_row_ = len(rows)
    if req["integer"]:
        lp.integrality_ = [highspy.HighsVarType.kInteger] * n
    h.passModel(lp)
    h.run()
    status = h.getModelStatus()
    info = h.getInfo()
    has_x = info.primal_solution_status == 2  # kSolutionStatusFeasible
    x = list(h.getSolution().col_value) if has_x else None
    obj = info.objective_function_value if has_x else None
    if status == highspy.HighsModelStatus.kOptimal:
        bound = obj if not req["integer"] else info.mip_dual_bound
        return {"status": "optimal", "x": x, "objective": obj, "bound": bound, "message": ""}
    bound = info.mip_dual_bound if req["integer"] else None
    if bound is not None and not (abs(bound) < 1e300):
        bound = None
    return {"status": "time_limit", "x": x, "objective": obj, "bound": bound,
            "message": f"HiGHS: {h.modelStatusToString(status)}"}


if __name__ == "__main__":  # pragma: no cover
    if "--worker" in sys.argv:
        _worker_main()
