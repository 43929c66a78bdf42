"""Spread, significance and profiles of a gap study: pure functions on numbers and frames.

* :func:`bootstrap_mean_ci` -- percentile bootstrap interval of a mean, seeded: the same
  values, seed and key give the same interval on any machine (numpy's PCG64 generator);
* :func:`win_tie_loss` -- paired comparison of two methods over the same problems, a tie
  when the objectives agree within :data:`mropt.model.tolerance.OBJECTIVE_RTOL`;
* :func:`performance_profile` -- Dolan and More (2002), "Benchmarking optimization
  software with performance profiles", Math. Program. 91: the share of problems a method
  solves within a factor ``tau`` of the best method's cost, failures counting as never;
* :func:`gap_profile` -- the share of problems whose gap is at most ``x`` (a data profile);
* :func:`solve_curve` and :func:`par_k` -- time to solve counting the runs that did not
  solve: the share solved by time ``t`` (one minus the survival function of the solve
  time, unsolved runs censored at their limit) and the penalised average run time PAR-k
  (an unsolved run counts ``k`` times its time limit).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from mropt.model.tolerance import same_value

#: bootstrap resamples by default
RESAMPLES = 2000
#: a cost below this (seconds) counts as this: a timer's resolution, so that ratios stay finite
MIN_COST = 1e-6


def bootstrap_mean_ci(
    values: Sequence[float] | np.ndarray,
    *,
    seed: int = 0,
    key: str = "",
    resamples: int = RESAMPLES,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """The percentile bootstrap ``level`` interval of the mean of ``values`` (NaN dropped).

    ``resamples`` means of samples drawn with replacement, from
    ``numpy.random.default_rng([seed, crc32(key)])``: the interval depends only on the
    values, ``seed`` and ``key`` (a table names its cell, so adding a method changes no
    other method's interval). None with fewer than two values (no spread to resample).
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if len(v) < 2:
        return None
    rng = np.random.default_rng([int(seed), zlib.crc32(key.encode())])
    means = np.empty(resamples)
    chunk = max(1, 4_000_000 // len(v))  # bounded memory: at most ~32 MB of indices at a time
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        means[start:stop] = v[rng.integers(0, len(v), size=(stop - start, len(v)))].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def std(values: Sequence[float] | np.ndarray) -> float | None:
    """Sample standard deviation (ddof 1) of the finite values; None with fewer than two."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(np.std(v, ddof=1)) if len(v) >= 2 else None


# -- paired comparisons ---------------------------------------------------------------------
def _better(gap_a: float, obj_a: float, gap_b: float, obj_b: float) -> int:
    """+1 when a is better, -1 when b is, 0 for a tie; NaN gap = no plan (worse than any plan)."""
    has_a, has_b = not math.isnan(gap_a), not math.isnan(gap_b)
    if has_a and not has_b:
        return 1
    if has_b and not has_a:
        return -1
    if same_value(obj_a, obj_b):
        return 0
    return 1 if gap_a < gap_b else -1 if gap_b < gap_a else 0


def win_tie_loss(gaps: pd.DataFrame, objectives: pd.DataFrame, ran: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every pair of methods (columns) over the problems (rows) both were run on.

    ``gaps`` holds each method's gap on each problem (lower is better; NaN: no plan),
    ``objectives`` the objective values (for ties), ``ran`` whether the method was run on
    the problem (default: everywhere). Method a wins a problem when its gap is lower, b
    wins when b's is, and they tie when their objectives are equal within the relative
    tolerance of :mod:`mropt.model.tolerance` (``same_value``); a plan beats no plan.
    Problems where neither has a plan, or one was not run, are not counted. Columns
    ``method``, ``versus``, ``wins`` (of method), ``ties``, ``losses`` (wins of versus),
    ``compared``; one row per unordered pair, in column order.
    """
    methods = list(gaps.columns)
    objectives = objectives.reindex(index=gaps.index, columns=methods)
    ran = (
        ran.reindex(index=gaps.index, columns=methods).fillna(False).astype(bool)
        if ran is not None
        else pd.DataFrame(True, index=gaps.index, columns=methods)
    )
    rows = []
    for i, a in enumerate(methods):
        for b in methods[i + 1 :]:
            wins = ties = losses = 0
            for p in gaps.index:
                ga, gb = as_float(gaps.at[p, a]), as_float(gaps.at[p, b])
                if not (ran.at[p, a] and ran.at[p, b]) or (math.isnan(ga) and math.isnan(gb)):
                    continue
                r = _better(ga, as_float(objectives.at[p, a]), gb, as_float(objectives.at[p, b]))
                wins, ties, losses = wins + (r > 0), ties + (r == 0), losses + (r < 0)
            rows.append([a, b, wins, ties, losses, wins + ties + losses])
    return pd.DataFrame(rows, columns=["method", "versus", "wins", "ties", "losses", "compared"])


# -- profiles -------------------------------------------------------------------------------
def performance_profile(costs: pd.DataFrame) -> pd.DataFrame:
    """Dolan-More performance profile of ``costs`` (rows problems, columns methods).

    A cost is positive (a time), NaN or infinite where the method failed the problem. With
    ``r[p, s] = cost[p, s] / min_s cost[p, s]``, method s's profile is
    ``rho_s(tau) = |{p : r[p, s] <= tau}| / n_p`` over all ``n_p`` problems (those no method
    solved included, so a profile may end below 1). Returns its steps: columns
    ``method``, ``ratio`` (tau, from 1) and ``share`` (rho in [0, 1]), the first row of each
    method at ``ratio`` 1.
    """
    c = costs.astype(float).where(lambda x: np.isfinite(x) & (x >= 0))
    c = c.clip(lower=MIN_COST)
    best = c.min(axis=1, skipna=True)
    ratios = c.div(best, axis=0)
    n = len(c)
    rows = []
    for method in c.columns:
        r = np.sort(ratios[method].dropna().to_numpy())
        rows.append([method, 1.0, float(np.sum(r <= 1.0 + 1e-12)) / n if n else 0.0])
        for tau in np.unique(r[r > 1.0 + 1e-12]):
            rows.append([method, float(tau), float(np.sum(r <= tau)) / n])
    return pd.DataFrame(rows, columns=["method", "ratio", "share"])


def profile_at(profile: pd.DataFrame, method: str, tau: float) -> float:
    """The value of a step profile (``performance_profile``, ``gap_profile``) of ``method`` at ``tau``."""
    steps = profile[profile["method"] == method]
    x = steps.columns[1]
    below = steps[steps[x] <= tau]
    return float(below["share"].iloc[-1]) if len(below) else 0.0


def gap_profile(gaps: pd.DataFrame) -> pd.DataFrame:
    """Share of problems (rows) whose gap is at most x, per method (columns); NaN: no plan.

    Returns steps: columns ``method``, ``gap`` (x, from 0) and ``share``.
    """
    n = len(gaps)
    rows = []
    for method in gaps.columns:
        g = np.sort(gaps[method].dropna().to_numpy(dtype=float))
        g = np.maximum(g, 0.0)
        rows.append([method, 0.0, float(np.sum(g <= 0.0)) / n if n else 0.0])
        for x in np.unique(g[g > 0]):
            rows.append([method, float(x), float(np.sum(g <= x)) / n])
    return pd.DataFrame(rows, columns=["method", "gap", "share"])


# -- time to solve --------------------------------------------------------------------------
def solve_curve(times: Sequence[float] | np.ndarray, solved: Sequence[bool] | np.ndarray) -> pd.DataFrame:
    """Share of all runs solved by time t: steps at each solved run's time (``time``, ``share``).

    Unsolved runs (time limit, error) never count as solved, so the curve ends at the
    share solved, not at 1: the empirical distribution of the solve time with the
    unsolved runs censored (one minus the survival function).
    """
    t = np.asarray(times, dtype=float)
    ok = np.asarray(solved, dtype=bool) & np.isfinite(t)
    n = len(t)
    done = np.sort(t[ok])
    rows = [[float(x), float(np.sum(done <= x)) / n] for x in np.unique(done)]
    return pd.DataFrame(rows, columns=["time", "share"])


def par_k(
    times: Sequence[float] | np.ndarray,
    solved: Sequence[bool] | np.ndarray,
    limits: Sequence[float] | np.ndarray,
    k: float,
) -> float | None:
    """Penalised average run time: solved runs count their time, the others ``k`` x their time limit.

    A run without a time limit (NaN) counts ``k`` x its own time. None for no runs.
    """
    t = np.asarray(times, dtype=float)
    if not len(t):
        return None
    lim = np.asarray(limits, dtype=float)
    ok = np.asarray(solved, dtype=bool)
    penalty = k * np.where(np.isfinite(lim), lim, np.where(np.isfinite(t), t, 0.0))
    return float(np.mean(np.where(ok & np.isfinite(t), t, penalty)))


def paired(frame: pd.DataFrame, problem: Sequence[str], method: str, column: str) -> pd.DataFrame:
    """``frame[column]`` as a problems x methods table (the first row where a pair repeats)."""
    if frame.empty:
        return pd.DataFrame()
    first = frame.drop_duplicates([*problem, method])
    return first.pivot(index=list(problem), columns=method, values=column)


def as_float(x: Any) -> float:
    """``x`` as a float; NaN for None, pandas' NA and what is no number."""
    if x is None or x is pd.NA:
        return math.nan
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan
