"""Admission priority of the AMB paper: STC, benefit ratio Br, adjustment Ad, Score.

AMB sec. 4.2 (static part), eqs. 2-3 and Example 1:

* ``STC(j) = TCm(j) * M/(M+R) + TCr(j) * R/(M+R)`` (system time cost; ``instance.stc``);
* ``Br(j) = benefit(j) / STC(j)`` (benefit per second of the whole cluster);
* ``Ad(j)``, eq. 3: with ``mean_m(j)`` / ``mean_r(j)`` the mean TCm / TCr of the *other*
  jobs of the candidate set J, a phase is "too long" when it exceeds ``beta`` times that
  mean; each too-long phase adds ``(TC - mean) / TC`` weighted by its slot share, so
  the four cases of eq. 3 are the sum of the two optional terms plus 1;
* ``Score(j) = benefit(j) / (STC(j) * Ad(j))`` (eq. 2).

With a candidate set of one job there are no "other" jobs; Ad is then 1 (no penalty).

Tie-breaking (the paper leaves it open): jobs are sorted by descending Score relative
to the largest Score of the candidate set, rounded to 9 decimals (so float noise
between mathematically equal scores does not decide, and the order is the same in
any unit of benefit or time), then by earlier deadline, then by position in the
instance's job list.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mropt.model.admission import AdmissionInstance

#: Relative scores (Score / max Score) are rounded to this many decimals before sorting.
SCORE_DECIMALS = 9


def _subset(instance: AdmissionInstance, jobs: Sequence[int] | np.ndarray | None) -> np.ndarray:
    if jobs is None:
        return np.arange(instance.n, dtype=np.intp)
    return np.asarray(jobs, dtype=np.intp)


def benefit_ratio(instance: AdmissionInstance, jobs: Sequence[int] | None = None) -> np.ndarray:
    """Br = benefit / STC (AMB sec. 4.2, item (1) before eq. 2), for ``jobs`` (default all)."""
    idx = _subset(instance, jobs)
    return instance.benefits[idx] / instance.stc[idx]


def adjustment(tcm: np.ndarray, tcr: np.ndarray, map_slots: int, reduce_slots: int, beta: float) -> np.ndarray:
    """Ad of eq. 3 (AMB sec. 4.2) for every job of the candidate set given by ``tcm``, ``tcr``.

    The mean of the other jobs is ``(total - own) / (|J| - 1)``; a set of one job gets Ad = 1.
    """
    tcm = np.asarray(tcm, dtype=float)
    tcr = np.asarray(tcr, dtype=float)
    n = len(tcm)
    if n <= 1:
        return np.ones(n)
    mean_m = (tcm.sum() - tcm) / (n - 1)
    mean_r = (tcr.sum() - tcr) / (n - 1)
    wm = map_slots / (map_slots + reduce_slots)
    wr = reduce_slots / (map_slots + reduce_slots)
    long_m = tcm > mean_m * beta  # eq. 3 case conditions
    long_r = tcr > mean_r * beta
    ad = np.ones(n)
    # a too-long phase has TC > beta * mean >= 0, so the division is safe where used
    with np.errstate(divide="ignore", invalid="ignore"):
        ad += np.where(long_m, (tcm - mean_m) / tcm * wm, 0.0)
        ad += np.where(long_r, (tcr - mean_r) / tcr * wr, 0.0)
    return ad


def scores(instance: AdmissionInstance, jobs: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
    """Score of eq. 2 for ``jobs`` (default all), with ``jobs`` as the candidate set J of eq. 3."""
    idx = _subset(instance, jobs)
    ad = adjustment(
        instance.tcm[idx], instance.tcr[idx], instance.cluster.map_slots, instance.cluster.reduce_slots, instance.beta
    )
    return instance.benefits[idx] / (instance.stc[idx] * ad)


def adjusted_time(instance: AdmissionInstance, jobs: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
    """STC * Ad, the "adjusted time" of Example 1 (j5 of Table 1: about 713)."""
    idx = _subset(instance, jobs)
    ad = adjustment(
        instance.tcm[idx], instance.tcr[idx], instance.cluster.map_slots, instance.cluster.reduce_slots, instance.beta
    )
    return instance.stc[idx] * ad


def score_order(instance: AdmissionInstance, jobs: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
    """Job indices sorted for admission (Algorithm 1 lines 01-02): descending Score, ties as documented."""
    idx = _subset(instance, jobs)
    raw = scores(instance, idx)
    top = float(np.max(np.abs(raw))) if len(raw) else 0.0
    s = np.round(raw / top, SCORE_DECIMALS) if top > 0 else raw
    keys = np.lexsort((idx, instance.deadlines[idx], -s))
    return idx[keys]
