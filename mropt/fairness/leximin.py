"""The cumulative-sum leximin loop of drf-lp and drf-cpsat (:mod:`mropt.fairness.exact`).

Ogryczak and Sliwinski (2006): the sorted vector of weighted dominant shares is
leximin-optimal iff the sums ``S_k`` of its k smallest entries are lexicographically
largest (DDRF sec. 3.1's leximin). :func:`_leximin` maximises ``S_1``, fixes it, then
``S_2``, ... over a small back-end protocol (:class:`_LeximinModel`), implemented for
PuLP/CBC's LP (:class:`mropt.fairness.exact._PulpLeximin`) and CP-SAT
(:class:`mropt.fairness.leximin_cpsat._CpsatLeximin`), whose integer data make the fixed
levels exact. drf-milp, which must fix levels from floats, proves them as integer task
thresholds instead (:mod:`mropt.fairness.levels`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from mropt.model.fairness import FairnessInstance


def _remaining(stop_at: float | None) -> float | None:
    return None if stop_at is None else max(0.01, stop_at - time.perf_counter())


def _upper_bounds(instance: FairnessInstance) -> np.ndarray:
    return instance.task_bound()


def _levels(y: np.ndarray) -> np.ndarray:
    """Cumulative sums ``S_k`` of the sorted shares (``S_k``: sum of the k smallest)."""
    return np.cumsum(np.sort(y))


Values = tuple[np.ndarray, np.ndarray | None]  # (tasks per user, tasks per user and node or None)


@dataclass
class LevelResult:
    """One level's solve. ``outcome``: ``proven`` (values and their level ``S_k``),
    ``unproven`` (stopped with a feasible solution: ``values`` if usable), ``unusable``
    (proven, but its solution breaks a capacity or an earlier level), ``timeout`` or
    ``error``."""

    outcome: str
    values: Values | None = None
    level: float = 0.0
    message: str = ""


class _LeximinModel(Protocol):
    """What :func:`_leximin` needs from a solver back end."""

    def add_level(self, k: int) -> Any:
        """Add ``r_k`` and ``d_k`` and return the expression ``S_k = k r_k - sum_i d_ki``."""

    def maximise(self, k: int, s_k: Any, stop_at: float | None, levels: list[float]) -> LevelResult:
        """Maximise ``S_k`` under the levels fixed so far (``levels``: their values)."""

    def fix(self, s_k: Any, level: float, values: Values) -> None:
        """Add ``S_k >= level`` (and whatever the back end carries to the next level)."""


def _leximin(model: _LeximinModel, n: int, stop_at: float | None) -> tuple[str, Values | None, list[float], int, str]:
    """The cumulative-sum leximin loop (module docstring): (status, values, levels, solves, message)."""
    status, solves, message = "optimal", 0, ""
    levels: list[float] = []
    values: Values | None = None
    for k in range(1, n + 1):
        s_k = model.add_level(k)
        res = model.maximise(k, s_k, stop_at, levels)
        if res.outcome == "error":
            status, message = "error", res.message
            break
        solves += 1
        if res.outcome == "timeout":
            status, message = "time_limit", res.message
            break
        if res.outcome == "unproven":
            values = res.values if res.values is not None else values  # feasible, this level not proven
            status, message = "time_limit", res.message
            break
        if res.outcome == "unusable":
            status, message = ("feasible" if values is not None else "error"), res.message
            break
        values = res.values
        levels.append(res.level)
        assert values is not None
        model.fix(s_k, res.level, values)
        if stop_at is not None and time.perf_counter() >= stop_at and k < n:
            status, message = "time_limit", f"stopped after level {k} of {n}"
            break
    return status, values, levels, solves, message
