"""A priority instance's answer does not depend on its units (docs/tolerances.md).

Times (deadlines, work per visit, their histories) multiplied by 10^m and arrival rates
divided by 10^m describe the same MPSA problem (secs. 3-4): ``mpsa`` (Algorithm 1) and
``mpsa-exact`` (eq. 17) must return the same status, the same slots and the same total,
and ``verify`` must accept both answers and reject tampered ones, at every scale.

The rescaled data are the correctly rounded values of the exact products, so they carry
the rounding any change of units brings. The regression cases below each changed their
answer (or verify's verdict) under such a rescaling when the tolerances were absolute.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mropt
from mropt.model.priority import Priority, PriorityInstance
from mropt.model.tolerance import deadline_limit
from mropt.priority.forecast import ar1_forecast, lag1_autocorrelation, planning_load
from mropt.priority.queueing import priority_sojourn, routing_of
from mropt.priority.verify import _routing, _sojourn

SCALES = range(-8, 10)  # times * 10^m, rates / 10^m
METHODS = tuple(m.name for m in mropt.methods("priority"))  # every priority method of the registry
SIMPLE = {"q11": 0.0, "q12": 1.0, "q21": 0.0}  # map, then reduce (a = b = 1)
MAP_ONLY = {"q11": 0.0, "q12": 0.0, "q21": 0.0}  # one map visit, no reduce (a = 1, b = 0)


def _times(value: float, m: int) -> float:
    return float(Fraction(value) * Fraction(10) ** m)


def rescale(inst: PriorityInstance, m: int) -> PriorityInstance:
    """The same instance with times in units 10^-m as large: times * 10^m, rates / 10^m (correctly rounded)."""

    def one(p: Priority) -> Priority:
        power = {"arrival_rate": -m, "map_work": m, "reduce_work": m}
        changes = {key: _times(getattr(p, key), e) for key, e in power.items() if getattr(p, key) is not None}
        history = {key: [_times(v, power[key]) for v in series] for key, series in p.history.items()}
        return dataclasses.replace(p, deadline=_times(p.deadline, m), history=history, **changes)

    return dataclasses.replace(inst, priorities=tuple(one(p) for p in inst.priorities))


def answer(sol) -> tuple:
    """What must not change with the units: status, slots per priority, total, shared, infeasible."""
    d = sol.decision
    slots = {k: (v["map_slots"], v["reduce_slots"]) for k, v in d["allocation"].items()}
    return sol.status, sol.objective, slots, d["shared"], sorted(d["infeasible"])


# -- regression cases: each changed its answer (or verdict) under rescaling, once ---------


def _offered_tie() -> PriorityInstance:
    """Offered loads 0.1 * 9 = 0.3 * 3 tie exactly, and only one of A, B can be stabilised on 1 slot.

    mpsa-exact gives the slot to A (the tie drops the later priority, B). Compared exactly,
    the rounded products decided instead: B got the slot for m = 0, A for m = -7, -6, -5,
    -3, -2, 2, 5, 8, 9.
    """
    ps = (
        Priority("A", 100, arrival_rate=0.1, map_work=9, reduce_work=1),
        Priority("B", 100, arrival_rate=0.3, map_work=3, reduce_work=1),
    )
    return PriorityInstance(1, 1, ps, routing=MAP_ONLY)


def _band_stop() -> PriorityInstance:
    """T(s) = 1.5e-7 / s + (100 - 3.75e-8) against T = 100: s = 2 is the least feasible map count.

    T(4) = 100 up to rounding; Algorithm 1 with Yu = 0 stopped at the first probe with
    slack T_i - T <= 0, so it returned s = 4 where T(4) rounded above 100 (m = 0) and
    s = 2 where it rounded below (m = -7, 4).
    """
    p = Priority("P", 100, arrival_rate=0, map_work=1.5e-7, reduce_work=100 - 3.75e-8)
    return PriorityInstance(8, 1, (p,), routing=SIMPLE)


def _critical() -> PriorityInstance:
    """rho = 0.3 * 10 / 3 = 1 exactly with all 3 map slots: the station is unstable.

    With the exact test mu > lambda, rounding made it stable for m = 4 (with an enormous
    sojourn), where mpsa-exact reported 3 slots (objective 3), and 0 slots elsewhere; and
    verify, exact on the given floats (0.3 * 10 / 3 is not 1 in binary), found a finite
    sojourn where mpsa's float test found none, rejecting mpsa's answer even for m = 0.
    """
    return PriorityInstance(3, 8, (Priority("P", 50, arrival_rate=0.3, map_work=10, reduce_work=1),), routing=MAP_ONLY)


def _critical_verify() -> PriorityInstance:
    """Two map visits per job (a = 2): a lambda W = 2 * 0.25 * 4 = 2 = all map slots, rho = 1.

    verify, exact on the rescaled floats, found a finite sojourn of 1e10..1e24 time units
    for m = -7, -6, 6, 7 and rejected mpsa's null.
    """
    p = Priority("P0", 50, arrival_rate=0.25, map_work=4, reduce_work=2)
    return PriorityInstance(5, 1, (p,), routing={"q11": 0.5, "q12": 0.5, "q21": 0.5})


def _deadline_ulp() -> PriorityInstance:
    """Deadlines 14 (B) and the next float above it (A, first in the file); 4 map slots, A needs 3, B 2.

    Compared exactly, mpsa visited B first (B got 2 slots, A the 2 left and missed), but
    for m = -8 and -2 both deadlines round to one float, the tie went to file order and A
    got 3 slots. Deadlines within TIME_RTOL are now one deadline: A first at every scale.
    """
    ps = (
        Priority("A", math.nextafter(14.0, 15.0), arrival_rate=0, map_work=42, reduce_work=1),
        Priority("B", 14.0, arrival_rate=0, map_work=28, reduce_work=1),
    )
    return PriorityInstance(4, 1, ps, routing=MAP_ONLY)


REGRESSIONS = {
    "offered-load tie": (_offered_tie, {"mpsa-exact": ("infeasible", 1.0, {"A": (1, 0), "B": (0, 0)})}),
    "Yu = 0 inside the tolerance band": (_band_stop, {"mpsa": ("feasible", 3.0, {"P": (2, 1)})}),
    "rho = 1 exactly": (_critical, {"mpsa-exact": ("infeasible", 0.0, {"P": (0, 0)})}),
    "rho = 1, verify": (_critical_verify, {"mpsa": ("infeasible", 6.0, {"P0": (5, 1)})}),
    "deadlines one ulp apart": (_deadline_ulp, {"mpsa": ("infeasible", 5.0, {"A": (3, 1), "B": (1, 0)})}),
}


@pytest.mark.parametrize("name", list(REGRESSIONS))
def test_regression_cases_keep_their_answer_at_every_scale(name):
    build, expected = REGRESSIONS[name]
    inst = build()
    for m in SCALES:
        scaled = rescale(inst, m)
        for method in METHODS:
            sol = mropt.solve(scaled, method)
            verdict = mropt.verify(scaled, sol)
            assert verdict.ok, (name, m, method, verdict.problems)
            if method in expected:
                assert answer(sol)[:3] == expected[method], (name, m, method)
            assert answer(sol) == answer(mropt.solve(inst, method)), (name, m, method)


@pytest.mark.parametrize("value", [0.1, 0.7, 3.0])
def test_constant_history_has_no_autocorrelation_at_any_scale(value):
    """In floating point (0.1, 0.1, 0.1) had rho(1) = 2/3, made of rounding noise, and 0 in other units."""
    for m in SCALES:
        series = [_times(value, m)] * 3
        assert lag1_autocorrelation(series) == 0.0 and ar1_forecast(series) == series[0], m


# -- the property ----------------------------------------------------------------------------

RATES = (0.0, 0.05, 0.1, 0.2, 0.25, 0.3, 0.5)
WORKS = (1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 20.0)


@st.composite
def instances(draw):
    """Small instances, feasible and not: random floats, or round numbers with exact ties.

    Round numbers give deadlines equal to the exact sojourn of some allocation (a tie
    with the target) and stations with rho = 1 exactly, the cases a unit change rounds
    to either side. A field is sometimes left to its history (AR(1) forecast, sec. 4.2).
    """
    big_m, big_r, n = draw(st.integers(1, 8)), draw(st.integers(1, 6)), draw(st.integers(1, 3))
    if draw(st.booleans()):
        mix = {p: draw(st.integers(0, 2)) for p in ("simple", "iterative", "chain")}
        mix["simple"] += sum(mix.values()) == 0
        shape = {"pattern_mix": mix, "iterations": draw(st.integers(1, 3))}
    else:
        q11 = draw(st.sampled_from([0.0, 0.5]))
        q12 = draw(st.sampled_from([0.0, 0.5, 1.0 - q11]))
        shape = {"routing": {"q11": q11, "q12": q12, "q21": draw(st.sampled_from([0.0, 0.5]))}}
    q = _routing(PriorityInstance(1, 1, (Priority("x", 1, arrival_rate=0, map_work=1, reduce_work=1),), **shape))
    ps = []
    for i in range(n):
        if draw(st.booleans()):
            lam = draw(
                st.sampled_from([0.0, 0.001, 0.01, 0.05])
                | st.floats(0.0, 0.1).map(lambda x: x if x == 0 or x >= 1e-9 else 0.0)
            )  # instance numbers: 0 or >= 1e-100
            values = {
                "arrival_rate": lam,
                "map_work": draw(st.floats(1.0, 40.0)),
                "reduce_work": draw(st.floats(1.0, 40.0)),
            }
            deadline = draw(st.floats(2.0, 200.0))
        else:
            values = {
                "arrival_rate": draw(st.sampled_from(RATES)),
                "map_work": draw(st.sampled_from(WORKS)),
                "reduce_work": draw(st.sampled_from(WORKS)),
            }
            x, y = draw(st.integers(1, big_m)), draw(st.integers(1, big_r))
            t = _sojourn(
                *q,
                Fraction(values["arrival_rate"]),
                Fraction(x) / Fraction(values["map_work"]),
                Fraction(y) / Fraction(values["reduce_work"]),
            )
            deadline = float(t) if t is not None else draw(st.sampled_from([10.0, 50.0, 100.0]))
        history = {}
        if draw(st.integers(0, 3)) == 0:
            key = draw(st.sampled_from(sorted(values)))
            base = values.pop(key) or 0.01
            history[key] = draw(
                st.lists(st.sampled_from([0.5, 1.0, 1.5, 2.0]), min_size=2, max_size=5).map(
                    lambda fs, b=base: [b * f for f in fs]
                )
            )
        ps.append(Priority(f"P{i}", deadline, history=history, **values))
    return PriorityInstance(big_m, big_r, tuple(ps), **shape)


def _tampered(inst: PriorityInstance, sol):
    """Solutions verify must reject: (what, solution) pairs."""
    out = [(f"objective {delta:+d}", dataclasses.replace(sol, objective=sol.objective + delta)) for delta in (-1, 1)]
    d = sol.decision
    for pid, entry in d["allocation"].items():
        if entry["sojourn"] is not None:
            allocation = {**d["allocation"], pid: {**entry, "sojourn": entry["sojourn"] * (1 + 1e-6)}}
            out.append(
                (f"sojourn of {pid} * (1 + 1e-6)", dataclasses.replace(sol, decision={**d, "allocation": allocation}))
            )
    # one slot fewer where that makes an on-time priority clearly late; everything else made consistent
    routing, load = routing_of(inst), planning_load(inst)
    for i, p in enumerate(inst.priorities):
        entry = d["allocation"][p.id]
        if p.id in d["infeasible"]:
            continue
        for station in ("map_slots", "reduce_slots"):
            if entry[station] == 0:
                continue
            fewer = {**entry, station: entry[station] - 1}
            t = priority_sojourn(
                routing,
                load.arrival_rate[i],
                load.map_work[i],
                load.reduce_work[i],
                fewer["map_slots"],
                fewer["reduce_slots"],
            )
            if not t > deadline_limit(p.deadline) * (1 + 1e-6):
                continue  # not tight there
            fewer["sojourn"] = t if math.isfinite(t) else None
            shared = {**d["shared"], station: d["shared"][station] + 1}
            decision = {**d, "allocation": {**d["allocation"], p.id: fewer}, "shared": shared}
            out.append(
                (
                    f"{p.id} one {station[:-6]} slot fewer (tight)",
                    dataclasses.replace(
                        sol,
                        decision=decision,
                        objective=sol.objective - 1,
                        bound=None if sol.bound is None else sol.bound - 1,
                    ),
                )
            )
    return out


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_answers_and_verdicts_do_not_depend_on_the_units(inst):
    reference = {method: answer(mropt.solve(inst, method)) for method in METHODS}
    for m in SCALES:
        scaled = rescale(inst, m)
        for method in METHODS:
            sol = mropt.solve(scaled, method)
            assert answer(sol) == reference[method], (m, method)
            verdict = mropt.verify(scaled, sol)
            assert verdict.ok, (m, method, verdict.problems)
            tampered = _tampered(scaled, sol)
            if sol.status == "optimal" and sol.objective > 0:
                assert any("fewer" in what for what, _ in tampered), (m, method)  # every optimal slot is tight
            for what, bad in tampered:
                assert not mropt.verify(scaled, bad).ok, (m, method, what)
