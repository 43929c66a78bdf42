"""The set-selection relaxation shared by the exact methods and the bounds.

Variables ``x_j`` (accept job j). Every constraint below is necessary for a set to
have a valid SEQ sequence (AMB sec. 4.1), so maximising ``sum benefit_j x_j`` under
them gives an upper bound (:mod:`mropt.admission.bounds`), and it is the master
problem of the logic-based Benders decomposition of :mod:`mropt.admission.exact_benders`.

* fixing: ``x_j = 0`` when ``submit_j + TCm_j + TCr_j > deadline_j`` (job j alone is late);
* pair conflicts: ``x_i + x_j <= 1`` when neither order of {i, j} is valid;
* energy windows: for each window (R, D) of a submit value R and a deadline value D,
  the group ``g = {j : submit_j >= R, deadline_j <= D}`` satisfies

  - map energy: ``sum_g TCm_j x_j <= max_g(deadline_j - TCr_j) - R`` (every map of g
    runs after R on the whole map stage, and ends before its job's reduce must start);
  - reduce energy: ``sum_g TCr_j x_j <= max_g deadline_j - min_g(submit_j + TCm_j)``
    (every reduce of g runs on the whole reduce stage after some map of g is done).

  With equal submit times the windows are one per deadline value; otherwise one per
  (submit value, deadline value) pair with a non-empty group, duplicates removed.

and, in the exact masters only (not ``bound-lp``), the **dominance rows**
``x_j <= x_i`` of :func:`dominance_pairs` (job i is no harder than j and worth no
less): they cut off valid sets too, but never every optimum, so the master's optimum
stays an upper bound on the SEQ optimum and the decomposition stays exact.

Deadlines are the on-time limits ``method_deadline_limit(deadline)`` (the oracle's). The
rows are kept in the instance's units; :meth:`MasterData.scaled_rows` and
:attr:`MasterData.benefit_unit` give every solver the same well-conditioned numbers in
any unit of time or benefit (each row and the objective divided by a power of two,
which is exact).

:func:`build_pulp_model` writes the master as a PuLP problem (the MILP masters of
:mod:`mropt.admission.milp`); :func:`master_value` solves it, or its LP relaxation, with
HiGHS: the value ``bound-lp`` and ``bound-energy`` report, and where the Benders bound
starts (:mod:`mropt.admission.exact_benders`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pulp

from mropt.admission.exact_oracle import SubsetOracle, pair_conflicts
from mropt.backends.pulp import solve_pulp
from mropt.model.tolerance import pow2_scale

#: the most lifted energy rows made from one refuted set (:func:`lifted_energy_cuts`)
LIFTED_ROWS_PER_SET = 4
_CLOCK_EVERY = 16  # rows of a master model built between two looks at the clock


@dataclass
class MasterData:
    """Rows of the relaxation over the candidate jobs (indices into the instance)."""

    benefits: list[float]
    candidates: list[int]  # jobs that are feasible alone; the others are fixed to 0
    rows: list[tuple[dict[int, float], float]] = field(default_factory=list)  # sum coef x <= rhs
    conflicts: list[tuple[int, int]] = field(default_factory=list)
    dominance: list[tuple[int, int]] = field(default_factory=list)  # (j, i): x_j <= x_i (dominance_pairs)
    complete: bool = True  # False: the time limit cut the rows or the pair conflicts short (build_master)

    @property
    def benefit_unit(self) -> float:
        """Power of two putting the largest candidate benefit in [1, 2): multiply to normalise."""
        return pow2_scale(max((abs(self.benefits[j]) for j in self.candidates), default=0.0))

    def scaled_rows(self) -> list[tuple[dict[int, float], float]]:
        """The rows, each divided by the power of two that puts its largest number in [1, 2)."""
        out = []
        for coefs, rhs in self.rows:
            f = pow2_scale(max(abs(rhs), *(abs(c) for c in coefs.values())))
            out.append(({j: c * f for j, c in coefs.items()}, rhs * f))
        return out


def energy_rows(
    oracle: SubsetOracle, candidates: list[int], deadline: float | None = None
) -> list[tuple[dict[int, float], float]]:
    """The map- and reduce-energy rows of the module docstring (only binding-capable ones).

    When ``deadline`` (a ``time.perf_counter`` value) passes, the rows found so far are
    returned (every row is valid on its own); :func:`build_master` notes it.
    """
    a, b, d, r = oracle.a, oracle.b, oracle.d, oracle.r
    releases = sorted(set(r[j] for j in candidates)) if not oracle.equal_release else [min(r)]
    deadlines = sorted(set(d[j] for j in candidates))
    # right sides loosened by float rounding's reach, so every row stays a relaxation
    loose = 1e-12 * max((abs(d[j]) + abs(r[j]) for j in candidates), default=0.0)
    seen: set[frozenset[int]] = set()
    rows: list[tuple[dict[int, float], float]] = []
    windows = 0
    for rel in releases:
        for dl in deadlines:
            windows += 1
            if windows % _CLOCK_EVERY == 0 and deadline is not None and time.perf_counter() > deadline:
                return rows
            group = [j for j in candidates if r[j] >= rel and d[j] <= dl]
            key = frozenset(group)
            if not group or key in seen:
                continue
            seen.add(key)
            map_rhs = max(d[j] - b[j] for j in group) - rel + loose
            if sum(a[j] for j in group) > map_rhs:
                rows.append(({j: a[j] for j in group}, map_rhs))
            red_rhs = max(d[j] for j in group) - min(r[j] + a[j] for j in group) + loose
            if sum(b[j] for j in group) > red_rhs:
                rows.append(({j: b[j] for j in group if b[j] > 0}, red_rhs))
    return rows


def lifted_energy_cuts(
    oracle: SubsetOracle, candidates: list[int], chosen: Sequence[int]
) -> list[tuple[dict[int, float], float]]:
    """Energy rows lifted to the jobs of ``chosen``: valid rows that ``chosen`` violates.

    The Benders cut of a set that fails a necessary condition of
    :meth:`~mropt.admission.exact_oracle.SubsetOracle.necessary` (a deadline prefix
    whose map or reduce work does not fit: AMB sec. 4.1, Horn's condition on that
    prefix); a no-good cut of its minimal core removes that one core, these rows every
    set failing the same condition at the same threshold. For a window (R, D) with the
    group ``g = {j : submit_j >= R, deadline_j <= D}`` and a valid set V:

    * map: the last map of ``V & g`` ends at ``R + sum_{V&g} TCm`` or later, and its
      job's reduce still has to run, so ``sum_{V&g} TCm_j <= max_{V&g} u_j - R`` with
      ``u_j = d_j - TCr_j``. For any threshold ``t >= R``,
      ``sum_g TCm_j x_j - sum_{g, u_j > t} (u_j - t) x_j <= t - R`` follows (when the
      largest u of V exceeds t its own term pays the difference);
    * reduce: every reduce of ``V & g`` runs after the first map of it ends, at
      ``min_{V&g} w_j`` with ``w_j = submit_j + TCm_j``, and before D, so for any ``t <= D``,
      ``sum_g TCr_j x_j - sum_{g, w_j < t} (t - w_j) x_j <= D - t``.

    The threshold is the one ``chosen`` takes (t = its largest u, or its smallest w, in
    the window), which makes the row violated exactly when the window's condition fails
    for ``chosen``. Rows for the :data:`LIFTED_ROWS_PER_SET` most violated failing windows
    are returned (a master set close to valid fails few; a far one would bloat the
    master), right sides loosened by float rounding's reach as :func:`energy_rows`;
    coefficients may be negative.
    """
    a, b, d, r = oracle.a, oracle.b, oracle.d, oracle.r
    members = sorted(set(int(j) for j in chosen), key=lambda j: d[j])
    if not members:
        return []
    releases = sorted(set(r[j] for j in members)) if not oracle.equal_release else [min(r[j] for j in members)]
    failing: list[tuple[float, str, float, float, float]] = []  # (violation, kind, R, D, threshold)
    for rel in releases:  # running sums along the deadline order: O(|chosen|) per release
        sa = sb = 0.0
        t_map, t_red = -math.inf, math.inf
        inside = [j for j in members if r[j] >= rel]
        for k, j in enumerate(inside):
            sa, sb = sa + a[j], sb + b[j]
            t_map, t_red = max(t_map, d[j] - b[j]), min(t_red, r[j] + a[j])
            if k + 1 < len(inside) and d[inside[k + 1]] == d[j]:
                continue  # one window per deadline value
            if rel + sa > t_map:
                failing.append((rel + sa - t_map, "map", rel, d[j], t_map))
            if t_red + sb > d[j]:
                failing.append((t_red + sb - d[j], "reduce", rel, d[j], t_red))
    loose = 1e-12 * max((abs(d[j]) + abs(r[j]) for j in candidates), default=0.0)
    rows: list[tuple[dict[int, float], float]] = []
    for _, kind, rel, dl, t in sorted(failing, reverse=True)[:LIFTED_ROWS_PER_SET]:
        window = [i for i in candidates if r[i] >= rel and d[i] <= dl]
        if kind == "map":
            coefs = {i: a[i] - max(0.0, d[i] - b[i] - t) for i in window}
            rows.append(({i: c for i, c in coefs.items() if c}, t - rel + loose))
        else:
            coefs = {i: b[i] - max(0.0, t - r[i] - a[i]) for i in window}
            rows.append(({i: c for i, c in coefs.items() if c}, dl - t + loose))
    return rows


def dominance_pairs(oracle: SubsetOracle, candidates: list[int], benefits: list[float]) -> list[tuple[int, int]]:
    """Pairs (j, i) with job i dominating job j: ``x_j <= x_i`` keeps an optimum (AMB sec. 4.1).

    i dominates j when ``TCm_i <= TCm_j``, ``TCr_i <= TCr_j``, ``submit_i <= submit_j``,
    ``d_i >= d_j`` (on-time limits) and ``benefit_i >= benefit_j``, and i is strictly
    better in one of the five or, all equal, ``i < j``: a strict partial order.

    Why the rows keep an optimum. Let S be a valid set holding j but not i, and put i in
    j's place of a valid map order of S. The map clock (``P_k = max(P_{k-1}, submit_k) +
    TCm_k``) is nowhere later, since i is released no later and maps no longer. Horn's
    condition (:mod:`mropt.admission.exact_oracle`: ``P_k + sum of TCr over G_D at
    positions >= k <= D``) then holds at every position: each P_k is no larger, i adds
    no more reduce work than j did, and to fewer groups G_D (``d_i >= d_j``); at i's own
    position the groups holding i held j before. So ``S - j + i`` is valid and worth no
    less. Repeating the swap ends (each one moves a job earlier in a linear extension of
    the order) at a valid set, worth at least S, that meets every row. Float sums keep
    all of this: rounding to nearest is monotone. Only the covering pairs are returned
    (the transitive reduction: the others follow).
    """
    if len(candidates) < 2:
        return []
    idx = np.asarray(candidates, dtype=np.intp)
    cols = [np.asarray(v, dtype=float)[idx] for v in (oracle.a, oracle.b, oracle.r)]
    d = np.asarray(oracle.d, dtype=float)[idx]
    w = np.asarray(benefits, dtype=float)[idx]
    # harder[i, j]: i no worse than j in every coordinate (i easier or equal)
    weak = (d[:, None] >= d[None, :]) & (w[:, None] >= w[None, :])
    equal = (d[:, None] == d[None, :]) & (w[:, None] == w[None, :])
    for c in cols:
        weak &= c[:, None] <= c[None, :]
        equal &= c[:, None] == c[None, :]
    order = np.arange(len(idx))
    dom = weak & (~equal | (order[:, None] < order[None, :]))  # dom[i, j]: i dominates j
    np.fill_diagonal(dom, False)
    # transitive reduction: drop i -> j when some k has i -> k -> j
    via = (dom.astype(np.float32) @ dom.astype(np.float32)) > 0
    cover = dom & ~via
    ii, jj = np.nonzero(cover)
    return [(int(idx[j]), int(idx[i])) for i, j in zip(ii, jj, strict=True)]


def build_master(
    oracle: SubsetOracle, *, conflicts: bool = True, dominance: bool = False, deadline: float | None = None
) -> MasterData:
    """The relaxation of the module docstring for the oracle's instance.

    ``dominance``: add the dominance rows (the exact masters; their optimum is still an
    upper bound, :func:`dominance_pairs`). ``deadline`` (a ``time.perf_counter`` value):
    the rows and the pair conflicts stop when it passes, and those found so far are kept
    (``complete`` False: still a relaxation, every row and pair is valid on its own).
    """
    candidates = [j for j in range(oracle.n) if oracle.alone_ok[j]]
    data = MasterData(
        benefits=[float(x) for x in oracle.instance.benefits],
        candidates=candidates,
        rows=energy_rows(oracle, candidates, deadline),
    )
    data.complete = deadline is None or time.perf_counter() <= deadline
    if dominance and data.complete:
        data.dominance = dominance_pairs(oracle, candidates, data.benefits)
    if conflicts and data.complete:
        data.conflicts, data.complete = pair_conflicts(oracle, candidates, deadline)
    return data


class MasterOutOfTime(Exception):
    """The time limit passed while a master model was being built."""


def build_pulp_model(
    data: MasterData, cuts: list[list[int]], *, relax: bool = False, deadline: float | None = None
) -> tuple[pulp.LpProblem, dict]:
    """The master as a PuLP problem (LP if ``relax``), with no-good ``cuts``.

    Normalised (exactly, by powers of two): the objective is in units of
    ``1 / data.benefit_unit`` (divide its value by the unit), rows as
    :meth:`MasterData.scaled_rows`. Raises :class:`MasterOutOfTime` when ``deadline`` (a
    ``time.perf_counter`` value) passes during the build.
    """
    prob = pulp.LpProblem("seq_admission_master", pulp.LpMaximize)
    cat = pulp.LpContinuous if relax else pulp.LpBinary
    x = {j: prob.add_variable(f"x_{j}", lowBound=0, upBound=1, cat=cat) for j in data.candidates}
    unit = data.benefit_unit
    prob += pulp.lpSum(data.benefits[j] * unit * x[j] for j in data.candidates)
    for k, (coefs, rhs) in enumerate(data.scaled_rows()):
        if k % _CLOCK_EVERY == 0:
            out_of_time(deadline)
        # an affine expression from (variable, coefficient) pairs: lpSum of products costs 20x more
        row = pulp.LpAffineExpression([(x[j], c) for j, c in coefs.items() if j in x])
        prob += pulp.LpConstraint(row, pulp.LpConstraintLE, f"energy_{k}", rhs)
    for k, (i, j) in enumerate(data.conflicts):
        prob += x[i] + x[j] <= 1, f"pair_{k}"
    for k, (j, i) in enumerate(data.dominance):
        prob += x[j] - x[i] <= 0, f"dominance_{k}"
    for k, cut in enumerate(cuts):
        prob += pulp.lpSum(x[j] for j in cut) <= len(cut) - 1, f"cut_{k}"
    return prob, x


def out_of_time(deadline: float | None) -> None:
    """Raise :class:`MasterOutOfTime` when ``deadline`` (a ``time.perf_counter`` value) has passed."""
    if deadline is not None and time.perf_counter() > deadline:
        raise MasterOutOfTime


def master_value(
    data: MasterData, *, relax: bool, time_limit: float | None = None, threads: int = 1, deadline: float | None = None
) -> tuple[float | None, bool, str]:
    """HiGHS on the master without cuts (its LP relaxation if ``relax``): (proven bound, optimal, message).

    The bound is in the instance's benefit unit, None when HiGHS proved none. With no
    candidates the value is 0. ``deadline`` (a ``time.perf_counter`` value) limits the
    model's build and the solve, as ``time_limit`` (seconds) the solve alone.
    """
    if not data.candidates:
        return 0.0, True, ""
    try:
        out_of_time(deadline)
        prob, _ = build_pulp_model(data, [], relax=relax, deadline=deadline)
    except MasterOutOfTime:
        return None, False, "out of time while building the master"
    if deadline is not None:
        left = max(0.0, deadline - time.perf_counter())
        time_limit = left if time_limit is None else min(time_limit, left)
    _, optimal, bound, message = solve_pulp(prob, "highs", time_limit=time_limit, threads=threads, mip=not relax)
    if bound is not None:
        bound = float(bound) / data.benefit_unit  # the model is normalised
    return bound, optimal, message
