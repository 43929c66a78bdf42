"""Test-only brute force for SEQ admission: every subset, every map order.

Written plainly and independently of the exact methods: a subset is acceptable when
some permutation of it is a valid SEQ sequence (AMB Definition 2), checked with
:func:`mropt.admission.seq.evaluate`. Exponential: for instances of up to 8 jobs.
"""

from __future__ import annotations

import itertools

import numpy as np

from mropt.admission.seq import evaluate
from mropt.model.admission import AdmissionInstance


def valid_order(instance: AdmissionInstance, subset: tuple[int, ...]) -> tuple[int, ...] | None:
    for perm in itertools.permutations(subset):
        s = evaluate(instance.tcm, instance.tcr, instance.deadlines, np.array(perm, dtype=np.intp), instance.submit_times)
        if s.valid:
            return perm
    return None


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
