"""Capacity: Hadoop 1.0.3's Capacity Scheduler, as a heartbeat policy.

Source: ``src/contrib/capacity-scheduler/src/java/org/apache/hadoop/mapred/`` of Hadoop 1.0.3
(``CapacityTaskScheduler``, ``CapacitySchedulerQueue``, ``CapacitySchedulerConf``) and
``JobInProgress`` (``schedulingOpportunity``, ``scheduleOffSwitch``,
``obtainNewNodeOrRackLocalMapTask``).

* **Queues** come from the workload's ``queues`` (:class:`~mropt.model.workload.QueueSpec`,
  capacities in percent summing to 100); with none listed, one queue ``default`` at 100 %
  holds every job (whatever its ``queue`` field says).
* **Slot conversion**, per slot type on every heartbeat: ``capacity_slots = int(capacity% x
  cluster slots / 100)``, likewise ``maximum-capacity`` (unset: no limit).
* **Queue order** (``TaskSchedulingMgr.updateCollectionOfQueues``), re-sorted before every
  task: occupied slots / capacity_slots ascending (a queue of capacity 0 counts 1.0); ties
  keep the queues' listed order. A queue may take more than its capacity whenever it is first
  and has work: idle capacity is shared.
* **Job order within a queue**: submit (start) time, then job id; with
  ``supports_priority``, priority first.
* **Limits** (``assignSlotsToQueue``, ``assignSlotsToJob``) for a task of one slot: the queue's
  occupied + 1 <= maximum capacity when it is set; the user limit::

      queueCap   = max(capacity_slots, 1)
      currentCap = queueCap if occupied < queueCap else occupied + 1
      limit      = min(max(ceil(currentCap / activeUsers), ceil(ulMin% x currentCap / 100)),
                       floor(queueCap x userLimitFactor))

  a job is skipped when its user's occupied slots in the queue + 1 > limit (activeUsers: the
  users with an active job in the queue).
* **Maps** (``addMapTasks``): while the tracker has free map slots, re-sort the queues and take
  the first job (queue by queue, job by job, within the limits) that gets a task: each job
  considered gets a scheduling opportunity (``schedulingOpportunity``); a node- or rack-local
  map (or one without replicas) launches and resets the job's missed opportunities; else an
  off-switch map launches iff no off-switch map went out on this heartbeat yet and the job
  missed more than ``min(unfinished maps, trackers) x localityWaitFactor`` opportunities
  (``scheduleOffSwitch``; an off-switch launch does not reset the counter, as in
  ``obtainNewMapTaskCommon``). After an off-switch map the heartbeat assigns no more maps
  (``maximum-tasks-after-offswitch`` 0). ``localityWaitFactor`` = min(hosts holding the job's
  input / cluster hosts, 1) unless the parameter ``locality_wait_factor`` sets it.
* **Reduces** (``addReduceTask``): at most one per heartbeat, from the first queue and job in
  the same orders and limits.
* **No preemption** in 1.x ("once a job is running, it will not be preempted").

Not modelled: high-memory jobs (every task takes one slot), ``maximum-system-jobs`` and the
init/accept limits, job initialisation delays. Jobs with no pending task of the type are not
offered a scheduling opportunity (Hadoop counts one for them too; it cannot launch anything).
The reference sheet says the missed-opportunity count resets on every map launch and bounds it
by pending maps; Hadoop 1.0.3's code resets it on local launches only and uses unfinished maps
(``desiredMaps() - finishedMaps()``), which is what this policy does.

**Where the rule is.** ``Capacity._assign_reference`` is the heartbeat written plain (the queues and
their jobs listed afresh before every task: ``_jobs``; :mod:`mropt.sim.policies.capacity_reference`);
``make_policy(..., reference=True)`` runs it.
The default, ``_assign_fast``, keeps each queue's candidate jobs sorted between heartbeats
(``_set_key``, ``_refresh``), takes the user limit once per queue and task (``_limit``), and does
not ask a job again for a local map on a heartbeat where its local launch failed (``_maps``). On a
backlog (``BULK_MIN`` candidates or more, none held back by the user limit) it visits only the
jobs whose map may fit the tracker's free resources and counts the others' missed opportunities in
bulk (``_walk_fitting``, :mod:`mropt.sim.policies.capacity_passes`); a job such a walk visits again
on one heartbeat counts down to its off-switch test (``left``) instead of reading its count and
testing again.
``tests/sim/test_sim_heartbeat_reference.py`` requires the same event log of both on random
workloads, with and without speculation rules; ``tests/sim/test_sim_capacity_fast.py`` on nodes of
many slots, CPUs and memory, with faults; ``tests/sim/test_sim_capacity_bulk.py`` on backlogs of
jobs that do not fit or have no local map.
"""

from __future__ import annotations

import math
import sys
from bisect import bisect_left, insort

import numpy as np

from mropt.model.workload import QueueSpec
from mropt.registry import Param
from mropt.sim.policies.capacity_passes import DemandClasses, PassCounts
from mropt.sim.policies.capacity_reference import CapacityReference, user_limit
from mropt.sim.policy import ACCEPT, HEARTBEAT, Admission, Policy, register_policy
from mropt.sim.state import ACTIVE, ANY, MAP, RACK, REDUCE
from mropt.sim.view import AttemptView, SimView

#: ``_maps``' walks: what a walk of a queue launched
_NONE, _LOCAL, _OFF_SWITCH = 0, 1, 2
#: the map candidates from which a queue is walked by ``_walk_fitting`` (fewer: job by job, in ``_maps``)
BULK_MIN = 64


class _Queue:
    """A queue's settings and live counters per slot type (CapacitySchedulerQueue)."""

    __slots__ = ("spec", "rank", "occupied", "by_user", "users", "cand", "job_at", "passes", "classes")

    def __init__(self, spec: QueueSpec, rank: int) -> None:
        self.spec = spec
        self.rank = rank
        self.occupied = [0, 0]
        self.by_user: tuple[dict[str, int], dict[str, int]] = ({}, {})
        self.users: dict[str, int] = {}  # user -> active jobs in the queue
        #: (``_assign_fast``) the candidate jobs per slot type: their ranks in ``job_at``, the
        #: queue's jobs in its order (priority where supported, submit time, job), ascending
        self.cand: tuple[list[int], list[int]] = ([], [])
        self.job_at: list[int] = []
        self.passes = PassCounts(0)  # the map walks' passes in bulk (capacity_passes)
        self.classes = DemandClasses(0)  # the map candidates by demand (capacity_passes)


@register_policy(
    "capacity",
    summary="Hadoop 1.0.3 Capacity Scheduler: queues by occupied/capacity, user limits, one off-switch map per heartbeat",
    source="Hadoop 1.0.3 contrib/capacity-scheduler (CapacityTaskScheduler, CapacitySchedulerQueue)",
    needs=("slots",),
    params={
        "locality_wait_factor": Param(
            float,
            -1.0,
            "mapreduce.job.locality.wait.factor; -1: min(input hosts / cluster hosts, 1)",
            minimum=-1.0,
        ),
    },
)
class Capacity(CapacityReference, Policy):
    mode = HEARTBEAT

    def start(self, sim: SimView) -> None:
        super().start(sim)
        self.wait_factor = float(self.params["locality_wait_factor"])
        specs = sim.workload.queues or (QueueSpec(id="default", capacity=100.0),)
        self.queues = [_Queue(spec, k) for k, spec in enumerate(specs)]
        self.by_name = {q.spec.id: q for q in self.queues}
        self.single = not sim.workload.queues
        n = len(sim.jobs)
        self.key: list[list[int | None]] = [[None, None] for _ in range(n)]  # rank while a candidate
        #: missed scheduling opportunities; under ``_assign_fast`` a map candidate's are this plus the
        #: passes its queue's walks gave its rank since then (``q.passes.at(rank) - base[job]``)
        self.missed = [0] * n
        self.base = [0] * n
        #: a map candidate's demand, its class in its queue's ``classes`` (None: always asked)
        self.demand_of: list[tuple[float, ...] | None] = [None] * n
        self.rank_of = [0] * n
        self.user_of = [j.user for j in sim.jobs]
        n_resources = len(sim.free_resources[0]) if sim.free_resources else 0
        for q in self.queues:
            prio = q.spec.supports_priority
            mine = [j for j in sim.jobs if self.single or j.queue == q.spec.id]
            mine.sort(key=lambda j: (-j.priority if prio else 0, j.submit, j.index))
            q.job_at = [j.index for j in mine]
            for rank, job in enumerate(q.job_at):
                self.rank_of[job] = rank
            q.passes = PassCounts(len(mine))
            q.classes = DemandClasses(n_resources)
        self.trackers = -1  # (``_maps``: the trackers up, counted when an off-switch test needs them)
        self.caps_at: tuple[int, int] | None = None  # (``_assign_fast``'s slot conversion)
        self.caps: tuple[list[int], list[int]] = ([], [])
        self.max_caps: tuple[list[int | None], list[int | None]] = ([], [])
        self.lwf: dict[int, float] = {}
        self.dirty: set[int] = set()
        self.queue_at: list[_Queue] = [self.queues[0]] * n  # each job's queue, set at its arrival
        if not self.reference and type(self).assign is Capacity.assign:  # ``assign`` without its own call (speed only)
            self.assign = self._assign_fast  # type: ignore[method-assign]

    def _queue_of(self, job: int) -> _Queue:
        return self.queues[0] if self.single else self.by_name[self.sim.jobs[job].queue]

    # -- job events ----------------------------------------------------------------------------
    def on_arrival(self, job: int) -> Admission:
        q = self.queue_at[job] = self._queue_of(job)
        user = self.user_of[job]
        q.users[user] = q.users.get(user, 0) + 1
        self.dirty.add(job)
        return ACCEPT

    def on_attempts_end(self, attempt: AttemptView, outcome: str, count: int) -> None:
        job, stype = attempt.job, attempt.type
        q = self.queue_at[job]
        q.occupied[stype] -= count
        q.by_user[stype][self.user_of[job]] -= count
        self.dirty.add(job)

    def on_stage_end(self, job: int, stage: int) -> None:
        self.dirty.add(job)

    def on_job_end(self, job: int) -> None:
        q = self.queue_at[job]
        user = self.user_of[job]
        q.users[user] -= 1
        if not q.users[user]:
            del q.users[user]
        for stype in (MAP, REDUCE):
            self._set_key(q, job, stype, None)
        self.dirty.discard(job)

    def _set_key(self, q: _Queue, job: int, stype: int, key: int | None) -> None:
        """Make ``job`` a candidate for ``stype`` tasks (``key``: its rank) or not (None). A map
        candidate is in its demand's class and counts passes from its ``base``; one that stops
        being a candidate keeps its missed opportunities in ``missed``."""
        old = self.key[job][stype]
        if old == key:
            return
        cand = q.cand[stype]
        if old is not None:
            del cand[bisect_left(cand, old)]
            if stype == MAP:
                self.missed[job] += q.passes.at(old) - self.base[job]
                q.classes.remove(self.demand_of[job], old)
        if key is not None:
            insort(cand, key)
            if stype == MAP:
                self.base[job] = q.passes.at(key)
                self.demand_of[job] = self._map_demand(job)
                q.classes.add(self.demand_of[job], key)
        self.key[job][stype] = key

    def _map_demand(self, job: int) -> tuple[float, ...] | None:
        """The class in its queue's ``classes`` of the map stage ``job`` launches from
        (``Launches.launch_tasks``: the current stage, its one demand checked before a task is
        looked for; None: several demands or none, always asked)."""
        j = self.sim.jobs[job]
        stage = j.stages[j.cur] if j.cur < len(j.stages) else None
        if stage is None or stage.type != MAP or len(stage.demands) != 1:
            return None
        return stage.demands[0]

    def _refresh(self) -> None:
        """The candidates of the jobs marked ``dirty`` set again (``_set_key``), and a map
        candidate's demand class moved when its map stage changed."""
        jobs = self.sim.jobs
        rank_of = self.rank_of
        queue_at = self.queue_at
        keys = self.key
        for job in self.dirty:
            j = jobs[job]
            q = queue_at[job]
            key = keys[job]
            active = j.status == ACTIVE
            runnable = j.runnable
            want = rank_of[job] if active and runnable[MAP] > 0 else None
            if key[MAP] != want:
                self._set_key(q, job, MAP, want)  # (its demand class read afresh if a candidate)
            elif want is not None:  # its map stage may have changed (on_stage_end)
                demand = self._map_demand(job)
                if demand != self.demand_of[job]:
                    q.classes.remove(self.demand_of[job], rank_of[job])
                    q.classes.add(demand, rank_of[job])
                    self.demand_of[job] = demand
            want = rank_of[job] if active and runnable[REDUCE] > 0 else None
            if key[REDUCE] != want:
                self._set_key(q, job, REDUCE, want)
        self.dirty.clear()

    # -- helpers ---------------------------------------------------------------------------------
    def _order(self, stype: int, cap_slots: list[int]) -> list[_Queue]:
        """Queues by occupied / capacity_slots ascending (capacity 0: 1.0), then listed order."""

        def ratio(q: _Queue) -> tuple[float, int]:
            cap = cap_slots[q.rank]
            return (q.occupied[stype] / cap if cap > 0 else 1.0, q.rank)

        return sorted(self.queues, key=ratio)

    def _locality_wait_factor(self, job: int) -> float:
        """JobInProgress.localityWaitFactor: hosts holding the job's input over the cluster's hosts, at most 1."""
        if self.wait_factor >= 0:
            return self.wait_factor
        got = self.lwf.get(job)
        if got is None:
            stage = self.sim.jobs[job].stages[0]
            hosts: set[int] = set()
            if isinstance(stage.replicas, np.ndarray):
                hosts.update(np.unique(stage.replicas[stage.replicas >= 0]).tolist())
            elif stage.replicas is not None:
                for nodes in stage.replicas:
                    hosts.update(nodes)
            got = min(len(hosts) / max(self.sim.n_nodes, 1), 1.0)
            self.lwf[job] = got
        return got

    def _launched(self, q: _Queue, job: int, stype: int) -> None:
        q.occupied[stype] += 1
        by_user = q.by_user[stype]
        user = self.user_of[job]
        by_user[user] = by_user.get(user, 0) + 1
        if self.sim.jobs[job].runnable[stype] == 0:
            self._set_key(q, job, stype, None)

    def _limit(self, q: _Queue, stype: int, cap: int, max_cap: int | None) -> int:
        """``_fits`` for every job of ``q`` at once: -1 when the queue's maximum capacity takes no
        more slot, else the user limit (a job fits iff its user's occupied slots + 1 <= it; every
        job does when the limit exceeds the queue's occupied slots, which bound each user's).

        Below the queue's capacity with the default ``minimum-user-limit-percent`` (100) and
        ``user-limit-factor`` (>= 1), ``user_limit`` is at least the capacity: occupied + 1 is
        returned for it (every job fits) without its arithmetic. This repeats a step of
        ``user_limit``'s algebra on purpose: the SWIM day calls ``_limit`` 880 k times, every one
        in that case, and ``user_limit`` costs about 1 us more a call: calling it here made
        ``swim-capacity`` about 5 % slower, over the 3 % a readability change may cost
        (benchmarks/RESULTS.md, "(issue 32) readability items")."""
        occupied = q.occupied[stype]
        if max_cap is not None and occupied + 1 > max_cap:
            return -1
        spec = q.spec
        if occupied < cap and spec.minimum_user_limit_percent >= 100.0 and spec.user_limit_factor >= 1.0:
            return occupied + 1
        return user_limit(occupied, cap, len(q.users), spec.minimum_user_limit_percent, spec.user_limit_factor)

    # -- the heartbeat ---------------------------------------------------------------------------
    def assign(self, node: int) -> None:
        """A heartbeat of ``node``: the plain rule (``_assign_reference``) under ``reference``, else
        ``_assign_fast`` (the same decisions, on each queue's kept sorted candidate jobs)."""
        if self.reference:
            self._assign_reference(node)
        else:
            self._assign_fast(node)

    def _assign_fast(self, node: int) -> None:
        """``_assign_reference`` on each queue's candidate jobs kept sorted (``_set_key``, refreshed for
        the jobs marked ``dirty``: ``_refresh``) instead of listed at every task."""
        sim = self.sim
        if self.dirty:
            self._refresh()
        totals = (sim.total_slots[MAP], sim.total_slots[REDUCE])
        if totals != self.caps_at:  # the slot conversion, again only when a node went down or up
            self.caps_at = totals
            self.caps = ([], [])
            self.max_caps = ([], [])
            for stype in (MAP, REDUCE):
                total = totals[stype]
                for q in self.queues:
                    self.caps[stype].append(int(q.spec.capacity * total / 100.0))
                    mx = q.spec.maximum_capacity
                    self.max_caps[stype].append(None if mx is None else int(mx * total / 100.0))
        caps, max_caps = self.caps, self.max_caps
        if sim.runnable[MAP] and sim.free[MAP][node] > 0:
            self._maps(node, caps[MAP], max_caps[MAP])
        if sim.runnable[REDUCE] and sim.free[REDUCE][node] > 0:
            self._reduce(node, caps[REDUCE], max_caps[REDUCE])

    def _maps(self, node: int, caps: list[int], max_caps: list[int | None]) -> None:
        """``_assign_reference``'s maps on the kept candidates, a walk per task: the queues in order,
        each walked job by job, or by ``_walk_fitting`` (every job within the user limit, a backlog
        of at least ``BULK_MIN`` with jobs of one demand). A job whose node- or rack-local launch
        failed on this heartbeat is not asked again (``no_local``): until the heartbeat ends only
        launches happen, which take free slots and resources and never give the job a task, so
        ``launch(..., RACK)`` would fail again (its missed opportunity still counts)."""
        sim = self.sim
        launch = sim.launch
        missed = self.missed
        base = self.base
        user_of = self.user_of
        queues = self.queues
        available = sim.free[MAP][node]
        self.trackers = -1  # the trackers up, counted when an off-switch test first needs them
        no_local: set[int] = set()
        left: dict[int, int] = {}  # (``_walk_fitting``: the opportunities a visited job may still miss)
        while available > 0:
            got = _NONE
            for q in queues if len(queues) == 1 else self._order(MAP, caps):
                cand = q.cand[MAP]
                if not cand:
                    continue
                limit = self._limit(q, MAP, caps[q.rank], max_caps[q.rank])
                if limit < 0:
                    continue
                by_user = q.by_user[MAP] if limit <= q.occupied[MAP] else None
                if by_user is None and q.classes.one_demand and len(cand) >= BULK_MIN:
                    got = self._walk_fitting(q, node, no_local, left)
                    if got != _NONE:
                        break
                    continue
                if left:  # (a walk job by job: its passes are not counted in ``left``)
                    left.clear()
                job_at = q.job_at
                passes = q.passes
                passed_in_bulk = passes.every or passes.some  # (else every candidate's base and passes are 0)
                for rank in cand:
                    job = job_at[rank]
                    if by_user is not None and by_user.get(user_of[job], 0) + 1 > limit:
                        continue
                    missed[job] += 1  # JobInProgress.schedulingOpportunity
                    aid = -1 if job in no_local else launch(job, node, MAP, RACK)
                    if aid >= 0:
                        missed[job] = 0  # resetSchedulingOpportunities (local launch)
                        if passed_in_bulk:
                            base[job] = passes.at(rank)
                        got = _LOCAL
                    else:
                        no_local.add(job)
                        due = missed[job] + (passes.at(rank) - base[job] if passed_in_bulk else 0)
                        if self._off_switch_due(job, due):
                            aid = launch(job, node, MAP, ANY)
                            got = _OFF_SWITCH if aid >= 0 else _NONE
                    if aid >= 0:
                        self._launched(q, job, MAP)
                        break
                if got != _NONE:
                    break
            if got != _LOCAL:
                break  # none, or off-switch: maximum-tasks-after-offswitch = 0
            available -= 1

    def _off_switch_due(self, job: int, missed: int) -> bool:
        """JobInProgress.scheduleOffSwitch: ``missed`` over min(unfinished maps, trackers) x localityWaitFactor."""
        if self.trackers < 0:
            self.trackers = self.sim.node_up.count(True)
        j = self.sim.jobs[job]
        stage = j.stages[j.cur]
        return min(stage.n - stage.finished, self.trackers) * self._locality_wait_factor(job) < missed

    def _off_switch_left(self, job: int, missed: int) -> int:
        """The opportunities ``job``, having missed ``missed``, may still miss before
        ``_off_switch_due`` holds (0 or less: it holds): the bound's floor + 1 - ``missed``, as the
        bound (min(unfinished maps, trackers) x localityWaitFactor, a float >= 0) is below an integer
        count iff the count exceeds its floor. A bound that overflows to infinity (a huge
        ``locality_wait_factor``) is above every count: the test never holds, and the count left is
        ``sys.maxsize``, which no heartbeat's walks count down."""
        if self.trackers < 0:
            self.trackers = self.sim.node_up.count(True)
        j = self.sim.jobs[job]
        stage = j.stages[j.cur]
        bound = min(stage.n - stage.finished, self.trackers) * self._locality_wait_factor(job)
        if bound == math.inf:
            return sys.maxsize
        return math.floor(bound) + 1 - missed

    def _walk_fitting(self, q: _Queue, node: int, no_local: set[int], left: dict[int, int]) -> int:
        """``_maps``' walk of ``q`` when the user limit holds back none of its candidates, visiting only
        those whose launch may succeed on ``node`` (``DemandClasses.fitting``): the others' launches
        fail before looking for a task and change nothing, so their missed opportunity is all that
        happens to them, counted in bulk (``PassCounts``) with the visited jobs' when the walk
        stops: every candidate ranked below the one that launched, or all of them.

        ``left`` (the heartbeat's, emptied by a walk job by job) holds, for each job a walk in bulk
        visited on this heartbeat without launching it, the opportunities it may still miss before
        its off-switch test passes (``_off_switch_left``). Until the heartbeat ends the test's bound
        stays (no map ends; the trackers up were counted once), the job keeps its own count, and its
        count of passes grows by one with each walk that visits it again (the walk that visited it
        before went past it: the job neither launched nor ended the walk; a walk that stopped before
        its rank passed it none; one that reached its rank visited it, since the tracker's resources
        only shrink until the heartbeat ends): a visit again takes one from it instead of reading
        the passes and testing again (``Capacity._assign_reference``'s decisions, the same)."""
        launch = self.sim.launch
        missed = self.missed
        job_at = q.job_at
        passes = q.passes
        for rank in q.classes.fitting(self.sim.free_resources[node]):
            job = job_at[rank]
            more = left.get(job)
            if more is None:
                if job not in no_local and launch(job, node, MAP, RACK) >= 0:
                    passes.pass_below(rank)
                    missed[job] = 0  # resetSchedulingOpportunities (local launch)
                    self.base[job] = passes.at(rank)
                    self._launched(q, job, MAP)
                    return _LOCAL
                no_local.add(job)
                more = self._off_switch_left(
                    job, missed[job] + passes.at(rank) - self.base[job] + 1
                )  # (this walk's pass)
            else:
                more -= 1
            left[job] = more
            if more <= 0 and launch(job, node, MAP, ANY) >= 0:
                passes.pass_below(rank)
                missed[job] += 1
                self._launched(q, job, MAP)
                return _OFF_SWITCH
        passes.pass_below(passes.n)
        return _NONE

    def _reduce(self, node: int, caps: list[int], max_caps: list[int | None]) -> None:
        """``_assign_reference``'s reduce on the kept candidates: the first job, queue by queue
        (one queue: not sorted), within the limits, that gets a reduce."""
        sim = self.sim
        user_of = self.user_of
        queues = self.queues
        for q in queues if len(queues) == 1 else self._order(REDUCE, caps):
            cand = q.cand[REDUCE]
            if not cand:
                continue
            limit = self._limit(q, REDUCE, caps[q.rank], max_caps[q.rank])
            if limit < 0:
                continue
            by_user = q.by_user[REDUCE] if limit <= q.occupied[REDUCE] else None
            for rank in cand:
                job = q.job_at[rank]
                if by_user is not None and by_user.get(user_of[job], 0) + 1 > limit:
                    continue
                if sim.launch(job, node, REDUCE, ANY) >= 0:
                    self._launched(q, job, REDUCE)
                    return
