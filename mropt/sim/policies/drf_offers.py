"""DRF's offers on a saturated cluster: blocked nodes, parked users, runs of launches.

The part of :class:`mropt.sim.policies.drf._DrfBase` that speeds up a replay of a busy trace
without changing a decision (:mod:`mropt.sim.policies.drf`'s docstring, "Speed on a saturated
cluster"): a blocked node is offered only to the jobs that may take it (``_assign_blocked``,
``new_work_nodes``; :mod:`mropt.sim.policies.blocked_nodes`), users whose waiting tasks are too
big for a node are parked by demand (``_park_keys``; :mod:`mropt.sim.policies.parked_users`),
and a user that stays first after a launch gets its next tasks in one ``sim.launch(count=k)``
(``_launch_run``, in :mod:`mropt.sim.policies.drf_runs`). On a cluster without slots the engine
gives a pass's nodes in one call (``offer_nodes``: what an offer reads is set up once a pass, a
node whose capacity grew since it was blocked is unblocked without a call), and the heap's stale
entries are dropped once they pass a bound (``_compact``).
"""

from __future__ import annotations

import heapq
from bisect import insort
from collections.abc import Sequence
from operator import le
from typing import TYPE_CHECKING, Any

from mropt.sim.demand_index import DemandIndex
from mropt.sim.policies.blocked_nodes import BlockedNodes
from mropt.sim.policies.drf_runs import _EPS, _UNKNOWN, DrfRuns, _Vector
from mropt.sim.policies.parked_users import ParkedUsers
from mropt.sim.state import ANY, MAP, REDUCE
from mropt.sim.view import SimView

#: outcomes of an offer of a node to a job
_LAUNCHED, _DECLINED, _NO_FIT = 0, 1, 2


def _over(demand: tuple[float, ...] | None, free: Sequence[float]) -> bool:
    """Whether a two-resource ``demand`` exceeds ``free`` (False when it cannot tell: no demand or
    another number of resources; the caller then looks the long way)."""
    return demand is not None and len(demand) == 2 and (demand[0] > free[0] + _EPS or demand[1] > free[1] + _EPS)


def _lowest(keys: tuple[tuple[tuple[float, ...], int], ...]) -> tuple[tuple[tuple[float, ...], int], ...]:
    """The pairs of ``keys`` (distinct (demand, slot type) pairs) with no other pair of their slot type at or
    below them in every amount. A node that fits a pair left out fits the pair below it, so a user parked
    under these alone is found by the same nodes (``ParkedUsers.best``: the smallest valid entry over the
    groups that fit), with fewer entries to park and to drop when they go stale."""
    return tuple(k for k in keys if not any(o is not k and o[1] == k[1] and all(map(le, o[0], k[0])) for o in keys))


class DrfOffers(DrfRuns):
    """The accelerated offers of :class:`~mropt.sim.policies.drf._DrfBase` (a mixin: it uses its state).

    ``_assign_fast`` makes the decisions of ``_DrfBase._assign_reference`` faster. The users sit in
    a heap of their keys (``_push``; stale entries dropped by version), not sorted at each launch;
    the pushes of the users whose attempts ended wait for the next offer (``_flush``). A user none
    of whose jobs has runnable tasks leaves the heap and comes back with its last entry when it may
    have work again (``_back``); a user offered the node without launching stays out of the heap
    until the call ends (its jobs are not offered the node again in this call either way). Users
    whose waiting tasks are all too big for the node are parked by demand (``_set_aside``,
    :class:`ParkedUsers`): the first parked user that fits (``best``) changes only when taken (users
    parked in this call do not fit, and the node's capacity changes only at a launch); it is looked
    for only when the heap's first entry does not come before every parked entry, and once taken
    only when needed again. A node whose offer ends with no launch is blocked
    (``_still_blocked``). A job whose next maps are too big for the node is passed by without an
    offer call, and one whose next maps (of one demand) fit is offered the node by ``_offer``'s steps
    spelled out; a user that stays first after a launch gets its next tasks in one call
    (``_launch_run``). A user is parked only under the pairs of its waiting tasks that no other is
    below (``_lowest``), and a launching user whose launching job is its first with work gets its tie
    key without ``_next_tie`` (``tests/sim/test_sim_drf_park_lowest.py``).
    """

    sim: SimView
    blocking: bool
    _slots: bool
    _n_res: int
    _two: bool
    _totals: list[float]
    _use: list[list[float]]
    _share: list[float]
    _ver: list[int]
    _jobs_of: list[list[int]]
    _entry: list[tuple[float, float, int, int]]
    _user_of: dict[int, int]
    _launched_type: int
    _check: bool
    _went: int
    _mute: float
    reference: bool
    _fresh: list[int]
    _index: DemandIndex
    _volatile: set[int]
    _blocked: BlockedNodes
    _passed: int
    _parked: ParkedUsers
    _parked_at: list[Any]
    _heap: list[tuple[float, float, int, int]]
    _in_heap: list[bool]
    _later: dict[int, float]
    _idle_before: list[int]
    _settling: set[int]
    _vectors: dict[tuple[Any, int], _Vector]
    _low: list[float]
    _launched_demand: tuple[float, ...] | None
    _parking: bool
    _runs: bool
    _inline: bool
    trace: list[Any] | None
    skips: dict[int, int]
    self_check: bool
    #: the heap's length past which its stale entries are dropped (``_compact``)
    _heap_bound = 64

    if TYPE_CHECKING:

        def _vector(self, demand: tuple[float, ...] | None, stype: int) -> _Vector: ...
        def _dominant(self, vec: list[float]) -> float: ...
        def _next_tie(self, u: int) -> float: ...
        def _push(self, u: int, tie: float | None = None) -> None: ...
        def _flush(self) -> None: ...
        def _add(
            self, u: int, demand: tuple[float, ...] | None, stype: int, count: float = 1.0, times: int = 1
        ) -> None: ...
        def _after_launch(self, job: int, level: int) -> None: ...
        def _run_level(self, job: int) -> int | None: ...
        def _offer(self, job: int, node: int) -> int: ...
        def _level(self, job: int) -> int: ...
        def _fits_one(self, demand: tuple[float, ...] | None, stype: int, node: int) -> bool: ...
        def _room(self, node: int) -> bool: ...
        def _capacity(self, node: int) -> list[float]: ...
        def assign(self, node: int) -> None: ...

    def offer_nodes(self, nodes: Sequence[int]) -> int:
        """The engine's pass of an instant on a cluster without slots (``EventOffers._pass``): ``assign``
        of each node in order that is up, while some task is runnable; how many of ``nodes`` it went
        through (the rest are held). Speed only: the accelerated offers take the pass's nodes in one
        ``_assign_fast`` call, which sets up once what an offer reads."""
        sim = self.sim
        if not self.reference and sim.now != self._mute:
            self._assign_fast(nodes)
            return self._went
        pending = sim.runnable
        node_up = sim.node_up
        for i, node in enumerate(nodes):
            if not (pending[MAP] or pending[REDUCE]):
                return i
            if node_up[node]:
                self.assign(node)
        return len(nodes)

    def _assign_fast(self, nodes: Sequence[int]) -> None:
        """Offer each node of ``nodes`` that is up, in order, while some task is runnable (a node down, or
        nothing runnable, would launch nothing), as ``_DrfBase._assign_reference`` does (the same
        decisions), with the accelerations of the class docstring; ``_went``: how many nodes it went
        through (``offer_nodes``)."""
        sim = self.sim
        heap = self._heap
        ver = self._ver
        jobs_of = self._jobs_of
        jobs = sim.jobs
        parked_at = self._parked_at
        idle_before = self._idle_before
        settling = self._settling
        inline = self._inline  # (``_offer``'s and ``_next_tie``'s steps below: ``_DrfBase.start``)
        level_of = self._level
        launch = sim.launch_tasks
        skips = self.skips
        vectors = self._vectors
        index = self._index
        parked = self._parked
        tops = parked.tops
        valid = self._parked_valid
        room = self._room
        low = self._low if len(self._low) == 2 and not self._slots else None  # (``_room`` spelled out)
        slot_free = sim.free if self._slots else None
        pending = sim.runnable
        slots_only = slot_free is not None and not self._n_res  # (``_room`` is the test of slots below)
        node_up = sim.node_up
        blocked_flags = self._blocked.flag_bytes
        blocked_rows = self._blocked.free_rows
        blocked_decliners = self._blocked.decliners
        free_resources = sim.free_resources
        if len(heap) > self._heap_bound:
            self._compact()
        self._went = len(nodes)
        for i, node in enumerate(nodes):
            if not (pending[MAP] or pending[REDUCE]):
                self._went = i
                return
            if not node_up[node]:
                continue
            if self._later:
                self._flush()
            if settling:
                settling.clear()  # (their tasks are runnable now: ``_next_tie`` may move on)
            if self.self_check:
                self._check_idle_before()
            free_res = free_resources[node]
            if blocked_flags[node]:  # (a node not blocked: ``take`` says None)
                then = blocked_rows[node]
                if low is not None and (free_res[0] > then[0] + _EPS or free_res[1] > then[1] + _EPS):
                    blocked_flags[node] = 0  # its capacity grew: ``_still_blocked``'s False, spelled out
                    if blocked_decliners:
                        blocked_decliners.pop(node, None)
                elif self._still_blocked(node):
                    continue
            aside: list[tuple[float, float, int, int]] = []  # users offered this node that launched nothing
            offered: set[int] = set()  # jobs offered this call that declined or did not fit
            declined: list[int] = []
            exhausted = False  # every job with work was offered the node and none launched
            while (
                (free_res[0] + _EPS >= low[0] and free_res[1] + _EPS >= low[1])
                if low is not None
                else (slots_only or room(node))
            ):
                if slot_free is not None and not (
                    (pending[MAP] and slot_free[MAP][node] > 0) or (pending[REDUCE] and slot_free[REDUCE][node] > 0)
                ):
                    exhausted = True  # no task waits for a type of slot the node has free: nothing fits
                    break
                if not index.any_fits(node):
                    exhausted = True  # the scan below would find every job too big for the node
                    break
                launcher = -1
                tie = None  # the launcher's next tie key, when ``_launch_run`` knows it
                # the first parked user that fits (``best``, once ``known``: class docstring)
                best = None
                known = False
                while True:
                    while heap and heap[0][3] != ver[heap[0][2]]:
                        heapq.heappop(heap)  # stale
                    if known:
                        if best is not None and not valid(*best):
                            best = parked.best(free_res, self._slot_free(node), valid)
                    elif tops and not (heap and heap[0] < tops[0][0]):  # (``_parked_may_come_first``)
                        best = parked.best(free_res, self._slot_free(node), valid)
                        known = True
                    if heap and (best is None or heap[0] < best[0]):
                        entry = heapq.heappop(heap)
                    elif best is not None:
                        entry = parked.pop(best[1])
                        parked_at[entry[2]] = None
                        best = None
                        known = False
                    else:
                        break
                    u = entry[2]
                    has_work = False
                    user_declined = False
                    mine = jobs_of[u]
                    idle = idle_before[u]  # (the jobs before it have no work: ``_next_tie``)
                    for job in mine[idle:] if idle else mine:
                        j = jobs[job]
                        runnable = j.runnable
                        if not (runnable[MAP] or runnable[REDUCE]):
                            continue
                        has_work = True
                        if job in offered:
                            user_declined = user_declined or job in declined
                            continue
                        if not runnable[REDUCE]:
                            # maps only, of the current stage: one demand too big for the node is what
                            # ``_offer`` would find (no fit, no skip), without its calls
                            stage = j.stages[j.cur]
                            demands = stage.demands
                            if len(demands) == 1:
                                d = demands[0]  # (``_over``, spelled out: most jobs met here are passed by)
                                if (
                                    d is not None
                                    and len(d) == 2
                                    and (d[0] > free_res[0] + _EPS or d[1] > free_res[1] + _EPS)
                                ):
                                    offered.add(job)
                                    continue
                                if inline and stage.type == MAP and stage.pending:
                                    # ``_offer``'s steps for such a job (its stage is ``launchable(MAP)``)
                                    level = level_of(job)
                                    first, _, got, demand = launch(job, node, MAP, level)
                                    if first >= 0:
                                        self._launched_type = MAP
                                        self._launched_demand = demand
                                        self._add(u, demand, MAP)
                                        self._after_launch(job, got)
                                        launcher = u
                                        break
                                    offered.add(job)
                                    if level != ANY and self._fits_one(d, MAP, node):
                                        skips[job] += 1  # it fits, but no task at the level allowed
                                        declined.append(job)
                                        user_declined = True
                                    continue
                        result = self._offer(job, node)
                        if result == _LAUNCHED:
                            launcher = u
                            break
                        offered.add(job)
                        if result == _DECLINED:
                            declined.append(job)
                            user_declined = True
                    if launcher >= 0:
                        # (not when the node holds no second such task, or has no slot of its type left:
                        # the usual case when saturated)
                        if (
                            self._runs
                            and not _over(self._launched_demand, free_res)
                            and (slot_free is None or slot_free[self._launched_type][node] > 0)
                        ):
                            tie = self._launch_run(u, job, node, heap, best if known else _UNKNOWN)
                        break
                    self._set_aside(entry, has_work, user_declined, aside)
                if launcher < 0:
                    exhausted = True
                    break
                if tie is None and inline and not settling:
                    # ``_next_tie``'s answer without the call when the launching job is the user's first
                    # with work (at its ``_idle_before`` position) and has maps of its current stage left
                    at = idle_before[launcher]
                    if at < len(mine) and mine[at] == job:
                        runnable = j.runnable
                        stage = j.stages[j.cur]  # (a job that launched: its current stage exists)
                        if (runnable[MAP] or runnable[REDUCE]) and stage.type == MAP and stage.pending:
                            vector = vectors.get((stage.demands[0], MAP))
                            if vector is not None:
                                tie = vector[2]
                self._push(launcher, tie)  # the launching user's new share
            else:
                exhausted = True  # full: what is left is below every task's demand (no job fits)
            for entry in aside:
                heapq.heappush(heap, entry)
            if exhausted:
                cap = list(free_res) if slot_free is None else self._capacity(node)  # (``_capacity``)
                self._blocked.block(node, cap, len(self._fresh), tuple(declined))
            if declined:
                self._ask_check()

    def _compact(self) -> None:
        """Drop the heap's stale entries (a user's older entries, left by ``_push``: on a busy day most of
        the heap, each push and pop paying for them), in place; the next bound twice what is left.
        Speed only: the valid entries, and so the first of them at every look, are the same."""
        heap = self._heap
        ver = self._ver
        heap[:] = [entry for entry in heap if entry[3] == ver[entry[2]]]
        heapq.heapify(heap)
        self._heap_bound = 2 * len(heap) + 64

    def _check_idle_before(self) -> None:
        """``self_check``: no job before its user's ``_idle_before`` position has work (a plain look)."""
        jobs = self.sim.jobs
        for u, mine in enumerate(self._jobs_of):
            for job in mine[: self._idle_before[u]]:
                runnable = jobs[job].runnable
                if runnable[MAP] or runnable[REDUCE]:
                    raise AssertionError(f"drf: job {jobs[job].id!r} has work before user {u}'s idle position")

    def _set_aside(
        self, entry: tuple[float, float, int, int], has_work: bool, declined: bool, aside: list[Any]
    ) -> None:
        """A user offered the node without a launch: parked if it did not decline and every waiting task of
        it is too big for the node, else aside until the offer ends; out of the heap if it has no work."""
        u = entry[2]
        if not has_work:
            self._in_heap[u] = False
            return
        keys = None if declined or not self._parking else self._park_keys(u)
        if keys is None:
            aside.append(entry)
            return
        self._parked_at[u] = keys
        for key in keys:
            self._parked.park(key, entry)

    def _still_blocked(self, node: int) -> bool:
        """Unblock ``node``; if its capacity did not grow since it was blocked, offer it only to the
        jobs that may take it (``_assign_blocked``) and say so.

        A node is blocked when an offer ends with every job that has work either not fitting it or
        declining it: its free capacity is kept, with the jobs that declined. Until its capacity
        grows (an attempt on it ends), a job that did not fit still cannot, so the next offer of the
        node goes only to the jobs that may have gained work since (arrivals, new stages, re-queued
        tasks: the ``_fresh`` list), the jobs that declined, and the jobs whose next task's demand
        can change: in the same order and with the same outcome as the whole heap would give.
        """
        block = self._blocked.take(node)
        if block is None:
            return False
        then, epoch, decliners = block
        now_cap = self.sim.free_resources[node] if not self._slots else self._capacity(node)
        if len(now_cap) == 2:
            grew = now_cap[0] > then[0] + _EPS or now_cap[1] > then[1] + _EPS
        else:
            grew = any(c > t + _EPS for c, t in zip(now_cap, then))
        if grew:
            return False
        self._assign_blocked(node, epoch, decliners)
        return True

    def _parked_may_come_first(self, heap: list[tuple[float, float, int, int]]) -> bool:
        """Whether some parked entry may come before the heap's first (else the parked users need no look)."""
        low = self._parked.lowest()
        return low is not None and not (heap and heap[0] < low)

    def _parked_valid(self, entry: tuple[Any, ...], key: Any) -> bool:
        """Whether a parked ``entry`` is still its user's entry, parked under ``key``."""
        u = entry[2]
        keys = self._parked_at[u]
        return entry[3] == self._ver[u] and keys is not None and key in keys

    def _slot_free(self, node: int) -> tuple[bool, bool]:
        if not self._slots:
            return (True, True)
        free = self.sim.free
        return (free[MAP][node] > 0, free[REDUCE][node] > 0)

    def _park_keys(self, u: int) -> tuple[tuple[tuple[float, ...], int], ...] | None:
        """The (demand, slot type) pairs of the user's waiting tasks, less those at or above another pair of
        their slot type in every amount (``_lowest``); None if one has no demand or a stage has several.
        (The user's jobs before its ``_idle_before`` position have none.)"""
        sim = self.sim
        jobs = sim.jobs
        keys: dict[tuple[tuple[float, ...], int], None] = {}
        mine = self._jobs_of[u]
        idle = self._idle_before[u]
        for job in mine[idle:] if idle else mine:
            j = jobs[job]
            runnable = j.runnable
            if not runnable[REDUCE]:
                if not runnable[MAP]:
                    continue
                # maps only: ``launchable(MAP)``'s common case (the current stage, of maps, with pending tasks)
                stages, k = j.stages, j.cur
                stage = stages[k] if k < len(stages) else None
                if stage is None or stage.type != MAP or not stage.pending:
                    stage = j.launchable(MAP, sim.slowstart)
                    if stage is None:
                        continue
                demands = stage.demands
                if len(demands) != 1 or demands[0] is None:
                    return None
                keys[(demands[0], MAP)] = None
                continue
            for stype in (MAP, REDUCE):
                if not runnable[stype]:
                    continue
                stage = j.launchable(stype, sim.slowstart)
                if stage is None:
                    continue
                if len(stage.demands) != 1 or stage.demands[0] is None:
                    return None
                keys[(stage.demands[0], stype)] = None
        if len(keys) > 1:
            return _lowest(tuple(keys))
        return tuple(keys) or None

    def _assign_blocked(self, node: int, epoch: int, decliners: tuple[int, ...]) -> None:
        """Offer a blocked node to the jobs that may take it (``_still_blocked``'s docstring), in DRF's
        order: the candidates are sorted once; after a launch only the launcher's key and its job's
        work changed, so the jobs after it keep their order and the launcher's are put back by key."""
        sim = self.sim
        jobs = sim.jobs
        user_of = self._user_of
        entry = self._entry
        candidates = {job for job in self._fresh[epoch:] if job in user_of}
        candidates.update(job for job in decliners if job in user_of)
        candidates.update(self._volatile)
        declined: list[int] = []
        # the candidates with work by (user's key, arrival); the jobs before a launcher were offered
        order: list[tuple[Any, float, int]] | None = None
        while self._room(node):
            if not self._index.any_fits(node):
                self._blocked.block(node, self._capacity(node), len(self._fresh), tuple(declined))
                break
            if order is None:
                order = sorted(
                    (entry[user_of[job]][:3], jobs[job].submit, job)
                    for job in candidates
                    if jobs[job].runnable[MAP] or jobs[job].runnable[REDUCE]
                )
            launched = False
            for i, (_key, _submit, job) in enumerate(order):
                result = self._offer(job, node)
                if result == _LAUNCHED:
                    u = user_of[job]
                    self._push(u)
                    launched = True
                    key = entry[u][:3]
                    moved = [item for item in order[i:] if user_of[item[2]] == u]  # (the launcher first)
                    order = [item for item in order[i + 1 :] if user_of[item[2]] != u]
                    for _, submit, mine in moved:
                        if jobs[mine].runnable[MAP] or jobs[mine].runnable[REDUCE]:
                            insort(order, (key, submit, mine))
                    break
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
