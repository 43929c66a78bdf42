"""Exact SEQ admission as one direct CP-SAT model: ``cpsat-direct``.

The problem is AMB eq. 1 under SEQ (sec. 4.1): accept jobs and a map order (a
sequence, Definition 1) in which every accepted job meets its deadline (a valid
sequence, Definition 2), of maximum accepted benefit (a late job only costs, so an
optimum accepts only on-time jobs). ``cpsat`` splits it into a set master and an order
oracle (:mod:`mropt.admission.exact_benders`); this module writes it as one model:

* maps: SEQ gives the pooled map slots to one job at a time (Theorem 1), so each
  accepted job's map phase is an optional interval of length TCm (present iff the job
  is accepted, starting at or after its submit time) in one ``NoOverlap``. The order of
  the map ends is the sequence; SEQ's own map ends for it are no later (left-justified).
* reduces: SEQ runs them preemptively, earliest deadline first, on the pooled reduce
  slots, each job released at its map end (Theorem 2): feasible exactly when Horn's
  condition holds (Horn 1974). With the jobs in deadline order and ``P_g`` the prefix
  ending with the group of equal deadlines g: for every accepted k in ``P_g``,
  ``end_k + sum of TCr_j over accepted j in P_g whose map ends at or after k's <= d_g``.
  One literal per pair says which map ends first; the sums are chains
  ``W[g,k] = W[g-1,k] + sum over group g of TCr_j [j after k]``: O(n^2) variables and
  terms, not O(n^3). Where one job of a pair is absent, two clauses set the literal so
  that the absent job is not counted in the present one's sums.
* valid rows (:func:`energy_rows`, as chains): per deadline prefix the reduce energy
  ``sum TCr_j x_j <= d_g - min(submit_j + TCm_j)`` and the map energy
  ``sum TCm_j x_j <= max(d_j - TCr_j) - min submit``; per prefix of the latest map ends
  ``theta_j = d_j - TCr_j`` the map energy ``sum TCm_j x_j <= theta - min submit`` (it
  cuts the LP bound of AMB Table 2's N = 60, seed 2 from 13758 to 13656, and the
  proof on one thread from 20 s to 3 s); pair orders the windows forbid, pairs that cannot run
  together; with equal submit times the oracle's dominance rule
  (:meth:`~mropt.admission.exact_oracle.SubsetOracle.dominates`: some valid order of
  every valid set obeys it, so fixing it keeps every valid set);
* the set dominance rows ``x_j => x_i`` (parameter ``dominance``, on by default; job i
  no harder than j and worth no less: they keep an optimum, not every valid set, see
  :func:`~mropt.admission.exact_master.dominance_pairs`).

The integer grid (when the model is exact). CP-SAT needs integers. The time unit u is
the coarsest power of ten (from the largest time down nine decades) on which the model
is provably exact, else the power of two with the largest time at about 2**40 units.
TCm, TCr and submit times are rounded to the nearest unit. Let Delta be the sum of
their rounding errors (every TCm and TCr, the largest submit error), plus, per job, a
bound on the float rounding of SEQ's sums (``16 (n + 2) 2**-53`` times its on-time limit
L, ``method_deadline_limit``; the oracle checks plans in floats). Every left side of
Horn's condition, times u, is then within Delta of its exact value, so the deadline
``floor((L + Delta) / u)`` makes the model a relaxation (every valid plan stays
feasible: its bound is an upper bound) and ``floor((L - Delta) / u)`` a restriction
(every plan it finds is valid), all computed in exact fractions. Where the two agree for
every job the model is both, i.e. exact: AMB Table 2's data (tenths of seconds, integer
deadlines) are exact on u = 0.1 s, integer data on u = 1, binary fractions on their
power of two, in any unit. Where they do not, the relaxation is solved first: its
bound holds, and if the order oracle (:class:`~mropt.admission.exact_oracle.SubsetOracle`)
finds a valid order of its accepted set the run is optimal; otherwise (the rounding
admitted a set wrong by less than Delta) the restriction is solved in the time left
for a plan, the bound stays the relaxation's, and the status is ``feasible`` (or
``time_limit``), never ``optimal`` unless plan and bound meet. A restriction's bound
is never reported: it bounds only the restricted problem.

Plans and bounds. Every plan is an order the oracle's float SEQ evaluation finds valid
(the model's, or the oracle's own order of the model's set), turned into the Solution by
:func:`~mropt.admission.objective.solution_from_order` (eq. 1 recomputed). The warm
start is the better of edf-greedy and amb-beam16 (as ``cpsat``), given to CP-SAT as a
hint. The bound is the smallest proven one: the candidates' benefit sum, the LP
relaxation of the energy rows (:func:`lp_bound`, HiGHS, on the relaxation's deadlines;
with equal submit times and no pair conflicts it is never weaker than ``bound-lp``, up
to the grid's rounding: the same deadline rows and one family more), and CP-SAT's
proven bound of the relaxed or exact model; benefits go on a grid as in ``cpsat``
(exact for integer and binary-fraction benefits, else half a unit of slack per job
added to the bound). A bound below a valid plan is refused (``bounds_rejected``).

Time. ``time_limit`` covers every step: amb-beam16 may use a fifth of it, the LP at
least :data:`LP_MIN_SECONDS`, the model build looks at the clock and gives up when it
runs out (at N = 1000 the model has about n^2 / 2 literals; the run then returns the
warm start with the LP bound, status ``time_limit``), and CP-SAT gets the time left.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from ortools.sat.python import cp_model

from mropt.admission.amb import BEAM_VARIANT, DEFAULT_BEAM, amb_static
from mropt.admission.baselines import edf_greedy_order
from mropt.admission.exact_master import dominance_pairs
from mropt.admission.exact_oracle import OracleTimeout, SubsetOracle
from mropt.admission.objective import solution_from_order
from mropt.admission.time_grid import TimeGrid, energy_rows, groups_by, lp_bound, time_grid
from mropt.backends import cpsat as cpsat_backend
from mropt.model.admission import AdmissionInstance
from mropt.model.solution import Solution
from mropt.model.tolerance import integer_grid, same_value, within

#: share of the time limit the amb-beam16 warm start may use
WARM_SHARE = 0.2
#: the LP bound gets the time left or this, whichever is longer
LP_MIN_SECONDS = 0.05
_WEIGHT_BITS = 40  # benefits: the largest at most about 2**40 units
_CLOCK_EVERY = 4  # jobs of a build loop between two looks at the clock
#: the whole model build takes about this multiple of its pair loop (measured 1.6-2.1 at N = 300, 600)
BUILD_PER_PAIRS = 2.0


def projected_build_end(started: float, done: int, n: int) -> float | None:
    """When the model build started at ``started`` should end, ``done`` of ``n`` jobs into its pair loop.

    Job p of the loop adds n - p - 1 pairs, so after ``done`` jobs the share of pairs
    built is ``1 - ((n - done) / n) ** 2``; None until 5 % are (too early to tell).
    """
    share = 1.0 - ((n - done) / n) ** 2 if n else 1.0
    if share < 0.05:
        return None
    return started + BUILD_PER_PAIRS * (time.perf_counter() - started) / share


class BuildOutOfTime(Exception):
    """The time limit passed, or would pass, while the model was being built."""


def build_stop(deadline: float | None) -> Callable[[float | None], None]:
    """The ``stop`` of :class:`DirectModel` for a ``time.perf_counter`` limit: raises
    :class:`BuildOutOfTime` once the limit has passed or a projected build end is past it."""

    def stop(finish: float | None = None) -> None:
        if deadline is not None and (time.perf_counter() > deadline or (finish or 0.0) > deadline):
            raise BuildOutOfTime

    return stop


class DirectModel:
    """The CP-SAT model of the module docstring for one rounding of the deadlines.

    ``stop`` is called now and then while building; it raises to give up. In the pair
    loop it is handed the projected end of the whole build (:func:`projected_build_end`),
    so that a build that cannot finish in time is given up early, not at the limit (at
    N = 1000 and 60 s the model was still being built at the limit, and freeing it took
    another 5 s).
    """

    def __init__(
        self,
        grid: TimeGrid,
        deadlines: list[int],
        jobs: list[int],
        weights: dict[int, int],
        dominates: Callable[[int, int], bool] | None,
        stop: Callable[[float | None], None],
    ) -> None:
        built = time.perf_counter()
        a, b, r, d = grid.tcm, grid.tcr, grid.submit, deadlines
        self.a, self.r = a, r
        self.jobs = [j for j in jobs if r[j] + a[j] + b[j] <= d[j]]
        m = self.model = cp_model.CpModel()
        self.x = {j: m.new_bool_var(f"x{j}") for j in self.jobs}
        self.latest = {j: d[j] - b[j] - a[j] for j in self.jobs}  # latest map start
        self.start = {j: m.new_int_var(r[j], self.latest[j], f"s{j}") for j in self.jobs}
        m.add_no_overlap(
            [m.new_optional_fixed_size_interval_var(self.start[j], a[j], self.x[j], f"m{j}") for j in self.jobs]
        )
        # after[k, h]: h counts in k's Horn sums (h's map ends after k's, both accepted); None: never
        self.after: dict[tuple[int, int], cp_model.LiteralT | None] = {}
        self.pairs: list[tuple[int, int, cp_model.IntVar]] = []
        self.dominates = dominates
        # the chain variables, each the weighted sum of earlier ones and literals (for complete hints)
        self.sums: list[tuple[cp_model.IntVar, list, list[int]]] = []
        for p, i in enumerate(self.jobs):
            if p % _CLOCK_EVERY == 0:
                stop(projected_build_end(built, p, len(self.jobs)))
            for j in self.jobs[p + 1 :]:
                self._pair(i, j, b, d, dominates)
        groups = groups_by(d, self.jobs)
        self._horn(groups, b, d, stop)
        self._energy(grid, d)
        m.maximize(sum(weights[j] * self.x[j] for j in self.jobs))

    def _can_precede(self, i: int, j: int, b: list[int], d: list[int]) -> bool:
        """Can i's map end before j's, both on time? (necessary conditions on the grid)"""
        a, r = self.a, self.r
        end_i = r[i] + a[i]
        return max(r[j], end_i) + a[j] + b[j] <= d[j] and end_i + b[i] + b[j] <= max(d[i], d[j])

    def _pair(self, i: int, j: int, b: list[int], d: list[int], dominates: Callable | None) -> None:
        m, x, s, a = self.model, self.x, self.start, self.a
        ij, ji = self._can_precede(i, j, b, d), self._can_precede(j, i, b, d)
        if dominates is not None and ij and ji:
            ij, ji = not dominates(j, i), not dominates(i, j)
        both = [x[i], x[j]]
        if not (ij or ji):
            m.add_bool_or([x[i].Not(), x[j].Not()])
            self.after[i, j] = self.after[j, i] = None
        elif not ji:
            m.add(s[i] + a[i] <= s[j]).only_enforce_if(both)
            self.after[i, j], self.after[j, i] = x[j], None
        elif not ij:
            m.add(s[j] + a[j] <= s[i]).only_enforce_if(both)
            self.after[i, j], self.after[j, i] = None, x[i]
        else:
            lit = m.new_bool_var(f"o{i}_{j}")  # i's map ends before j's
            m.add(s[i] + a[i] <= s[j]).only_enforce_if([lit, *both])
            m.add(s[j] + a[j] <= s[i]).only_enforce_if([lit.Not(), *both])
            m.add_bool_or([x[i].Not(), x[j], lit.Not()])  # j absent: not counted in i's sums
            m.add_bool_or([x[j].Not(), x[i], lit])  # i absent: not counted in j's sums
            self.after[i, j], self.after[j, i] = lit, lit.Not()
            self.pairs.append((i, j, lit))

    def _horn(self, groups: list[list[int]], b: list[int], d: list[int], stop: Callable[[float | None], None]) -> None:
        """Horn's condition per prefix and release point, as chains W (module docstring)."""
        m, x, s, a = self.model, self.x, self.start, self.a
        caps = list(np.cumsum([sum(b[j] for j in members) for members in groups]))
        group_of = {j: g for g, members in enumerate(groups) for j in members}
        for t, k in enumerate(self.jobs):
            if t % _CLOCK_EVERY == 0:
                stop(None)
            first = group_of[k]
            latest_end = self.latest[k] + a[k]
            binding = [g for g in range(first, len(groups)) if latest_end + caps[g] > d[groups[g][0]]]
            if not binding:
                continue
            rows = set(binding)
            terms: list = []  # W[g-1, k], then the literals of group g, weighted by TCr
            coefs: list[int] = []
            for g in range(binding[-1] + 1):
                for h in groups[g]:
                    lit = self.after[k, h] if h != k else None
                    if b[h] and lit is not None:
                        terms.append(lit)
                        coefs.append(b[h])
                if g == first:  # k's own reduce is released at end_k too
                    terms.append(1)
                    coefs.append(b[k])
                if g not in rows:  # cannot bind: W[g, k] stays a sum inside W of the next row
                    continue
                w = m.new_int_var(0, int(caps[g]), f"w{g}_{k}")
                m.add(w == cp_model.LinearExpr.weighted_sum(terms, coefs))
                self.sums.append((w, terms, coefs))
                m.add(s[k] + a[k] + w <= d[groups[g][0]]).only_enforce_if(x[k])
                terms, coefs = [w], [1]

    def _energy(self, grid: TimeGrid, d: list[int]) -> None:
        """The energy rows (:func:`energy_rows`), chained; a row only where it can bind."""
        m, x = self.model, self.x
        for f, (groups, coef, rhs) in enumerate(energy_rows(grid, d, self.jobs)):
            previous: cp_model.IntVar | int = 0
            total = 0
            for g, members in enumerate(groups):
                total += sum(coef[j] for j in members)
                chain = m.new_int_var(0, total, f"e{f}_{g}")
                m.add(chain == previous + sum(coef[j] * x[j] for j in members))
                self.sums.append((chain, [previous, *(x[j] for j in members)], [1, *(coef[j] for j in members)]))
                if total > rhs[g]:
                    m.add(chain <= rhs[g])
                previous = chain

    def add_dominance(self, pairs: list[tuple[int, int]]) -> int:
        """``x_j => x_i`` for each pair (j, i) of :func:`~mropt.admission.exact_master.dominance_pairs`.

        A pair with a job outside the model is skipped (a dropped row keeps a relaxation
        a relaxation). Returns the number of rows added.
        """
        added = 0
        for j, i in pairs:
            if j in self.x and i in self.x:
                self.model.add_implication(self.x[j], self.x[i])
                added += 1
        return added

    def hint(self, order: list[int]) -> None:
        """A plan as a complete solution hint: its jobs, their left-justified map starts, the
        pair order, every chain sum (an incomplete hint sends CP-SAT into a long search to
        complete it: at N = 150 it found no solution in 20 s). With equal submit times the
        plan is first put in an order the dominance fixings allow (:func:`dominance_order`)."""
        if not all(j in self.x for j in order):
            return
        if self.dominates is not None:
            order = dominance_order(order, self.dominates)
        m, pos, clock = self.model, {j: t for t, j in enumerate(order)}, 0
        m.clear_hints()
        value: dict[int, int] = {}

        def put(var: cp_model.IntVar, v: int) -> None:
            value[var.index] = int(v)
            m.add_hint(var, int(v))

        def val(term: object) -> int:
            if isinstance(term, int):
                return term
            index = term.index  # type: ignore[attr-defined]
            return value[index] if index >= 0 else 1 - value[-index - 1]

        for j in self.jobs:
            if j in pos:
                continue
            put(self.start[j], self.r[j])
        for j in order:
            clock = max(clock, self.r[j])
            put(self.start[j], min(clock, self.latest[j]))
            clock += self.a[j]
        for j, v in self.x.items():
            put(v, j in pos)
        for i, j, lit in self.pairs:  # as _pair's clauses set it when one of the two is absent
            put(lit, pos[i] < pos[j] if i in pos and j in pos else j in pos)
        for var, terms, coefs in self.sums:
            put(var, sum(c * val(t) for t, c in zip(terms, coefs, strict=True)))

    def order(self, solver: cp_model.CpSolver) -> list[int]:
        """The accepted jobs by map end (then start): the sequence."""
        chosen = [j for j in self.jobs if solver.value(self.x[j])]
        return sorted(chosen, key=lambda j: (solver.value(self.start[j]) + self.a[j], solver.value(self.start[j]), j))


def dominance_order(order: list[int], dominates: Callable[[int, int], bool]) -> list[int]:
    """``order`` with every pair the dominance rule fixes put its way (equal submit times).

    Swapping a pair the rule inverts keeps a valid order valid and strictly reduces the
    inversions of the oracle's total order (:mod:`mropt.admission.exact_oracle`, "Why the
    order rules are sound together"), so the loop ends, in a valid order if ``order`` was.
    """
    out = list(order)
    changed = True
    while changed:
        changed = False
        for p in range(len(out)):
            for q in range(p + 1, len(out)):
                if dominates(out[q], out[p]):
                    out[p], out[q] = out[q], out[p]
                    changed = True
    return out


def benefit_weights(benefits: np.ndarray, jobs: list[int]) -> tuple[dict[int, int], float, float]:
    """(integer weights, unit, rounding slack in units): the coarsest exact power-of-two grid, else 2**40."""
    values = np.asarray([float(benefits[j]) for j in jobs])
    unit, exact = integer_grid(values, _WEIGHT_BITS)
    while exact and values.any() and np.all((values * (unit / 2)) % 1 == 0) and unit > 2.0**-1000:
        unit /= 2
    return {j: round(float(benefits[j]) * unit) for j in jobs}, unit, 0.0 if exact else 0.5 * len(jobs)


class _Run:
    """One run of ``cpsat-direct``: the incumbent, the bound and the clock."""

    def __init__(
        self, instance: AdmissionInstance, time_limit: float | None, seed: int, threads: int, dominance: bool = True
    ) -> None:
        self.instance, self.seed, self.threads = instance, seed, threads
        self.started = time.perf_counter()
        self.time_limit = time_limit
        self.deadline = None if time_limit is None else self.started + time_limit
        self.oracle = SubsetOracle(instance)
        self.jobs = [j for j in range(instance.n) if self.oracle.alone_ok[j]]
        self.dominance = dominance_pairs(self.oracle, self.jobs, list(instance.benefits)) if dominance else []
        self.best: list[int] = []
        self.bound = float(sum(instance.benefits[j] for j in self.jobs))
        self.details: dict = {
            "formulation": "direct CP-SAT: map intervals, pair order literals, Horn's condition as chains",
            "incumbent_from": "empty",
            "bound_from": "sum of the candidates' benefits",
            "cp_status": [],
            "stopped_early": False,
        }

    def value(self, order: list[int]) -> float:
        return float(sum(self.instance.benefits[j] for j in order))

    def left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.perf_counter()

    def offer(self, order: list[int], source: str) -> None:
        if self.value(order) > self.value(self.best) and self.oracle.valid(order):
            self.best = [int(j) for j in order]
            self.details["incumbent_from"] = source

    def tighten(self, bound: float | None, source: str) -> None:
        if bound is None or bound >= self.bound:
            return
        plan = self.value(self.best)
        if bound < plan and not same_value(bound, plan):  # below a valid plan: proves nothing
            self.details.setdefault("bounds_rejected", []).append({"from": source, "bound": bound, "plan": plan})
            return
        self.bound, self.details["bound_from"] = bound, source

    def proved(self) -> bool:
        return within(self.value(self.best), self.bound)

    def run(self) -> Solution:
        inst = self.instance
        self.offer(edf_greedy_order(inst), "edf-greedy")
        warm_until = None if self.time_limit is None else self.started + WARM_SHARE * self.time_limit
        self.offer([int(j) for j in amb_static(inst, beam=DEFAULT_BEAM, deadline=warm_until).order], BEAM_VARIANT)
        grid = time_grid(inst)
        self.details.update(time_unit=str(grid.unit), times_exact=grid.exact)
        left = self.left()
        lp = lp_bound(grid, grid.relaxed, self.jobs, inst.benefits, None if left is None else max(left, LP_MIN_SECONDS))
        self.details["lp_bound"] = lp
        self.tighten(lp, "LP relaxation of the energy rows")
        weights = benefit_weights(inst.benefits, self.jobs)
        label = "exact" if grid.exact else "relaxed"
        if not self.proved():
            self.cp_solve(grid, grid.relaxed, weights, label)
        if not grid.exact and not self.proved() and not self.details["stopped_early"]:
            self.cp_solve(grid, grid.restricted, weights, "restricted")
        proved = self.proved()
        status = "optimal" if proved else "time_limit" if self.details["stopped_early"] else "feasible"
        value = self.value(self.best)
        bound = value if proved else max(self.bound, value)
        return solution_from_order(
            inst, self.best, status=status, bound=bound, solver=cpsat_backend.record(), details=self.details
        )

    def cp_solve(self, grid: TimeGrid, deadlines: list[int], weights: tuple, label: str) -> None:
        """Build and solve the model on ``deadlines``; its bound counts unless it is the restriction."""
        w, unit, slack = weights
        dominates = self.oracle.dominates if self.oracle.equal_release else None
        built = time.perf_counter()
        try:
            model = DirectModel(grid, deadlines, self.jobs, w, dominates, build_stop(self.deadline))
        except BuildOutOfTime:
            self.details["stopped_early"] = True
            self.details["model"] = f"{label} model not built: out of time"
            return
        dominance_rows = model.add_dominance(self.dominance)
        self.details.update(model_jobs=len(model.jobs), order_literals=len(model.pairs), dominance_rows=dominance_rows)
        self.details["build_seconds"] = round(time.perf_counter() - built, 3)
        model.hint(self.best)
        left = self.left()
        res = cpsat_backend.solve(model.model, threads=self.threads, seed=self.seed, time_limit=left)
        self.details["cp_status"].append(f"{label}: {res.status}")
        if res.message:
            self.details["solver_message"] = res.message
        if res.status not in ("optimal", "infeasible"):
            self.details["stopped_early"] = True
        if label != "restricted" and res.proven_bound is not None:
            self.tighten((res.proven_bound + slack) / unit, f"CP-SAT, {label} model")
        if not res.has_solution:
            return
        order = model.order(res.solver)
        if not self.oracle.valid(order):  # the relaxation's rounding: ask the oracle for an order of the set
            try:
                order = self.oracle.check(order, self.deadline) or []
            except OracleTimeout:
                self.details["stopped_early"] = True
                return
        self.offer(order, f"CP-SAT, {label} model")


def cpsat_direct(
    instance: AdmissionInstance,
    *,
    time_limit: float | None = None,
    seed: int = 0,
    threads: int = 1,
    dominance: bool = True,
) -> Solution:
    """Registered method ``cpsat-direct`` (AMB eq. 1 under SEQ, sec. 4.1, Definition 2; module docstring)."""
    return _Run(instance, time_limit, seed, int(threads), bool(dominance)).run()
