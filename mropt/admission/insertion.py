"""Incremental test: can one job be inserted into a valid SEQ order? (AMB sec. 4.2)

Algorithm 1 (lines 09-12) and the dynamic part of AMB sec. 4.2 insert a job x at a
position p of a valid sequence S and ask whether the new sequence is valid
(Definition 2). Re-evaluating S' from scratch (:func:`mropt.admission.seq.evaluate`)
costs O(n log n) in Python per test. :class:`InsertionOracle` prepares S once and then
answers each (x, p) with a handful of numpy operations and no per-job Python loop.

Why it is exact. Under SEQ the reduce stage is preemptive EDF on one machine with
release times COTm (seq.py), and EDF meets every deadline exactly when Horn's
condition holds: for every release a and every deadline b, the reduce work of the
jobs released at or after a with deadline <= b fits in ``b - a``. Callers pass the
on-time limits ``method_deadline_limit(deadline)`` (``instance.deadline_limits``) as the
deadlines: inflating every deadline by one factor keeps their order, so the EDF
schedule is unchanged and "on time" is Horn's condition on the limits (``eps``, an
extra absolute slack, stays 0). COTm is strictly increasing (TCm > 0), so
"released at or after COTm_i" means "at position >= i". Inserting x at p:

* jobs before p keep their COTm; x gets ``c_x = max(COTm_{p-1}, r_x) + TCm(x)``; a job k
  after p gets ``COTm'_k = max(COTm_k, c_x + P_k - P_{p-1})`` (P: prefix sums of TCm in S;
  this is exact also with submit times, where idle gaps absorb part of the shift);
* (A) releases after x: the suffix from k is unchanged as a set, so with
  ``F_k = min_b (b - W_k(b))`` (latest release for which suffix k fits; W_k(b) = reduce
  work at positions >= k with deadline <= b) the condition is
  ``c_x - P_{p-1} + max_{k>=p}(P_k - F_k) <= eps``: one suffix-max array, O(1) per test;
* (B, C) releases at or before x, deadlines b >= d(x) (for b < d(x) nothing changed, or
  the condition is implied by (A)): the demand is the old one plus TCr(x). Because EDF
  serves the jobs with deadline <= b work-conservingly, ``max_{i<p}(COTm_i + W_{[i,p)}(b))``
  is ``COTm_{p-1}`` plus the EDF backlog of deadline <= b at time ``COTm_{p-1}`` (kept as a
  snapshot per position), so the test is, for every b >= d(x),
  ``max(COTm_{p-1} + backlog_b, c_x) + W_p(b) + TCr(x) <= b + eps``: O(n) numpy, or one
  row lookup when S is short enough to keep the (n+1) x (distinct deadlines) tables.

Theorems 3-4 (the paper's pruning) are offered as :meth:`InsertionOracle.theorem_range`.
Agreement with full evaluation is exact up to float rounding far below the relative
tolerance (tests use integer times, where both are exact).
"""

from __future__ import annotations

import numpy as np

from mropt.admission.seq import map_completion_times, reduce_completion_times

#: S keeps dense (n+1) x (distinct deadlines) tables when their size stays below this.
DENSE_CELLS = 300_000


class InsertionOracle:
    """A valid order S prepared for O(1)-ish insertion tests (see the module docstring).

    ``tcm``, ``tcr``, ``deadlines`` and ``release`` are per-job arrays (indexed like the
    instance's jobs); ``order`` holds indices into them. Raises ValueError if S is not valid.

    ``locked`` (AMB's dynamic part: the jobs whose maps have started, never moved) promises
    that no position below it is tested. The oracle then leaves out of its tables the
    *settled* prefix: the longest ``S[:s]``, ``s < locked``, whose jobs all end their
    reduces strictly before ``COTm_s`` (COTr from an EDF pass over ``S[:locked]`` alone: up to
    ``COTm_{locked-1}`` it is the pass over S, so a job that ends before a release there ends at
    the same time). The model keeps every job from time 0 (releases, prefix sums), so a
    finished job still shapes the COTm of the later ones: COTm and P stay those of the
    whole S (closed form, :func:`mropt.admission.seq.map_completion_times`). But EDF has
    nothing of ``S[:s]`` left at ``COTm_s``: from there it runs on ``S[s:]`` alone with the
    same floats (a job still queued at ``COTm_s`` would end at or after it): one pass over
    ``S[s:]`` gives the backlogs and, with the prefix's, the COTr of S (the validity check); and an
    insertion at p > s releases nothing before ``COTm_s``. So ``F_k``, the backlogs and
    ``W_p`` at k, p > s are the same numbers, a deadline of the prefix alone only repeats
    a step of the demand functions (its test is implied by the one below it); Theorems
    3-4 (:meth:`theorem_range`) still read the whole S. The dense/sparse
    choice is that of the whole S (the two sum in different orders). Every answer is the
    one of ``locked=0``; ``tests/admission/test_seq.py`` checks it on random orders.
    """

    def __init__(
        self,
        tcm: np.ndarray,
        tcr: np.ndarray,
        deadlines: np.ndarray,
        order: np.ndarray | list[int],
        release: np.ndarray | None = None,
        *,
        eps: float = 0.0,
        dense_cells: int = DENSE_CELLS,
        locked: int = 0,
    ) -> None:
        self.tcm_all = np.asarray(tcm, dtype=float)
        self.tcr_all = np.asarray(tcr, dtype=float)
        self.d_all = np.asarray(deadlines, dtype=float)
        self.r_all = None if release is None else np.asarray(release, dtype=float)
        self.eps = eps
        order = np.asarray(order, dtype=np.intp)
        self.order = order
        n = self.n = len(order)
        tm = self.tcm_all[order]
        tr = self.tr = self.tcr_all[order]
        d = self.d = self.d_all[order]
        self.cotm = c = map_completion_times(tm, None if self.r_all is None else self.r_all[order])
        self.prefix = np.cumsum(tm)
        s = 0
        cotr_head = c[:0]  # (read only when s > 0: then the pass below has made it)
        if locked > 1 and n > 1:  # the settled prefix (class docstring), from an EDF pass over S[:locked]
            head = min(locked, n)
            cotr_head = reduce_completion_times(c[:head], tr[:head], d[:head])
            ends = np.maximum.accumulate(cotr_head[: head - 1])
            cut = np.flatnonzero(ends < c[1:head])
            s = int(cut[-1]) + 1 if len(cut) else 0
        #: positions < settled are never tested and left out of the tables below
        self.settled = s
        backlog: list[tuple[np.ndarray, np.ndarray]] = []
        cotr = reduce_completion_times(c[s:], tr[s:], d[s:], backlog=backlog)
        self.cotr = np.concatenate((cotr_head[:s], cotr)) if s else cotr
        if n and not bool(np.all(self.cotr <= d + eps)):
            raise ValueError("InsertionOracle needs a valid order (Definition 2)")
        u_all = np.unique(d)
        tr, d = tr[s:], d[s:]
        n -= s
        u = self.u = np.unique(d) if s else u_all
        nu = len(u)
        rank = self.rank = np.searchsorted(u, d).astype(np.intp)
        # F_k = min over deadlines b of suffix k of (b - W_k(b)), sweeping k downwards
        latest = np.empty(n)
        work = np.zeros(nu)
        value = np.full(nu, np.inf)
        for k in range(n - 1, -1, -1):
            j = rank[k]
            work[j:] += tr[k]
            value[j:] -= tr[k]
            value[j] = u[j] - work[j]
            latest[k] = value.min()
        # suffix max of P_k - F_k; entry n is -inf (appending shifts nobody)
        self.suffix_shift = np.full(n + 1, -np.inf)  # indexed from position settled
        if n:
            self.suffix_shift[:n] = np.maximum.accumulate((self.prefix[s:] - latest)[::-1])[::-1]
        self._backlog = backlog
        self.dense = (self.n + 1) * max(len(u_all), 1) <= dense_cells  # as without the cut: same sums
        if self.dense and n:
            onehot = np.zeros((n + 1, nu))
            onehot[np.arange(n), rank] = tr
            self._w_rows = np.cumsum(np.cumsum(onehot[::-1], axis=0)[::-1], axis=1)
            back = np.zeros((n, nu))
            for k, (pos, rem) in enumerate(backlog):
                np.add.at(back[k], rank[pos], rem)
            self._b_rows = np.cumsum(back, axis=1)

    # -- rows of the per-position tables -------------------------------------------------
    def _w_row(self, p: int) -> np.ndarray:
        """W_p(b) at every distinct deadline b: reduce work at positions >= p with deadline <= b."""
        p -= self.settled
        if self.dense:
            return self._w_rows[p]
        return np.bincount(self.rank[p:], weights=self.tr[self.settled :][p:], minlength=len(self.u)).cumsum()

    def _b_row(self, q: int) -> np.ndarray:
        """EDF backlog with deadline <= b at time COTm_q, at every distinct deadline b."""
        q -= self.settled
        if self.dense:
            return self._b_rows[q]
        pos, rem = self._backlog[q]
        return np.bincount(self.rank[pos], weights=rem, minlength=len(self.u)).cumsum()

    # -- the paper's pruning ----------------------------------------------------------------
    def theorem_range(self, x: int, lo: int = 0) -> tuple[int, int]:
        """Positions [a, b] left by Theorems 3 and 4 (AMB sec. 4.2; Algorithm 1 lines 06-07).

        Position p means "before S[p]" (0-based; p = n appends). Theorem 3 as printed
        compares with ``j_new.deadline``; its proof (j_i becomes late) and Example 2 use
        ``j_i.deadline``, which is what is applied. Theorem 3 assumes inserting x delays
        every later map by TCm(x); with submit times that leave the map stage idle, that
        can fail, so it is applied only when all releases are equal and S has no idle
        gap. Theorem 4 (x itself late) holds with releases: ``c_x >= COTm_{p-1} + TCm(x)``.
        """
        n = self.n
        c, tr, d, eps = self.cotm, self.tr, self.d, self.eps
        tcm_x, tcr_x, d_x = self.tcm_all[x], self.tcr_all[x], self.d_all[x]
        r_x = 0.0 if self.r_all is None else self.r_all[x]
        a = lo
        if n and self._theorem3_applies(r_x):
            late = np.flatnonzero(tcm_x + c + tr > d + eps)
            if len(late):
                a = max(a, int(late[-1]) + 1)
        if r_x + tcm_x + tcr_x > d_x + eps:
            return a, -1
        late4 = np.flatnonzero(np.maximum(c, r_x) + tcm_x + tcr_x > d_x + eps)
        b = int(late4[0]) if len(late4) else n
        return a, b

    def _theorem3_applies(self, r_x: float) -> bool:
        if self.r_all is None:
            return True
        r = self.r_all[self.order]
        return bool(np.all(r == r_x) and np.allclose(self.cotm, r[0] + self.prefix, rtol=0, atol=0))

    # -- the test ----------------------------------------------------------------------------
    def can_insert(self, x: int, p: int) -> bool:
        """True when inserting job ``x`` before ``S[p]`` keeps S valid (exactly as full evaluation)."""
        n, eps = self.n, self.eps
        tcm_x, tcr_x, d_x = self.tcm_all[x], self.tcr_all[x], self.d_all[x]
        r_x = 0.0 if self.r_all is None else self.r_all[x]
        c_prev = self.cotm[p - 1] if p else 0.0
        p_prev = self.prefix[p - 1] if p else 0.0
        c_x = max(c_prev, r_x) + tcm_x
        if c_x + tcr_x > d_x + eps:  # x itself (Theorem 4 at this position)
            return False
        if p <= self.settled and self.settled:
            raise ValueError(f"InsertionOracle: position {p} is not after the {self.settled} settled jobs")
        if p < n and c_x - p_prev + self.suffix_shift[p - self.settled] > eps:  # (A): later jobs
            return False
        if n == 0:
            return True
        u = self.u
        w = self._w_row(p)
        back = self._b_row(p - 1) if p else None
        jx = int(np.searchsorted(u, d_x, "right")) - 1  # last distinct deadline <= d_x
        w_dx = w[jx] if jx >= 0 else 0.0
        b_dx = back[jx] if (back is not None and jx >= 0) else 0.0
        if max(c_prev + b_dx, c_x) + w_dx + tcr_x > d_x + eps:  # (B, C) at b = d_x
            return False
        j0 = jx + 1
        if j0 >= len(u):
            return True
        base = c_x if back is None else np.maximum(c_prev + back[j0:], c_x)
        return bool(np.all(base + w[j0:] + tcr_x <= u[j0:] + eps))  # (B, C) at b > d_x

    def insert(self, x: int, p: int) -> np.ndarray:
        """The order with ``x`` inserted before ``S[p]``."""
        return np.insert(self.order, p, x)

    def valid_positions(self, x: int, lo: int = 0, use_theorems: bool = True) -> list[int]:
        """Every position p >= lo where x can be inserted (Algorithm 1 lines 06-13)."""
        a, b = self.theorem_range(x, lo) if use_theorems else (lo, self.n)
        return [p for p in range(a, b + 1) if self.can_insert(x, p)]
