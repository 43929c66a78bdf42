"""Upper bounds on the optimum of SEQ admission: ``ideal``, ``bound-lp``, ``bound-energy``.

* ``ideal`` -- AMB sec. 5.1, eq. 4: sort the jobs by benefit ratio ``benefit / STC``
  (descending), fill ``Max_time`` (the latest deadline) with their system time costs
  STC, and take the next job fractionally. It is the fractional knapsack
  ``max sum b_j x_j s.t. sum STC_j x_j <= Max_time, 0 <= x <= 1``. Table 1 gives
  2430 + 400 x 82/186 = 2606.3 (see the papers' ERRATA).
* ``bound-lp`` -- the LP relaxation of the master of :mod:`mropt.admission.exact_master`
  (energy windows, pair conflicts, fixings; 0 <= x <= 1), solved by HiGHS through PuLP.
* ``bound-energy`` -- the same rows with ``x`` binary (a multi-dimensional knapsack,
  solved exactly by HiGHS through PuLP): the combinatorial energy bound.

Why each is an upper bound: every row of the master holds for the accepted set of any
valid sequence, and an optimal plan accepts only on-time jobs (eq. 1 with alpha >= 0).

Why ``bound-energy <= bound-lp <= ideal`` (never weaker than Ideal): the window of
all jobs (R = the earliest submit time, D = the latest deadline) gives the rows
``sum TCm_j x_j <= max(d_j - TCr_j) - R <= Max_time`` and
``sum TCr_j x_j <= Max_time - min(r_j + TCm_j) <= Max_time``. STC_j is the convex
combination ``(M TCm_j + R TCr_j)/(M + R)``, so adding M/(M+R) times the first row
to R/(M+R) times the second gives ``sum STC_j x_j <= Max_time``: every x of the LP
is feasible for Ideal's knapsack, whose optimum is eq. 4 (the greedy fractional
knapsack is optimal for its LP). The binary version only shrinks the region. When no
window row is binding (all jobs fit), the master optimum is at most the sum of the
benefits of the candidates, which is at most Ideal (equal to the sum of all benefits
when everything fits).
"""

from __future__ import annotations

import time

from mropt.admission.exact_master import build_master, master_value
from mropt.admission.exact_oracle import SubsetOracle
from mropt.backends.pulp import solver_record
from mropt.model.admission import AdmissionInstance
from mropt.model.solution import Solution
from mropt.registry import mropt_solver


def ideal_value(instance: AdmissionInstance) -> float:
    """Eq. 4 (AMB sec. 5.1): the fractional knapsack of benefit over STC in Max_time."""
    stc = instance.stc
    benefits = instance.benefits
    max_time = float(instance.deadlines.max())
    order = sorted(range(instance.n), key=lambda j: (-benefits[j] / stc[j], j))
    used = total = 0.0
    for j in order:
        if used + stc[j] <= max_time:
            used += stc[j]
            total += benefits[j]
        else:
            total += (max_time - used) / stc[j] * benefits[j]
            break
    return float(total)


def _bound_solution(value: float, details: dict, solver: dict[str, str]) -> Solution:
    return Solution(
        method="",
        status="bound",
        objective=value,
        bound=value,
        accepted=(),
        sequence=None,
        solver=solver,
        details=details,
    )


def ideal(instance: AdmissionInstance, *, time_limit: float | None = None, seed: int = 0) -> Solution:
    """Registered bound ``ideal``: AMB sec. 5.1, eq. 4."""
    return _bound_solution(ideal_value(instance), {"equation": "AMB eq. 4"}, mropt_solver())


def master_bound(
    instance: AdmissionInstance, *, relax: bool, time_limit: float | None, threads: int = 1
) -> tuple[float, dict]:
    """Optimum of the master (LP if ``relax``) and details; falls back to Ideal on failure.

    ``time_limit`` covers the whole run: the rows and pair conflicts stop at it (those
    found are kept, ``details["master_complete"]`` False: still a relaxation), the model
    build and HiGHS too (0.05 s at least for HiGHS, so a tiny limit still gets a bound).
    """
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    oracle = SubsetOracle(instance)
    data = build_master(oracle, deadline=deadline)
    details: dict = {"energy_rows": len(data.rows), "pair_conflicts": len(data.conflicts)}
    if not data.complete:
        details["master_complete"] = False
    if not data.candidates:
        return 0.0, details
    until = None if deadline is None else max(deadline, time.perf_counter() + 0.05)
    bound, optimal, message = master_value(data, relax=relax, deadline=until, threads=threads)
    if optimal and bound is not None:
        return bound, details
    if bound is not None:
        details["note"] = f"{message}: HiGHS's proven bound reported"
        return bound, details
    details["fallback"] = f"HiGHS did not prove the bound ({message}); Ideal reported"
    return ideal_value(instance), details


def bound_lp(
    instance: AdmissionInstance, *, time_limit: float | None = None, seed: int = 0, threads: int = 1
) -> Solution:
    """Registered bound ``bound-lp``: LP relaxation of the SEQ master (AMB sec. 4.1; module docstring)."""
    value, details = master_bound(instance, relax=True, time_limit=time_limit, threads=threads)
    return _bound_solution(value, details, solver_record("highs"))


def bound_energy(
    instance: AdmissionInstance, *, time_limit: float | None = None, seed: int = 0, threads: int = 1
) -> Solution:
    """Registered bound ``bound-energy``: 0-1 energy windows of the SEQ master (AMB sec. 4.1; module docstring)."""
    value, details = master_bound(instance, relax=False, time_limit=time_limit, threads=threads)
    return _bound_solution(value, details, solver_record("highs"))
