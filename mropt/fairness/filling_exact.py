"""Continuous DRF without nodes in exact fractions: progressive filling (DDRF sec. 3.1).

With real task counts and no nodes, the allocations form the polytope
``{x : 0 <= x_i <= b_i, sum_i D_ij x_i <= r_j}``, closed downwards, and its leximin
allocation of weighted dominant shares is the max-min fair one that progressive filling
reaches (Bertsekas and Gallager, *Data Networks*, 2nd ed., 1992, sec. 6.5.2, for rates on links;
the DRF paper's progressive filling, DDRF sec. 3.1, for tasks): every unfrozen user's
weighted share ``y_i = c_i x_i`` rises at the same pace; a user freezes when it reaches its
cap ``b_i`` or when a resource it asks for is full. Between two such events every load is
linear in the common level, so each event is one division, exact in fractions.

``drf-lp`` checks its LP answer against this one (:func:`lp_certificate`): it claims
``optimal`` only when CBC's sorted shares are, within its tolerance, not lexicographically
below these. With nodes (tasks split across nodes) no such filling is at hand, and the check
is only a necessary condition: every user who can hold a share holds one (in a continuous
leximin nobody who could get a sliver is left at 0).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from mropt.fairness.drf import progressive_filling
from mropt.fairness.levels import _q, share_coefficients
from mropt.model.errors import InputError
from mropt.model.fairness import FairnessInstance


def continuous_leximin(instance: FairnessInstance) -> list[Fraction]:
    """The exact leximin task counts of the continuous problem without nodes (module docstring).

    The caps are the methods' (:meth:`~mropt.model.fairness.FairnessInstance.task_bound`);
    capacities are exact (no ``CAPACITY_RTOL``). Raises ``ValueError`` for an instance with nodes.
    """
    if instance.nodes is not None:
        raise ValueError("progressive filling in fractions covers instances without nodes")
    names = instance.resource_names
    cap = [_q(instance.resources[r]) for r in names]
    demand = [[_q(u.demand.get(r, 0.0)) for r in names] for u in instance.users]
    coef = share_coefficients(instance)
    bound = [int(b) for b in instance.task_bound()]
    n = instance.n
    tasks = [Fraction(0)] * n
    frozen = [b == 0 for b in bound]
    while not all(frozen):
        active = [i for i in range(n) if not frozen[i]]
        # the next event: a cap reached, or a resource full (its load rises at sum D_ij / c_i)
        level = min(coef[i] * bound[i] for i in active)
        full = []
        for j in range(len(names)):
            rate = sum((demand[i][j] / coef[i] for i in active), Fraction(0))
            if rate > 0:
                used = sum((demand[i][j] * tasks[i] for i in range(n) if frozen[i]), Fraction(0))
                full.append(((cap[j] - used) / rate, j))
        if full:
            level = min(level, min(t for t, _ in full))
        for i in active:
            tasks[i] = level / coef[i]
            if tasks[i] >= bound[i]:
                frozen[i] = True
        for t, j in full:
            if t == level:
                for i in active:
                    frozen[i] = frozen[i] or demand[i][j] > 0
    return tasks


def lp_certificate(instance: FairnessInstance, tasks: np.ndarray, rtol: float) -> str | None:
    """Why continuous task counts ``tasks`` are not the leximin within ``rtol``, or None.

    Without nodes: the sorted weighted shares, exact fractions of the floats, compared with
    those of :func:`continuous_leximin` from the smallest up; the first pair more than
    ``rtol`` (relative) apart must not be CBC's lower. With nodes (two necessary checks): a
    user with a positive cap and a node that has every resource it asks for must hold a
    positive share, and the sorted shares must not be lexicographically below (beyond
    ``rtol``) those of a valid whole-task allocation, DRF's progressive filling: the
    continuous leximin is at least every allocation the relaxation holds (CLP once ended
    1.07e-4 below the integer optimum's smallest share with weights 1e8 and 1e-8 on two nodes).
    """
    coef = share_coefficients(instance)
    shares = [c * _q(t) for c, t in zip(coef, tasks)]
    if instance.nodes is None:
        tol = Fraction(rtol)
        exact = [c * t for c, t in zip(coef, continuous_leximin(instance))]
        for k, (got, best) in enumerate(zip(sorted(shares), sorted(exact)), 1):
            if abs(got - best) > tol * max(got, best):
                if got < best:
                    return f"level {k}: {float(got):.9g} where the exact continuous leximin has {float(best):.9g}"
                return None
        return None
    bound = instance.task_bound()
    hosts = (instance.demands > 0).astype(float) @ (instance.node_capacity <= 0).T.astype(float) == 0
    for i, user in enumerate(instance.users):
        if bound[i] > 0 and hosts[i].any() and shares[i] == 0:
            return f"user {user.id!r} holds no share where it could hold one"
    return _below_filling(instance, coef, shares, Fraction(rtol))


def _below_filling(
    instance: FairnessInstance, coef: list[Fraction], shares: list[Fraction], tol: Fraction
) -> str | None:
    """Why ``shares`` are lexicographically below DRF's whole-task filling (beyond ``tol``), or None."""
    try:
        filled = progressive_filling(instance, time_limit=1.0)
    except InputError:  # too many launches to fill: no comparison
        return None
    if filled.timed_out:
        return None
    valid = sorted(c * _q(t) for c, t in zip(coef, filled.tasks))
    for k, (got, have) in enumerate(zip(sorted(shares), valid), 1):
        if abs(got - have) > tol * max(got, have):
            if got < have:
                return f"level {k}: {float(got):.9g} where a valid whole-task allocation (drf) holds {float(have):.9g}"
            return None
    return None
