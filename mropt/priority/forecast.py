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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mropt.model.priority import SERIES, PriorityInstance


def lag1_autocorrelation(series: Sequence[float]) -> float:
    """rho(1) of eq. 15 (sigma^2 = the variance); 0 for a constant series."""
    x = np.asarray(series, dtype=float)
    if x.size < 2:
        return 0.0
    dev = x - x.mean()
    denominator = float(np.dot(dev, dev))
    if denominator <= 0.0:
        return 0.0
    return float(np.dot(dev[:-1], dev[1:]) / denominator)


def ar1_forecast(series: Sequence[float]) -> float:
    """The next value of ``series`` by eq. 14 with e = 0."""
    x = np.asarray(series, dtype=float)
    if x.size == 0:
        raise ValueError("AR(1) forecast needs at least one value")
    mean = float(x.mean())
    return mean + lag1_autocorrelation(x) * (float(x[-1]) - mean)


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
    values = {key: [] for key in SERIES}
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
                elif not value > 0:
                    value = min(series)
                used.append(key)
            values[key].append(float(value))
        forecast.append(tuple(used))
    arrays = {k: np.array(v, dtype=float) for k, v in values.items()}
    for arr in arrays.values():
        arr.setflags(write=False)
    return PlanningLoad(arrays["arrival_rate"], arrays["map_work"], arrays["reduce_work"], tuple(forecast))
