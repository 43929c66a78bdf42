"""AMB static part: Algorithm 1 of the AMB paper (sec. 4.2), registered as ``amb``; beam variants.

Algorithm 1 sorts the candidates by Score (eq. 2, :mod:`mropt.admission.scoring`;
lines 01-02), then takes them one by one: for every valid order S kept so far
(the set phi), it inserts the candidate at every position that Theorems 3 and 4 leave
(lines 06-10) and keeps each new order that SEQ finds valid (lines 11-13). The
candidate is accepted when at least one new order is valid (lines 18-19), else
rejected with phi unchanged (line 21). Line 24 returns the accepted set and "any"
valid order of phi.

**What phi is.** Theorems 3-4 only skip positions where the new order is invalid, and
taking a job out of a valid SEQ order leaves it valid (no other job's maps or reduces
get later). So, by induction over the candidates, phi is exactly the set of *all*
valid orders of the accepted set A: every valid order of A plus x arises from one valid
order of A (x removed) by inserting x. Hence Algorithm 1 accepts x exactly when A plus x
has a valid order -- the "basic admission method" the paper states before its pruning --
and phi grows like |A|! when deadlines are loose (an accepted set of 10 jobs of a paper
instance already has 287,280 valid orders).

**Two implementations of the listing, one answer.** ``amb`` (``beam=0``, the default)
is Algorithm 1 exactly:

* ``search="oracle"`` (default): phi is kept implicitly. Each step asks the exact
  subset oracle of the exact methods (:class:`~mropt.admission.exact_oracle.SubsetOracle`:
  necessary conditions, heuristic orders, an exact branch-and-bound) whether A plus x has
  a valid order. Same accepted set as the listing, in polynomial time on every instance
  measured (N = 3,000 in about 1.5 s); line 24's "any valid order" is the oracle's;
* ``search="enumerate"``: phi listed explicitly, Theorems 3-4 pruning, every insertion
  tested incrementally (:mod:`mropt.admission.insertion`); exponential, for checking the
  listing literally on small instances. Line 24's order is the first in the ranking below.

Both honour ``time_limit``: the clock is read between candidates and, within a step,
every :data:`CLOCK_EVERY` orders of phi (enumerate) or inside the oracle's search. When
it runs out, the run stops with status ``time_limit`` and returns the best valid plan it
has: the accepted set so far in a valid order (with the candidate under test when a
valid order holding it was already found), then the remaining candidates in score
order inserted greedily where they fit (the latest valid position, as the dynamic part
does), for at most a short grace period (:func:`completion_grace`). ``details`` says
where it stopped (``stopped``, ``stopped_at``) and what the completion added.

**Beam variants** (``amb-beam16``, or ``amb`` with ``beam=K > 0``) bound phi: after each
accepted candidate the new orders are ranked by (sum of COTr, then largest minimum
slack ``deadline - COTr``, then the order's job indices lexicographically) and the
first ``beam`` are kept (small total reduce completion leaves the reduce stage free
earliest for later candidates). A cut can lose the only orders that admit a later job:
on ``generate_admission(16, jobs=8, deadline=400)`` beam 16 accepts 2712 where Algorithm
1 (and the optimum) accepts 3288. They are not AMB as the paper defines it, so they
carry the beam in their name in every table.

Other choices of this implementation:

* the listing starts with the first job in A unconditionally (line 03); here phi
  starts as {empty order} and every candidate goes through the same test, which is
  the same when the first job fits alone and never accepts a job that cannot;
* submit times act as release times of the map stage (seq.py); the paper's static part
  has them all at 0.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from mropt.admission.exact_oracle import OracleTimeout, SubsetOracle
from mropt.admission.insertion import InsertionOracle
from mropt.admission.objective import solution_from_order
from mropt.admission.scoring import score_order
from mropt.admission.seq import evaluate
from mropt.admission.table import BEAM_VARIANT as BEAM_VARIANT
from mropt.admission.table import DEFAULT_BEAM as DEFAULT_BEAM
from mropt.admission.table import SEARCHES as SEARCHES
from mropt.model.admission import AdmissionInstance
from mropt.model.solution import Solution

# BEAM_VARIANT, DEFAULT_BEAM and SEARCHES are declared with the registered methods
# (mropt.admission.table) and named here too (the exact methods' warm start, bench_amb.py, tests).

#: Orders of phi processed between two looks at the clock (enumeration).
CLOCK_EVERY = 64


def completion_grace(time_limit: float | None) -> float:
    """Seconds the greedy completion may run after a time out: a quarter of the limit, at most 5 s."""
    return 0.0 if time_limit is None else min(5.0, 0.25 * time_limit)


@dataclass
class AmbResult:
    """What Algorithm 1 produced: accepted jobs (in score order), phi, the chosen order, statistics.

    After a time out (``stopped_at`` set) ``accepted`` holds the jobs Algorithm 1 accepted
    before it stopped, ``completed`` those the greedy completion inserted afterwards, and
    ``order`` the plan of both.
    """

    accepted: list[int]
    rejected: list[int]
    orders: list[np.ndarray]
    order: np.ndarray
    beam_cut: bool = False
    max_orders: int = 1
    tests: int = 0
    pruned: int = 0
    extra: dict = field(default_factory=dict)
    stopped_at: int | None = None  # the candidate whose step was under way when the time ran out
    decided: int = 0  # candidates Algorithm 1 decided (accepted or rejected) before any stop
    completed: list[int] = field(default_factory=list)
    untested: int = 0  # candidates the completion had no time left for


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


def _out_of_time(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() > deadline


def complete_greedily(
    instance: AdmissionInstance, order: np.ndarray, rest: Sequence[int], release: np.ndarray | None, until: float | None
) -> tuple[np.ndarray, list[int], int]:
    """Insert each job of ``rest`` (in that order) into ``order`` at its latest valid position, if any.

    Positions are pruned by Theorems 3-4. Returns (new order, inserted jobs, jobs left
    untested because ``until``, a ``time.perf_counter`` value, passed).
    """
    rel = instance.submit_times if release is None else release
    tcm, tcr, dl = instance.tcm, instance.tcr, instance.deadline_limits
    oracle = InsertionOracle(tcm, tcr, dl, order, rel)
    added: list[int] = []
    for k, x in enumerate(rest):
        if _out_of_time(until):
            return oracle.order, added, len(rest) - k
        x = int(x)
        a, b = oracle.theorem_range(x)
        p = next((p for p in range(b, a - 1, -1) if oracle.can_insert(x, p)), None)
        if p is not None:
            oracle = InsertionOracle(tcm, tcr, dl, oracle.insert(x, p), rel)
            added.append(x)
    return oracle.order, added, 0


def amb_static(
    instance: AdmissionInstance,
    jobs: Sequence[int] | np.ndarray | None = None,
    *,
    beam: int = DEFAULT_BEAM,
    release: np.ndarray | None = None,
    deadline: float | None = None,
    grace: float = 0.0,
) -> AmbResult:
    """Algorithm 1 (AMB sec. 4.2) with phi listed, over ``jobs`` (default: all); ``beam`` orders kept (0 = all).

    ``jobs`` is also the candidate set J of eq. 3 for the scores. ``release`` overrides
    the per-job map release times (default: the instance's submit times). ``deadline``
    (a ``time.perf_counter`` value) stops the run as the module docstring says; the
    greedy completion then runs until ``deadline + grace``.
    """
    if beam < 0:
        raise ValueError(f"beam must be >= 0 (0 = unlimited), got {beam}")
    rel = instance.submit_times if release is None else np.asarray(release, dtype=float)
    tcm, tcr, dl = instance.tcm, instance.tcr, instance.deadline_limits
    candidates = [int(x) for x in score_order(instance, jobs)]
    phi: list[np.ndarray] = [np.empty(0, dtype=np.intp)]
    accepted: list[int] = []
    rejected: list[int] = []
    result = AmbResult([], [], phi, phi[0])
    for step, x in enumerate(candidates):
        if _out_of_time(deadline):
            return _stopped(instance, result, accepted, rejected, phi, [], candidates, step, rel, deadline, grace)
        new_orders: list[np.ndarray] = []
        for i, order in enumerate(phi):
            if i % CLOCK_EVERY == CLOCK_EVERY - 1 and _out_of_time(deadline):
                return _stopped(
                    instance, result, accepted, rejected, phi, new_orders, candidates, step, rel, deadline, grace
                )
            oracle = InsertionOracle(tcm, tcr, dl, order, rel)
            a, b = oracle.theorem_range(x)  # lines 06-07
            result.pruned += (oracle.n + 1) - max(0, b - a + 1)
            for p in range(a, b + 1):  # lines 09-13
                result.tests += 1
                if oracle.can_insert(x, p):
                    new_orders.append(oracle.insert(x, p))
        result.decided = step + 1
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
    phi = sorted(phi, key=lambda o: order_key(instance, o, rel))  # line 24: first in the ranking
    result.accepted, result.rejected, result.orders, result.order = accepted, rejected, phi, phi[0]
    return result


def _stopped(
    instance: AdmissionInstance,
    result: AmbResult,
    accepted: list[int],
    rejected: list[int],
    phi: list[np.ndarray],
    new_orders: list[np.ndarray],
    candidates: list[int],
    step: int,
    rel: np.ndarray,
    deadline: float | None,
    grace: float,
) -> AmbResult:
    """The best plan after a time out during the step of ``candidates[step]`` (module docstring)."""
    x = candidates[step]
    result.stopped_at = x
    accepted = list(accepted)
    if new_orders:  # a valid order with x is known: x is accepted (line 19)
        accepted.append(x)
        base = new_orders[0]
        rest = candidates[step + 1 :]
    else:
        base = phi[0]
        rest = candidates[step:]
    until = None if deadline is None else deadline + grace
    order, added, untested = complete_greedily(instance, base, rest, rel, until)
    result.accepted, result.rejected, result.completed, result.untested = accepted, rejected, added, untested
    result.orders, result.order = [order], order
    return result


def amb_oracle(
    instance: AdmissionInstance,
    jobs: Sequence[int] | np.ndarray | None = None,
    *,
    deadline: float | None = None,
    grace: float = 0.0,
) -> AmbResult:
    """Algorithm 1 (AMB sec. 4.2) with phi kept implicitly: accept x when A plus x has a valid order.

    The same accepted set as :func:`amb_static` with ``beam=0`` (module docstring); each
    step is one question to the exact :class:`SubsetOracle`. Release times are the
    instance's submit times. ``deadline`` and ``grace`` as in :func:`amb_static`.
    """
    oracle = SubsetOracle(instance)
    candidates = [int(x) for x in score_order(instance, jobs)]
    accepted: list[int] = []
    rejected: list[int] = []
    order: list[int] = []
    result = AmbResult([], [], [], np.empty(0, dtype=np.intp), max_orders=0)
    for step, x in enumerate(candidates):
        try:
            if _out_of_time(deadline):
                raise OracleTimeout
            found = oracle.decide([*accepted, x], deadline)
        except OracleTimeout:
            result.stopped_at = x
            until = None if deadline is None else deadline + grace
            plan, added, untested = complete_greedily(
                instance, np.asarray(order, dtype=np.intp), candidates[step:], None, until
            )
            result.accepted, result.rejected, result.completed, result.untested = accepted, rejected, added, untested
            result.orders, result.order = [plan], plan
            break
        result.decided = step + 1
        if found is None:
            rejected.append(x)
        else:
            accepted.append(x)
            order = found
    else:
        plan = np.asarray(order, dtype=np.intp)
        result.accepted, result.rejected, result.orders, result.order = accepted, rejected, [plan], plan
    result.extra = {
        "oracle_searches": oracle.searches,
        "oracle_nodes": oracle.nodes,
        "oracle_cp_calls": oracle.cp_calls,
    }
    return result


def run_amb(
    instance: AdmissionInstance,
    jobs: Sequence[int] | np.ndarray | None = None,
    *,
    beam: int,
    search: str = "oracle",
    time_limit: float | None = None,
) -> AmbResult:
    """Algorithm 1 as ``amb`` runs it: implicit phi (``beam=0``, ``search="oracle"``) or listed."""
    if search not in SEARCHES:
        raise ValueError(f"search must be one of {', '.join(SEARCHES)}, got {search!r}")
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    grace = completion_grace(time_limit)
    if beam == 0 and search == "oracle":
        return amb_oracle(instance, jobs, deadline=deadline, grace=grace)
    return amb_static(instance, jobs, beam=beam, deadline=deadline, grace=grace)


def amb_details(
    instance: AdmissionInstance, res: AmbResult, *, beam: int, search: str, time_limit: float | None
) -> tuple[str, dict]:
    """Status and ``details`` of an AMB run (shared by ``amb``, ``amb-beam16`` and ``amb-online``)."""
    listed = not (beam == 0 and search == "oracle")
    details: dict = {"beam": beam, "search": search if beam == 0 else "beam", "beam_cut": res.beam_cut}
    if listed:
        details.update(
            {
                "max_orders": res.max_orders,
                "final_orders": len(res.orders),
                "insertion_tests": res.tests,
                "positions_pruned": res.pruned,
            }
        )
    details["rejected"] = len(res.rejected)
    details.update(res.extra)
    if res.stopped_at is None:
        return "feasible", details
    ids = instance.ids
    details.update(
        {
            "stopped": f"time limit of {time_limit:g} s reached at job {ids[res.stopped_at]} "
            f"(candidate {res.decided + 1} in score order); the rest added greedily",
            "stopped_at": ids[res.stopped_at],
            "candidates_decided": res.decided,
            "completed_greedily": len(res.completed),
            "completion_untested": res.untested,
        }
    )
    return "time_limit", details


def _solve(instance: AdmissionInstance, time_limit: float | None, beam: int, search: str) -> Solution:
    res = run_amb(instance, beam=beam, search=search, time_limit=time_limit)
    status, details = amb_details(instance, res, beam=beam, search=search, time_limit=time_limit)
    return solution_from_order(instance, res.order, status=status, details=details)


def amb(
    instance: AdmissionInstance,
    *,
    time_limit: float | None = None,
    seed: int = 0,
    beam: int = 0,
    search: str = "oracle",
) -> Solution:
    """Registered method ``amb``: Algorithm 1 of AMB sec. 4.2 (see the module docstring)."""
    return _solve(instance, time_limit, int(beam), str(search))


def amb_beam(
    instance: AdmissionInstance, *, time_limit: float | None = None, seed: int = 0, beam: int = DEFAULT_BEAM
) -> Solution:
    """Registered method ``amb-beam16``: Algorithm 1 (AMB sec. 4.2) with phi cut to ``beam`` orders."""
    return _solve(instance, time_limit, int(beam), "oracle")
