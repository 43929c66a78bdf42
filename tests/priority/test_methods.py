"""``mpsa`` (Algorithm 1) and ``mpsa-exact`` (eq. 17): hand checks and properties."""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mropt
from mropt.instances.priority_gen import generate_priority
from mropt.model.errors import InputError
from mropt.model.priority import Priority, PriorityInstance
from mropt.priority.verify import verify

SIMPLE = {"q11": 0.0, "q12": 1.0, "q21": 0.0}  # every job: one map visit, one reduce visit (a = b = 1)


def _slots(sol):
    return {k: (v["map_slots"], v["reduce_slots"]) for k, v in sol.decision["allocation"].items()}


def test_one_allocation_by_hand():
    """M = 10, R = 5 (k = 1/2), no queueing (lambda = 0): T = 100/x + 50/y <= 45.

    mpsa: x = 4 gives y = ceil(4/2) = 2 and T = 25 + 25 = 50 > 45; x = 5 gives y = 3 and
    T = 20 + 16.67 = 36.67: 8 slots. Exact: (4, 3) gives 25 + 16.67 = 41.67 and (5, 2)
    gives 20 + 25 = 45, both 7 slots; nothing with 6 works ((3, 3): 50; (4, 2): 50;
    (2, 4) 62.5); the DP breaks the tie towards fewer map slots: (4, 3).
    """
    inst = PriorityInstance(10, 5, (Priority("P", 45, arrival_rate=0, map_work=100, reduce_work=50),), routing=SIMPLE)
    heur = mropt.solve(inst, "mpsa")
    assert heur.status == "feasible" and _slots(heur) == {"P": (5, 3)} and heur.objective == 8
    assert heur.decision["allocation"]["P"]["sojourn"] == pytest.approx(20 + 50 / 3)
    assert heur.decision["shared"] == {"map_slots": 5, "reduce_slots": 2}
    exact = mropt.solve(inst, "mpsa-exact")
    assert exact.status == "optimal" and _slots(exact) == {"P": (4, 3)} and exact.objective == exact.bound == 7
    assert exact.decision["allocation"]["P"]["sojourn"] == pytest.approx(25 + 50 / 3)
    for sol in (heur, exact):
        assert verify(inst, sol).ok


def test_paper_setting_mpsa_against_exact():
    inst = generate_priority(arrival_rate=0.0005)  # Table 2 at 0.03 jobs/min per priority
    heur, exact = mropt.solve(inst, "mpsa"), mropt.solve(inst, "mpsa-exact")
    assert _slots(heur) == {"T1": (47, 24), "T2": (27, 14), "T3": (17, 9)} and heur.objective == 138
    assert exact.status == "optimal" and exact.objective == 135
    assert heur.decision["a"] == pytest.approx(7 / 3) and heur.decision["b"] == pytest.approx(5 / 3)
    assert heur.details["order"] == ["T1", "T2", "T3"]
    assert all(n <= math.ceil(math.log2(101)) for n in heur.details["evaluations"].values())


def test_infeasible_priority_takes_the_rest_and_later_ones_get_nothing():
    """Bounded Algorithm 1: a priority that cannot meet its deadline keeps mapMax = mapIdle."""
    ps = (
        Priority("tight", 5, arrival_rate=0, map_work=100, reduce_work=50),  # needs > 10 map slots
        Priority("easy", 100, arrival_rate=0, map_work=100, reduce_work=50),
    )
    inst = PriorityInstance(10, 5, ps, routing=SIMPLE)
    heur = mropt.solve(inst, "mpsa")
    assert heur.status == "infeasible"
    assert _slots(heur) == {"tight": (10, 5), "easy": (0, 0)}
    assert heur.decision["infeasible"] == ["tight", "easy"]
    assert heur.decision["allocation"]["easy"]["sojourn"] is None
    exact = mropt.solve(inst, "mpsa-exact")
    assert exact.status == "infeasible" and "tight" in exact.decision["infeasible"]
    assert exact.details["worst_ratio"] > 1
    for sol in (heur, exact):
        assert verify(inst, sol).ok, verify(inst, sol).problems


def test_parameters():
    inst = PriorityInstance(10, 5, (Priority("P", 45, arrival_rate=0, map_work=100, reduce_work=50),), routing=SIMPLE)
    loose = mropt.solve(inst, "mpsa", threshold=100.0)  # the first feasible probe ends the search
    assert loose.status == "feasible" and loose.objective >= 8
    with pytest.raises(InputError, match="'order'"):
        mropt.solve(inst, "mpsa", order="random")
    with pytest.raises(InputError, match="threshold"):
        mropt.solve(inst, "mpsa", threshold=-1)
    names = {m.name for m in mropt.methods("priority")}
    assert {"mpsa", "mpsa-exact"} <= names


def test_verify_rejects_tampered_solutions():
    inst = PriorityInstance(10, 5, (Priority("P", 45, arrival_rate=0, map_work=100, reduce_work=50),), routing=SIMPLE)
    good = mropt.solve(inst, "mpsa-exact")

    def tamper(**changes):
        decision = {**good.decision, **changes}
        return dataclasses.replace(good, decision=decision)

    too_few = tamper(allocation={"P": {"map_slots": 3, "reduce_slots": 3, "sojourn": 50.0}})
    assert not verify(inst, too_few).ok
    too_many = tamper(allocation={"P": {"map_slots": 11, "reduce_slots": 3, "sojourn": 100 / 11 + 50 / 3}})
    assert any("S_map" in p for p in verify(inst, too_many).problems)
    assert not verify(inst, tamper(a=2.0)).ok
    assert not verify(inst, tamper(shared={"map_slots": 0, "reduce_slots": 0})).ok
    assert not verify(inst, tamper(infeasible=["P"])).ok
    assert not verify(inst, dataclasses.replace(good, objective=6.0)).ok


# -- properties ---------------------------------------------------------------------------


@st.composite
def instances(draw, max_map=12, max_reduce=8, max_n=3):
    m = draw(st.integers(1, max_map))
    r = draw(st.integers(1, max_reduce))
    n = draw(st.integers(1, max_n))
    if draw(st.booleans()):
        mix = {p: draw(st.integers(0, 3)) for p in ("simple", "iterative", "chain")}
        if sum(mix.values()) == 0:
            mix["simple"] = 1
        extra = {"pattern_mix": mix, "iterations": draw(st.integers(1, 4))}
    else:
        q11 = draw(st.sampled_from([0.0, 0.1, 0.3]))
        q12 = draw(st.sampled_from([0.0, 0.5, 1.0 - q11]))
        extra = {"routing": {"q11": q11, "q12": q12, "q21": draw(st.sampled_from([0.0, 0.4, 0.8]))}}
    ps = tuple(
        Priority(
            f"P{i}",
            deadline=draw(st.floats(2.0, 200.0)),
            arrival_rate=draw(st.sampled_from([0.0, 0.001, 0.01, 0.05])),
            map_work=draw(st.floats(1.0, 40.0)),
            reduce_work=draw(st.floats(1.0, 40.0)),
        )
        for i in range(n)
    )
    return PriorityInstance(m, r, ps, **extra)


def _brute_force(inst):
    """Least total slots over every integer allocation meeting all deadlines; None if none."""
    from fractions import Fraction

    from mropt.priority.verify import _routing, _sojourn, _value  # exact arithmetic, independent of the methods

    q11, q12, q21 = _routing(inst)
    best = None
    options = []
    for p in inst.priorities:
        ok = []
        for x, y in itertools.product(range(inst.map_slots + 1), range(inst.reduce_slots + 1)):
            t = _sojourn(
                q11,
                q12,
                q21,
                _value(p, "arrival_rate"),
                Fraction(x) / _value(p, "map_work"),
                Fraction(y) / _value(p, "reduce_work"),
            )
            if t is not None and t <= Fraction(p.deadline) * (1 + Fraction(1, 10**9)):
                ok.append((x, y))
        options.append(ok)
    for choice in itertools.product(*options):
        if sum(c[0] for c in choice) <= inst.map_slots and sum(c[1] for c in choice) <= inst.reduce_slots:
            total = sum(c[0] + c[1] for c in choice)
            best = total if best is None else min(best, total)
    return best


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(instances())
def test_every_allocation_verifies_and_exact_never_uses_more(inst):
    heur, exact = mropt.solve(inst, "mpsa"), mropt.solve(inst, "mpsa-exact")
    for sol in (heur, exact):
        assert sol.status != "error", sol.details
        verdict = mropt.verify(inst, sol)
        assert verdict.ok, (sol.method, verdict.problems)
    if heur.status == "feasible":
        assert exact.status == "optimal" and exact.objective <= heur.objective
    if exact.status == "infeasible":
        assert heur.status == "infeasible"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_map=5, max_reduce=4, max_n=2))
def test_exact_equals_brute_force(inst):
    exact = mropt.solve(inst, "mpsa-exact")
    best = _brute_force(inst)
    if best is None:
        assert exact.status == "infeasible"
    else:
        assert exact.status == "optimal" and exact.objective == best


@SETTINGS
@given(instances(), st.floats(1.0, 4.0), st.sampled_from(["arrival_rate", "map_work", "reduce_work"]))
def test_more_load_never_needs_fewer_slots(inst, factor, key):
    heavier = dataclasses.replace(
        inst, priorities=tuple(dataclasses.replace(p, **{key: getattr(p, key) * factor}) for p in inst.priorities)
    )
    for method in ("mpsa", "mpsa-exact"):
        light, heavy = mropt.solve(inst, method), mropt.solve(heavier, method)
        if heavy.status in ("feasible", "optimal"):
            assert light.status in ("feasible", "optimal")
            assert light.objective <= heavy.objective
