"""The numerical guarantees of mropt, in one place (documented in ``docs/tolerances.md``).

Every comparison that decides a verdict is *relative*, so an answer never changes
when the data are expressed in other units (benefits times 10^k, times in another
unit): the problem is the same, so is the answer.

* :data:`TIME_RTOL` -- a job with deadline ``d >= 0`` is on time when its completion
  ``C`` satisfies ``C <= d * (1 + TIME_RTOL)`` (:func:`deadline_limit`). Every method
  compares float completion times with this limit; ``verify`` compares exact rational
  completion times with it. Float summation errs by about ``n * 2**-53`` relative, far
  below ``TIME_RTOL``, so the two agree except for a plan whose exact lateness lies
  within that rounding of the limit. Inflating every deadline by the same factor keeps
  their order and ties, so the theory (EDF, Horn's condition) applies unchanged to the
  limits.
* :data:`OBJECTIVE_RTOL` -- a method claims ``optimal`` only when its proven bound is
  at most ``objective + OBJECTIVE_RTOL * scale`` (:func:`within`), with ``scale`` the
  larger magnitude of the two; reports, gaps and ``verify`` compare objectives with the
  same relative tolerance (plus :data:`VALUE_ATOL_FACTOR` times the instance's total
  value, so a claimed 0 is checked against the data's own magnitude, never against a
  fixed 1e-6).
* :data:`CAPACITY_RTOL` -- a resource amount fits a capacity ``c >= 0`` when it is at
  most ``c * (1 + CAPACITY_RTOL)``.

Solvers see data normalised by a power of two (:func:`pow2_scale`), which is exact in
binary floating point, so a solver model is the same whatever the data's units.
"""

from __future__ import annotations

import math
from typing import TypeVar

import numpy as np

TIME_RTOL = 1e-9
OBJECTIVE_RTOL = 1e-9
CAPACITY_RTOL = 1e-9
VALUE_ATOL_FACTOR = 1e-12

_Num = TypeVar("_Num", float, np.ndarray)


def deadline_limit(deadline: _Num) -> _Num:
    """The latest on-time completion for ``deadline`` (>= 0): ``d * (1 + TIME_RTOL)``."""
    limit: _Num = deadline + TIME_RTOL * abs(deadline)
    return limit


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
