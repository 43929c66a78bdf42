"""Series the simulation report draws, computed from an output folder's tables alone.

``mropt report DIR`` (:mod:`mropt.harness.sim_report`) has ``jobs.parquet``, ``tasks.parquet``
(with ``demand_<name>`` per resource on a cluster of resources), ``utilisation.parquet`` and
``summary.json`` (with the resources' totals), not the run: every series here is rebuilt from
them, exactly where it is a step function.

* :func:`readable_bin` -- a bin width for a run of a given length: a round 1-2-5 second, minute
  or hour width giving at most ``max_bins`` bins (a day in 5-minute bins: 288 -> 10 min, 144);
* :func:`bin_means` -- the time average of a step function over each bin (the exact integral:
  a utilisation resampled this way keeps its mean);
* :func:`held_integrals` -- per group (a user, a pool), the integral of the amount its attempts
  held up to each edge (an attempt holds its amount over [start, end), :mod:`mropt.sim.capacity`),
  in O(attempts + groups x edges);
* :func:`jain_index` -- Jain's fairness index (Jain, Chiu, Hawe 1984), (sum x)^2 / (n sum x^2):
  1 when every share is equal, 1/n when one of n holds everything;
* :func:`dominant_share_bins` -- per user and bin, the dominant share (DDRF paper sec. 3.1,
  ``max_k u_k / R_k``) of the user's mean holding over the bin, and per bin Jain's index over the
  users with work in the system (a job accepted, submitted before the bin ends and not finished
  before it starts): a user kept waiting with nothing counts 0 (:mod:`mropt.sim.shares` instead
  samples instants and counts only the users holding something);
* :func:`spans_decades` -- whether positive values span two decades or more (a CDF of them is
  drawn on a log axis).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

#: round widths (seconds) a time bin may take
_WIDTHS = tuple(
    [1.0, 2.0, 5.0, 10.0, 15.0, 30.0]
    + [60.0 * m for m in (1, 2, 5, 10, 15, 30)]
    + [3600.0 * h for h in (1, 2, 3, 6, 12, 24)]
)


def readable_bin(horizon: float, max_bins: int = 200) -> float:
    """The smallest round width (:data:`_WIDTHS`, then whole days) giving at most ``max_bins`` bins on [0, horizon]."""
    for width in _WIDTHS:
        if horizon / width <= max_bins:
            return width
    return 86400.0 * math.ceil(horizon / (86400.0 * max_bins))


def width_text(width: float) -> str:
    """A bin width in words: ``30 s``, ``10 min``, ``2 h``."""
    if width >= 3600 and width % 3600 == 0:
        return f"{width / 3600:g} h"
    if width >= 60 and width % 60 == 0:
        return f"{width / 60:g} min"
    return f"{width:g} s"


def time_scale(horizon: float) -> tuple[float, str]:
    """Divisor and axis label of a time axis of length ``horizon`` seconds: s, min (over 20 min) or h (over 3 h)."""
    if horizon > 3 * 3600:
        return 3600.0, "time (h)"
    if horizon > 20 * 60:
        return 60.0, "time (min)"
    return 1.0, "time (s)"


def bin_edges(horizon: float, width: float) -> np.ndarray:
    """Edges 0, width, ... covering [0, horizon] (at least one bin)."""
    n = max(1, math.ceil(horizon / width - 1e-9))
    return np.arange(n + 1) * width


def bin_means(times: np.ndarray, values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Time average over each bin of the step function worth ``values[i]`` on [times[i], times[i+1]).

    0 before ``times[0]``; the last value holds to the last edge. ``times`` ascending.
    """
    t = np.asarray(times, dtype=float)
    v = np.asarray(values, dtype=float)
    if not len(t):
        return np.zeros(len(edges) - 1)
    cum = np.concatenate([[0.0], np.cumsum(v[:-1] * np.diff(t))])  # integral from t[0] to t[i]
    k = np.searchsorted(t, edges, side="right") - 1
    inside = k >= 0
    integral = np.zeros(len(edges))
    kk = k[inside]
    integral[inside] = cum[kk] + v[kk] * (edges[inside] - t[kk])
    return np.diff(integral) / np.diff(edges)


def held_integrals(
    group: np.ndarray, start: np.ndarray, end: np.ndarray, amount: np.ndarray, n_groups: int, edges: np.ndarray
) -> np.ndarray:
    """``(n_groups, len(edges))``: the integral over [0, edge] of the amount group g's attempts held.

    An attempt holding ``a`` over [s, e) adds ``a (x - s)`` for x > s and takes back ``a (x - e)``
    for x > e; summed as ``x A(x) - B(x)`` with A, B prefix sums over the edges.
    """
    n_edges = len(edges)
    a_sum = np.zeros((n_groups, n_edges + 1))
    b_sum = np.zeros((n_groups, n_edges + 1))
    for times, sign in ((start, 1.0), (end, -1.0)):
        at = np.searchsorted(edges, times, side="right")  # the first edge after the time
        np.add.at(a_sum, (group, at), sign * amount)
        np.add.at(b_sum, (group, at), sign * amount * times)
    a_cum = np.cumsum(a_sum, axis=1)[:, :n_edges]
    b_cum = np.cumsum(b_sum, axis=1)[:, :n_edges]
    return edges[None, :] * a_cum - b_cum


def jain_index(shares: Sequence[float] | np.ndarray) -> float:
    """Jain's index of ``shares``: (sum x)^2 / (n sum x^2); NaN for no shares or all of them 0."""
    x = np.asarray(shares, dtype=float)
    squares = float(np.dot(x, x))
    if not len(x) or squares <= 0:
        return math.nan
    return float(x.sum()) ** 2 / (len(x) * squares)


def dominant_share_bins(
    tasks: pd.DataFrame, jobs: pd.DataFrame, totals: dict[str, float], edges: np.ndarray
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``(users, shares, jain)``: ``shares[u, j]`` user u's dominant share in bin j, ``jain[j]`` (module docstring).

    ``totals``: each resource's total (summary.json's ``resources``); ``tasks`` carries
    ``demand_<name>`` for each. ``jain[j]`` is NaN where no user has work or none holds anything.
    """
    users = sorted({str(u) for u in jobs["user"]})
    index = {u: k for k, u in enumerate(users)}
    user_of = dict(zip(jobs["job_id"].astype(str), (index[str(u)] for u in jobs["user"]), strict=True))
    group = tasks["job_id"].astype(str).map(user_of).to_numpy(dtype=np.int64)
    start, end = tasks["start"].to_numpy(float), tasks["end"].to_numpy(float)
    width = np.diff(edges)
    shares = np.zeros((len(users), len(width)))
    for name, total in totals.items():
        column = f"demand_{name}"
        if total <= 0 or column not in tasks:
            continue
        held = held_integrals(group, start, end, tasks[column].to_numpy(float) / total, len(users), edges)
        np.maximum(shares, np.diff(held, axis=1) / width, out=shares)
    shares[shares < 1e-12] = 0.0
    accepted = jobs["accepted"].to_numpy(bool)
    submit = jobs["submit_time"].to_numpy(float)
    finish = pd.to_numeric(jobs["finish"], errors="coerce").to_numpy(float)
    gone = np.where(np.isnan(finish), np.inf, finish)
    active = np.zeros_like(shares, dtype=bool)
    owner = np.array([index[str(u)] for u in jobs["user"]], dtype=np.int64)
    for k in np.flatnonzero(accepted):
        active[owner[k], (submit[k] < edges[1:]) & (gone[k] > edges[:-1])] = True
    active |= shares > 0
    jain = np.array([jain_index(shares[active[:, j], j]) for j in range(len(width))])
    return users, shares, jain


def spans_decades(values: np.ndarray, decades: float = 2.0) -> bool:
    """Whether the positive ``values`` span ``decades`` or more (max / min >= 10 ** decades)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    return bool(len(v) > 1 and v.max() / v.min() >= 10.0**decades)
