"""Logic-based Benders decomposition for exact SEQ admission (shared by milp-*, cpsat).

Formulation (and why). The optimum of AMB eq. 1 accepts only jobs that finish on time
(a late job costs ``alpha * benefit`` and taking it out never delays another job), so
the problem is: choose a set of maximum benefit that has a valid SEQ sequence
(Definition 2; by Theorems 1-2 the optimum of the paper's model). A direct model of
Horn's condition needs ordering variables and O(n^3) big-M rows and proves little
at N = 30; the two halves of the problem are easy apart, hard together. So:

* the **master** (a MILP solved by CBC or HiGHS through PuLP, or a CP-SAT model) picks
  the set: ``max sum b_j x_j`` under the energy windows, pair conflicts and fixings of
  :mod:`mropt.admission.exact_master` (valid inequalities: every valid set obeys them)
  and the no-good cuts found so far;
* the **subproblem** asks :class:`~mropt.admission.exact_oracle.SubsetOracle` whether
  the chosen set has a valid order (heuristic orders first, then an exact
  branch-and-bound with dominance rules). A valid order ends the search: the master
  optimum is an upper bound reached by a feasible set. Otherwise the set is shrunk by
  greedy deletion to a minimal infeasible subset ``C`` and the cut
  ``sum_{j in C} x_j <= |C| - 1`` is added; the down-closed family of feasible sets
  makes it valid, and minimality makes it cut off every superset of C at once.

Bounds. The search starts from the best of the cheap bounds it could report without
searching: the sum of the candidates' benefits, and the master's LP relaxation (the
value of ``bound-lp``, solved by HiGHS on the master just built, before the warm start;
it costs 0.01 s at N = 30 and 0.15 s at N = 200, see :data:`LP_SHARE`). Every master
optimum is an upper bound too (the master is a relaxation; each master hands back a
bound that already covers its own rounding), and a master stopped by the time limit
hands back its proven bound when its solver proved one (the back ends' status guard,
:mod:`mropt.backends`; a master stopped before it proved anything hands back none and
the last proven bound stays), so the best bound is the smallest seen: a time-limited
run never reports a bound weaker than ``bound-lp``. A bound below a valid order
already found contradicts the relaxation (issue 27: a CP-SAT master stopped early once
handed back its unproven 0, and the run ended ``optimal`` below the true optimum): it
never tightens the bound, and ``details["bounds_rejected"]`` records it. A warm start (the
better of edf-greedy and the beam variant amb-beam16) gives the first incumbent;
infeasible master sets are repaired (drop the least-benefit job of each core) to
improve it. The search stops, with status ``optimal``, once the bound is within
:data:`~mropt.model.tolerance.OBJECTIVE_RTOL` (relative) of the incumbent: no absolute
tolerance, so tiny or huge benefits are treated alike (docs/tolerances.md). On time out
the best valid order and the smallest proven bound (never below its objective) are
returned with status ``time_limit``; ``details["bound_from"]`` says which bound it is.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mropt.admission.amb import BEAM_VARIANT, DEFAULT_BEAM, amb_static
from mropt.admission.baselines import edf_greedy_order
from mropt.admission.exact_master import MasterData, build_master, master_value
from mropt.admission.exact_oracle import OracleTimeout, SubsetOracle
from mropt.admission.objective import solution_from_order
from mropt.model.admission import AdmissionInstance
from mropt.model.solution import Solution
from mropt.model.tolerance import same_value, within


@dataclass
class MasterResult:
    """One master solve: the chosen set (None if none found), its value, a valid bound."""

    chosen: list[int] | None
    objective: float | None
    bound: float | None
    optimal: bool
    message: str = ""


#: The LP relaxation bound at the start may run for the time left, or this share of the
#: time limit, or :data:`LP_MIN_SECONDS`, whichever is longest (it is solved even when the
#: time is already up: without it a stopped run would report the sum of the benefits).
LP_SHARE = 0.25
LP_MIN_SECONDS = 1.0

MasterSolver = Callable[[MasterData, list[list[int]], "float | None", list[int]], MasterResult]


def warm_start_orders(instance: AdmissionInstance) -> dict[str, list[int]]:
    """Heuristic orders to start from: edf-greedy and the beam variant amb-beam16 (bounded work, no time limit)."""
    return {
        "edf-greedy": edf_greedy_order(instance),
        BEAM_VARIANT: [int(j) for j in amb_static(instance, beam=DEFAULT_BEAM).order],
    }


def benders(
    instance: AdmissionInstance,
    master: MasterSolver,
    *,
    time_limit: float | None,
    solver: dict[str, str],
) -> Solution:
    """Run the decomposition of the module docstring with ``master`` as the set chooser."""
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    oracle = SubsetOracle(instance)
    benefits = instance.benefits

    def value(order: list[int]) -> float:
        return float(sum(benefits[j] for j in order))

    data = build_master(oracle)
    bound = float(sum(benefits[j] for j in data.candidates))
    bound_from = "sum of the candidates' benefits"
    cuts: list[list[int]] = []
    iterations = 0
    message = ""
    timed_out = False

    def time_left() -> float | None:
        return None if deadline is None else deadline - time.perf_counter()

    best_order: list[int] = []
    rejected: list[dict] = []

    def tighten(new: float | None, source: str) -> None:
        nonlocal bound, bound_from
        if new is None or new >= bound:
            return
        if new < value(best_order) and not same_value(new, value(best_order)):
            # below a valid order: a relaxation cannot prove that; never a bound (defence in depth)
            rejected.append({"from": source, "bound": float(new), "plan": value(best_order)})
            return
        bound, bound_from = new, source

    lp_bound = None
    if data.candidates and bound > 0:  # before the warm start: the bound is part of every answer
        left = time_left()
        lp_limit = None if left is None else max(left, LP_SHARE * time_limit, LP_MIN_SECONDS)
        lp_bound, _, _ = master_value(data, relax=True, time_limit=lp_limit)  # None unless solved to optimality

    best_source = "empty"
    for name, order in warm_start_orders(instance).items():
        if oracle.valid(order) and value(order) > value(best_order):
            best_order, best_source = list(order), name
    tighten(lp_bound, "LP relaxation of the master (bound-lp)")

    try:
        while not within(value(best_order), bound):
            left = time_left()
            if left is not None and left <= 0:
                timed_out = True
                break
            iterations += 1
            res = master(data, cuts, left, best_order)
            tighten(res.bound, "master" if res.optimal else "master stopped early (its proven bound)")
            if res.message:
                message = res.message
            if within(value(best_order), bound):
                break
            if res.chosen is None:
                timed_out = True
                break
            chosen = sorted(res.chosen)
            order = oracle.check(chosen, deadline)
            if order is not None:
                if value(order) > value(best_order):
                    best_order, best_source = order, "master"
                # a feasible master optimum attains the master's bound (up to the master's
                # own rounding slack, which the status below accounts for); an early stop
                # of the master proves nothing
                timed_out = not res.optimal
                break
            core = oracle.minimal_infeasible(chosen, deadline)
            cuts.append(sorted(core))
            _repair(oracle, chosen, core, deadline, benefits, cuts)
            rep = getattr(oracle, "last_repair", None)
            if rep is not None and value(rep) > value(best_order):
                best_order, best_source = rep, "repair"
    except OracleTimeout:
        timed_out = True
    status = "optimal" if within(value(best_order), bound) else "time_limit"
    # an optimum's bound is its value; otherwise the bound is never below the plan (float noise of a solver)
    bound = value(best_order) if status == "optimal" else max(bound, value(best_order))
    details = {
        "formulation": "logic-based Benders: set master + SEQ order oracle with no-good cuts",
        "iterations": iterations,
        "cuts": len(cuts),
        "oracle_searches": oracle.searches,
        "oracle_nodes": oracle.nodes,
        "energy_rows": len(data.rows),
        "pair_conflicts": len(data.conflicts),
        "incumbent_from": best_source,
        "stopped_early": timed_out,
        "bound_from": bound_from,
        "lp_bound": lp_bound,
    }
    if rejected:
        details["bounds_rejected"] = rejected
    if message:
        details["master_message"] = message
    sol = solution_from_order(
        instance,
        np.asarray(best_order, dtype=np.intp),
        status=status,
        bound=float(bound),
        solver=solver,
        details=details,
    )
    return sol


def _repair(oracle, chosen, core, deadline, benefits, cuts) -> None:  # noqa: ANN001
    """Drop the least-benefit job of each core until the set is valid; keep it on the oracle."""
    oracle.last_repair = None
    current = list(chosen)
    drop = min(core, key=lambda j: (benefits[j], j))
    for _ in range(4):
        current = [j for j in current if j != drop]
        order = oracle.check(current, deadline)
        if order is not None:
            oracle.last_repair = order
            return
        core = oracle.minimal_infeasible(current, deadline)
        cuts.append(sorted(core))
        drop = min(core, key=lambda j: (benefits[j], j))
