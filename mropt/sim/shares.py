"""Dominant shares over time, from a finished run (DDRF paper sec. 3.1).

A user's dominant share at time t is ``max_k u_k(t) / R_k`` (DDRF paper sec. 3.1): ``u_k(t)``
is resource k held at t by the attempts of the user's jobs (an attempt holds its demand over
``[start, end)``), ``R_k`` the cluster's total of resource k over every node (as the
``drf`` policy counts it). Computed from the recorded attempts alone
(:meth:`mropt.sim.recorder.Recorder.spans`), so it measures any policy the same way:
``drf`` and ``ddrf`` as much as ``fair``, which does not look at resources at all.

:func:`dominant_shares` samples every ``step`` seconds from 0 to the run's end; at each
sample it gives the users holding anything (``users``), the largest dominant share
(``max_share``), their mean (``mean_share``), Jain's index of their dominant shares
(``jain``: 1 when equal), and the cluster's use of each resource (``use_<name>``, a
fraction of ``R_k``). Workloads of slots only have no resources: every share is 0 there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from mropt.model.errors import InputError
from mropt.model.workload import WorkloadInstance


def cluster_totals(workload: WorkloadInstance, resources: Sequence[str]) -> np.ndarray:
    """``R_k``: the total of each resource over every node of the workload's cluster."""
    return np.array(
        [sum(spec.resources.get(r, 0.0) * spec.count for spec in workload.nodes) for r in resources], dtype=float
    )


def dominant_shares(sim: Any, step: float) -> dict[str, np.ndarray]:
    """The series of the module docstring for the finished simulation ``sim`` (an engine ``Simulation``)."""
    if not (math.isfinite(step) and step > 0):
        raise InputError(f"dominant shares: 'step' must be > 0, got {step!r}")
    spans = sim.record.spans()
    end_time = float(sim.now)
    n_bins = int(math.floor(end_time / step)) + 1
    times = np.arange(n_bins) * step
    totals = cluster_totals(sim.workload, sim.resources)
    users: dict[str, int] = {}
    user_of_job = np.array([users.setdefault(j.user, len(users)) for j in sim.jobs], dtype=np.int64)
    n_users = max(len(users), 1)
    out: dict[str, np.ndarray] = {"time": times}
    n_res = len(totals)
    if len(spans["start"]) == 0 or n_res == 0:
        zeros = np.zeros(n_bins)
        out.update(users=np.zeros(n_bins, dtype=np.int64), max_share=zeros, mean_share=zeros, jain=zeros)
        return out
    # the samples in [start, end): bins ceil(start / step) .. ceil(end / step) - 1
    first = np.ceil(spans["start"] / step).astype(np.int64)
    last = np.ceil(spans["end"] / step).astype(np.int64)  # exclusive
    keep = first < last
    user = user_of_job[spans["job"][keep]]
    first, last = first[keep], np.minimum(last[keep], n_bins)
    held = spans["demand"][keep] * spans["count"][keep, None] / np.where(totals > 0, totals, 1.0)
    # per user and bin, the fraction of each resource held: a difference array summed over bins
    share = np.zeros((n_users, n_bins))
    use = np.zeros((n_res, n_bins + 1))
    for k in range(n_res):
        diff = np.zeros((n_users, n_bins + 1))
        np.add.at(diff, (user, first), held[:, k])
        np.add.at(diff, (user, last), -held[:, k])
        frac = np.cumsum(diff, axis=1)[:, :n_bins]
        np.maximum(share, frac, out=share)
        np.add.at(use[k], first, held[:, k])
        np.add.at(use[k], last, -held[:, k])
    share[share < 1e-12] = 0.0  # what cumulative sums leave of a released share
    holding = share > 0
    count = holding.sum(axis=0)
    total = share.sum(axis=0)
    squares = (share * share).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["users"] = count.astype(np.int64)
        out["max_share"] = share.max(axis=0)
        out["mean_share"] = np.where(count > 0, total / np.maximum(count, 1), 0.0)
        out["jain"] = np.where(count > 0, total * total / (np.maximum(count, 1) * squares), 0.0)
    for k, name in enumerate(sim.resources):
        out[f"use_{name}"] = np.maximum(np.cumsum(use[k])[:n_bins], 0.0)
    return out


__all__ = ["cluster_totals", "dominant_shares"]
