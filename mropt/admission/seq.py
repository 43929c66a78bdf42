"""SEQ evaluation: completion times of a map order under the SEQ strategy (AMB sec. 4.1).

Given a sequence S (Definition 1: the order in which the jobs' map phases complete),
the SEQ strategy gives every free map slot to the first job of S, so the map
completion times are prefix sums, ``COTm(j_i) = sum_{k<=i} TCm(j_k)`` (Theorem 1).
Reduce slots go to the job of earliest deadline whose maps are done; the paper
computes ``COTr`` by taking jobs in deadline order, each filling the earliest
unoccupied time from its own ``COTm``. That is preemptive EDF on one machine (the
whole reduce stage, rate 1) with release times ``COTm``, which :func:`reduce_completion_times`
simulates with a heap in O(n log n). Equal deadlines are served in map order (the
paper leaves the tie open; validity does not depend on it, the COTr values do).

Jobs with a ``submit_time`` cannot start their maps before it (a release time); the
paper's static part has every job submitted at time 0, where this changes nothing.

A sequence is valid (Definition 2) when every job finishes by its deadline;
Theorems 1-2 show that a set has a valid sequence exactly when some order is
feasible for any strategy. A job is on time when its float ``COTr`` is at most
:func:`mropt.model.tolerance.method_deadline_limit`, ``deadline * (1 + TIME_RTOL / 2)``
rounded down: the verdict does not depend on the unit of time, and the other half of
``TIME_RTOL`` covers the float rounding of the prefix sums (about ``n * 2**-53``
relative), so a job called on time here meets ``COTr <= deadline * (1 + TIME_RTOL)``
exactly, as ``verify`` checks it (docs/tolerances.md states the guarantee).

The hot path of every admission method works on numpy arrays indexed like the
instance's jobs; :func:`evaluate` takes an order of indices into those arrays.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from mropt.model.tolerance import method_deadline_limit


@dataclass(frozen=True)
class SeqSchedule:
    """Completion times of one order: arrays aligned with ``order`` (position k = k-th map)."""

    order: np.ndarray
    cotm: np.ndarray
    cotr: np.ndarray
    deadlines: np.ndarray
    limits: np.ndarray | None = None  # method_deadline_limit(deadlines), when the caller has them

    @property
    def on_time(self) -> np.ndarray:
        """Boolean per position: COTr <= method_deadline_limit(deadline) (module docstring)."""
        limits = method_deadline_limit(self.deadlines) if self.limits is None else self.limits
        return self.cotr <= limits

    @property
    def valid(self) -> bool:
        """Definition 2: every job of the order meets its deadline."""
        return bool(self.on_time.all())


def map_completion_times(tcm_in_order: np.ndarray, release_in_order: np.ndarray | None = None) -> np.ndarray:
    """COTm along the order: prefix sums of TCm (sec. 4.1, step 1; Theorem 1).

    With release times (``submit_time``), a job's maps cannot start before it is
    submitted: ``COTm_i = max(COTm_{i-1}, r_i) + TCm_i``, computed in closed form as
    ``P_i + max_{k<=i}(r_k - P_{k-1})`` with ``P`` the prefix sums. With every
    release at 0 this is the paper's prefix sum.
    """
    tcm = np.asarray(tcm_in_order, dtype=float)
    prefix = np.cumsum(tcm)
    if release_in_order is None:
        return prefix
    slack = np.asarray(release_in_order, dtype=float) - (prefix - tcm)
    return prefix + np.maximum(np.maximum.accumulate(slack), 0.0)


def reduce_completion_times(
    cotm: np.ndarray,
    tcr: np.ndarray,
    deadlines: np.ndarray,
    *,
    backlog: list[tuple[np.ndarray, np.ndarray]] | None = None,
) -> np.ndarray:
    """COTr of jobs released at ``cotm`` (non-decreasing) under preemptive EDF (sec. 4.1, step 2).

    All three arrays are in map order. Ties in deadline go to the earlier map.
    O(n log n): each job enters the heap once, and is re-pushed at most once per
    later release that preempts it.

    If ``backlog`` is a list, it receives, after each release k, the unfinished reduce
    work at time ``cotm[k]`` (job k included) as (map positions, remaining work) arrays:
    the state :class:`mropt.admission.insertion.InsertionOracle` prepares from.
    """
    n = len(cotm)
    cotr = np.empty(n, dtype=float)
    heap: list[tuple[float, int, float]] = []  # (deadline, map position, remaining reduce time)
    now = 0.0
    for k in range(n + 1):
        release = cotm[k] if k < n else np.inf
        while heap and now < release:
            deadline, pos, remaining = heapq.heappop(heap)
            if now + remaining <= release:
                now += remaining
                cotr[pos] = now
            else:
                heapq.heappush(heap, (deadline, pos, remaining - (release - now)))
                now = release
        if k == n:
            break
        now = max(now, release)
        if tcr[k] > 0:
            heapq.heappush(heap, (deadlines[k], k, float(tcr[k])))
        else:
            cotr[k] = release  # map-only job: done when its maps are
        if backlog is not None:
            backlog.append(
                (
                    np.fromiter((e[1] for e in heap), np.intp, len(heap)),
                    np.fromiter((e[2] for e in heap), float, len(heap)),
                )
            )
    return cotr


def evaluate(
    tcm: np.ndarray,
    tcr: np.ndarray,
    deadlines: np.ndarray,
    order: np.ndarray,
    release: np.ndarray | None = None,
    limits: np.ndarray | None = None,
) -> SeqSchedule:
    """Evaluate a map order (indices into the per-job arrays) under SEQ.

    ``release`` (per job, optional) holds submit times; see :func:`map_completion_times`.
    ``limits`` (per job, optional) are the on-time limits of the deadlines, when the
    caller holds them (``AdmissionInstance.deadline_limits``): they spare recomputing them.
    """
    order = np.asarray(order, dtype=np.intp)
    d = np.asarray(deadlines, dtype=float)[order]
    r = None if release is None else np.asarray(release, dtype=float)[order]
    cotm = map_completion_times(np.asarray(tcm, dtype=float)[order], r)
    cotr = reduce_completion_times(cotm, np.asarray(tcr, dtype=float)[order], d)
    lim = None if limits is None else np.asarray(limits, dtype=float)[order]
    return SeqSchedule(order=order, cotm=cotm, cotr=cotr, deadlines=d, limits=lim)
