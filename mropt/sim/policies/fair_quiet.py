"""Fair's quiet heartbeats: a heartbeat that launches nothing, answered without walking the jobs.

On the SWIM day three heartbeats of ``fair`` in four launch nothing: every candidate job waits for a
node-local (or rack-local) map (delay scheduling, Hadoop 1.0.3's ``FairScheduler``
``getAllowedLocalityLevel``) and the tracker holds none of their input. ``FairOffers._assign_fast``'s
walk then visits every candidate job of every pool under its max slots (the set S), finds each
job's allowed level and input places (``_input_places``), passes each by, and leaves S as the
heartbeat's skipped jobs (their waits grow at the next heartbeat: ``updateLocalityWaitTimes``).

Between two changes of what that walk reads, S, each job's level and places, and whether some
pool under its max has a reduce candidate are the same at every heartbeat, whatever the node, except
that the waits grow. :class:`QuietBeat` keeps them, built after a walk whose map pass launched
nothing (:meth:`FairQuiet._quiet_build`, from the state, by the plain rule ``Fair._allowed_level``;
S is then the set the walk visited). A later heartbeat launches nothing, and leaves the same
state as the walk, exactly when

* the node's verdicts (CapBasedLoadManager, the caps, running = runnable) reject the reduce pass or
  no reduce candidate exists (the pass would launch one: a reduce needs no locality), and
* they reject the map pass, or the node is in none of the NODE-level jobs' input nodes and its
  rack in none of the RACK-level jobs' input racks (a launch is tried nowhere else), and
* no job of S has a changed level: its wait, the sum of the heartbeat gaps added one at a time as
  the walk adds them, has not reached its level's limit (``node_delay``, ``node_delay +
  rack_delay``, ``rack_delay``: the same float comparisons as the walk's, made after the same
  additions, by ``FairOffers._assign_fast`` before it reads the kept answer), and with preemption
  no pool of S is starved past a timeout at this time (the plain test, at every quiet heartbeat).

The heartbeat then does only what the walk would leave: the waits, ``last_heartbeat``, and the
skipped jobs (S when the map pass runs, else none). The walk's other effect, ``_reorder``, is
deferred to the next walk (as on a heartbeat that rejects both types).

What changes S, a level, the places or the reduce answer drops the kept answer (``quiet = None``):
a launch (``FairOffers._launched``: a level, a wait reset, running counts), a job entering or
leaving its pool's candidates of either type (``_set_key``; a job's end too), a stage's end (the
job's current stage, its map input), a task's end in a pool at its max slots (the pool comes back
under it), preemption's timer (the starvation times), and a wait reaching its limit. Each job's
input nodes (racks) are kept as they are, not merged: on the Alibaba window S holds some 26 jobs,
each with input on hundreds of nodes, and a union at every build cost more than the walks it
saved. Under ``self_check`` the quiet answer is compared with the walk on every heartbeat, and the
kept answer with a fresh build (``tests/sim/test_sim_fair_quiet.py``).

Runs of quiet heartbeats (``Policy.quiet_heartbeats``, :meth:`FairQuiet._quiet_heartbeats`): the
lone heartbeats of ``mropt.sim.lone_beats`` are offered in bulk, and answered one after the other in
one loop, with the same tests and float additions as ``_assign_fast`` and :meth:`_quiet_answered`,
until one is not quiet (update() reads the clock, which a run does not move: where it is due and
would recompute nothing, ``Fair._idle_update`` makes its only change). Off under ``self_check``, and
with ``without={"quiet_runs"}``; ``tests/sim/test_sim_quiet_runs.py`` compares the two.
"""

from __future__ import annotations

from collections.abc import Collection, Container, Sequence
from typing import TYPE_CHECKING, cast

from mropt.sim.policies.fair_fields import FairFields
from mropt.sim.policies.fair_shares import _Pool
from mropt.sim.state import ANY, MAP, NODE, RACK, REDUCE

#: the most jobs in S for which an answer is kept: each job's input places are its own, so with many
#: jobs hardly a node holds none of them, and a build (a plain ``_allowed_level`` per job) costs more
#: than the walks it saves (the Alibaba window's first 30 minutes at 64 slots: S of 26 jobs on
#: average, 10,250 of its 11,321 builds had more than 8 jobs, and 2.6 G more instructions in all;
#: the SWIM day's S never held more than 6)
QUIET_MOST = 8


class _Everywhere:
    """Every node (or rack): :data:`NEVER`'s places."""

    def __contains__(self, item: object) -> bool:
        return True


class QuietBeat:
    """The answer of a heartbeat that launches nothing, kept between changes (module docstring)."""

    __slots__ = ("jobs", "limits", "nodes", "racks", "reduce", "pools")

    def __init__(
        self,
        jobs: Collection[int],
        limits: list[tuple[int, float]],
        nodes: tuple[Container[int], ...],
        racks: tuple[Container[int], ...],
        reduce: bool,
        pools: list[_Pool],
    ) -> None:
        self.jobs = jobs  # S: the jobs a map pass visits (the heartbeat's skipped jobs)
        self.limits = limits  # (job, the wait at which its allowed level changes)
        self.nodes = nodes  # the input nodes of each NODE-level job of S (not merged: a union costs)
        self.racks = racks  # the input racks of each RACK-level job of S
        self.reduce = reduce  # some pool under its max reduce slots has a reduce candidate
        self.pools = pools  # the pools of S (their starvation times, with preemption)

    def same(self, other: QuietBeat) -> bool:
        """The same answer (``self_check``; the pools' and jobs' order may differ: the pools move)."""
        if self is NEVER or other is NEVER:
            return self is other

        def merged(places: tuple[Container[int], ...]) -> set[int]:
            return {x for held in places for x in cast(frozenset[int], held)}

        return (
            (set(self.jobs), sorted(self.limits), self.reduce) == (set(other.jobs), sorted(other.limits), other.reduce)
            and merged(self.nodes) == merged(other.nodes)
            and merged(self.racks) == merged(other.racks)
            and {pool.name for pool in self.pools} == {pool.name for pool in other.pools}
        )


#: the kept answer when a job of S would be asked to launch on any node (no locality, ANY level):
#: it applies only where the node's verdicts reject both slot types (the walk then visits nothing)
NEVER = QuietBeat(frozenset(), [], (_Everywhere(),), (_Everywhere(),), True, [])


class FairQuiet(FairFields):
    """The kept answer of :class:`~mropt.sim.policies.fair.Fair`'s heartbeats that launch nothing (a
    mixin: it uses Fair's state)."""

    #: the kept answer (:data:`NEVER`: a job would be asked to launch); None: none, built after the
    #: next walk that launches nothing
    quiet: QuietBeat | None
    quiet_checked: int

    if TYPE_CHECKING:

        def _reorder(self) -> None: ...
        def _allowed_level(self, job: int, pool: _Pool) -> int: ...
        def _input_places(self, job: int, stage: int) -> tuple[int, frozenset[int] | None, frozenset[int]]: ...
        def _refresh_keys(self) -> None: ...
        def _idle_update(self, now: float) -> bool: ...

    def _quiet_build(self, walked: set[int] | None) -> QuietBeat:
        """The kept answer for the state now (module docstring); :data:`NEVER` if some job of S would
        be asked to launch on any node. The pools are first brought into their order (``_reorder``, as
        the next walk would), so that S is the set a walk visits. ``walked``: the jobs a map pass that
        launched nothing visited just before (S itself: kept as the answer's skipped jobs, which the
        next heartbeat then knows by identity), or None."""
        if self.repool:
            self._reorder()
        jobs = self.sim.jobs
        input_places = self.input_places
        node_delay, rack_delay = self.node_delay, self.rack_delay
        visited: list[int] = []
        limits: list[tuple[int, float]] = []
        nodes: list[frozenset[int]] = []
        racks: list[frozenset[int]] = []
        pools: list[_Pool] = []
        for pkey in self.order[MAP]:
            pool = self.pools[pkey[-1]]
            if pool.running[MAP] >= pool.max[MAP]:
                continue
            pools.append(pool)
            for key in pool.cand[MAP]:
                job = key[-1]
                level = self._allowed_level(job, pool)  # (the plain rule)
                if level == ANY:
                    return NEVER
                cur = jobs[job].cur
                places = input_places.get(job)
                if places is None or places[0] != cur:
                    places = self._input_places(job, cur)
                _, held, near = places
                assert held is not None  # (no locality: ANY)
                if self.last_level[job] == RACK:
                    limit = rack_delay
                elif level == NODE:
                    limit = node_delay
                else:
                    limit = node_delay + rack_delay  # (the walk's float)
                visited.append(job)
                limits.append((job, limit))
                if level == NODE:
                    nodes.append(held)
                else:
                    racks.append(near)
        jobs_of_s: Collection[int] = frozenset(visited)
        if walked is not None:
            assert walked == jobs_of_s, "fair: the walk visited other jobs than S"
            jobs_of_s = walked
        pools = pools if self.preemption else []
        return QuietBeat(jobs_of_s, limits, tuple(nodes), tuple(racks), self._quiet_reduce(), pools)

    def _quiet_answered(self, quiet: QuietBeat, node: int, now: float) -> bool:
        """The heartbeat of ``node`` answered from ``quiet`` where it applies (module docstring): the
        skipped jobs set, True; else False (the walk runs). Called by ``FairOffers._assign_fast`` after
        the waits, before its own verdicts: the same tests on the same values, the reduce pass's only
        where a reduce candidate exists (``quiet.reduce``; on the SWIM day most heartbeats have none).
        :meth:`_quiet_heartbeats` makes the same tests in its loop: a change here is made there too
        (``tests/sim/test_sim_quiet_runs.py`` compares the two)."""
        sim = self.sim
        running_total, runnable_total = self.running_total, self.runnable_total
        if quiet.reduce and running_total[REDUCE] != runnable_total[REDUCE] and self._verdict_passes(REDUCE, node):
            return False  # (the reduce pass would run)
        # the map pass: ``_verdict_passes(MAP, node)`` inline (most heartbeats come here)
        slots = sim.slots[MAP][node]
        total = sim.total_slots[MAP]
        load = runnable_total[MAP] / total if total > 0 else 0.0
        if (
            not slots - sim.free[MAP][node] < (slots if load >= 1.0 else slots * load)
            or running_total[MAP] == runnable_total[MAP]
            or (self.assign_multiple and self.caps[MAP] == 0)
        ):
            self.skipped = []  # (no map pass: nothing visited)
            return True
        if self.preemption and self._quiet_starved(quiet, now):
            return False
        for held in quiet.nodes:  # (the input nodes of S's NODE-level jobs, then racks of RACK-level)
            if node in held:
                return False
        if quiet.racks:
            rack = sim.node_rack[node]
            for near in quiet.racks:
                if rack in near:
                    return False
        self.skipped = quiet.jobs  # (S: not empty, or nothing visited; NEVER's places hold every node)
        return True

    def _quiet_heartbeats(self, nodes: Sequence[int], times: Sequence[float]) -> int:
        """``Policy.quiet_heartbeats`` (a run of heartbeats in bulk: :mod:`mropt.sim.lone_beats`): how many
        of the heartbeats of ``nodes`` at ``times``, in order, :meth:`_quiet_answered` answers, their
        effects applied as ``FairOffers._assign_fast`` applies them; the rest left untouched.
        :meth:`_quiet_one` makes this loop's steps for one heartbeat: a change here is made there too.

        The steps of ``_assign_fast`` for each, on the same values in the same order: update() where it
        is due and recomputes nothing (``Fair._idle_update``), the marked jobs' keys (``_refresh_keys``,
        which reads no clock: once, before the first), the waits of the
        skipped jobs (updateLocalityWaitTimes: each wait's float addition of the time since the last
        heartbeat, one heartbeat at a time: S's, or at the first a walk's), ``last_heartbeat``, and the
        skipped jobs (S, or none where the node's verdicts reject the map pass). The run stops at
        the first heartbeat that ``_assign_fast`` would not answer from ``quiet``, or at which
        update() would recompute something (it reads the clock), a wait reaching its limit (the level changes), a
        reduce or map pass that may launch (the node's verdicts, preemption's starvation at that
        heartbeat's time, the input places)."""
        if self.force_update or (times[0] >= self.next_update and not self._idle_update(times[0])):
            return 0
        if self.dirty:
            self._refresh_keys()  # (``_assign_fast``'s first step: it may drop the kept answer)
        quiet = self.quiet
        if quiet is None:
            return 0
        if len(nodes) == 1:  # (the probe, 4 offers in 5 on a SWIM day: ``_quiet_one``)
            return self._quiet_one(quiet, nodes[0], times[0])
        skipped = self.skipped
        sim = self.sim
        next_update = self.next_update
        waited = self.waited
        limits = quiet.limits
        running_total, runnable_total = self.running_total, self.runnable_total
        multiple, caps = self.assign_multiple, self.caps
        # the node's verdicts (``_verdict_passes``, the same expressions): the reduce pass's only where a
        # reduce candidate exists and the pass may run at all
        slots_reduce, free_reduce = sim.slots[REDUCE], sim.free[REDUCE]
        total = sim.total_slots[REDUCE]
        load_reduce = runnable_total[REDUCE] / total if total > 0 else 0.0
        full_reduce = load_reduce >= 1.0
        reduce = (
            quiet.reduce and running_total[REDUCE] != runnable_total[REDUCE] and not (multiple and caps[REDUCE] == 0)
        )
        slots_map, free_map = sim.slots[MAP], sim.free[MAP]
        total = sim.total_slots[MAP]
        load_map = runnable_total[MAP] / total if total > 0 else 0.0
        full_map = load_map >= 1.0
        no_map = running_total[MAP] == runnable_total[MAP] or (multiple and caps[MAP] == 0)
        starved = self._quiet_starved if self.preemption else None
        held_nodes, near_racks, node_rack = quiet.nodes, quiet.racks, sim.node_rack
        s_jobs = quiet.jobs
        last = self.last_heartbeat
        since = 0.0
        done = 0
        if not reduce and starved is None and len(limits) == 1 and len(held_nodes) == 1 and not near_racks:
            # S of one NODE-level job, no reduce pass, no preemption (most of the SWIM day's runs): the loop
            # below with its loops over S and over S's places unrolled; the same tests on the same values,
            # the wait's addition the same float (``one_wait``, tested, then stored)
            ((one, one_limit),) = limits
            (held,) = held_nodes
            one_wait = 0.0
            for node, now in zip(nodes, times):
                if now >= next_update:  # update() is due: the run goes on where it recomputes nothing
                    if not self._idle_update(now):
                        break
                    next_update = self.next_update
                if skipped:
                    since = 0.0 if last is None else now - last
                    if skipped is s_jobs:
                        one_wait = waited[one] + since
                    else:  # (the first only: a walk's skipped jobs, a set)
                        one_wait = waited[one] + since if one in skipped else waited[one]
                    if one_wait >= one_limit:
                        break
                slots = slots_map[node]
                if no_map or not slots - free_map[node] < (slots if full_map else slots * load_map):
                    now_skipped: Collection[int] = ()  # (no map pass: nothing visited)
                elif node in held:
                    break
                else:
                    now_skipped = s_jobs
                if skipped:  # the wait, added as the test above added it
                    if skipped is s_jobs:
                        waited[one] = one_wait
                    else:
                        for job in skipped:
                            waited[job] += since
                last = now
                skipped = now_skipped
                done += 1
            if done:
                self.last_heartbeat = last
                self.skipped = skipped if skipped else []
            return done
        for node, now in zip(nodes, times):
            if now >= next_update:  # update() is due: the run goes on where it recomputes nothing
                if not self._idle_update(now):
                    break
                next_update = self.next_update
            if skipped:
                since = 0.0 if last is None else now - last
                reached = False
                if skipped is s_jobs:
                    for job, limit in limits:
                        if waited[job] + since >= limit:
                            reached = True
                            break
                else:  # (the first only: a walk's skipped jobs, a set; ``_assign_fast``'s other branch)
                    grown = {job: waited[job] + since for job in skipped}
                    for job, limit in limits:
                        if grown.get(job, waited[job]) >= limit:
                            reached = True
                            break
                if reached:
                    break
            if reduce:
                slots = slots_reduce[node]
                if slots - free_reduce[node] < (slots if full_reduce else slots * load_reduce):
                    break  # (the reduce pass would run)
            slots = slots_map[node]
            if no_map or not slots - free_map[node] < (slots if full_map else slots * load_map):
                now_skipped = ()  # (no map pass: nothing visited)
            else:
                if starved is not None and starved(quiet, now):
                    break
                local = False
                for held in held_nodes:
                    if node in held:
                        local = True
                        break
                if not local and near_racks:
                    rack = node_rack[node]
                    for near in near_racks:
                        if rack in near:
                            local = True
                            break
                if local:
                    break
                now_skipped = s_jobs
            if skipped:  # the waits, added as the test above added them
                if skipped is s_jobs:
                    for job, _ in limits:
                        waited[job] += since
                else:
                    for job in skipped:
                        waited[job] += since
            last = now
            skipped = now_skipped
            done += 1
        if done:
            self.last_heartbeat = last
            self.skipped = skipped if skipped else []
        return done

    def _quiet_one(self, quiet: QuietBeat, node: int, now: float) -> int:
        """:meth:`_quiet_heartbeats` offered one heartbeat (after its first steps: update() where idle,
        the marked keys, a kept answer): its loop's steps for it, in order, its tests of the node
        those of :meth:`_quiet_answered` (the same expressions; the skipped jobs set there): update()
        due (where idle), a wait reaching its limit, the node's verdicts, starvation, the input
        places; then the waits' additions and ``last_heartbeat``. 1 if quiet, else 0 (nothing done)."""
        if now >= self.next_update and not self._idle_update(now):
            return 0
        skipped = self.skipped
        if skipped:
            last = self.last_heartbeat
            since = 0.0 if last is None else now - last
            waited = self.waited
            if skipped is quiet.jobs:
                for job, limit in quiet.limits:
                    if waited[job] + since >= limit:
                        return 0
            else:  # (a walk's skipped jobs, a set)
                grown = {job: waited[job] + since for job in skipped}
                for job, limit in quiet.limits:
                    if grown.get(job, waited[job]) >= limit:
                        return 0
        if not self._quiet_answered(quiet, node, now):
            return 0
        if skipped:  # the waits, added as the test above added them
            if skipped is quiet.jobs:
                for job, _ in quiet.limits:
                    waited[job] += since
            else:
                for job in skipped:
                    waited[job] += since
        self.last_heartbeat = now
        return 1

    def _verdict_passes(self, stype: int, node: int) -> bool:
        """Whether the node's verdicts let a ``stype`` pass run at this heartbeat (``_assign_fast``'s
        ``rej_*`` and a cap of 0, the same expressions): CapBasedLoadManager takes it (reported running
        < slots x min(1, runnable / cluster slots)) and the per-heartbeat cap is not 0. A cap of -1 (the
        free slots) is 0 only on a node with no free slot, which the load manager refuses: its reported
        running tasks are its slots, and the bar is at most its slots."""
        sim = self.sim
        slots = sim.slots[stype][node]
        total = sim.total_slots[stype]
        load = self.runnable_total[stype] / total if total > 0 else 0.0
        if not slots - sim.free[stype][node] < (slots if load >= 1.0 else slots * load):
            return False
        return not (self.assign_multiple and self.caps[stype] == 0)

    def _quiet_reduce(self) -> bool:
        """Whether some pool under its max reduce slots has a reduce candidate (``order`` is up to date)."""
        for pkey in self.order[REDUCE]:
            pool = self.pools[pkey[-1]]
            if pool.running[REDUCE] < pool.max[REDUCE]:
                return True
        return False

    def _quiet_starved(self, quiet: QuietBeat, now: float) -> bool:
        """With preemption: a pool of S starved past a timeout now (``_allowed_level``'s test: its jobs
        may launch at ANY level)."""
        for pool in quiet.pools:
            if (
                now - pool.last_at_min[MAP] > self.min_share_timeout
                or now - pool.last_at_half[MAP] > self.fair_share_timeout
            ):
                return True
        return False
