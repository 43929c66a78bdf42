"""AR(1) forecast of arrival rate and workload (MPSA sec. 4.2, eqs. 14-15).

Eq. 14: a^_{n+1} = mean + rho(1) (a_n - mean) (white noise e set to 0, as the paper does).
Eq. 15: rho(1) = E[(a_i - mean)(a_{i+1} - mean)] / sigma^2, where sigma^2 is the
*variance* of the series (the paper says standard deviation; see the errata). Both
moments are the usual sample moments over the n values (the Box-Jenkins lag-1
autocorrelation)::

    rho(1) = sum_{i=1}^{n-1} (a_i - mean)(a_{i+1} - mean) / sum_{i=1}^{n} (a_i - mean)^2

so |rho(1)| <= 1. A constant series has no variance; rho(1) is then 0 and the forecast
is the mean. The planning values used by the allocation methods are the explicit
fields of each priority where given, else the forecast of its history; a rate forecast
below 0 is raised to 0 and a workload forecast that is not positive is replaced by the
smallest observed workload (the model needs positive work).

Arithmetic and tolerance (``docs/tolerances.md``): the moments are computed exactly
(:class:`fractions.Fraction` of the given floats) and the forecast rounded once, so it
is the correctly rounded value of eq. 14, and a series rescaled by 10^m (another time
unit) forecasts the rescaled value. In floating point, a constant series such as
(0.1, 0.1, 0.1) has a mean that is off by a rounding error, hence tiny deviations and a
rho(1) made of rounding noise that changes with the unit. "Not positive" is relative:
a workload forecast at most TIME_RTOL times the series' largest value counts as not
positive (:func:`workload_floor`), so the test does not depend on the unit either.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from mropt.model.priority import SERIES, PriorityInstance
from mropt.model.tolerance import TIME_RTOL


def _moments(series: Sequence[float]) -> tuple[Fraction, Fraction]:
    """(mean, rho(1)) of eqs. 14-15 in exact arithmetic; rho(1) = 0 without variance."""
    x = [Fraction(float(v)) for v in series]
    if not x:
        raise ValueError("AR(1) forecast needs at least one value")
    mean = sum(x, Fraction(0)) / len(x)
    dev = [v - mean for v in x]
    variance = sum((d * d for d in dev), Fraction(0))
    if variance == 0:
        return mean, Fraction(0)
    return mean, sum((dev[i] * dev[i + 1] for i in range(len(dev) - 1)), Fraction(0)) / variance


def _forecast(series: Sequence[float]) -> Fraction:
    mean, rho = _moments(series)
    return mean + rho * (Fraction(float(series[-1])) - mean)


def lag1_autocorrelation(series: Sequence[float]) -> float:
    """rho(1) of eq. 15 (sigma^2 = the variance); 0 for a constant series (or a single value)."""
    if len(series) < 2:
        return 0.0
    return float(_moments(series)[1])


def ar1_forecast(series: Sequence[float]) -> float:
    """The next value of ``series`` by eq. 14 with e = 0 (correctly rounded)."""
    return float(_forecast(series))


def workload_floor(series: Sequence[float]) -> float:
    """The largest workload forecast still treated as not positive: TIME_RTOL * max(series)."""
    return TIME_RTOL * max(abs(float(v)) for v in series)


@dataclass(frozen=True)
class PlanningLoad:
    """Per priority (indexed like ``instance.priorities``): lambda_i, map and reduce work per visit.

    ``forecast`` names, per priority, the fields that came from the AR(1) forecast.
    """

    arrival_rate: np.ndarray
    map_work: np.ndarray
    reduce_work: np.ndarray
    forecast: tuple[tuple[str, ...], ...]


def planning_load(instance: PriorityInstance) -> PlanningLoad:
    """Explicit values where given, else the AR(1) forecast of the history (sec. 4.2)."""
    values: dict[str, list[float]] = {key: [] for key in SERIES}
    forecast: list[tuple[str, ...]] = []
    for p in instance.priorities:
        used: list[str] = []
        for key in SERIES:
            value = getattr(p, key)
            if value is None:
                series = p.history[key]
                value = ar1_forecast(series)
                if key == "arrival_rate":
                    value = max(0.0, value)
                elif not value > workload_floor(series):
                    value = min(series)
                used.append(key)
            values[key].append(float(value))
        forecast.append(tuple(used))
    arrays = {k: np.array(v, dtype=float) for k, v in values.items()}
    for arr in arrays.values():
        arr.setflags(write=False)
    return PlanningLoad(arrays["arrival_rate"], arrays["map_work"], arrays["reduce_work"], tuple(forecast))
