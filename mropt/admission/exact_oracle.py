"""Subset-feasibility oracle for the SEQ model: does a set of jobs have a valid sequence?

AMB sec. 4.1, Definition 2 and Theorems 1-2: a set is acceptable exactly when some map
order makes every job finish on time under SEQ. The reduce stage is preemptive EDF
with release times COTm, feasible exactly when Horn's condition holds. Written along
the map order (positions k, ``P_k`` = COTm of position k, ``G_D`` = jobs with deadline
<= D), Horn's condition reads::

    for every deadline value D and every position k holding a job of G_D:
        P_k + sum of TCr over jobs of G_D at positions >= k  <=  D

For one D the left side, maximised over k, is the permutation makespan of a
two-machine flow shop (maps on machine 1, the reduces of G_D on machine 2), so a
sequence is valid exactly when it meets one flow-shop makespan limit per deadline.

The oracle answers in three steps:

1. necessary conditions (each job alone; per deadline D the map work and the reduce
   work of G_D each fit before D) reject most infeasible sets at once;
2. a few heuristic orders (EDF, EDF on the latest map completion ``d - TCr``, a
   Johnson-sorted EDF) are evaluated with :func:`mropt.admission.seq.evaluate`; a
   valid one is returned;
3. otherwise an exact depth-first branch-and-bound builds the order left to right.
   A prefix is summarised by its map clock ``P`` and, per deadline D, ``h_D`` = the
   flow-shop completion of the G_D reduces so far; a completion is feasible from one
   prefix whenever it is from a prefix with the same job set and a componentwise
   larger state, so states dominated by one already explored (same set, same last
   job) are pruned (compared exactly, no tolerance). With equal submit times two
   order rules also prune (see "Why the order rules are sound together" below).
   Bound checks prune prefixes that cannot be completed. An order the search
   completes is re-checked with :func:`mropt.admission.seq.evaluate` before it is
   returned.

Deadlines here are the on-time limits ``method_deadline_limit(deadline)``
(``instance.deadline_limits``; docs/tolerances.md): one factor for every job keeps the
deadlines' order and ties, so all of the above holds for the limits exactly and no
absolute tolerance is used anywhere.

Why the order rules are sound together (equal submit times). Let ``key(j) =
(d_j, J(j))`` with Johnson's key ``J(j) = (0, TCm_j, -TCr_j, j)`` when ``TCm_j < TCr_j``
and ``(1, -TCr_j, TCm_j, j)`` otherwise: a strict total order ``<`` of the jobs.

* Adjacent interchange (:meth:`SubsetOracle.must_precede`): i goes right before j
  when ``d_i < d_j`` and ``min(TCm_i, TCr_j) <= min(TCm_j, TCr_i)`` (Johnson's
  condition), or ``d_i = d_j`` and ``J(i) < J(j)`` (which implies Johnson's
  condition). Swapping an adjacent pair j, i into i, j keeps a valid order valid: for
  a deadline value D >= both deadlines both reduces count in the flow shop of G_D and
  Johnson's condition says the swap does not increase its makespan; for
  ``d_i <= D < d_j`` only i's reduce counts and it moves earlier; for smaller D
  neither counts and the map clock after the pair is unchanged.
* Dominance (:meth:`SubsetOracle.dominates`): i before j (anywhere) when
  ``d_i <= d_j``, ``TCm_i <= TCm_j``, ``TCr_i >= TCr_j`` and ``key(i) < key(j)``.
  Swapping j ... i into i ... j keeps a valid order valid: every Horn interval that
  starts between the two positions starts no later and holds i's place with j's
  reduce, which belongs to fewer groups G_D (``d_j >= d_i``) and is not longer.
  Under these three conditions ``key(i) < key(j)`` holds whenever (TCm, TCr, d)
  differ (d_i < d_j decides, else J does: i is in Johnson's first group when j is,
  with a smaller TCm or, equal, a larger TCr; in the second group with a larger TCr
  or, equal, a smaller TCm), so the last condition only breaks exact ties, by index.

Every swap either rule asks for exchanges a pair that is inverted with respect to
``<``, and exchanging an inverted pair (adjacent or not) strictly decreases the number
of inverted pairs of the order. So from any valid order, applying either rule while
one is violated ends, after finitely many swaps, in a valid order violating neither:
some valid order survives both prunings whenever one exists. (The two rules once broke
ties in different ways, the adjacent rule by Johnson rank, the dominance rule by
index; with equal deadlines and equal TCm or TCr they then forbade every valid order
and the oracle called feasible sets infeasible.)

Answers are cached, and the set family is down-closed (removing a job keeps a valid
order valid, with the job left out), so subsets of a feasible set and supersets of
an infeasible one are answered without search.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np

from mropt.admission.seq import evaluate
from mropt.model.admission import AdmissionInstance


class OracleTimeout(Exception):
    """The oracle ran out of time before it could decide a set."""


class _NodeLimit(Exception):
    """The first, budgeted branch-and-bound gave up (the CP-SAT model takes over)."""


def _mask(jobs: Iterable[int]) -> int:
    m = 0
    for j in jobs:
        m |= 1 << int(j)
    return m


def _members(mask: int) -> list[int]:
    out = []
    j = 0
    while mask:
        if mask & 1:
            out.append(j)
        mask >>= 1
        j += 1
    return out


class SubsetOracle:
    """Decide SEQ feasibility of job sets of one instance (see the module docstring)."""

    #: nodes of the first branch-and-bound before the CP-SAT model is tried (None: no CP-SAT)
    dfs_budget: int | None = 400

    def __init__(self, instance: AdmissionInstance) -> None:
        self.instance = instance
        self.cp_calls = 0
        self.a = [float(x) for x in instance.tcm]
        self.b = [float(x) for x in instance.tcr]
        self.d = [float(x) for x in instance.deadline_limits]  # on-time limits (module docstring)
        self.r = [float(x) for x in instance.submit_times]
        self.n = instance.n
        self.equal_release = len(set(self.r)) == 1
        self._feasible: dict[int, list[int]] = {}  # mask -> valid order
        self._infeasible: set[int] = set()
        self.searches = 0
        self.nodes = 0
        self.alone_ok = [self.r[j] + self.a[j] + self.b[j] <= self.d[j] for j in range(self.n)]
        jk = [
            (0, self.a[j], -self.b[j], j) if self.a[j] < self.b[j] else (1, -self.b[j], self.a[j], j)
            for j in range(self.n)
        ]
        self._johnson_rank = {key[-1]: k for k, key in enumerate(sorted(jk))}
        #: the total order of the module docstring: (deadline, Johnson rank)
        self._key = [(self.d[j], self._johnson_rank[j]) for j in range(self.n)]

    # -- public -------------------------------------------------------------------------
    def must_precede(self, i: int, j: int) -> bool:
        """Adjacent-interchange rule (equal submit times only): i goes right before j.

        Sound together with :meth:`dominates`: see the module docstring.
        """
        if self.d[i] < self.d[j]:
            return min(self.a[i], self.b[j]) <= min(self.a[j], self.b[i])
        if self.d[i] == self.d[j]:
            return self._johnson_rank[i] < self._johnson_rank[j]
        return False

    def dominates(self, i: int, j: int) -> bool:
        """Global rule (equal submit times only): some valid order has i before j.

        When ``d_i <= d_j``, ``TCm_i <= TCm_j`` and ``TCr_i >= TCr_j``, swapping i and j
        when j comes first keeps a valid order valid: the jobs between are released
        earlier, i earlier, and j at i's old time with less reduce work than i had
        there, so no interval of Horn's condition gains work. Ties are broken by the
        same total order as :meth:`must_precede` (the module docstring proves the two
        rules sound together).
        """
        a, b, d = self.a, self.b, self.d
        return d[i] <= d[j] and a[i] <= a[j] and b[i] >= b[j] and self._key[i] < self._key[j]

    def valid(self, order: Sequence[int]) -> bool:
        inst = self.instance
        if not len(order):
            return True
        idx = np.asarray(order)
        return evaluate(inst.tcm, inst.tcr, inst.deadlines, idx, inst.submit_times, inst.deadline_limits).valid

    def known(self, jobs: Iterable[int]) -> list[int] | None | Literal[False]:
        """Cached answer: an order, None (infeasible), or False when not known."""
        mask = _mask(jobs)
        if mask in self._feasible:
            return self._feasible[mask]
        if mask in self._infeasible:
            return None
        for fmask, order in self._feasible.items():
            if mask & ~fmask == 0:
                return [j for j in order if mask >> j & 1]
        for imask in self._infeasible:
            if imask & ~mask == 0:
                return None
        return False

    def necessary(self, jobs: Sequence[int]) -> bool:
        """Cheap necessary conditions; False proves the set infeasible."""
        if not all(self.alone_ok[j] for j in jobs):
            return False
        by_deadline = sorted(jobs, key=lambda j: self.d[j])
        r0 = min(self.r[j] for j in jobs) if jobs else 0.0
        sa = sb = 0.0
        min_a = min_b = float("inf")
        latest_map = float("-inf")
        earliest_red = float("inf")
        for k, j in enumerate(by_deadline):
            sa += self.a[j]
            sb += self.b[j]
            min_a = min(min_a, self.a[j])
            min_b = min(min_b, self.b[j])
            latest_map = max(latest_map, self.d[j] - self.b[j])
            earliest_red = min(earliest_red, self.r[j] + self.a[j])
            if k + 1 < len(by_deadline) and self.d[by_deadline[k + 1]] == self.d[j]:
                continue
            dd = self.d[j]
            if r0 + sa + min_b > dd or earliest_red + sb > dd or r0 + sa > latest_map:
                return False
        return True

    def check(self, jobs: Iterable[int], deadline: float | None = None) -> list[int] | None:
        """A valid order of ``jobs`` (indices), or None when none exists.

        Raises :class:`OracleTimeout` when ``deadline`` (a ``time.perf_counter`` value)
        passes before the answer is known.
        """
        jobs = sorted(set(int(j) for j in jobs))
        mask = _mask(jobs)
        cached = self.known(jobs)
        if cached is not False:
            return cached
        order = self._decide(jobs, deadline)
        if order is None:
            self._infeasible.add(mask)
        else:
            self._feasible[mask] = order
        return order

    def decide(self, jobs: Iterable[int], deadline: float | None = None) -> list[int] | None:
        """:meth:`check` without the cache, for callers whose sets do not repeat.

        AMB's Algorithm 1 (:func:`mropt.admission.amb.amb_oracle`) asks about the accepted
        set plus one new job each time; the cache would only be scanned (its look-up is
        linear in its size) and never hit. Raises :class:`OracleTimeout` like :meth:`check`.
        """
        return self._decide(sorted(set(int(j) for j in jobs)), deadline)

    def minimal_infeasible(self, jobs: Sequence[int], deadline: float | None = None) -> list[int]:
        """Shrink an infeasible set to a minimal infeasible subset (greedy deletion).

        Jobs are tried for deletion latest deadline first. A deletion whose test runs
        out of time is skipped (the job stays), and once ``deadline`` has passed no more
        deletions are tried, so the result is always infeasible.
        """
        core = list(jobs)
        for j in sorted(jobs, key=lambda j: (-self.d[j], self.b[j])):
            trial = [k for k in core if k != j]
            if not trial or (deadline is not None and time.perf_counter() > deadline):
                break
            try:
                if self.check(trial, deadline) is None:
                    core = trial
            except OracleTimeout:
                continue
        return core

    # -- search -------------------------------------------------------------------------
    def _heuristic_orders(self, jobs: list[int]) -> list[list[int]]:
        a, b, d, r = self.a, self.b, self.d, self.r
        jr = self._johnson_rank
        return [
            sorted(jobs, key=lambda j: (d[j], jr[j])),
            sorted(jobs, key=lambda j: (d[j] - b[j], d[j], j)),
            sorted(jobs, key=lambda j: (r[j], d[j], j)),
            sorted(jobs, key=lambda j: (d[j] - b[j] - a[j], d[j], j)),
        ]

    def _decide(self, jobs: list[int], deadline: float | None) -> list[int] | None:
        if not jobs:
            return []
        if not self.necessary(jobs):
            return None
        heuristic = self._heuristic_orders(jobs)
        for order in heuristic:
            if self.valid(order):
                return order
        self.searches += 1
        if self.dfs_budget is None:
            return _Search(self, jobs, deadline).run()
        try:
            return _Search(self, jobs, deadline, node_limit=self.dfs_budget).run()
        except _NodeLimit:
            pass
        # CP-SAT (and pandas, which it imports) only for a set the cheap checks left undecided:
        # AMB and the simulator's amb policy import this module
        from mropt.admission.exact_seqcp import cp_order

        hint = heuristic[0] if heuristic else None
        dominates = self.dominates if self.equal_release else None
        # a relaxation proves infeasibility; a restriction finds orders the relaxation's
        # rounding spoilt; a finer time grid narrows the space between the two
        for bits in (30, 40):
            for conservative in (False, True):
                left = None if deadline is None else deadline - time.perf_counter()
                if left is not None and left <= 0:
                    raise OracleTimeout
                self.cp_calls += 1
                status, found = cp_order(
                    jobs,
                    self.a,
                    self.b,
                    self.d,
                    self.r,
                    dominates=dominates,
                    time_limit=left,
                    hint=hint,
                    bits=bits,
                    conservative=conservative,
                )
                if status == "infeasible" and not conservative:
                    return None
                if status == "feasible" and found is not None and self.valid(found):
                    return found
                if status == "feasible" and found is not None:
                    hint = found
        return _Search(self, jobs, deadline).run()  # CP-SAT undecided: exact search


class _Search:
    """Depth-first branch-and-bound over map orders of one job set."""

    def __init__(
        self, oracle: SubsetOracle, jobs: list[int], deadline: float | None, node_limit: int | None = None
    ) -> None:
        self.o = oracle
        self.node_limit = node_limit
        self.deadline = deadline
        self.jobs = sorted(jobs, key=lambda j: (oracle.d[j] - oracle.b[j], oracle.d[j], j))
        dvals = sorted(set(oracle.d[j] for j in jobs))
        self.D = dvals
        self.m = len(dvals)
        self.t = {j: dvals.index(oracle.d[j]) for j in jobs}  # deadline index
        jr = oracle._johnson_rank
        self.jorder = sorted(jobs, key=lambda j: jr[j])
        self.dom_mask = (
            {k: _mask(i for i in jobs if i != k and oracle.dominates(i, k)) for k in jobs}
            if oracle.equal_release
            else {}
        )
        self.memo: dict[tuple[int, int], list[tuple[float, list[float]]]] = {}
        self.path: list[int] = []
        self.count = 0

    def run(self) -> list[int] | None:
        full = _mask(self.jobs)
        try:
            ok = self._dfs(full, 0.0, [0.0] * self.m, -1)
        finally:
            self.o.nodes += self.count
        return list(self.path) if ok else None

    def _bounds_ok(self, rest: int, clock: float, h: list[float]) -> bool:
        """Per deadline index u, the remaining jobs of G_u alone, from machine times
        (clock, h[u]), in Johnson's order (optimal for the two-machine makespan, also
        with a later second machine) must end by D_u: a relaxation of Horn's condition."""
        o, m, D, t = self.o, self.m, self.D, self.t
        m1 = [clock] * m
        m2 = list(h)
        for j in self.jorder:
            if rest >> j & 1:
                aj, bj = o.a[j], o.b[j]
                for u in range(t[j], m):
                    x = m1[u] + aj
                    m1[u] = x
                    y = m2[u]
                    m2[u] = (x if x > y else y) + bj
        for u in range(m):  # noqa: SIM110  (hot loop: faster than all() over a generator)
            if m2[u] > D[u]:
                return False
        return True

    def _dfs(self, mask: int, clock: float, h: list[float], last: int) -> bool:
        if mask == 0:  # the state's arithmetic differs from evaluate's: its verdict is final
            return self.o.valid(self.path)
        self.count += 1
        if self.node_limit is not None and self.count > self.node_limit:
            raise _NodeLimit
        if self.deadline is not None and self.count % 128 == 0 and time.perf_counter() > self.deadline:
            raise OracleTimeout
        o, t = self.o, self.t
        remaining = [j for j in self.jobs if mask >> j & 1]
        for k in remaining:
            if o.equal_release:
                if last >= 0 and o.must_precede(k, last):
                    continue
                if self.dom_mask[k] & mask:  # a remaining job must come before k
                    continue
            c = max(clock, o.r[k]) + o.a[k]
            tk = t[k]
            bk = o.b[k]
            nh = h[:tk] + [(x if x > c else c) + bk for x in h[tk:]]
            rest = mask & ~(1 << k)
            key = (rest, k)
            states = self.memo.get(key)
            if states is not None:
                dominated = False
                for pc, ph in states:
                    if pc <= c and all(x <= y for x, y in zip(ph, nh)):
                        dominated = True
                        break
                if dominated:
                    continue
            if not self._bounds_ok(rest, c, nh):
                continue
            if states is None:
                self.memo[key] = [(c, nh)]
            else:
                states.append((c, nh))
            self.path.append(k)
            if self._dfs(rest, c, nh, k):
                return True
            self.path.pop()
        return False


#: rows of the pair screen computed at once (memory: a few arrays of this many times n floats)
_PAIR_BLOCK = 256
#: relative slack by which the pair screen's own float arithmetic must clear a limit (far above rounding)
_PAIR_MARGIN = 1e-9


def _surely_valid_pairs(oracle: SubsetOracle, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Per pair (``first[k]`` then ``second``): True where the order is valid with room to spare.

    Two jobs under SEQ in closed form: the first's maps end at ``c1 = r1 + a1``, the
    second's at ``c2 = max(c1, r2) + a2``; the reduces run preemptive EDF (ties to the
    earlier map): with ``d1 <= d2`` the first ends at ``c1 + b1`` and the second at
    ``max(c2, c1 + b1) + b2``; otherwise the second ends at ``c2 + b2`` and the first at
    ``c1 + b1``, or ``c1 + b1 + b2`` when the second arrives before it is done (a job
    with no reduce ends with its maps). Only a screen: a True is trusted only when
    both jobs end :data:`_PAIR_MARGIN` (relative) before their limits, every other pair
    goes to :meth:`SubsetOracle.valid`, so no conflict is ever declared here.
    """
    inst = oracle.instance
    a, b, r = (np.asarray(v, dtype=float) for v in (inst.tcm, inst.tcr, inst.submit_times))
    d, lim = np.asarray(inst.deadlines, dtype=float), np.asarray(inst.deadline_limits, dtype=float)
    i, j = first[:, None], second[None, :]
    c1 = r[i] + a[i]
    c2 = np.maximum(c1, r[j]) + a[j]
    e1 = np.where(b[i] > 0, c1 + b[i], c1)
    first_wins = d[i] <= d[j]
    end2 = np.where(b[j] > 0, np.where(first_wins, np.maximum(c2, e1), c2) + b[j], c2)
    end1 = np.where(first_wins | (e1 <= c2) | (b[i] <= 0), e1, e1 + b[j])
    room1 = _PAIR_MARGIN * (np.abs(lim[i]) + np.abs(end1))
    room2 = _PAIR_MARGIN * (np.abs(lim[j]) + np.abs(end2))
    return (end1 <= lim[i] - room1) & (end2 <= lim[j] - room2)


def pair_conflicts(
    oracle: SubsetOracle, candidates: Sequence[int], deadline: float | None = None
) -> tuple[list[tuple[int, int]], bool]:
    """Pairs of individually feasible jobs that no order can run together, and whether the list is complete.

    A vectorised screen (:func:`_surely_valid_pairs`) clears most pairs at once; the rest
    are decided by :meth:`SubsetOracle.valid` in both orders (the only source of a
    conflict). When ``deadline`` (a ``time.perf_counter`` value) passes, the pairs
    found so far are returned with ``False``: every listed pair is a conflict, so any
    part of the list is a valid inequality.
    """
    out: list[tuple[int, int]] = []
    cand = np.asarray([j for j in candidates if oracle.alone_ok[j]], dtype=np.intp)
    for start in range(0, len(cand), _PAIR_BLOCK):
        if deadline is not None and time.perf_counter() > deadline:
            return out, False
        rows = cand[start : start + _PAIR_BLOCK]
        clear = _surely_valid_pairs(oracle, rows, cand)
        clear |= _surely_valid_pairs(oracle, cand, rows).T
        for x, y in zip(*np.nonzero(~clear), strict=True):
            i, j = int(rows[x]), int(cand[y])
            if start + x >= y:  # each unordered pair once, (i, j) in candidate order
                continue
            if deadline is not None and time.perf_counter() > deadline:
                return out, False
            if not (oracle.valid([i, j]) or oracle.valid([j, i])):
                out.append((i, j))
    return out, True


def members(mask: int) -> list[int]:
    """Indices set in a bit mask (exported for the exact methods)."""
    return _members(mask)
