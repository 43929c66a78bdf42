"""Logic-based Benders decomposition for exact SEQ admission (shared by milp-*, cpsat).

Formulation (and why). The optimum of AMB eq. 1 accepts only jobs that finish on time
(a late job costs ``alpha * benefit`` and taking it out never delays another job), so
the problem is: choose a set of maximum benefit that has a valid SEQ sequence
(Definition 2; by Theorems 1-2 the optimum of the paper's model). A direct model of
Horn's condition needs ordering variables and O(n^3) big-M rows and proves little
at N = 30; the two halves of the problem are easy apart, hard together. So:

* the **master** (a MILP solved by CBC or HiGHS through PuLP, or a CP-SAT model) picks
  the set: ``max sum b_j x_j`` under the energy windows, pair conflicts and fixings of
  :mod:`mropt.admission.exact_master` (valid inequalities: every valid set obeys them),
  its dominance rows ``x_j <= x_i`` (job i no harder than j and worth no less: they
  keep an optimum, :func:`~mropt.admission.exact_master.dominance_pairs`; on by
  default, parameter ``dominance``) and the no-good cuts found so far;
* the **subproblem** asks :class:`~mropt.admission.exact_oracle.SubsetOracle` whether
  the chosen set has a valid order (heuristic orders first, then an exact
  branch-and-bound with dominance rules). A valid order ends the search: the master
  optimum is an upper bound reached by a feasible set. Otherwise the set is shrunk by
  greedy deletion to a minimal infeasible subset ``C`` and the cut
  ``sum_{j in C} x_j <= |C| - 1`` is added; the down-closed family of feasible sets
  makes it valid, and minimality makes it cut off every superset of C at once. When
  the set fails a deadline prefix's energy condition (the oracle's necessary test),
  that prefix's energy row lifted to the set's own threshold is added to the master's
  rows too (:func:`~mropt.admission.exact_master.lifted_energy_cuts`): it removes every
  set failing the same prefix at that threshold, where a no-good cut removes one core
  of some 30 jobs among very many of nearly equal value (``details["lifted_cuts"]``;
  the frontier's hard instances, ``benchmarks/RESULTS.md``: 2-4 master solves where
  110 proved nothing before).

Bounds. The search starts from the best of the cheap bounds it could report without
searching: the sum of the candidates' benefits, the LP of the energy rows written as
chains (:func:`~mropt.admission.time_grid.lp_bound`, O(n) nonzeros: 0.14 s at N = 1000,
``details["energy_lp_bound"]``), and the master's LP relaxation
(``details["lp_bound"]``: the value of ``bound-lp``, tightened by the dominance rows when
they are on; 0.15 s at N = 200 but 3-5 s at N = 1000, where the master has about 650,000
nonzeros; skipped when the time is up, see :data:`LP_MIN_SECONDS`). Every master
optimum is an upper bound too (the master is a relaxation; each master hands back a
bound that already covers its own rounding), and a master stopped by the time limit
hands back its proven bound when its solver proved one (the back ends' status guard,
:mod:`mropt.backends`; a master stopped before it proved anything hands back none and
the last proven bound stays), so the best bound is the smallest seen: a time-limited
run never reports a bound weaker than ``bound-lp``. A bound below a valid order
already found contradicts the relaxation (a CP-SAT master stopped early once handed
back its unproven 0, and the run ended ``optimal`` below the true optimum): it
never tightens the bound, and ``details["bounds_rejected"]`` records it. A warm start (the
better of edf-greedy and ``amb``) gives the first incumbent; the beam variant amb-beam16
joins after the first master set the oracle refutes (it takes seconds at N = 300,
wasted where the first master set is valid, as on most instances); infeasible master
sets are repaired (drop the least-benefit job of each core) to improve it. The search stops, with status ``optimal``, once the bound is within
:data:`~mropt.model.tolerance.OBJECTIVE_RTOL` (relative) of the incumbent: no absolute
tolerance, so tiny or huge benefits are treated alike (docs/tolerances.md). On time out
the best valid order and the smallest proven bound (never below its objective) are
returned with status ``time_limit``; ``details["bound_from"]`` says which bound it is.

Time. Every step looks at the clock: edf-greedy and the energy LP first (a valid plan
and a proven bound), then ``amb``, the master's rows and pair conflicts
(:func:`~mropt.admission.exact_master.build_master`, cut short at the limit,
``details["master_complete"]`` False: still a relaxation), its LP, the master models'
builds and solves, amb-beam16 (stopped at the limit), the oracle (which stops shrinking
a core once the time is up); at N = 1000 a 1 s limit ends within a few hundredths of a second of it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mropt.admission.amb import BEAM_VARIANT, DEFAULT_BEAM, amb_oracle, amb_static
from mropt.admission.baselines import edf_greedy_order
from mropt.admission.exact_master import MasterData, build_master, lifted_energy_cuts, master_value
from mropt.admission.exact_oracle import OracleTimeout, SubsetOracle
from mropt.admission.objective import solution_from_order
from mropt.admission.time_grid import lp_bound, time_grid
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


#: The master's LP relaxation (``bound-lp``) may run until the time limit; when the cheap
#: LP of the energy rows found no bound it may run for :data:`LP_MIN_SECONDS` past it
#: (without an LP a stopped run would report the sum of the benefits). Its model is built
#: with an eye on the clock (at N = 1000 it has about 650,000 nonzeros).
LP_MIN_SECONDS = 1.0

MasterSolver = Callable[[MasterData, list[list[int]], "float | None", list[int]], MasterResult]


def amb_order(instance: AdmissionInstance, deadline: float | None = None) -> list[int]:
    """The warm start's plan of the beam variant amb-beam16 (bounded work).

    ``deadline`` (a ``time.perf_counter`` value) stops the beam, which then keeps the
    plan it has (:func:`~mropt.admission.amb.amb_static`).
    """
    return [int(j) for j in amb_static(instance, beam=DEFAULT_BEAM, deadline=deadline).order]


class BendersRun:
    """The state of one decomposition run: oracle, master data, cuts, incumbent, bound and clock.

    :func:`benders` runs it start to end; the portfolio (:mod:`mropt.admission.portfolio`)
    runs it in phases (:meth:`iterate` with a stop test) and shares plans and bounds
    with the direct model through :meth:`offer` and :meth:`tighten`.
    """

    def __init__(
        self, instance: AdmissionInstance, master: MasterSolver, *, time_limit: float | None, dominance: bool = True
    ) -> None:
        self.instance, self.master = instance, master
        self.dominance = dominance
        self.started = time.perf_counter()
        self.time_limit = time_limit
        self.deadline = None if time_limit is None else self.started + time_limit
        self.oracle = SubsetOracle(instance)
        self.cuts: list[list[int]] = []
        self.lifted_rows = 0  # energy rows lifted to refuted master sets (lifted_energy_cuts)
        self.iterations = 0
        self.message = ""
        self.timed_out = False
        self.best_order: list[int] = []
        self.best_source = "empty"
        self.beam_tried = False  # amb-beam16 runs after the first refuted master set (module docstring)
        self.rejected: list[dict] = []
        self.lp_bound: float | None = None
        self.energy_lp_bound: float | None = None
        candidates = [j for j in range(instance.n) if self.oracle.alone_ok[j]]
        self.bound = float(sum(instance.benefits[j] for j in candidates))
        self.bound_from = "sum of the candidates' benefits"
        self.data = MasterData([float(x) for x in instance.benefits], candidates)

    def value(self, order: list[int]) -> float:
        return float(sum(self.instance.benefits[j] for j in order))

    def time_left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.perf_counter()

    def offer(self, order: list[int], source: str) -> None:
        """Keep ``order`` as the incumbent if it is better and the oracle finds it valid."""
        if self.value(order) > self.value(self.best_order) and self.oracle.valid(order):
            self.best_order, self.best_source = [int(j) for j in order], source

    def tighten(self, new: float | None, source: str) -> None:
        """Take ``new`` as the bound if it is smaller, never below a valid order (defence in depth)."""
        if new is None or new >= self.bound:
            return
        plan = self.value(self.best_order)
        if new < plan and not same_value(new, plan):
            # below a valid order: a relaxation cannot prove that; never a bound
            self.rejected.append({"from": source, "bound": float(new), "plan": plan})
            return
        self.bound, self.bound_from = new, source

    def proved(self) -> bool:
        return within(self.value(self.best_order), self.bound)

    def start(self) -> None:
        """Cheap bounds and plans first, then the master (module docstring, "Bounds" and "Time").

        edf-greedy; the LP of the energy rows (:func:`~mropt.admission.time_grid.lp_bound`,
        O(n) nonzeros); ``amb`` (Algorithm 1 with phi kept implicitly: 0.1 s at N = 1000);
        the master's rows and pair conflicts; ``bound-lp``: each stops at
        the time limit.
        """
        inst, deadline = self.instance, self.deadline
        self.offer(edf_greedy_order(inst), "edf-greedy")
        if not self.data.candidates or self.bound <= 0:
            self.data = build_master(self.oracle, dominance=self.dominance, deadline=deadline)
            return
        grid = time_grid(inst)
        left = self.time_left()
        self.energy_lp_bound = lp_bound(
            grid, grid.relaxed, self.data.candidates, inst.benefits, None if left is None else max(left, LP_MIN_SECONDS)
        )
        self.tighten(self.energy_lp_bound, "LP relaxation of the energy rows")
        self.offer([int(j) for j in amb_oracle(inst, deadline=deadline).order], "amb")
        self.data = build_master(self.oracle, dominance=self.dominance, deadline=deadline)
        lp_until = deadline
        if deadline is not None and self.energy_lp_bound is None:
            lp_until = max(deadline, time.perf_counter() + LP_MIN_SECONDS)
        # None unless solved to optimality
        self.lp_bound, _, _ = master_value(self.data, relax=True, deadline=lp_until)
        self.tighten(self.lp_bound, "LP relaxation of the master (bound-lp, with the dominance rows)")

    def iterate(self, stop: Callable[[], bool] = lambda: False) -> bool:
        """Master, oracle, cut, until proven, out of time (``timed_out``) or ``stop()``; True when stopped.

        ``stop`` is asked before each master solve and after a master that did not prove
        its optimum: True ends this phase (the portfolio's deterministic budget) rather
        than the run.
        """
        oracle, deadline = self.oracle, self.deadline
        try:
            while not self.proved():
                left = self.time_left()
                if left is not None and left <= 0:
                    self.timed_out = True
                    return False
                if stop():
                    return True
                self.iterations += 1
                res = self.master(self.data, self.cuts, left, self.best_order)
                self.tighten(res.bound, "master" if res.optimal else "master stopped early (its proven bound)")
                if res.message:
                    self.message = res.message
                if self.proved():
                    return False
                phase_over = not res.optimal and stop()  # the master stopped on the phase's budget
                if res.chosen is None:
                    self.timed_out = not phase_over
                    return phase_over
                chosen = sorted(res.chosen)
                order = oracle.check(chosen, deadline)
                if order is not None:
                    if self.value(order) > self.value(self.best_order):
                        self.best_order, self.best_source = order, "master"
                    # a feasible master optimum attains the master's bound (up to the master's
                    # own rounding slack, which the status below accounts for); an early stop
                    # of the master proves nothing
                    self.timed_out = not (res.optimal or phase_over)
                    return phase_over
                self._cut(chosen)
                if not self.beam_tried:  # the master's first set was refuted: the beam's plan is worth its time
                    self.beam_tried = True
                    self.offer(amb_order(self.instance, deadline), BEAM_VARIANT)
                if phase_over:
                    return True
        except OracleTimeout:
            self.timed_out = True
        return False

    def _cut(self, chosen: list[int]) -> None:
        """The no-good cut of a minimal infeasible subset of ``chosen``, and the repair of the set."""
        lifted = lifted_energy_cuts(self.oracle, self.data.candidates, chosen)
        self.data.rows.extend(lifted)
        self.lifted_rows += len(lifted)
        core = self.oracle.minimal_infeasible(chosen, self.deadline)
        self.cuts.append(sorted(core))
        _repair(self.oracle, chosen, core, self.deadline, self.instance.benefits, self.cuts)
        rep = getattr(self.oracle, "last_repair", None)
        if rep is not None and self.value(rep) > self.value(self.best_order):
            self.best_order, self.best_source = rep, "repair"

    def details(self) -> dict:
        """What the run did: the decomposition's counters, where plan and bound came from."""
        data, oracle = self.data, self.oracle
        details = {
            "formulation": "logic-based Benders: set master + SEQ order oracle with no-good cuts",
            "iterations": self.iterations,
            "cuts": len(self.cuts),
            "lifted_cuts": self.lifted_rows,
            "oracle_searches": oracle.searches,
            "oracle_nodes": oracle.nodes,
            "energy_rows": len(data.rows) - self.lifted_rows,  # the master's own rows, the lifted cuts apart
            "pair_conflicts": len(data.conflicts),
            "dominance_rows": len(data.dominance),
            "incumbent_from": self.best_source,
            "stopped_early": self.timed_out,
            "bound_from": self.bound_from,
            "lp_bound": self.lp_bound,
            "energy_lp_bound": self.energy_lp_bound,
        }
        if not data.complete:
            details["master_complete"] = False  # the time limit cut its rows or pair conflicts short
        if self.rejected:
            details["bounds_rejected"] = self.rejected
        if self.message:
            details["master_message"] = self.message
        return details

    def solution(self, solver: dict[str, str], details: dict) -> Solution:
        """The incumbent as a Solution: ``optimal`` when the bound meets it, else ``time_limit``."""
        value = self.value(self.best_order)
        status = "optimal" if within(value, self.bound) else "time_limit"
        # an optimum's bound is its value; otherwise the bound is never below the plan (float noise of a solver)
        bound = value if status == "optimal" else max(self.bound, value)
        order = np.asarray(self.best_order, dtype=np.intp)
        return solution_from_order(
            self.instance, order, status=status, bound=float(bound), solver=solver, details=details
        )


def benders(
    instance: AdmissionInstance,
    master: MasterSolver,
    *,
    time_limit: float | None,
    solver: dict[str, str],
    dominance: bool = True,
) -> Solution:
    """Run the decomposition of the module docstring with ``master`` as the set chooser."""
    run = BendersRun(instance, master, time_limit=time_limit, dominance=dominance)
    run.start()
    run.iterate()
    return run.solution(solver, run.details())


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
