"""DRF's runs of launches: a user that stays first after a launch gets its next tasks at once (``drf``).

The part of :class:`mropt.sim.policies.drf_offers.DrfOffers` (a mixin of it) that, after a launch
of user ``u`` on a node, launches in one ``sim.launch(count=k)`` the next tasks the offer would give
``u`` one at a time (``_launch_run``): ``u`` stays first in DRF's order (DDRF paper sec. 3.1,
progressive filling; Ghodsi et al., NSDI 2011, Algorithm 1) while its key is below the next
user's, and ``_run_length`` counts those tasks without building each key (the share is rounded to
12 digits only within 1e-11 of the rival's). Speed only: the same launches as one at a time
(``tests/sim/test_sim_drf_runs.py``, ``tests/sim/test_sim_drf_reference.py``).
"""

from __future__ import annotations

import heapq
import math
from typing import TYPE_CHECKING, Any

from mropt.fairness.drf import share_key_with_tie
from mropt.sim.policies.parked_users import ParkedUsers
from mropt.sim.view import SimView

_EPS = 1e-9
#: ``_launch_run``'s ``best`` when the first fitting parked user was not looked for
_UNKNOWN: Any = object()
#: a task's resource vector, its dominant share and its tie key (``_DrfBase._vector``)
_Vector = tuple[list[float], float, float]


class DrfRuns:
    """Runs of launches of :class:`~mropt.sim.policies.drf._DrfBase`'s accelerated offers (a mixin: it uses its state)."""

    sim: SimView
    _slots: bool
    _two: bool
    _totals: list[float]
    _use: list[list[float]]
    _share: list[float]
    _ver: list[int]
    _launched_type: int
    _parked: ParkedUsers

    if TYPE_CHECKING:

        def _vector(self, demand: tuple[float, ...] | None, stype: int) -> _Vector: ...
        def _dominant(self, vec: list[float]) -> float: ...
        def _next_tie(self, u: int) -> float: ...
        def _add(
            self, u: int, demand: tuple[float, ...] | None, stype: int, count: float = 1.0, times: int = 1
        ) -> None: ...
        def _after_launch(self, job: int, level: int) -> None: ...
        def _run_level(self, job: int) -> int | None: ...
        def _parked_may_come_first(self, heap: list[tuple[float, float, int, int]]) -> bool: ...
        def _parked_valid(self, entry: tuple[Any, ...], key: Any) -> bool: ...
        def _slot_free(self, node: int) -> tuple[bool, bool]: ...

    def _launch_run(
        self, u: int, job: int, node: int, heap: list[tuple[float, float, int, int]], best: Any
    ) -> float | None:
        """User ``u`` just launched a task of ``job`` on ``node``: launch at once the next ones it would get.

        One at a time, the offer of the node would go on with the first user in DRF's order; ``u``
        stays first while its key (its share after each launch) is below the first other user's:
        the heap's smallest valid entry or the first parked user that fits the node (``best``:
        found before this launch, or ``_UNKNOWN``: looked for now unless the heap's first entry
        comes before every parked one; one found before still holds, as the node's capacity only
        shrank since, so no other parked user can come first).
        Those launches are made by one ``sim.launch(count=k)``, which starts exactly what k
        calls would (stopping where a task does not fit or none is left at the level).
        Returns the user's next tie key (``_next_tie``) when it was looked up and nothing was
        launched (nothing changed since: the caller's ``_push`` takes it), else None.

        A share above the heap's first key by more than ``_run_length``'s band (most calls on a busy
        day) is a run of 0 whatever the parked users: it returns None at once (the rival is that
        entry or a parked one before it, with a key no larger; a 0 key is below any positive share's).
        """
        ver = self._ver
        while heap and heap[0][3] != ver[heap[0][2]]:
            heapq.heappop(heap)
        if heap:
            r = heap[0][0]
            if r > 0 and self._share[u] > r * (1.0 + 1e-11):  # (``_run_length``'s ``high``)
                return None
        sim = self.sim
        j = sim.jobs[job]
        stype = self._launched_type
        stage = j.launchable(stype, sim.slowstart)
        if stage is None or len(stage.demands) != 1:
            return None
        limit = min(j.runnable[stype], self._fit_count(node, stage.demands[0], stype))
        level = self._run_level(job)
        if limit <= 0 or level is None:
            return None  # (the usual case on a saturated cluster: the launch filled the node)
        rival: tuple[Any, ...] | None = heap[0][:3] if heap else None
        if best is _UNKNOWN:
            best = None
            if self._parked_may_come_first(heap):
                best = self._parked.best(sim.free_resources[node], self._slot_free(node), self._parked_valid)
        if best is not None and (rival is None or best[0][:3] < rival):
            rival = best[0][:3]
        if rival is None:
            count = limit  # nobody else could take the node: every task that fits (no tie key needed)
        else:
            tie = self._next_tie(u)
            count = self._run_length(u, self._vector(stage.demands[0], stype)[0], tie, rival, limit)
            if count == 0:
                return tie
        _, started, got, _ = sim.launch_tasks(job, node, stype, level, count)
        if started:
            # the shares of ``started`` calls of ``_add``; ``_after_launch`` of a run is the same
            # each time (its level is the run's), so once is what ``started`` calls leave
            self._add(u, stage.demands[0], stype, 1.0, started)
            self._after_launch(job, got)
        return None

    def _run_length(self, u: int, vec: list[float], tie: float, rival: tuple[Any, ...], limit: int) -> int:
        """How many of ``limit`` more tasks of resource vector ``vec`` user ``u`` takes in a row: while
        its key before each, ``share_key_with_tie`` of its share then, is below ``rival``'s.

        The key rounds the share to 12 significant digits, which moves it by less than 5e-12 of
        itself; so a share below (above) a positive rival's by more than 1e-11 of it has a key below
        (above) the rival's without the rounding being made (only shares that close are rounded).
        The shares are summed task by task, as ``_add`` sums them.
        """
        use = list(self._use[u])
        r = rival[0]
        low, high = (r * (1.0 - 1e-11), r * (1.0 + 1e-11)) if r > 0 else (-math.inf, math.inf)
        count = 0
        if self._two:
            a, b = use
            x, y = vec
            t0, t1 = self._totals
            while count < limit:
                share = max(a / t0, b / t1)
                if share >= low and (share > high or not share_key_with_tie(share, tie, u) < rival):
                    break
                count += 1
                a += x
                b += y
            return count
        while count < limit:
            share = self._dominant(use)
            if share >= low and (share > high or not share_key_with_tie(share, tie, u) < rival):
                break
            count += 1
            for k, x in enumerate(vec):
                if x:
                    use[k] += x
        return count

    def _fit_count(self, node: int, demand: tuple[float, ...] | None, stype: int) -> int:
        """How many tasks of ``demand`` and slot type the node's free capacity holds."""
        sim = self.sim
        count = sim.free[stype][node] if self._slots else 1 << 30
        if demand is not None:
            free = sim.free_resources[node]
            for k, x in enumerate(demand):
                if x > 0:
                    count = min(count, int((free[k] + _EPS) / x))
        return max(count, 0)
