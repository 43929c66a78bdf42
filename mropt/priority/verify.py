"""Independent check of a priority allocation (DESIGN.md: ``verify``).

Shares no code with the methods or with :mod:`mropt.priority.queueing`: it works in
exact rational arithmetic (:class:`fractions.Fraction`) and follows other routes
through the paper's model (MPSA sec. 3):

* routing from a pattern mix by each pattern's closed-form transition counts
  (simple: M->R, R->out; iterative with n rounds: n M->R, n-1 R->M, one R->out;
  chain: M->M, M->R, R->M, M->out), not by walking visit strings;
* station rates by solving the traffic equations (eq. 1, with the errata's
  lambda3 = lambda4 q21) as a linear system by Cramer's rule;
* each priority's sojourn by solving eq. 10's linear system for T1 with the M/M/1
  station times of eq. 8, not by eq. 13's closed form;
* the AR(1) forecast (eqs. 14-15, sigma^2 the variance) recomputed for fields a priority
  leaves to its history, with the same documented clamps.

It then checks the decision alone: every priority allocated non-negative integer
slots, both slot totals (eq. 17), ``shared`` = the remainder, each reported sojourn,
``infeasible`` = exactly the priorities that miss their deadline, the routing, a and b,
the objective (total reserved slots, an integer: compared exactly) and that a bound does
not exceed it (equal under ``optimal``). Without an allocation, ``error``,
``infeasible`` and ``time_limit`` may claim no objective or 0 (nothing reserved) and
``bound`` only a finite number (:mod:`mropt.model.claims`, the same for every kind).

Tolerances (relative, unit-free; ``docs/tolerances.md``), the methods' documented values
applied here to exact numbers: T_i is late when T_i > deadline (1 + TIME_RTOL)
(``deadline_limit``); a station is stable when lambda < mu (1 - TIME_RTOL); a workload
forecast at most TIME_RTOL times its series' largest value counts as not positive. The
methods evaluate eq. 13 in floating point, so their T_i carries a rounding error, which
this module bounds for each allocation from the exact values (first order, with a
generous constant: unit roundoff times the conditioning of 1 - q11 - q12 q21 and of each
station's mu - lambda, see :func:`_network`; a few 1e-15 relative for a station far from
saturation). A reported sojourn must lie within TIME_RTOL plus twice that bound of the
exact one; where the exact T_i lies within that bound of the deadline limit, or a
station's stability within rounding of its threshold, either verdict (late or not,
unstable or not) is accepted. No tolerance depends on the unit of time: times
multiplied by 10^m (rates divided by 10^m) get the same verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, TypeGuard

from mropt.model.claims import bound_problems, without_decision
from mropt.model.priority import PriorityInstance
from mropt.model.solution import Solution
from mropt.model.solution import Verdict as BaseVerdict
from mropt.model.tolerance import TIME_RTOL

_R = Fraction(TIME_RTOL)  # the deadline and stability tolerance, as an exact number
_U = 2.0**-53  # unit roundoff of binary64
_C = 16  # constant of the first-order rounding-error bound (a generous one)
_INF = None  # a sojourn that is unbounded (unstable station)


@dataclass
class Verdict(BaseVerdict):
    """What ``verify`` found: the common fields, recomputed sojourn times and late priorities."""

    sojourn: dict[str, float | None] = field(default_factory=dict)
    late: list[str] = field(default_factory=list)


def _transitions(pattern: str, iterations: int) -> dict[str, int]:
    if pattern == "simple":
        return {"MR": 1, "R0": 1}
    if pattern == "iterative":
        return {"MR": iterations, "RM": iterations - 1, "R0": 1}
    return {"MM": 1, "MR": 1, "RM": 1, "M0": 1}  # chain: map1, map2, reduce, map3


def _routing(instance: PriorityInstance) -> tuple[Fraction, Fraction, Fraction]:
    if instance.routing is not None:
        r = instance.routing
        return Fraction(r["q11"]), Fraction(r["q12"]), Fraction(r["q21"])
    counts = {"MM": Fraction(0), "MR": Fraction(0), "M0": Fraction(0), "RM": Fraction(0), "R0": Fraction(0)}
    for pattern, weight in (instance.pattern_mix or {}).items():
        for move, n in _transitions(pattern, instance.iterations).items():
            counts[move] += Fraction(weight) * n
    leave_map = counts["MM"] + counts["MR"] + counts["M0"]
    leave_reduce = counts["RM"] + counts["R0"]
    q21 = counts["RM"] / leave_reduce if leave_reduce else Fraction(0)
    return counts["MM"] / leave_map, counts["MR"] / leave_map, q21


def _forecast(series: tuple[float, ...], rate: bool) -> Fraction:
    values = [Fraction(v) for v in series]
    n = len(values)
    mean = sum(values, Fraction(0)) / n
    var = sum(((v - mean) ** 2 for v in values), Fraction(0))
    cov = sum(((values[i] - mean) * (values[i + 1] - mean) for i in range(n - 1)), Fraction(0))
    rho = cov / var if var else Fraction(0)
    value = mean + rho * (values[-1] - mean)
    if rate:
        return max(Fraction(0), value)
    return value if value > _R * max(values) else min(values)


def _value(p: Any, key: str) -> Fraction:
    given = getattr(p, key)
    if given is not None:
        return Fraction(given)
    return _forecast(p.history[key], rate=key == "arrival_rate")


@dataclass(frozen=True)
class _Network:
    """One priority's sojourn (None: a station is unstable) and how far a float evaluation may stray."""

    sojourn: Fraction | None
    rtol: float  # bound on the relative rounding error of a float evaluation of eq. 13
    near: bool  # a station's stability lies within rounding of the threshold: either verdict


def _network(q11: Fraction, q12: Fraction, q21: Fraction, lam: Fraction, mu1: Fraction, mu2: Fraction) -> _Network:
    # traffic equations (eq. 1): (1 - q11) l1 - q21 l4 = lam ; -q12 l1 + l4 = 0
    det = (1 - q11) - q21 * q12
    l1 = lam / det
    l4 = q12 * lam / det
    stations = [(l1, mu1)] + ([(l4, mu2)] if q12 != 0 else [])  # reduce is never visited when q12 = 0
    near = any(mu > 0 and abs(mu * (1 - _R) - lam_s) <= Fraction(_C * _U) * (mu + lam_s) for lam_s, mu in stations)
    if any(not lam_s < mu * (1 - _R) for lam_s, mu in stations):
        return _Network(_INF, math.inf, near)
    tq1 = 1 / (mu1 - l1)  # eq. 8
    tq2 = 1 / (mu2 - l4) if q12 != 0 else Fraction(0)
    # eq. 10: (1 - q11) T1 - q12 T2 = tq1 ; -q21 T1 + T2 = tq2  (q22 = 0)
    t = (tq1 + q12 * tq2) / det
    # Rounding of a float evaluation (rounded q's and inputs, a = 1/det, eq. 13): the
    # conditioning of det, and of each station's mu - lambda weighted by its share of T.
    cond = (1 + q11 + q12 * q21) / det
    cond += (tq1 * (mu1 + l1) / (mu1 - l1) + (q12 * tq2 * (mu2 + l4) / (mu2 - l4) if q12 != 0 else 0)) / det / t
    return _Network(t, _C * _U * (1 + float(cond)), near)


def _sojourn(
    q11: Fraction, q12: Fraction, q21: Fraction, lam: Fraction, mu1: Fraction, mu2: Fraction
) -> Fraction | None:
    """T_i by eqs. 1, 8 and 10 in exact arithmetic; None when a station is unstable."""
    return _network(q11, q12, q21, lam, mu1, mu2).sojourn


def _number(value: Any) -> TypeGuard[int | float]:
    """A finite JSON number (not a boolean)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def verify(instance: PriorityInstance, solution: Solution) -> Verdict:
    """Check an allocation solution against the instance; see the module docstring."""
    verdict = Verdict()
    if not solution.typed_decision.json_fields().get("allocation"):
        undecided = without_decision(solution, empty_value=0.0)
        if undecided is not None:  # a bound-only result, or nothing decided: nothing to recompute
            verdict.problems.extend(undecided)
            return verdict
    d = solution.typed_decision.json_fields()  # the claimed decision as plain data, checked field by field
    missing = [k for k in ("allocation", "shared", "infeasible", "routing", "a", "b") if k not in d]
    if missing:
        verdict.problems.append(f"solution lacks {', '.join(missing)}")
        return verdict
    allocation = d["allocation"]
    if not isinstance(allocation, dict) or set(allocation) != set(instance.ids):
        got = sorted(allocation) if isinstance(allocation, dict) else allocation
        verdict.problems.append(f"allocation must name exactly the priorities {list(instance.ids)}, got {got!r:.80}")
        return verdict
    slots: dict[str, tuple[int, int]] = {}
    for pid, entry in allocation.items():
        values = []
        for key in ("map_slots", "reduce_slots"):
            v = entry.get(key) if isinstance(entry, dict) else None
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                verdict.problems.append(f"priority {pid!r}: {key} must be an integer >= 0, got {v!r}")
                v = 0
            values.append(v)
        slots[pid] = (values[0], values[1])
    if verdict.problems:
        return verdict
    used_m = sum(s[0] for s in slots.values())
    used_r = sum(s[1] for s in slots.values())
    if used_m > instance.map_slots:
        verdict.problems.append(f"map slots reserved {used_m} > S_map {instance.map_slots} (eq. 17)")
    if used_r > instance.reduce_slots:
        verdict.problems.append(f"reduce slots reserved {used_r} > S_reduce {instance.reduce_slots} (eq. 17)")
    shared = d["shared"] if isinstance(d["shared"], dict) else {}
    expect = {"map_slots": instance.map_slots - used_m, "reduce_slots": instance.reduce_slots - used_r}
    if {k: shared.get(k) for k in expect} != expect:
        verdict.problems.append(f"shared {shared!r:.80} should be {expect}")

    q11, q12, q21 = _routing(instance)
    det = 1 - q11 - q12 * q21
    want = {"q11": q11, "q12": q12, "q10": 1 - q11 - q12, "q21": q21, "q20": 1 - q21}
    routing = d["routing"] if isinstance(d["routing"], dict) else {}
    for key, value in want.items():
        got = routing.get(key)  # a probability (<= 1): TIME_RTOL relative to 1
        if not _number(got) or not abs(Fraction(got) - value) <= _R:
            verdict.problems.append(f"routing {key} is {got!r}, recomputed {float(value):.12g}")
    ratio_rtol = _R + Fraction(_C * _U) * (1 + q11 + q12 * q21) / det  # the rounding of a = 1 / det
    for key, value in (("a", 1 / det), ("b", q12 / det)):
        got = d[key]
        if not _number(got) or not abs(Fraction(got) - value) <= ratio_rtol * value:
            verdict.problems.append(f"{key} is {got!r}, recomputed {float(value):.12g} (eq. 12)")

    borderline: list[str] = []
    for p in instance.priorities:
        x, y = slots[p.id]
        lam = _value(p, "arrival_rate")
        net = _network(q11, q12, q21, lam, Fraction(x) / _value(p, "map_work"), Fraction(y) / _value(p, "reduce_work"))
        t = net.sojourn
        verdict.sojourn[p.id] = None if t is None else float(t)
        limit = Fraction(p.deadline) * (1 + _R)  # deadline_limit, exactly
        band = 2 * Fraction(net.rtol) + 4 * Fraction(_U) if t is not None else Fraction(0)
        if (t is None and not net.near) or (t is not None and t > limit * (1 + band)):
            verdict.late.append(p.id)
        elif net.near or t >= limit * (1 - band):  # type: ignore[operator]
            borderline.append(p.id)  # within rounding of the limit: either verdict is accepted
        claimed = allocation[p.id].get("sojourn")
        if claimed is None:
            if t is not None and not net.near:
                verdict.problems.append(f"priority {p.id!r}: sojourn null claimed, {float(t):.10g} recomputed (eq. 10)")
        elif not _number(claimed):
            verdict.problems.append(f"priority {p.id!r}: sojourn must be a finite number or null, got {claimed!r:.40}")
        elif t is None:
            if not net.near:
                verdict.problems.append(f"priority {p.id!r}: sojourn {claimed!r} claimed, but a station is unstable")
        elif not abs(Fraction(claimed) - t) <= (_R + 2 * Fraction(net.rtol)) * t:
            verdict.problems.append(
                f"priority {p.id!r}: sojourn {claimed!r} claimed, {float(t):.10g} recomputed (eq. 10)"
            )
    claimed_late = d["infeasible"]
    if not isinstance(claimed_late, list) or not (
        set(verdict.late) <= set(claimed_late) <= set(verdict.late) | set(borderline)
    ):
        verdict.problems.append(f"infeasible lists {claimed_late!r:.80}; recomputed late priorities {verdict.late}")
    if verdict.late and solution.status in ("optimal", "feasible"):
        verdict.problems.append(f"status {solution.status!r} but priorities {verdict.late} miss their deadline")
    verdict.checked_schedule = True
    verdict.objective = float(used_m + used_r)
    if not _number(solution.objective) or solution.objective != verdict.objective:
        verdict.problems.append(
            f"objective {solution.objective!r} claimed, {verdict.objective:g} recomputed (slots reserved)"
        )
    verdict.problems.extend(bound_problems(instance.SENSE, solution, verdict.objective))
    return verdict
