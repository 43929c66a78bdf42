"""CP-SAT sequencing model: does a job set have a valid SEQ map order? (oracle fallback)

Used by :class:`mropt.admission.exact_oracle.SubsetOracle` when its cheap checks and
heuristic orders leave a set undecided. The map order is modelled by precedence
literals ``p[i, j]`` (i's maps before j's) over a single-machine map stage
(one interval per job, ``NoOverlap``; ``p[i, j]`` fixes which of the two ends first),
with map completions ``C_j >= submit_j + TCm_j``. The reduce stage is preemptive EDF
with releases ``C_j``, feasible exactly when Horn's condition holds; the release
points that matter for a deadline value D are the map completions of jobs with
deadline <= D (a release point of another job is beaten by the next such job), so::

    for every job k and deadline value D >= d_k:
        C_k + TCr_k + sum_{j != k, d_j <= D} TCr_j * p[k, j]  <=  D

Global dominance fixings of the oracle (equal submit times) are added as fixed
literals. Times are scaled to integers. By default they are rounded so that the
model is a relaxation (durations down, deadlines up; the tolerance of
:data:`mropt.admission.seq.DEADLINE_TOLERANCE` included): "infeasible" is a proof.
With ``conservative=True`` they are rounded the other way (a restriction), so an
order it finds is valid unless float summation differs. Either way the caller checks
every order exactly with :func:`mropt.admission.seq.evaluate`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ortools.sat.python import cp_model

from mropt.admission.seq import DEADLINE_TOLERANCE


def _scale_for(values: Sequence[float]) -> int:
    for s in (1, 10, 100, 1000):
        if all(abs(v * s - round(v * s)) < 1e-7 for v in values):
            return s
    return 1000


def cp_order(
    jobs: Sequence[int],
    a: Sequence[float],
    b: Sequence[float],
    d: Sequence[float],
    r: Sequence[float],
    *,
    dominates: Callable[[int, int], bool] | None,
    time_limit: float | None,
    hint: Sequence[int] | None = None,
    scale: int | None = None,
    conservative: bool = False,
) -> tuple[str, list[int] | None]:
    """('feasible', order) | ('infeasible', None) | ('unknown', None).

    ``scale``: integer time units per second (default: the smallest of 1, 10, 100,
    1000 that represents every time exactly, else 1000). ``conservative``: round to
    a restriction instead of a relaxation (see the module docstring).
    """
    jobs = list(jobs)
    if not jobs:
        return "feasible", []
    s = scale or _scale_for([a[j] for j in jobs] + [b[j] for j in jobs] + [d[j] for j in jobs] + [r[j] for j in jobs])
    up = lambda v: int(math.ceil(v * s - 1e-9))  # noqa: E731
    down = lambda v: int(math.floor(v * s + 1e-9))  # noqa: E731
    dur = up if conservative else down
    A = {j: dur(a[j]) for j in jobs}
    B = {j: dur(b[j]) for j in jobs}
    R = {j: dur(r[j]) for j in jobs}
    Dd = {j: down(d[j]) if conservative else up(d[j] + DEADLINE_TOLERANCE) for j in jobs}
    horizon = max(Dd.values())
    m = cp_model.CpModel()
    start = {j: m.NewIntVar(R[j], horizon, f"s{j}") for j in jobs}
    iv = {j: m.NewFixedSizeIntervalVar(start[j], A[j], f"m{j}") for j in jobs}
    m.AddNoOverlap(list(iv.values()))
    p: dict[tuple[int, int], cp_model.IntVar] = {}
    for x, i in enumerate(jobs):
        for j in jobs[x + 1:]:
            lit = m.NewBoolVar(f"p{i}_{j}")
            p[i, j] = lit
            p[j, i] = lit.Not()
            m.Add(start[i] + A[i] <= start[j]).OnlyEnforceIf(lit)
            m.Add(start[j] + A[j] <= start[i]).OnlyEnforceIf(lit.Not())
            if dominates is not None:
                if dominates(i, j):
                    m.Add(lit == 1)
                elif dominates(j, i):
                    m.Add(lit == 0)
    dvals = sorted(set(Dd.values()))
    for k in jobs:
        ck = start[k] + A[k]
        for D in dvals:
            if D < Dd[k]:
                continue
            group = [j for j in jobs if j != k and Dd[j] <= D and B[j] > 0]
            m.Add(ck + B[k] + sum(B[j] * p[k, j] for j in group) <= D)
    if hint is not None:
        pos = {j: t for t, j in enumerate(hint)}
        for (i, j), lit in p.items():
            if i < j and i in pos and j in pos:
                m.AddHint(lit, pos[i] < pos[j])
    solver = cp_model.CpSolver()
    solver.parameters.num_search_workers = 1
    solver.parameters.random_seed = 0
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(0.01, float(time_limit))
    status = solver.Solve(m)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        order = sorted(jobs, key=lambda j: (solver.Value(start[j]), j))
        return "feasible", order
    if status == cp_model.INFEASIBLE:
        return "infeasible", None
    return "unknown", None
