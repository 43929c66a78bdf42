"""Locality analysis (DDRF sec. 3.2, 4.2): golden values, Table 2 with errata, Monte Carlo vs exact."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mropt.fairness.figures import fig1, fig3, table2
from mropt.fairness.locality import (
    ddrf_locality_bound,
    ddrf_locality_exact,
    ddrf_max_wait,
    delay_locality_bound,
    delay_locality_exact,
    level_probabilities,
    min_delay,
    min_delay_exact,
    min_e2,
    monte_carlo,
)
from mropt.model import InputError


def test_delay_bound_golden():
    # sec. 3.2: lambda = 0.95, N = 20, R = 3 gives D >= 0.23 M
    for m in (100, 500, 1000):
        assert min_delay(0.95, 20, 3, m) / m == pytest.approx(0.231, abs=5e-4)
    assert round(min_delay(0.95, 20, 3, 100), 1) == 23.1
    # at that D the paper's bound is exactly lambda and the exact locality is above it
    d = min_delay(0.95, 20, 3, 100)
    assert delay_locality_bound(d, 20, 3, 100) == pytest.approx(0.95)
    assert delay_locality_exact(math.ceil(d), 20, 3, 100) >= 0.95
    # the wait D T / (L M) with L = 8 slots is under 2.9% of a task length (paper: 2.8%)
    assert d / (8 * 100) == pytest.approx(0.0289, abs=1e-4)


def test_exact_delay_is_at_least_the_bound():
    for d in (1, 5, 10, 23, 50):
        assert delay_locality_exact(d, 20, 3, 100) >= delay_locality_bound(d, 20, 3, 100) - 1e-12
    assert min_delay_exact(0.95, 20, 3, 100) <= math.ceil(min_delay(0.95, 20, 3, 100))


def test_table2_with_errata():
    rows = table2()
    assert [r["E1"] for r in rows] == [10, 20, 30, 40, 50, 60]
    assert [round(100 * r["computed"], 1) for r in rows] == [40.1, 64.2, 78.5, 87.1, 92.3, 95.4]
    assert [r["printed"] for r in rows] == [0.40, 0.65, 0.79, 0.87, 0.93, 0.98]


def test_paper_bound_can_exceed_one_exact_cannot():
    b = ddrf_locality_bound(6, 40, 20, 3, 100, 0.05)
    assert b["L"] == pytest.approx(b["L_E1"] + b["L_E2"]) and b["L"] > 1
    x = ddrf_locality_exact(6, 40, 20, 3, 100, 5, 0.05)
    assert 0 <= x["L"] <= 1 and x["node"] + x["rack"] + x["any"] == pytest.approx(1)


def test_delay_scheduling_is_ddrf_with_e1_equal_e2():
    for d in (1, 7, 30):
        x = ddrf_locality_exact(d, d, 20, 3, 100, 5, 0.3)
        assert x["rack"] == 0 and x["node"] == pytest.approx(delay_locality_exact(d, 20, 3, 100))


def test_level_probabilities_monotone_in_e2():
    prev = 0.0
    for e2 in range(4, 60, 5):
        node, rack, other = level_probabilities(3, 4, e2, 3, 100, 5)
        assert node + rack >= prev - 1e-12
        prev = node + rack
    with pytest.raises(InputError, match="E1 <= E2"):
        level_probabilities(3, 5, 4, 3, 100, 5)


def test_min_e2_and_figures():
    assert min_e2(0.99, 20, 20, 3, 1000, 20, 0.05, kind="bound") is not None
    f3 = fig3(e1s=(10, 50))
    assert f3["bound"][0] > f3["bound"][1]  # Fig. 3: E2 - E1 falls as E1 grows
    f1 = fig1(e1s=(2, 6), e2_max=60)
    for s in f1["series"]:
        assert all(a <= b + 1e-12 for a, b in zip(s["exact"], s["exact"][1:]))
    assert ddrf_max_wait(10, 1.0, 8, 8, 100) == pytest.approx(10 * 16 / (2 * 64 * 100))


@settings(max_examples=8, deadline=None)
@given(
    e1=st.integers(0, 12),
    extra=st.integers(0, 15),
    n=st.integers(2, 10),
    r=st.integers(1, 3),
    g=st.sampled_from([2, 4, 5]),
    theta=st.sampled_from([0.05, 0.5]),
    seed=st.integers(0, 2**16),
)
def test_monte_carlo_agrees_with_exact(e1, extra, n, r, g, theta, seed):
    m = 60
    e2 = max(1, e1 + extra)
    exact = ddrf_locality_exact(e1, e2, n, r, m, g, theta)
    mc = monte_carlo(e1, e2, n, r, m, g, theta, trials=1500, seed=seed)
    # half_width is the 95% interval (1.96 sigma); 2 half-widths ~ 3.9 sigma keeps a seeded,
    # hypothesis-driven test from failing by chance (about 1 in 10^4 per example)
    assert abs(mc.L - exact["L"]) <= 2 * mc.half_width + 1e-9, (mc, exact)


def test_monte_carlo_is_seeded():
    a = monte_carlo(3, 8, 10, 3, 60, 5, 0.5, trials=200, seed=7)
    b = monte_carlo(3, 8, 10, 3, 60, 5, 0.5, trials=200, seed=7)
    assert a == b
    with pytest.raises(InputError, match="distinct racks"):
        monte_carlo(3, 8, 20, 3, 100, 20, 0.5, trials=10)
