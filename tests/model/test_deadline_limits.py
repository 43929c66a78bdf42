"""The on-time limits of mropt.model.tolerance against exact arithmetic.

``deadline_limit(d)`` is the largest float at most ``d * (1 + 1e-9)``, and
``method_deadline_limit(d)`` the largest at most ``d * (1 + 1e-9 / 2)``, checked with
fractions. The point of the half: a completion time summed in floats and called on time
against the method limit meets the exact rule, as ``verify`` computes it.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mropt.model.tolerance import deadline_limit, method_deadline_limit

RULE = Fraction(1, 10**9)


def _is_floor(limit: float, d: float, rtol: Fraction) -> bool:
    exact = Fraction(d) + rtol * abs(Fraction(d))
    return Fraction(limit) <= exact < Fraction(math.nextafter(limit, math.inf))


deadlines = st.one_of(
    st.floats(min_value=0, max_value=1e300, allow_nan=False),
    st.integers(min_value=0, max_value=10**15).map(float),
    st.sampled_from([0.0, 5e-324, 1e-300, 1.0, 106.0, 105.999999894, 1e9, 2e9, 2.0**53, 1.7e9]),
)


@settings(max_examples=300, deadline=None)
@given(deadlines)
def test_limits_are_the_exact_values_rounded_down(d: float) -> None:
    assert _is_floor(deadline_limit(d), d, RULE)
    assert _is_floor(method_deadline_limit(d), d, RULE / 2)
    arr = np.array([d, d])
    assert deadline_limit(arr).tolist() == [deadline_limit(d)] * 2
    assert method_deadline_limit(arr).tolist() == [method_deadline_limit(d)] * 2


def test_the_case_of_the_issue() -> None:
    d = 105.999999894
    assert d + 1e-9 * d == 106.0  # the old float limit: rounded up past the exact one
    assert deadline_limit(d) < 106.0 and method_deadline_limit(d) < 106.0
    assert deadline_limit(0.0) == 0.0 and deadline_limit(np.array([np.inf])).tolist() == [np.inf]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(min_value=1e-3, max_value=1e6, allow_nan=False), min_size=1, max_size=200),
    st.integers(min_value=-3, max_value=3),
)
def test_a_float_sum_on_time_for_the_methods_is_on_time_exactly(phases: list[float], ulps: int) -> None:
    """Deadline chosen so the float sum sits at the method limit (give or take a few ulps)."""
    total = 0.0
    for x in phases:  # the methods' prefix sums
        total += x
    d = total / (1 + 0.5e-9)
    for _ in range(abs(ulps)):
        d = math.nextafter(d, math.inf if ulps > 0 else -math.inf)
    if total <= method_deadline_limit(d):
        assert sum(map(Fraction, phases)) <= Fraction(d) * (1 + RULE)
