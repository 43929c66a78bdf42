"""DRF's offers on a saturated cluster: blocked nodes, parked users, runs of launches.

The part of :class:`mropt.sim.policies.drf._DrfBase` that speeds up a replay of a busy trace
without changing a decision (:mod:`mropt.sim.policies.drf`'s docstring, "Speed on a saturated
cluster"): a blocked node is offered only to the jobs that may take it (``_assign_blocked``,
``new_work_nodes``; :mod:`mropt.sim.policies.blocked_nodes`), users whose waiting tasks are too
big for a node are parked by demand (``_park_keys``; :mod:`mropt.sim.policies.parked_users`),
and a user that stays first after a launch gets its next tasks in one ``sim.launch(count=k)``
(``_launch_run``).
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any

from mropt.fairness.drf import share_key_with_tie
from mropt.sim.demand_index import DemandIndex
from mropt.sim.policies.blocked_nodes import BlockedNodes
from mropt.sim.policies.parked_users import ParkedUsers
from mropt.sim.state import MAP, REDUCE
from mropt.sim.view import SimView

_EPS = 1e-9
#: outcomes of an offer of a node to a job
_LAUNCHED, _DECLINED, _NO_FIT = 0, 1, 2
#: ``_launch_run``'s ``best`` when the first fitting parked user was not looked for
_UNKNOWN: Any = object()
#: a task's resource vector, its dominant share and its tie key (``_DrfBase._vector``)
_Vector = tuple[list[float], float, float]


class DrfOffers:
    """Offer methods of :class:`~mropt.sim.policies.drf._DrfBase` (a mixin: it uses its state)."""

    sim: SimView
    blocking: bool
    _slots: bool
    _n_res: int
    _use: list[list[float]]
    _ver: list[int]
    _jobs_of: list[list[int]]
    _entry: list[tuple[float, float, int, int]]
    _user_of: dict[int, int]
    _launched_type: int
    _check: bool
    _fresh: list[int]
    _index: DemandIndex
    _volatile: set[int]
    _blocked: BlockedNodes
    _passed: int
    _parked: ParkedUsers
    _parked_at: list[Any]

    if TYPE_CHECKING:

        def _vector(self, demand: tuple[float, ...] | None, stype: int) -> _Vector: ...
        def _dominant(self, vec: list[float]) -> float: ...
        def _next_tie(self, u: int) -> float: ...
        def _push(self, u: int, tie: float | None = None) -> None: ...
        def _add(self, u: int, demand: tuple[float, ...] | None, stype: int, count: float = 1.0) -> None: ...
        def _after_launch(self, job: int, level: int) -> None: ...
        def _run_level(self, job: int) -> int | None: ...
        def _offer(self, job: int, node: int) -> int: ...
        def _room(self, node: int) -> bool: ...
        def _capacity(self, node: int) -> list[float]: ...

    def _parked_may_come_first(self, heap: list[tuple[float, float, int, int]]) -> bool:
        """Whether some parked entry may come before the heap's first (else the parked users need no look)."""
        low = self._parked.lowest()
        return low is not None and not (heap and heap[0] < low)

    def _parked_valid(self, entry: tuple[Any, ...], key: Any) -> bool:
        """Whether a parked ``entry`` is still its user's entry, parked under ``key``."""
        u = entry[2]
        keys = self._parked_at[u]
        return entry[3] == self._ver[u] and keys is not None and key in keys

    def _launch_run(self, u: int, job: int, node: int, heap: list[tuple[float, float, int, int]], best: Any) -> None:
        """User ``u`` just launched a task of ``job`` on ``node``: launch at once the next ones it would get.

        One at a time, the offer of the node would go on with the first user in DRF's order; ``u``
        stays first while its key (its share after each launch) is below the first other user's:
        the heap's smallest valid entry or the first parked user that fits the node (``best``:
        found before this launch, or ``_UNKNOWN``: looked for now unless the heap's first entry
        comes before every parked one; one found before still holds, as the node's capacity only
        shrank since, so no other parked user can come first).
        Those launches are made by one ``sim.launch(count=k)``, which starts exactly what k
        calls would (stopping where a task does not fit or none is left at the level).
        """
        sim = self.sim
        j = sim.jobs[job]
        stype = self._launched_type
        stage = j.launchable(stype, sim.slowstart)
        if stage is None or len(stage.demands) != 1:
            return
        limit = min(j.runnable[stype], self._fit_count(node, stage.demands[0], stype))
        level = self._run_level(job)
        if limit <= 0 or level is None:
            return  # (the usual case on a saturated cluster: the launch filled the node)
        ver = self._ver
        while heap and heap[0][3] != ver[heap[0][2]]:
            heapq.heappop(heap)
        rival: tuple[Any, ...] | None = heap[0][:3] if heap else None
        if best is _UNKNOWN:
            best = None
            if self._parked_may_come_first(heap):
                best = self._parked.best(sim.free_resources[node], self._slot_free(node), self._parked_valid)
        if best is not None and (rival is None or best[0][:3] < rival):
            rival = best[0][:3]
        vec = self._vector(stage.demands[0], stype)[0]
        use = list(self._use[u])
        tie = self._next_tie(u)
        count = 0
        if rival is None:
            count = limit  # nobody else could take the node: every task that fits
        while count < limit:
            key = share_key_with_tie(self._dominant(use), tie, u)
            if rival is not None and not key < rival:
                break
            count += 1
            for k, x in enumerate(vec):
                if x:
                    use[k] += x
        if count == 0:
            return
        _, started, got, _ = sim.launch_tasks(job, node, stype, level, count)
        for _ in range(started):
            self._add(u, stage.demands[0], stype)
            self._after_launch(job, got)

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

    def _slot_free(self, node: int) -> tuple[bool, bool]:
        if not self._slots:
            return (True, True)
        free = self.sim.free
        return (free[MAP][node] > 0, free[REDUCE][node] > 0)

    def _park_keys(self, u: int) -> tuple[tuple[tuple[float, ...], int], ...] | None:
        """The (demand, slot type) pairs of the user's waiting tasks; None if one has no demand or a stage has several."""
        sim = self.sim
        keys: dict[tuple[tuple[float, ...], int], None] = {}
        for job in self._jobs_of[u]:
            j = sim.jobs[job]
            for stype in (MAP, REDUCE):
                if not j.runnable[stype]:
                    continue
                stage = j.launchable(stype, sim.slowstart)
                if stage is None:
                    continue
                if len(stage.demands) != 1 or stage.demands[0] is None:
                    return None
                keys[(stage.demands[0], stype)] = None
        return tuple(keys) or None

    def _assign_blocked(self, node: int, epoch: int, decliners: tuple[int, ...]) -> None:
        """Offer a blocked node to the jobs that may take it (``assign``'s docstring)."""
        sim = self.sim
        jobs = sim.jobs
        user_of = self._user_of
        entry = self._entry
        candidates = {job for job in self._fresh[epoch:] if job in user_of}
        candidates.update(job for job in decliners if job in user_of)
        candidates.update(self._volatile)
        offered: set[int] = set()
        declined: list[int] = []
        while self._room(node):
            if not self._index.any_fits(node):
                self._blocked.block(node, self._capacity(node), len(self._fresh), tuple(declined))
                break
            order = sorted(
                (entry[u][:3], jobs[job].submit, job)
                for job in candidates
                if job not in offered
                for u in (user_of[job],)
                if jobs[job].runnable[MAP] or jobs[job].runnable[REDUCE]
            )
            launched = False
            for _key, _submit, job in order:
                result = self._offer(job, node)
                if result == _LAUNCHED:
                    self._push(user_of[job])
                    launched = True
                    break
                offered.add(job)
                if result == _DECLINED:
                    declined.append(job)
            if not launched:
                self._blocked.block(node, self._capacity(node), len(self._fresh), tuple(declined))
                break
        else:  # full (``assign``)
            self._blocked.block(node, self._capacity(node), len(self._fresh), tuple(declined))
        if declined:
            self._ask_check()

    def new_work_nodes(self) -> list[int] | None:
        """The nodes not blocked, and the blocked ones where a job that gained work may fit (``assign``)."""
        if not self.blocking or self._volatile:
            return None
        fresh = self._fresh
        slot = {MAP: (1.0, 0.0), REDUCE: (0.0, 1.0)} if self._slots else {MAP: (), REDUCE: ()}
        none = (0.0,) * self._n_res
        needs = {
            (demand if demand is not None else none) + slot[stype]
            for job in dict.fromkeys(fresh[self._passed :])
            for demand, stype in self._index.wanted(job)
        }
        self._passed = len(fresh)
        return self._blocked.worth_offering(sorted(needs), len(fresh))

    def _ask_check(self) -> None:
        """After this instant's pass: is anything running? (see ``on_timer``)"""
        if not self._check:
            self._check = True
            self.sim.wake_at(self.sim.now, "check")
