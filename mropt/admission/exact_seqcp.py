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
literals. The deadlines given are the on-time limits ``method_deadline_limit(deadline)``.
Times are put on an integer grid whose unit is a power of two with the largest time
at about ``2**bits`` units (:func:`mropt.model.tolerance.integer_grid`): integer and
binary-fraction data up to ``2**(bits-1)`` stay exact, and the model is the same in
any unit of time. Where the grid is not exact, times are rounded so that the model is
a relaxation (durations down, deadlines up): "infeasible" is a proof. With
``conservative=True`` they are rounded the other way (a restriction), so an order it
finds is valid unless float summation differs. Either way the caller checks every
order with :func:`mropt.admission.seq.evaluate`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ortools.sat.python import cp_model

from mropt.backends import cpsat as cpsat_backend
from mropt.model.tolerance import integer_grid


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
    bits: int = 30,
    conservative: bool = False,
) -> tuple[str, list[int] | None]:
    """('feasible', order) | ('infeasible', None) | ('unknown', None).

    ``bits``: the largest time is about ``2**bits`` grid units. ``conservative``: round
    to a restriction instead of a relaxation (see the module docstring).
    """
    jobs = list(jobs)
    if not jobs:
        return "feasible", []
    s, _ = integer_grid([a[j] for j in jobs] + [b[j] for j in jobs] + [d[j] for j in jobs] + [r[j] for j in jobs], bits)
    up = lambda v: int(math.ceil(v * s))  # noqa: E731
    down = lambda v: int(math.floor(v * s))  # noqa: E731
    dur = up if conservative else down
    A = {j: dur(a[j]) for j in jobs}
    B = {j: dur(b[j]) for j in jobs}
    R = {j: dur(r[j]) for j in jobs}
    Dd = {j: down(d[j]) if conservative else up(d[j]) for j in jobs}
    horizon = max(Dd.values())
    m = cp_model.CpModel()
    start = {j: m.new_int_var(R[j], horizon, f"s{j}") for j in jobs}
    iv = {j: m.new_fixed_size_interval_var(start[j], A[j], f"m{j}") for j in jobs}
    m.add_no_overlap(list(iv.values()))
    p: dict[tuple[int, int], cp_model.LiteralT] = {}  # p[i, j]: i's map before j's
    first: dict[tuple[int, int], cp_model.IntVar] = {}  # the variable of each pair (i listed first)
    for x, i in enumerate(jobs):
        for j in jobs[x + 1 :]:
            lit = first[i, j] = m.new_bool_var(f"p{i}_{j}")
            p[i, j] = lit
            p[j, i] = lit.Not()
            m.add(start[i] + A[i] <= start[j]).only_enforce_if(lit)
            m.add(start[j] + A[j] <= start[i]).only_enforce_if(lit.Not())
            if dominates is not None:
                if dominates(i, j):
                    m.add(lit == 1)
                elif dominates(j, i):
                    m.add(lit == 0)
    dvals = sorted(set(Dd.values()))
    for k in jobs:
        ck = start[k] + A[k]
        for D in dvals:
            if D < Dd[k]:
                continue
            group = [j for j in jobs if j != k and Dd[j] <= D and B[j] > 0]
            m.add(ck + B[k] + cp_model.LinearExpr.weighted_sum([p[k, j] for j in group], [B[j] for j in group]) <= D)
    if hint is not None:
        pos = {j: t for t, j in enumerate(hint)}
        for (i, j), before in first.items():
            if i in pos and j in pos:
                m.add_hint(before, pos[i] < pos[j])
    res = cpsat_backend.solve(m, threads=1, seed=0, time_limit=time_limit)
    if res.has_solution:
        order = sorted(jobs, key=lambda j: (res.solver.value(start[j]), j))
        return "feasible", order
    if res.status == "infeasible":
        return "infeasible", None
    return "unknown", None
