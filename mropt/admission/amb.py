"""AMB static part: Algorithm 1 of the AMB paper (sec. 4.2), registered as ``amb``.

Algorithm 1 sorts the candidates by Score (eq. 2, :mod:`mropt.admission.scoring`;
lines 01-02), then takes them one by one: for every valid order S kept so far
(the set phi), it inserts the candidate at every position that Theorems 3 and 4 leave
(lines 06-10) and keeps each new order that SEQ finds valid (lines 11-13). The
candidate is accepted when at least one new order is valid (lines 18-19), else
rejected with phi unchanged (line 21). Line 24 returns the accepted set and "any"
valid order of phi.

Choices of this implementation:

* the listing starts with the first job in A unconditionally (line 03); here phi
  starts as {empty order} and every candidate goes through the same test, which is
  the same when the first job fits alone and never accepts a job that cannot;
* each validity test is the incremental test of :mod:`mropt.admission.insertion`
  (exactly equal to a full SEQ evaluation, cheaper);
* ``beam`` bounds phi, which Algorithm 1 lets grow exponentially. ``beam=0`` keeps every
  valid order (the listing exactly). Otherwise, after each accepted candidate the new
  orders are ranked by (sum of COTr, then largest minimum slack ``deadline - COTr``, then
  the order's job indices lexicographically) and the first ``beam`` are kept: small total
  reduce completion leaves the reduce stage free earliest for later candidates;
* line 24's "any valid order" is the first order of phi in that same ranking;
* submit times act as release times of the map stage (seq.py); the paper's static part
  has them all at 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from mropt.admission.insertion import InsertionOracle
from mropt.admission.objective import solution_from_order
from mropt.admission.scoring import score_order
from mropt.admission.seq import evaluate
from mropt.model.admission import AdmissionInstance
from mropt.model.solution import Solution
from mropt.registry import Param, register

#: Default bound on the number of kept valid orders (see the module docstring and benchmarks/bench_amb.py).
DEFAULT_BEAM = 16


@dataclass
class AmbResult:
    """What Algorithm 1 produced: accepted jobs (in score order), phi, the chosen order, beam statistics."""

    accepted: list[int]
    rejected: list[int]
    orders: list[np.ndarray]
    order: np.ndarray
    beam_cut: bool = False
    max_orders: int = 1
    tests: int = 0
    pruned: int = 0
    extra: dict = field(default_factory=dict)


def order_key(instance: AdmissionInstance, order: np.ndarray, release: np.ndarray | None = None) -> tuple:
    """Ranking key of a valid order: (sum COTr, -min slack, job indices) — smaller is kept first.

    Times are compared in units of the latest deadline, rounded to 9 decimals, so float
    noise between equal sums does not decide and the ranking is the same in any time unit.
    """
    rel = instance.submit_times if release is None else release
    s = evaluate(instance.tcm, instance.tcr, instance.deadlines, order, rel)
    unit = float(instance.deadlines.max())
    slack = float((s.deadlines - s.cotr).min()) / unit if len(order) else 0.0
    return (round(float(s.cotr.sum()) / unit, 9), -round(slack, 9), tuple(int(i) for i in order))


def amb_static(
    instance: AdmissionInstance,
    jobs: Sequence[int] | np.ndarray | None = None,
    *,
    beam: int = DEFAULT_BEAM,
    release: np.ndarray | None = None,
) -> AmbResult:
    """Algorithm 1 (AMB sec. 4.2, static part) over ``jobs`` (default: all), ``beam`` orders kept (0 = all).

    ``jobs`` is also the candidate set J of eq. 3 for the scores. ``release`` overrides
    the per-job map release times (default: the instance's submit times).
    """
    if beam < 0:
        raise ValueError(f"beam must be >= 0 (0 = unlimited), got {beam}")
    rel = instance.submit_times if release is None else np.asarray(release, dtype=float)
    tcm, tcr, dl = instance.tcm, instance.tcr, instance.deadline_limits
    candidates = score_order(instance, jobs)
    phi: list[np.ndarray] = [np.empty(0, dtype=np.intp)]
    oracles: list[InsertionOracle | None] = [None]
    accepted: list[int] = []
    rejected: list[int] = []
    result = AmbResult([], [], phi, phi[0])
    for x in candidates:
        x = int(x)
        new_orders: list[np.ndarray] = []
        for i, order in enumerate(phi):
            oracle = oracles[i]
            if oracle is None:
                oracle = oracles[i] = InsertionOracle(tcm, tcr, dl, order, rel)
            a, b = oracle.theorem_range(x)  # lines 06-07
            result.pruned += (oracle.n + 1) - max(0, b - a + 1)
            for p in range(a, b + 1):  # lines 09-13
                result.tests += 1
                if oracle.can_insert(x, p):
                    new_orders.append(oracle.insert(x, p))
        if not new_orders:  # line 21
            rejected.append(x)
            continue
        accepted.append(x)  # line 19
        if beam and len(new_orders) > beam:
            keyed = sorted(new_orders, key=lambda o: order_key(instance, o, rel))
            new_orders = keyed[:beam]
            result.beam_cut = True
        result.max_orders = max(result.max_orders, len(new_orders))
        phi = new_orders
        oracles = [None] * len(phi)
    phi = sorted(phi, key=lambda o: order_key(instance, o, rel))  # line 24: first in the ranking
    result.accepted, result.rejected, result.orders, result.order = accepted, rejected, phi, phi[0]
    return result


@register(
    "amb",
    kind="admission",
    summary="AMB static part (Algorithm 1): score order, Theorems 3-4 pruning, bounded set of valid orders",
    params={"beam": Param(int, DEFAULT_BEAM, "max valid orders kept per step (0 = unlimited, Algorithm 1 exactly)",
                          minimum=0)},
)
def amb(instance: AdmissionInstance, *, time_limit: float | None = None, seed: int = 0, beam: int = DEFAULT_BEAM) -> Solution:
    """Registered method ``amb``: Algorithm 1 of AMB sec. 4.2 (see the module docstring)."""
    res = amb_static(instance, beam=int(beam))
    details = {
        "beam": int(beam),
        "beam_cut": res.beam_cut,
        "max_orders": res.max_orders,
        "final_orders": len(res.orders),
        "rejected": len(res.rejected),
        "insertion_tests": res.tests,
        "positions_pruned": res.pruned,
    }
    return solution_from_order(instance, res.order, details=details)
