"""The numerical guarantees of mropt, in one place (documented in ``docs/tolerances.md``).

Every comparison that decides a verdict is *relative*, so an answer never changes
when the data are expressed in other units (benefits times 10^k, times in another
unit): the problem is the same, so is the answer.

* :data:`TIME_RTOL` -- a job with deadline ``d >= 0`` is on time when its completion
  ``C`` satisfies ``C <= d * (1 + TIME_RTOL)``, exactly (the rule; ``verify`` applies it
  to exact rational completion times). :func:`deadline_limit` is that limit rounded down
  to a float, so a float ``C`` passes ``C <= deadline_limit(d)`` exactly when it meets
  the rule (the simulator's recorded finish times). A method's completion times carry
  float summation error, so methods test them against :func:`method_deadline_limit`, the
  limit with half the tolerance (:data:`METHOD_TIME_RTOL`), also rounded down: the other
  half absorbs the rounding of the sums (about ``k * 2**-53`` relative after ``k``
  operations), so no method calls on time a job ``verify`` finds late. Inflating every
  deadline by the same factor keeps their order and ties, so the theory (EDF, Horn's
  condition) applies unchanged to the limits.
* :data:`OBJECTIVE_RTOL` -- a method claims ``optimal`` only when its proven bound is
  at most ``objective + OBJECTIVE_RTOL * scale`` (:func:`within`), with ``scale`` the
  larger magnitude of the two; reports, gaps and ``verify`` compare objectives with the
  same relative tolerance (plus :data:`VALUE_ATOL_FACTOR` times the instance's total
  value, so a claimed 0 is checked against the data's own magnitude, never against a
  fixed 1e-6).
* :data:`CAPACITY_RTOL` -- a resource amount fits a capacity ``c >= 0`` when it is at
  most ``c * (1 + CAPACITY_RTOL)``.

Solvers see data normalised by a power of two (:func:`pow2_scale`), which is exact in
binary floating point: the numbers a solver reads keep their digits, and are the same
when the data's units change by a power of two. A change by any other factor (10, 1e-3)
leaves them a factor in [1, 2) apart, which a solver's tolerances and tie-breaking can see;
where the model must be the same in any units, divide by one of the data's own values
instead (drf-milp's guide, :mod:`mropt.fairness.levels`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TypeVar

import numpy as np

TIME_RTOL = 1e-9
OBJECTIVE_RTOL = 1e-9
CAPACITY_RTOL = 1e-9
VALUE_ATOL_FACTOR = 1e-12
_TIME_RTOL_EXACT = Fraction(repr(TIME_RTOL))  # 1/10**9 exactly, the decimal value verify writes down

_Num = TypeVar("_Num", float, np.ndarray)


#: the tolerance the methods test their float completion times with: half of TIME_RTOL
METHOD_TIME_RTOL = TIME_RTOL / 2

_U = 2.0**-53  # unit roundoff of binary64


def _rounded_down(value: _Num, rtol: Fraction) -> _Num:
    """The largest float at most ``v + rtol * |v|`` (exactly), for each finite ``v``.

    The float sum ``L = v + r|v|`` lies within one ulp of the exact value, so the answer
    is ``L`` or the float below it (``L = v`` needs no test). ``L - v`` is exact
    (Sterbenz: ``L`` and ``v`` are within a factor 2), and ``L <= v + rtol |v|`` is decided by comparing
    ``(L - v) * q`` with ``p |v|`` (``rtol = p / q``) in floats where they differ by more
    than their rounding, and in exact fractions otherwise (rare: near exact ties).
    Non-finite values are returned unchanged.
    """
    p, q = rtol.numerator, rtol.denominator
    if isinstance(value, np.ndarray):
        v = np.asarray(value, dtype=float)
        with np.errstate(invalid="ignore", over="ignore"):
            limit = v + float(rtol) * np.abs(v)
            excess, room = (limit - v) * q, p * np.abs(v)
            above = excess > room * (1 + 4 * _U)
            near = np.isfinite(limit) & (limit != v) & ~above & (excess >= room * (1 - 4 * _U))
        for i in np.flatnonzero(near):
            x = float(v.flat[i])
            above.flat[i] = Fraction(float(limit.flat[i])) > Fraction(x) + rtol * abs(Fraction(x))
        out: np.ndarray = np.where(above & np.isfinite(limit), np.nextafter(limit, -np.inf), limit)
        return out
    x = float(value)
    lim = x + float(rtol) * abs(x)
    if lim == x or not math.isfinite(lim):
        return lim
    excess, room = (lim - x) * q, p * abs(x)
    if excess > room * (1 + 4 * _U) or (
        excess >= room * (1 - 4 * _U) and Fraction(lim) > Fraction(x) + rtol * abs(Fraction(x))
    ):
        lim = math.nextafter(lim, -math.inf)
    return lim


def deadline_limit(deadline: _Num) -> _Num:
    """The latest on-time completion for ``deadline``: ``d * (1 + TIME_RTOL)`` rounded down to a float.

    A float completion ``C`` meets the rule ``C <= d * (1 + TIME_RTOL)`` (exact) exactly
    when ``C <= deadline_limit(d)``. For a completion that is itself rounded, see
    :func:`method_deadline_limit`.
    """
    return _rounded_down(deadline, _TIME_RTOL_EXACT)


def method_deadline_limit(deadline: _Num) -> _Num:
    """The limit a method tests its float completion times with: ``d * (1 + TIME_RTOL / 2)`` rounded down.

    A completion computed with ``k`` float operations errs by about ``k * 2**-53``
    relative; while that is below ``TIME_RTOL / 2`` (``k`` up to about 4 million), a job
    a method calls on time (``C_float <= method_deadline_limit(d)``) meets the rule in
    exact arithmetic, where ``verify`` checks it (docs/tolerances.md).
    """
    return _rounded_down(deadline, _TIME_RTOL_EXACT / 2)


def capacity_limit(capacity: _Num) -> _Num:
    """The most of a resource that fits ``capacity`` (>= 0): ``c * (1 + CAPACITY_RTOL)``."""
    limit: _Num = capacity + CAPACITY_RTOL * abs(capacity)
    return limit


def within(value: float, bound: float, *, atol: float = 0.0) -> bool:
    """True when ``bound`` exceeds ``value`` by at most the relative objective tolerance.

    ``atol`` is an absolute floor derived from the data (never a fixed constant).
    """
    return bound - value <= OBJECTIVE_RTOL * max(abs(value), abs(bound)) + atol


def same_value(a: float, b: float, *, atol: float = 0.0) -> bool:
    """Two objective values equal within :data:`OBJECTIVE_RTOL` (and ``atol``)."""
    return math.isclose(a, b, rel_tol=OBJECTIVE_RTOL, abs_tol=atol)


def pow2_scale(magnitude: float) -> float:
    """The power of two ``2**-e`` that maps ``magnitude`` (> 0) into [1, 2); 1.0 for 0.

    Dividing by a power of two is exact in binary floating point (barring underflow),
    so normalising data with it changes no digit of any value.
    """
    if not magnitude > 0 or not math.isfinite(magnitude):
        return 1.0
    _, e = math.frexp(magnitude)  # magnitude = m * 2**e, 0.5 <= m < 1
    return math.ldexp(1.0, 1 - e)


def integer_grid(values: list[float] | np.ndarray, bits: int) -> tuple[float, bool]:
    """A power-of-two scale ``s`` putting the largest ``|value|`` in [2**(bits-1), 2**bits).

    For solvers that need integers (CP-SAT): ``value * s`` is then rounded. Returns
    ``(s, exact)`` with ``exact`` true when every ``value * s`` is already an integer
    (integer data, or data on a binary grid, stay exact: no rounding at all).
    """
    arr = np.abs(np.asarray(values, dtype=float))
    top = float(arr.max()) if arr.size else 0.0
    s = math.ldexp(pow2_scale(top), bits - 1) if top > 0 else 1.0
    scaled = arr * s
    return s, bool(np.all(scaled == np.round(scaled)))
