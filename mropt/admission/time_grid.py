"""The direct model's time grid, its energy rows as chains, and their LP bound.

:func:`time_grid` puts an admission instance's times on the coarsest unit on which
``cpsat-direct``'s model is provably exact, else on a binary grid with deadlines rounded
both ways (a relaxation and a restriction): :mod:`mropt.admission.cpsat_direct`'s
docstring gives the rule and why it holds. :func:`energy_rows` writes valid rows of AMB
sec. 4.1's SEQ problem over that grid as nested prefixes (chains, O(n) terms), and
:func:`lp_bound` solves their LP relaxation with HiGHS: the cheap proven bound every
exact method of SEQ admission starts from (``cpsat-direct``, and the Benders methods,
:mod:`mropt.admission.exact_benders`, before their master's LP). This
module registers no method (so importing it keeps ``mropt methods``' order).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pulp

from mropt.backends.pulp import solve_pulp
from mropt.model.admission import AdmissionInstance
from mropt.model.tolerance import integer_grid, pow2_scale

_DECADES = 9  # powers of ten tried as the time unit, from the largest time's down
_TIME_BITS = 40  # the binary grid: the largest time at about 2**40 units


@dataclass(frozen=True)
class TimeGrid:
    """Times in integer units of ``unit`` seconds, and deadlines rounded both ways (:mod:`mropt.admission.cpsat_direct`)."""

    unit: Fraction
    tcm: list[int]
    tcr: list[int]
    submit: list[int]
    relaxed: list[int]  # floor((L + Delta) / u): the model is a relaxation
    restricted: list[int]  # floor((L - Delta) / u): the model is a restriction

    @property
    def exact(self) -> bool:
        """The two roundings agree: the model is exact."""
        return self.relaxed == self.restricted


def _units(top: float) -> list[Fraction]:
    """Candidate time units, coarsest first: powers of ten, then the binary grid's."""
    units: list[Fraction] = []
    if top > 0:
        e = math.floor(math.log10(top))
        units = [Fraction(10) ** k for k in range(e, e - _DECADES, -1)]
    s, _ = integer_grid([top], _TIME_BITS)
    return [*units, 1 / Fraction(s)]


def time_grid(instance: AdmissionInstance) -> TimeGrid:
    """The time grid of :mod:`mropt.admission.cpsat_direct`: the first exact unit, else the binary one."""
    arrays = [np.asarray(v, dtype=float) for v in (instance.tcm, instance.tcr, instance.submit_times)]
    limits = [Fraction(float(v)) for v in instance.deadline_limits]
    top = max(float(np.max(arrays[0] + arrays[1] + arrays[2])), float(np.max(np.abs(instance.deadline_limits))))
    float_slack = [Fraction(16 * (instance.n + 2)) * abs(v) / 2**53 for v in limits]  # SEQ's float sums
    units = _units(top)
    for k, unit in enumerate(units):
        last = k == len(units) - 1
        with np.errstate(all="ignore"):  # a cheap float test first: near-integers on this unit
            near = all(np.all(np.abs(v / float(unit) - np.round(v / float(unit))) <= 1e-6) for v in arrays)
        if not (near or last):
            continue
        exact = [[Fraction(float(x)) for x in v] for v in arrays]
        ints = [[round(x / unit) for x in v] for v in exact]
        errors = [[abs(x - q * unit) for x, q in zip(v, iv, strict=True)] for v, iv in zip(exact, ints, strict=True)]
        delta = sum(errors[0]) + sum(errors[1]) + max(errors[2])
        relaxed = [math.floor((lim + delta + fs) / unit) for lim, fs in zip(limits, float_slack, strict=True)]
        restricted = [math.floor((lim - delta - fs) / unit) for lim, fs in zip(limits, float_slack, strict=True)]
        if relaxed == restricted or last:
            return TimeGrid(unit, ints[0], ints[1], ints[2], relaxed, restricted)
    raise AssertionError("unreachable: the binary unit is always taken")


def groups_by(key: list[int] | dict[int, int], jobs: list[int]) -> list[list[int]]:
    """``jobs`` in ``key`` order (deadlines, say), in groups of equal keys."""
    out: list[list[int]] = []
    for j in sorted(jobs, key=lambda j: (key[j], j)):
        if out and key[out[-1][0]] == key[j]:
            out[-1].append(j)
        else:
            out.append([j])
    return out


def _running(groups: list[list[int]], value: Callable[[int], int], pick: Callable) -> list[int]:
    """``pick`` (min or max) of ``value`` over each prefix of ``groups``."""
    out: list[int] = []
    for members in groups:
        v = pick(value(j) for j in members)
        out.append(v if not out else pick(out[-1], v))
    return out


Family = tuple[list[list[int]], list[int], list[int]]


def energy_rows(grid: TimeGrid, d: list[int], jobs: list[int]) -> list[Family]:
    """The energy rows as nested prefixes: (groups, coefficient per job, right side per prefix).

    Each row says ``sum over the prefix of coef_j x_j <= right side``: the reduces of the
    jobs of a deadline prefix run between its first possible map end and its deadline;
    their maps end by the latest ``d_j - TCr_j`` of the prefix; and the maps of the jobs
    with ``d_j - TCr_j <= theta`` end by theta (every map after the earliest submit).
    """
    a, b, r = grid.tcm, grid.tcr, grid.submit
    latest = {j: d[j] - b[j] for j in jobs}
    by_deadline, by_latest = groups_by(d, jobs), groups_by(latest, jobs)
    release = _running(by_deadline, lambda j: r[j] + a[j], min)
    submit = _running(by_deadline, r.__getitem__, min)
    last_map = _running(by_deadline, latest.__getitem__, max)
    return [
        (by_deadline, b, [d[g[0]] - x for g, x in zip(by_deadline, release, strict=True)]),
        (by_deadline, a, [x - y for x, y in zip(last_map, submit, strict=True)]),
        (
            by_latest,
            a,
            [latest[g[0]] - x for g, x in zip(by_latest, _running(by_latest, r.__getitem__, min), strict=True)],
        ),
    ]


def lp_bound(
    grid: TimeGrid, deadlines: list[int], jobs: list[int], benefits: np.ndarray, time_limit: float | None
) -> float | None:
    """LP relaxation of the energy rows (chained, O(n) nonzeros), by HiGHS; None if not solved."""
    if not jobs:
        return 0.0
    families = energy_rows(grid, deadlines, jobs)
    ft = pow2_scale(max([1, *(abs(v) for _, _, rhs in families for v in rhs)]))
    fw = pow2_scale(max(float(benefits[j]) for j in jobs))
    prob = pulp.LpProblem("energy_lp", pulp.LpMaximize)
    x = {j: prob.add_variable(f"x_{j}", lowBound=0, upBound=1) for j in jobs}
    prob += pulp.lpSum(float(benefits[j]) * fw * x[j] for j in jobs)
    for f, (groups, coef, rhs) in enumerate(families):
        previous: pulp.LpAffineExpression | int = 0
        for g, members in enumerate(groups):
            total = prob.add_variable(f"e{f}_{g}", lowBound=0)
            prob += total == previous + pulp.lpSum(coef[j] * ft * x[j] for j in members), f"chain{f}_{g}"
            prob += total <= rhs[g] * ft, f"energy{f}_{g}"
            previous = total
    _, optimal, bound, _ = solve_pulp(prob, "highs", time_limit=time_limit, threads=1, mip=False)
    return float(bound) / fw if optimal and bound is not None else None
