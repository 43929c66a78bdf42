"""Fair's heartbeat on kept orders: the accelerated part of :class:`mropt.sim.policies.fair.Fair`.

The rule is ``Fair._assign_reference`` (Hadoop 1.0.3's ``FairScheduler.assignTasks`` written plain:
the pools and their jobs sorted afresh at every task). ``FairOffers._assign_fast`` makes the same
decisions without sorting: each pool keeps its candidate jobs (runnable, with pending tasks of the
type) sorted by their comparator keys (``_set_key``, refreshed for the jobs marked ``dirty``:
``_refresh_keys``), and the pools with a candidate are kept sorted by their ``FairShareComparator``
keys between heartbeats (``_reorder``: a pool moves when an input of its key changed, ``repool``;
after a launch, at once and for the launch's slot type only: ``_launched``). An order of one pool
(every job of a SWIM day is in ``default``) keeps its pool in place, its key stale (``lone_stale``),
through its launches and its tasks' ends, without a ``_place`` call.
A replay with a pool per user has thousands of idle pools; Hadoop sorts them all at every task.
A NODE-level (RACK-level) map is asked for only on a node (rack) among the job's input places
(``_input_places``) whose locality stack still holds a pending task (the stack's ``pop``, what
``Stage.take`` tries first): on the Alibaba window 3 map launches in 4 found none, the places being
every node holding input of any of the stage's tasks.
A heartbeat that launches nothing is answered without the walk where the answer kept since the
last change applies (:mod:`~mropt.sim.policies.fair_quiet`; under ``self_check`` compared with the walk).
Under ``self_check`` the kept pool order is compared with a sort at every heartbeat;
``tests/sim/test_sim_heartbeat_reference.py`` requires the same event log of both heartbeats.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import numpy as np

from mropt.sim.policies.fair_quiet import NEVER, QUIET_MOST, FairQuiet
from mropt.sim.policies.fair_shares import _Pool
from mropt.sim.state import ACTIVE, ANY, MAP, NODE, NONE, RACK, REDUCE


class FairOffers(FairQuiet):
    """The kept orders and the accelerated heartbeat of :class:`~mropt.sim.policies.fair.Fair` (a mixin:
    it uses Fair's state)."""

    if TYPE_CHECKING:

        def _update(self) -> None: ...
        def _job_key(self, pool: _Pool, job: int, stype: int) -> tuple[Any, ...]: ...
        def _pool_key(self, pool: _Pool, stype: int) -> tuple[Any, ...]: ...
        def _allowed_level(self, job: int, pool: _Pool) -> int: ...
        def _no_locality(self, job: int, stage_index: int) -> bool: ...

    def _refresh_keys(self) -> None:
        """Place the changed jobs in their pools' candidate lists (live running counts)."""
        jobs = self.sim.jobs
        inline = self.inline_launched  # (``_job_key`` inline: the comparators' keys, FairAssign)
        weight = self.weight
        for job in self.dirty:
            j = jobs[job]
            pool = self.pools[j.pool]
            ok = self.is_runnable[job] and j.status == ACTIVE
            keys = self.key[job]
            for stype in (MAP, REDUCE):
                if not ok or j.runnable[stype] <= 0:
                    new = None
                elif not inline:
                    new = self._job_key(pool, job, stype)
                elif pool.fifo:
                    new = (-j.priority, j.submit, job)
                else:
                    new = (j.running[stype] / weight[job], j.submit, job)
                if new != keys[stype]:  # (``_set_key``'s first test, without its call)
                    self._set_key(pool, job, stype, new)
        self.dirty.clear()

    def _set_key(self, pool: _Pool, job: int, stype: int, key: tuple[Any, ...] | None) -> None:
        old = self.key[job][stype]
        if old == key:
            return
        cand = pool.cand[stype]
        had = bool(cand)
        if old is not None:
            del cand[bisect_left(cand, old)]
        if key is not None:
            insort(cand, key)
        self.key[job][stype] = key
        if (old is None) != (key is None):  # the job enters or leaves its pool's candidates
            self.quiet = None
            if bool(cand) != had:  # the pool enters or leaves the order
                self.repool.add(pool.name)

    def pools_changed(self) -> None:
        """Every pool's key may have changed (its minShare or weight was set: ``hei``)."""
        self.repool.update(self.pools)

    def _reorder(self) -> None:
        """Bring ``order`` up to date for the pools in ``repool`` (their running counts, demands,
        minShares, weights or candidate jobs changed): each moves to its new key's place."""
        order_map, order_reduce = self.order
        for name in self.repool:
            pool = self.pools[name]
            map_cand, reduce_cand = pool.cand
            # (``_place``'s first case, the order's only pool, without its call: a SWIM day has one pool)
            if map_cand and len(order_map) == 1 and order_map[0][-1] == name:
                self.lone_stale[MAP] = True
            else:
                self._place(pool, MAP)
            if reduce_cand and len(order_reduce) == 1 and order_reduce[0][-1] == name:
                self.lone_stale[REDUCE] = True
            else:
                self._place(pool, REDUCE)
        self.repool.clear()
        if self.self_check:
            for stype in (MAP, REDUCE):
                if self.lone_stale[stype]:
                    self._fresh(stype)
                want = sorted(self._pool_key(pool, stype) for pool in self.pools.values() if pool.cand[stype])
                assert self.order[stype] == want, "fair: the kept pool order differs from a sort"

    def _fresh(self, stype: int) -> None:
        """The key of the one pool of ``order[stype]``, left as it was through its launches and its
        tasks' ends (``_launched``, ``_reorder``), recomputed."""
        self.lone_stale[stype] = False
        order = self.order[stype]
        name = order[0][-1]
        order[0] = self.placed[stype][name] = self._pool_key(self.pools[name], stype)

    def _pool_order(self, stype: int) -> list[_Pool]:
        """Pools with a candidate job, sorted by FairShareComparator (pool start time 0, then name)."""
        self._reorder()
        return [self.pools[key[-1]] for key in self.order[stype]]

    def _input_places(self, job: int, stage: int) -> tuple[int, frozenset[int] | None, frozenset[int]]:
        """(stage, the nodes, the racks) holding input of the job's map stage ``stage``, kept in
        ``input_places`` (None: a task has no replicas, ``_no_locality``). A map launched at NODE
        (RACK) level runs a pending task with input on the node (its rack): on another node the
        launch finds none (``Stage.take``; JobInProgress's ``nonRunningMapCache`` per host and rack)."""
        nodes: frozenset[int] | None = None
        racks: frozenset[int] = frozenset()
        if not self._no_locality(job, stage):
            replicas = self.sim.jobs[job].stages[stage].replicas
            assert replicas is not None
            if isinstance(replicas, list):
                nodes = frozenset(n for held in replicas for n in held if n >= 0)
            else:  # generated placement: an array (tasks, R), entries < 0 none
                nodes = frozenset(np.unique(replicas[replicas >= 0]).tolist())
            node_rack = self.sim.node_rack
            racks = frozenset(node_rack[n] for n in nodes)
        places = self.input_places[job] = (stage, nodes, racks)
        return places

    def _assign_fast(self, node: int) -> None:
        """The heartbeat of ``Fair._assign_reference`` (the same decisions) on the kept orders of the
        class docstring; a job that could not launch a task of a type on the node is not asked
        again in the same heartbeat (``failed``).

        Written for speed (a SWIM day makes 1.5 million of these, three in four launching nothing:
        a job waiting for a local map): the two slot types' counters are locals, not lists; the
        sets of the heartbeat are made at their first member; delay scheduling's level
        (``_allowed_level``) is inline, and the launch is ``sim.launch_tasks`` (its level is the
        attempt's). assignTasks' loop runs as two passes, one slot type each (the type it picks
        changes only where that type is rejected), and ``_launched``'s steps are inline
        (``inline_launched``: not where a subclass has its own ``_launched`` or ``_job_key``).
        """
        sim = self.sim
        now = sim.now
        if self.force_update or now >= self.next_update:
            self._update()
        if self.dirty:
            self._refresh_keys()
        # updateLocalityWaitTimes (the same additions and limit tests, heartbeat by heartbeat, in
        # ``FairQuiet._quiet_heartbeats``: a change here is made there too; test_sim_quiet_runs.py)
        waited = self.waited
        quiet = self.quiet
        skipped = self.skipped
        if skipped:
            since = 0.0 if self.last_heartbeat is None else now - self.last_heartbeat
            self.skipped = []
            if quiet is not None and skipped is quiet.jobs:  # (a quiet heartbeat's: the waits and their limits)
                for job, limit in quiet.limits:
                    waited[job] += since
                    if waited[job] >= limit:  # its level changed (FairQuiet)
                        quiet = self.quiet = None
            else:
                for job in skipped:
                    waited[job] += since
                if quiet is not None:
                    for job, limit in quiet.limits:
                        if waited[job] >= limit:
                            quiet = self.quiet = None
                            break
        self.last_heartbeat = now

        # the kept answer of a heartbeat that launches nothing (FairQuiet), where it applies
        said: Collection[int] | None = None
        if quiet is not None and self._quiet_answered(quiet, node, now):
            if not self.self_check:
                return
            said, self.skipped = self.skipped, []  # (self_check: the walk must leave the same)
            self.quiet_checked += 1
            launch_calls = [0]
            launch_tasks = sim.launch_tasks
        self_check = self.self_check
        slots_map, slots_reduce = sim.slots
        free_map, free_reduce = sim.free
        total_map, total_reduce = sim.total_slots
        runnable_total = self.runnable_total
        running_total = self.running_total
        multiple = self.assign_multiple
        # reported running tasks, the per-heartbeat caps and CapBasedLoadManager's verdicts
        s_map, f_map, s_reduce, f_reduce = slots_map[node], free_map[node], slots_reduce[node], free_reduce[node]
        rep_map, rep_reduce = s_map - f_map, s_reduce - f_reduce
        if not multiple:
            cap_map = cap_reduce = 1
        else:
            cap_map, cap_reduce = self.caps
            if cap_map == -1:
                cap_map = f_map
            if cap_reduce == -1:
                cap_reduce = f_reduce
        # (the reported counts are whole numbers: rep < ceil(x) exactly when rep < x)
        load = runnable_total[MAP] / total_map if total_map > 0 else 0.0
        rej_map = not rep_map < (s_map if load >= 1.0 else s_map * load)
        load = runnable_total[REDUCE] / total_reduce if total_reduce > 0 else 0.0
        rej_reduce = not rep_reduce < (s_reduce if load >= 1.0 else s_reduce * load)
        n_map = n_reduce = 0
        # jobs that could not launch a task of the type on this node at this heartbeat: they
        # cannot later in it either (the node's free capacity only shrinks, and a job's allowed
        # level and pending tasks change only when it launches), so later loops pass them by
        failed_map: set[int] | None = None
        failed_reduce: set[int] | None = None
        visited: set[int] | None = None
        launched_map: set[int] | None = None
        map_failed = False  # (a map pass launched nothing: the walk visited S, FairQuiet)
        if not (rej_map and rej_reduce):
            pools = self.pools
            jobs = sim.jobs
            launch = sim.launch_tasks
            if said is not None:  # (self_check: the walk must not try a launch)

                def counted(job: int, node: int, slot_type: int, level: int = ANY, count: int = 1) -> Any:
                    launch_calls[0] += 1
                    return launch_tasks(job, node, slot_type, level, count)

                launch = counted
            # ``_launched``'s steps (and ``_job_key``'s) inline, unless a subclass has its own (``inline``,
            # set by ``Fair.start``)
            inline = self.inline_launched
            key_of = self.key
            weight = self.weight
            lone_stale = self.lone_stale
            # The passes: assignTasks' loop takes one task at a time of the type it chooses, MAP where
            # the tracker reported no more maps than reduces (``rep_map <= rep_reduce``, which no launch
            # changes), until that type is rejected (its cap, every runnable task of it running, or no job
            # launching one), then the other type; without assignmultiple, one task in all. The runnable
            # counts change only at update() and a type's running count only at its own launches, so a
            # type's rejection is tested where its pass starts and after each of its launches.
            for stype in (MAP, REDUCE) if rep_map <= rep_reduce else (REDUCE, MAP):
                if stype == MAP:
                    if rej_map:
                        continue
                    if not multiple and n_reduce:
                        break
                    order_map = self.order[MAP]
                    input_places = self.input_places
                    rack = sim.node_rack[node]
                    preemption = self.preemption
                    last_level = self.last_level
                    node_delay = self.node_delay
                    rack_delay = self.rack_delay
                    while n_map != cap_map and running_total[MAP] != runnable_total[MAP]:
                        if self.repool or self_check:
                            self._reorder()
                        pool = None
                        job = -1
                        for pkey in order_map:
                            pool = pools[pkey[-1]]
                            if pool.running[MAP] >= pool.max[MAP]:
                                continue
                            for key in pool.cand[MAP]:
                                job = key[-1]
                                if failed_map is not None and job in failed_map:
                                    continue
                                if visited is None:
                                    visited = {job}
                                else:
                                    visited.add(job)
                                # _allowed_level (FairScheduler.getAllowedLocalityLevel), inline, with the
                                # places of the map stage's input (``_input_places``: None, no locality)
                                cur = jobs[job].cur
                                places = input_places.get(job)
                                if places is None or places[0] != cur:
                                    places = self._input_places(job, cur)
                                if places[1] is None or (
                                    preemption
                                    and (
                                        now - pool.last_at_min[MAP] > self.min_share_timeout
                                        or now - pool.last_at_half[MAP] > self.fair_share_timeout
                                    )
                                ):
                                    level = ANY
                                else:
                                    level = last_level[job]
                                    if level == NODE:
                                        wait = waited[job]
                                        if wait >= node_delay + rack_delay:
                                            level = ANY
                                        elif wait >= node_delay:
                                            level = RACK
                                    elif level == RACK:
                                        if waited[job] >= rack_delay:
                                            level = ANY
                                    else:
                                        level = ANY
                                    # no input on the node (its rack): the launch would find no task
                                    if (level == NODE and node not in places[1]) or (
                                        level == RACK and rack not in places[2]
                                    ):
                                        if failed_map is None:
                                            failed_map = {job}
                                        else:
                                            failed_map.add(job)
                                        continue
                                    # no pending task with input there left (the stage's locality stacks, which
                                    # ``Stage.take`` pops: JobInProgress's ``nonRunningMapCache``): the launch
                                    # would find none either; a stack's ``pop`` drops the tasks no longer
                                    # pending, as ``take``'s would (3 map launches in 4 on the Alibaba window
                                    # found no task)
                                    if level != ANY:
                                        st = jobs[job].stages[cur]
                                        stacks = st.node_q if level == NODE else st.rack_q
                                        if (
                                            stacks is not None
                                            and stacks.pop(node if level == NODE else rack, st.state) < 0
                                        ):
                                            if failed_map is None:
                                                failed_map = {job}
                                            else:
                                                failed_map.add(job)
                                            continue
                                first, _, got, _ = launch(job, node, MAP, level, 1)
                                if first < 0:
                                    if failed_map is None:
                                        failed_map = {job}
                                    else:
                                        failed_map.add(job)
                                    continue
                                if launched_map is None:
                                    launched_map = {job}
                                else:
                                    launched_map.add(job)
                                last_level[job] = ANY if got == NONE else got  # LocalityLevel.fromTask
                                waited[job] = 0.0
                                break
                            else:
                                job = -1
                                continue
                            break
                        if job < 0:
                            map_failed = True
                            break
                        assert pool is not None
                        n_map += 1
                        if not inline:
                            self._launched(pool, job, MAP)
                            continue
                        # ``_launched(pool, job, MAP)``: the running counts, the job's key (``_job_key``,
                        # the comparators) in its pool's candidates, the pool's place in the order
                        pool.running[MAP] += 1
                        running_total[MAP] += 1
                        keys = key_of[job]
                        old = keys[MAP]
                        cand = pool.cand[MAP]
                        j = jobs[job]
                        new: tuple[Any, ...] | None
                        if j.runnable[MAP] <= 0:
                            new = None
                        elif pool.fifo:
                            new = (-j.priority, j.submit, job)
                        else:
                            new = (j.running[MAP] / weight[job], j.submit, job)
                        if new != old:
                            if old is not None and new is not None and len(cand) == 1:
                                cand[0] = new
                            else:
                                if old is not None:
                                    del cand[bisect_left(cand, old)]
                                if new is not None:
                                    insort(cand, new)
                            keys[MAP] = new
                        if cand and len(order_map) == 1:  # (the order's only pool: this one)
                            lone_stale[MAP] = True
                        else:
                            self._place(pool, MAP)
                else:
                    if rej_reduce:
                        continue
                    if not multiple and n_map:
                        break
                    order_reduce = self.order[REDUCE]
                    while n_reduce != cap_reduce and running_total[REDUCE] != runnable_total[REDUCE]:
                        if self.repool or self_check:
                            self._reorder()
                        pool = None
                        job = -1
                        for pkey in order_reduce:
                            pool = pools[pkey[-1]]
                            if pool.running[REDUCE] >= pool.max[REDUCE]:
                                continue
                            for key in pool.cand[REDUCE]:
                                job = key[-1]
                                if failed_reduce is not None and job in failed_reduce:
                                    continue
                                if launch(job, node, REDUCE, ANY, 1)[0] < 0:
                                    if failed_reduce is None:
                                        failed_reduce = {job}
                                    else:
                                        failed_reduce.add(job)
                                    continue
                                break
                            else:
                                job = -1
                                continue
                            break
                        if job < 0:
                            break
                        assert pool is not None
                        n_reduce += 1
                        if not inline:
                            self._launched(pool, job, REDUCE)
                            continue
                        # ``_launched(pool, job, REDUCE)`` (as the map pass's)
                        pool.running[REDUCE] += 1
                        running_total[REDUCE] += 1
                        keys = key_of[job]
                        old = keys[REDUCE]
                        cand = pool.cand[REDUCE]
                        j = jobs[job]
                        if j.runnable[REDUCE] <= 0:
                            new = None
                        elif pool.fifo:
                            new = (-j.priority, j.submit, job)
                        else:
                            new = (j.running[REDUCE] / weight[job], j.submit, job)
                        if new != old:
                            if old is not None and new is not None and len(cand) == 1:
                                cand[0] = new
                            else:
                                if old is not None:
                                    del cand[bisect_left(cand, old)]
                                if new is not None:
                                    insort(cand, new)
                            keys[REDUCE] = new
                        if cand and len(order_reduce) == 1:  # (the order's only pool: this one)
                            lone_stale[REDUCE] = True
                        else:
                            self._place(pool, REDUCE)
        if visited is not None:
            # (a set: the order of the waits' additions is irrelevant, each job's wait is its own sum)
            self.skipped = visited if launched_map is None else visited - launched_map
        if n_map + n_reduce == 0:
            if said is not None:  # (self_check)
                assert launch_calls[0] == 0, "fair: the quiet answer, but the walk tried a launch"
                assert set(said) == set(self.skipped), "fair: the quiet answer's skipped jobs differ"
            if quiet is None and map_failed and (visited is None or len(visited) <= QUIET_MOST):
                self.quiet = self._quiet_build(visited)
            elif self_check and quiet is not None and not (self.preemption and self._quiet_starved(quiet, now)):
                fresh = self._quiet_build(visited if map_failed else None)
                assert fresh is quiet if quiet is NEVER else fresh.same(quiet), "fair: the kept quiet answer is stale"
        else:
            assert said is None, "fair: the quiet answer, but the walk launched"
            self.quiet = None  # (a level, a wait, the running counts: FairQuiet; ``_launched``'s)

    def _launched(self, pool: _Pool, job: int, stype: int) -> None:
        """A task of ``job`` (a candidate of ``pool``) launched: the running counts, the job's key in
        its pool's candidates, and the pool's place in ``order[stype]`` moved at once (``_reorder``'s
        step for this pool and type alone: a launch changes no input of the other type's key, so
        the pool does not go through ``repool``). Its steps, and ``FairAssign._job_key``'s, are also
        spelled out in :meth:`_assign_fast`'s map and reduce passes and in :meth:`_refresh_keys`
        (``inline_launched``): a change here is made there too."""
        pool.running[stype] += 1
        self.running_total[stype] += 1
        self.quiet = None  # (a level, a wait, the running counts: FairQuiet)
        keys = self.key[job]
        old = keys[stype]
        cand = pool.cand[stype]
        new = self._job_key(pool, job, stype) if self.sim.jobs[job].runnable[stype] > 0 else None
        if new != old:  # (a fifo-mode pool's key has no running count: it stays)
            if old is not None and new is not None and len(cand) == 1:
                cand[0] = new  # (its only candidate: ``old`` is cand[0])
            else:
                if old is not None:
                    del cand[bisect_left(cand, old)]
                if new is not None:
                    insort(cand, new)
            keys[stype] = new
        order = self.order[stype]
        if cand and len(order) == 1 and order[0][-1] == pool.name:
            self.lone_stale[stype] = True  # (``_place``'s first case, without its call)
        else:
            self._place(pool, stype)

    def _place(self, pool: _Pool, stype: int) -> None:
        """Move ``pool`` to its key's place in ``order[stype]`` (out of it without candidates). The
        order's only pool cannot change place, so its key waits (``lone_stale``) until another pool
        comes in or the order is read whole (``_fresh``)."""
        name = pool.name
        order = self.order[stype]
        cand = pool.cand[stype]
        if cand and len(order) == 1 and order[0][-1] == name:
            self.lone_stale[stype] = True
            return
        if self.lone_stale[stype]:
            self._fresh(stype)
        placed = self.placed[stype]
        old = placed.get(name)
        new = self._pool_key(pool, stype) if cand else None
        if new != old:
            if old is not None:
                del order[bisect_left(order, old)]
                del placed[name]
            if new is not None:
                insort(order, new)
                placed[name] = new
