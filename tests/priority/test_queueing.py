"""Golden tests of MPSA sec. 3 (Table 1, eqs. 2, 8, 12-13) and sec. 4.2 (eqs. 14-15)."""

from __future__ import annotations

import math

import pytest

from mropt.model.priority import Priority, PriorityInstance
from mropt.priority.forecast import ar1_forecast, lag1_autocorrelation, planning_load
from mropt.priority.queueing import (
    Routing,
    mm1_mean_number,
    mm1_sojourn,
    mm1_state_probability,
    network_sojourn,
    priority_sojourn,
    routing_from_pattern_mix,
    routing_of,
    sojourn_table,
    traffic_rates,
)

THIRDS = {"simple": 1, "iterative": 1, "chain": 1}


def test_table1_routing_from_pattern_mix():
    r = routing_from_pattern_mix(THIRDS, 3)
    assert r.q12 == 5 / 7 and r.q11 == 1 / 7 and r.q21 == 3 / 5
    assert r.q10 == pytest.approx(1 / 7, abs=1e-15) and r.q20 == pytest.approx(2 / 5, abs=1e-15)
    assert r.a == pytest.approx(7 / 3, rel=1e-14) and r.b == pytest.approx(5 / 3, rel=1e-14)


def test_single_patterns():
    simple = routing_from_pattern_mix({"simple": 1}, 3)
    assert (simple.q11, simple.q12, simple.q21, simple.a, simple.b) == (0, 1, 0, 1, 1)
    it = routing_from_pattern_mix({"iterative": 1}, 4)  # 4 map and 4 reduce visits
    assert it.a == pytest.approx(4) and it.b == pytest.approx(4)
    chain = routing_from_pattern_mix({"chain": 2}, 3)  # map, map, reduce, map
    assert chain.a == pytest.approx(3) and chain.b == pytest.approx(1)


def test_traffic_equations_with_errata():
    r = routing_from_pattern_mix(THIRDS, 3)
    lam = 0.003
    l1, l2, l3, l4 = traffic_rates(r, lam)
    assert l1 == pytest.approx(7 / 3 * lam) and l4 == pytest.approx(5 / 3 * lam)
    assert l1 == pytest.approx(lam + l2 + l3)  # eq. 1, first line
    assert l3 == pytest.approx(l4 * r.q21)  # the errata: lambda3 = lambda4 * q21


def test_mm1_formulas():
    assert mm1_sojourn(1.0, 3.0) == 0.5  # eq. 8
    assert mm1_mean_number(1.0, 3.0) == pytest.approx(0.5)  # eq. 7
    assert mm1_state_probability(1.0, 4.0, 2) == pytest.approx(0.75 * 0.0625)  # eq. 6
    assert mm1_sojourn(3.0, 3.0) == math.inf and mm1_mean_number(3.0, 2.0) == math.inf


def test_network_sojourn_matches_eq10_system():
    r = Routing(q11=0.1, q12=0.6, q21=0.5)
    lam, mu1, mu2 = 0.01, 0.2, 0.1
    tq1 = 1 / (mu1 - r.a * lam)
    tq2 = 1 / (mu2 - r.b * lam)
    # eq. 10: T1 = Tq1 + q11 T1 + q12 T2 ; T2 = Tq2 + q21 T1
    t1 = (tq1 + r.q12 * tq2) / (1 - r.q11 - r.q12 * r.q21)
    assert network_sojourn(r, lam, mu1, mu2) == pytest.approx(t1, rel=1e-12)
    assert network_sojourn(r, lam, r.a * lam, mu2) == math.inf


def test_paper_allocation_by_hand():
    """T1 of the Table 2 setting at 0.03 jobs/min: 47 map and 24 reduce slots give 350 + 232.56 s."""
    r = routing_from_pattern_mix(THIRDS, 3)
    lam = 0.0005
    t = priority_sojourn(r, lam, 6000, 3000, 47, 24)
    # a / (47/6000 - 7/3 * 0.0005) = (7/3) / (1/150) = 350 ; b / (24/3000 - 5/3 * 0.0005) = (5/3) / (0.0071667)
    assert t == pytest.approx(350 + (5 / 3) / (0.008 - 0.0005 * 5 / 3), rel=1e-12)
    assert t == pytest.approx(582.5581395, rel=1e-9)
    assert priority_sojourn(r, lam, 6000, 3000, 46, 23) > 600  # one map slot fewer misses 600 s


def test_sojourn_table_agrees_bit_for_bit():
    r = routing_from_pattern_mix(THIRDS, 3)
    table = sojourn_table(r, 0.0005, 6000, 3000, 60, 30)
    for x, y in [(47, 24), (3, 1), (60, 30), (0, 5), (20, 0)]:
        assert table[x, y] == priority_sojourn(r, 0.0005, 6000, 3000, x, y)


def test_ar1_hand_computed():
    # mean 2.5; deviations -1.5 -0.5 0.5 1.5; lag-1 products 0.75 - 0.25 + 0.75 = 1.25; sum of squares 5
    assert lag1_autocorrelation([1, 2, 3, 4]) == pytest.approx(0.25)
    assert ar1_forecast([1, 2, 3, 4]) == pytest.approx(2.5 + 0.25 * 1.5)  # 2.875 (eq. 14)
    # mean 4; deviations 2 -2 2 -2; products -4 -4 -4 = -12; sum of squares 16: rho = -0.75
    assert ar1_forecast([6, 2, 6, 2]) == pytest.approx(4 - 0.75 * -2)  # 5.5
    assert ar1_forecast([3, 3, 3]) == 3  # no variance: the mean


def test_planning_load_uses_history_only_where_a_field_is_missing():
    p1 = Priority("A", 100, map_work=10, reduce_work=5, history={"arrival_rate": [0.1, 0.2, 0.3, 0.4]})
    p2 = Priority("B", 100, arrival_rate=0.5, map_work=10, reduce_work=5, history={"arrival_rate": [1.0, 2.0]})
    p3 = Priority("C", 100, arrival_rate=0.0, reduce_work=5, history={"map_work": [10.0, 1.0, 10.0, 1.0]})
    inst = PriorityInstance(100, 50, (p1, p2, p3), pattern_mix=THIRDS)
    load = planning_load(inst)
    assert load.arrival_rate[0] == pytest.approx(0.2875) and load.forecast[0] == ("arrival_rate",)
    assert load.arrival_rate[1] == 0.5 and load.forecast[1] == ()
    # map_work forecast 5.5 - 0.75 * (1 - 5.5) = 8.875
    assert load.map_work[2] == pytest.approx(8.875)
    assert routing_of(inst).a == pytest.approx(7 / 3)
