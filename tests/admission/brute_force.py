"""Test-only brute force for SEQ admission: every subset, every map order.

Written plainly and independently of the exact methods, of
:mod:`mropt.admission.seq` and of ``verify``: a subset is acceptable when some
permutation of it is a valid SEQ sequence (AMB Definition 2). Validity is checked
with Horn's condition for the preemptive-EDF reduce stage, evaluated for all
permutations of a subset at once in exact arithmetic: numpy int64 for integer data,
exact fractions of the floats otherwise, against the methods' on-time limit
``d * (1 + 1e-9 / 2)`` of docs/tolerances.md (the same as ``d`` for integers below 10**9;
the methods round it down to a float, which changes a verdict only for a completion within
one ulp of the limit).

Horn's condition along a map order (positions k = 0..n-1, ``P_k`` = map completion
of position k, nondecreasing): for every position k and every deadline value D,
``P_k + sum of TCr over positions i >= k with d_i <= D  <=  D`` whenever position k
holds a job with deadline <= D (other release points are dominated).
Exponential: for instances of up to 7 jobs.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from mropt.model.admission import AdmissionInstance


def _exact(values: np.ndarray) -> np.ndarray:
    """int64 when every value is an integer (fast, exact), else exact fractions (object array)."""
    values = np.asarray(values, dtype=float)
    if np.all(values == np.round(values)) and np.all(np.abs(values) < 2**52):
        return values.astype(np.int64)
    return np.array([Fraction(v) for v in values], dtype=object)


def _limits(deadlines: np.ndarray) -> np.ndarray:
    """The methods' on-time limits ``d * (1 + 1e-9 / 2)``, exactly; integer deadlines below 10**9 keep d."""
    d = _exact(deadlines)
    if d.dtype == np.int64 and np.all(d < 10**9):
        return d
    return np.array([Fraction(x) * (1 + Fraction(1, 2 * 10**9)) for x in np.asarray(deadlines, float)], dtype=object)


def _valid_perms(a: np.ndarray, b: np.ndarray, d: np.ndarray, r: np.ndarray, subset: tuple[int, ...]) -> np.ndarray:
    """Boolean per permutation of ``subset`` (in itertools order): is the order valid?"""
    perms = np.array(list(itertools.permutations(subset)), dtype=np.intp).reshape(-1, len(subset))
    pa, pb, pd, pr = a[perms], b[perms], d[perms], r[perms]
    clock = np.zeros(len(perms), dtype=pa.dtype if pa.dtype == np.int64 else object)
    P = np.empty_like(pa)
    for k in range(len(subset)):  # maps: one at a time, each after its job's release
        clock = np.maximum(clock, pr[:, k]) + pa[:, k]
        P[:, k] = clock
    ok = np.ones(len(perms), dtype=bool)
    for D in sorted(set(d[list(subset)].tolist())):
        member = pd <= D
        work = np.where(member, pb, 0)
        suffix = np.cumsum(work[:, ::-1], axis=1)[:, ::-1]  # work at positions >= k
        ok &= np.all(~member | (P + suffix <= D), axis=1)
    return ok


def valid_order(instance: AdmissionInstance, subset: tuple[int, ...]) -> tuple[int, ...] | None:
    """One valid map order of ``subset`` (job indices), or None when none exists."""
    if not subset:
        return ()
    a, b = _exact(instance.tcm), _exact(instance.tcr)
    d, r = _limits(instance.deadlines), _exact(instance.submit_times)
    ok = _valid_perms(a, b, d, r, subset)
    if not ok.any():
        return None
    return next(itertools.islice(itertools.permutations(subset), int(np.argmax(ok)), None))


def feasible_sets(instance: AdmissionInstance) -> dict[tuple[int, ...], bool]:
    """Every subset (sorted tuple of indices) -> has a valid order."""
    n = instance.n
    return {s: valid_order(instance, s) is not None for k in range(n + 1) for s in itertools.combinations(range(n), k)}


def brute_force(instance: AdmissionInstance) -> tuple[float, tuple[int, ...]]:
    """(optimum of eq. 1 over valid plans, one optimal map order)."""
    n = instance.n
    subsets = [s for k in range(1, n + 1) for s in itertools.combinations(range(n), k)]
    subsets.sort(key=lambda s: -float(instance.benefits[list(s)].sum()))
    for subset in subsets:  # best value first: the first acceptable subset is optimal
        order = valid_order(instance, subset)
        if order is not None:
            return float(instance.benefits[list(subset)].sum()), order
    return 0.0, ()


def optimal_sets(instance: AdmissionInstance) -> tuple[float, list[tuple[int, ...]]]:
    """(optimum, every feasible subset reaching it): to tell unique optima from ties."""
    feas = feasible_sets(instance)
    value = {s: float(instance.benefits[list(s)].sum()) for s, ok in feas.items() if ok}
    best = max(value.values())
    return best, [s for s, v in value.items() if v == best]
