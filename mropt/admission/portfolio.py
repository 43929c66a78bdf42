"""Exact SEQ admission by a portfolio of the two CP-SAT formulations: ``cpsat-portfolio``.

The problem is AMB eq. 1 under SEQ (sec. 4.1, Definition 2). Two exact formulations
solve it and fail on different instances: the logic-based Benders decomposition of
``cpsat`` (:mod:`mropt.admission.exact_benders`: a set master and an order oracle)
proves most instances in a few master solves but stalls where many near-optimal sets
have no valid order (one no-good cut per set); the direct model of ``cpsat-direct``
(:mod:`mropt.admission.cpsat_direct`) handles the order itself and proves those, but
its model grows as n^2 and it finds no plan beyond a few hundred jobs. One run shares
what each knows, in phases:

1. **start** (:meth:`~mropt.admission.exact_benders.BendersRun.start`): edf-greedy, the
   LP of the energy rows (cheap, O(n) nonzeros), ``amb``, the master's rows, pair
   conflicts and dominance rows, ``bound-lp``: a valid plan and a proven bound before
   any search (amb-beam16 joins once the master's first set is refuted);
2. **Benders probe**: the decomposition for at most ``probe_iterations`` master solves
   and ``probe_dtime`` deterministic seconds of CP-SAT master search;
3. **direct model** (N at most ``direct_max_jobs`` candidates): ``cpsat-direct``'s
   model with the incumbent as its hint, every no-good cut of the probe as a clause
   (a minimal set with no valid order; the oracle proved it), and the proven bound as
   a cap on its objective (loosened by ``OBJECTIVE_RTOL``, so it never cuts off an
   optimum), for ``direct_dtime`` deterministic seconds (0: until the time limit). Its
   plans are checked by the order oracle; its proven bound (relaxed or exact grid
   only, never the restriction's) tightens the run's;
4. **Benders** again until the proof, the time limit or ``max_dtime``, from the best plan.

Why this order (measured: AMB Table 2 defaults, seeds 1-3, N = 40-200, 30 s, one
thread, ``benchmarks/bench_exact.py``). Where ``cpsat`` proves, it needs 1-23 master
solves (0.2-4.4 s); where it stalls it makes 54-282 and proves nothing. The direct
model proves every N <= 100 instance (1-21 s) but few beyond. So a short probe catches
the instances Benders proves cheaply, and the direct model gets the rest while it can
still prove them: up to ``direct_max_jobs`` = 120 candidates. On the frontier of seeds
1-20 at 60 s (``benchmarks/RESULTS.md``) the direct model proved 18-20 of 20 at N <= 100
(N = 100 seed 2 only with it), 1 of 20 at N = 150 and none at 200, while its phase cost
the portfolio three instances there that ``cpsat`` proves in 28-50 s: beyond 120
candidates the portfolio is the decomposition alone. Since the decomposition's lifted
energy cuts (:func:`~mropt.admission.exact_master.lifted_energy_cuts`) the master proves
every frontier instance up to N = 500 but seed 2 at N = 40, 60 and 100, whose refuted
sets fail on the order (not on a prefix's energy): those the direct phase proves (same
frontier, 16 one-thread runs at once on a 16-core machine: 20/20 at every N up to 500). ``max_dtime`` ends the whole run on a
deterministic budget (status ``time_limit``), for reproducible early stops.

Every bound goes through :meth:`~mropt.admission.exact_benders.BendersRun.tighten`
(never below a valid plan) and every plan through the oracle, so the status is
``optimal`` only when a valid plan meets a proven bound; a run that ends on its time
limit returns the best valid plan and the smallest proven bound (``time_limit``).

Determinism. Phase budgets are counts (master solves) and CP-SAT deterministic time
(``max_deterministic_time``, :mod:`mropt.backends.cpsat`), never shares of the wall
clock, and the oracle's searches are counted in nodes, so the same instance, seed and
``threads`` give the same answer run after run and under any machine load, as long as
the wall-clock limit (the outer safety: every step looks at it) is not reached; a run
the wall clock stops is not reproducible. (CP-SAT documents no guarantee across
machines or OR-Tools versions; a deterministic second took 3-10 s of wall time on the
2-core machine of the measurements above, so the budgets are not wall-clock shares.)
"""

from __future__ import annotations

import math

from mropt.admission.cpsat import cp_master
from mropt.admission.cpsat_direct import BuildOutOfTime, DirectModel, benefit_weights, build_stop
from mropt.admission.exact_benders import BendersRun
from mropt.admission.exact_oracle import OracleTimeout
from mropt.admission.time_grid import time_grid
from mropt.backends import cpsat as cpsat_backend
from mropt.model.admission import AdmissionInstance
from mropt.model.solution import Solution
from mropt.model.tolerance import OBJECTIVE_RTOL

_WEIGHT_BITS = 40  # the Benders master's benefit grid (as ``cpsat``'s default)


def _direct_phase(run: BendersRun, budget: cpsat_backend.DtimeBudget, *, threads: int, seed: int) -> dict:
    """Phase 3 of the module docstring, within ``budget``; what it did, for ``details``."""
    inst, oracle = run.instance, run.oracle
    grid = time_grid(inst)
    jobs = run.data.candidates
    weights, unit, slack = benefit_weights(inst.benefits, jobs)
    dominates = oracle.dominates if oracle.equal_release else None
    info: dict = {"times_exact": grid.exact, "cp_status": []}

    passes = [("exact" if grid.exact else "relaxed", grid.relaxed)]
    if not grid.exact:
        passes.append(("restricted", grid.restricted))
    for label, deadlines in passes:
        if run.proved() or budget.exhausted():
            break
        try:
            model = DirectModel(grid, deadlines, jobs, weights, dominates, build_stop(run.deadline))
        except BuildOutOfTime:
            info["model"] = f"{label} model not built: out of time"
            run.timed_out = True
            break
        dominance_rows = model.add_dominance(run.data.dominance)
        info.update(
            _share(run, model, weights, unit, slack), order_literals=len(model.pairs), dominance_rows=dominance_rows
        )
        model.hint(run.best_order)
        dtime = None if math.isinf(budget.total) else budget.left()
        res = cpsat_backend.solve(
            model.model, threads=threads, seed=seed, time_limit=run.time_left(), dtime_limit=dtime
        )
        budget.spend(res.dtime)
        info["cp_status"].append(f"{label}: {res.status}")
        info["dtime"] = round(budget.used, 3)
        if label != "restricted" and res.proven_bound is not None:
            run.tighten((res.proven_bound + slack) / unit, f"CP-SAT direct model ({label})")
        if not res.has_solution:
            continue
        order = model.order(res.solver)
        if not oracle.valid(order):  # a relaxation's rounding: the oracle's own order of the set
            try:
                order = oracle.check(order, run.deadline) or []
            except OracleTimeout:
                run.timed_out = True
                break
        run.offer(order, f"CP-SAT direct model ({label})")
    return info


def _share(run: BendersRun, model: DirectModel, weights: dict[int, int], unit: float, slack: float) -> dict:
    """The Benders run's knowledge as constraints of the direct model: no-good cuts, the bound as a cap."""
    m, x = model.model, model.x
    cuts = 0
    for cut in run.cuts:
        if all(j in x for j in cut):  # a job outside the model is never accepted: the cut holds
            m.add_bool_or([x[j].Not() for j in cut])
            cuts += 1
    objective = sum(weights[j] * x[j] for j in model.jobs)
    # every valid plan is worth at most the bound, within OBJECTIVE_RTOL; in grid units plus the rounding
    cap = math.floor(run.bound * (1 + OBJECTIVE_RTOL) * unit + slack)
    m.add(objective <= cap)
    return {"shared_cuts": cuts, "objective_cap": run.bound}


def cpsat_portfolio(
    instance: AdmissionInstance,
    *,
    time_limit: float | None = None,
    seed: int = 0,
    threads: int = 1,
    probe_iterations: int = 25,
    probe_dtime: float = 5.0,
    direct_max_jobs: int = 120,
    direct_dtime: float = 5.0,
    max_dtime: float = 0.0,
    dominance: bool = True,
) -> Solution:
    """Registered method ``cpsat-portfolio`` (AMB eq. 1 under SEQ, sec. 4.1; module docstring)."""
    threads = int(threads)
    total = float(max_dtime) or math.inf
    budget = cpsat_backend.DtimeBudget(min(float(probe_dtime), total))  # the masters' (phases 2 and 4)
    run = BendersRun(
        instance, cp_master(threads, _WEIGHT_BITS, seed, budget), time_limit=time_limit, dominance=bool(dominance)
    )
    run.start()
    phases: list[dict] = []
    run.iterate(stop=lambda: run.iterations >= probe_iterations or budget.exhausted())
    phases.append({"phase": "benders probe", "iterations": run.iterations, "master_dtime": round(budget.used, 3)})
    direct = cpsat_backend.DtimeBudget(min(float(direct_dtime) or math.inf, total - budget.used))
    if not run.proved() and not run.timed_out and len(run.data.candidates) <= direct_max_jobs and direct.total > 0:
        phases.append({"phase": "direct model", **_direct_phase(run, direct, threads=threads, seed=seed)})
    budget.total = budget.used + (total - budget.used - direct.used)
    if not run.proved() and not run.timed_out:
        before = run.iterations
        if run.iterate(stop=budget.exhausted):  # stopped by max_dtime: a time limit too
            run.timed_out = True
        phases.append(
            {"phase": "benders", "iterations": run.iterations - before, "master_dtime": round(budget.used, 3)}
        )
    details = run.details()
    details["formulation"] = "portfolio: Benders (set master + SEQ order oracle) and the direct CP-SAT model"
    details["phases"] = phases
    return run.solution(cpsat_backend.record(), details)
