"""Fair: Hadoop 1.0.3's Fair Scheduler (the post-MAPREDUCE-706 rewrite), as a heartbeat policy.

Source: ``src/contrib/fairscheduler/src/java/org/apache/hadoop/mapred/`` of Hadoop 1.0.3
(``FairScheduler``, ``SchedulingAlgorithms``, ``PoolSchedulable``, ``JobSchedulable``,
``PoolManager``, ``CapBasedLoadManager``, ``LocalityLevel``). Map and reduce slots are
scheduled separately; each pool and each job has one schedulable per slot type.

* **Pools** come from the workload's ``pools`` (:class:`~mropt.model.workload.PoolSpec`:
  ``min_maps``/``min_reduces`` are the minShares, ``max_maps``/``max_reduces`` cap the
  pool's demand and running tasks, ``weight``, ``max_running`` (poolMaxJobs), ``mode``
  ``fair`` or ``fifo``); a pool not listed gets the allocation file's defaults (0, unbounded,
  1.0, unbounded, fair). A job's pool is its ``pool`` field.
* **Job weight** (``FairScheduler.getJobWeight``): the priority factor, VERY_HIGH 4, HIGH 2,
  NORMAL 1, LOW 0.5, VERY_LOW 0.25 for priorities 2 .. -2 (clamped to that range); a job's
  minShare is 0. A job that is not runnable has weight 1 and demand 0.
* **Runnable jobs** (``updateRunnability``): a pool's jobs in FIFO order (priority, submit
  time, job id: ``FifoJobComparator``) up to its ``max_running``.
* **Demand** (``JobSchedulable.updateDemand``): the job's running attempts plus its pending
  runnable tasks of that type; a reduce stage counts 0 until its reduces may launch
  (``scheduleReduces``). A pool's demand is the sum over its jobs, capped at its max slots.
* **update()** runs every ``update_interval`` (0.5 s) and at every job arrival
  (``JobListener.jobAdded`` calls it): it recomputes runnability and demands, which the
  heartbeats read until the next update. Running counts are live, as in Hadoop.
* **Fair shares** (``SchedulingAlgorithms.computeFairShares``): R with
  ``sum_i min(demand_i, max(minShare_i, R weight_i)) = min(total demand, total slots)``,
  found by doubling R from 1 and 25 bisections (:func:`compute_fair_shares`); across pools
  with the cluster's slots, then within each fair-mode pool with the pool's share (a
  fifo-mode pool's jobs get 0). In Hadoop 1.0.3 fair shares steer only preemption (and the
  starvation exception of delay scheduling, which only preemption's timers arm), so this
  policy computes them when they are read: at preemption updates, or by
  :meth:`Fair.fair_shares` (the value Hadoop's last update would show).
* **Ordering** (``FairShareComparator``), of pools and of the jobs of fair-mode pools:
  needy items (running < min(minShare, demand)) first, by running / max(min(minShare,
  demand), 1); then the others by running / weight; ties by start time (0 for every pool)
  then name (a job's id follows submission order, so the job's arrival rank is used).
  Fifo-mode pools order their jobs by priority, submit time, id (``FifoComparator``).
* **Heartbeat** (``assignTasks``, ``assignmultiple`` true by default): loop; a type is
  rejected when its per-heartbeat cap is reached (``assign_multiple_maps`` /
  ``_reduces``, -1: the tracker's free slots at the heartbeat), when running = runnable
  (cluster-wide, with the demands of the last update), or when ``CapBasedLoadManager``
  refuses it (the tracker's running tasks of the type, as reported at the heartbeat, must
  be < ceil(slots x min(1, runnable / cluster slots))); each iteration takes MAP when the
  tracker's reported maps <= its reported reduces (else REDUCE), re-sorts the pools and
  launches **one** task from the first pool (under its max slots) that has one.
* **Delay scheduling**, maps only (``getAllowedLocalityLevel``): each job keeps the locality
  level of its last map (NODE at first) and the time it waited for a local map. A job
  visited for a map on a heartbeat that launched none of its maps is *skipped*; at the next
  heartbeat (any tracker's) its wait grows by the time since that heartbeat. A launch resets
  the wait to 0 and sets the level to the map's locality. After a NODE map the job may launch
  NODE until ``node_delay``, RACK until ``node_delay + rack_delay``, then ANY; after a RACK map,
  RACK until ``rack_delay``, then ANY; after an off-rack one, ANY. A job whose map stage has
  tasks without replicas is always ANY; with preemption on, so is a job whose pool has been
  starved past a preemption timeout. The delays default to Hadoop 1.0.3's auto value,
  min(15 s, 1.5 x heartbeat interval) (-1 means auto).
* **Preemption** (``preemption``, off by default as in Hadoop): every ``update_interval`` the
  policy records when each pool was last at its min share and at half its fair share
  (``updatePreemptionVariables``); every 15 s (``preemptTasksIfNecessary``) a pool starved of
  its min share for ``min_share_timeout`` is due min(minShare, demand) - running tasks, one
  below half its fair share for ``fair_share_timeout`` is due min(fairShare, demand) - running;
  the larger, summed over pools, are killed (``sim.kill``): running attempts of pools over
  their fair share, most recently started first (then highest attempt id), never taking a
  pool below its fair share. Hadoop's timeouts default to infinity (no preemption even when
  enabled); this policy's defaults are 300 s and 600 s, and -1 means never.

Simulation choices (documented departures):

* update() and the preemption timers: with preemption off nothing between heartbeats reads
  what update() computes, so it runs lazily, at the first heartbeat at or after each
  ``update_interval`` tick (or after an arrival), on the state at that heartbeat; no timer
  keeps an idle cluster busy. With preemption on, a timer every ``update_interval`` runs
  update() and the preemption check while jobs are active.
* Jobs with no pending task of the type are not visited (Hadoop visits them, and marks them
  skipped, but they cannot launch anything).
* Full trackers do not heartbeat in the engine, so a skipped job's wait grows by the time
  since the last simulated heartbeat (Hadoop's full trackers would also beat in between).
  With task demands (a multi-resource workload, e.g. ``import-alibaba --slots``), a tracker
  whose free resources fit no pending task counts as full (Hadoop 1.x has no such check).
* Per-user maxRunningJobs, sizebasedweight and weight adjusters are not modelled.

**Where the rule is.** ``Fair._assign_reference`` is the heartbeat written plain (the pools and their
jobs sorted afresh before every task: ``_launch_first``), ``_allowed_level`` delay scheduling,
``_pool_key``/``_job_key`` the comparators (:mod:`~mropt.sim.policies.fair_assign`, ``FairAssign``);
``_update_reference`` update() (every pool and job recomputed; :mod:`~mropt.sim.policies.fair_update`,
``FairUpdate``, with ``_update``, which recomputes only what changed); :mod:`~mropt.sim.policies.fair_shares`
the fair shares and :mod:`~mropt.sim.policies.fair_preemption` preemption (both plain, shared by the
two modes). ``make_policy(..., reference=True)`` runs that.

Speed (no decision changes; the Alibaba day has 12 k pools): the default runs the heartbeat on kept
orders (:class:`~mropt.sim.policies.fair_offers.FairOffers`, ``_assign_fast``): each pool's
candidate jobs and the pools with a candidate are kept sorted between heartbeats instead of sorted
at every task; a pool moves when an input of its key changes (a launch or end of its tasks, its
demand at update(), its minShare or weight: ``hei`` calls :meth:`Fair.pools_changed`, its candidate
jobs), and update() recomputes only the jobs and pools that changed. A heartbeat that launches
nothing (every candidate job waiting for a local map the node does not hold) is answered from the
answer kept since the last change, without the walk (:mod:`~mropt.sim.policies.fair_quiet`), and a
run of such heartbeats with nothing else between them in one loop (``Policy.quiet_heartbeats``).
Under ``self_check`` (``Policy``; tests) the kept pool order is compared with a sort at every
heartbeat, and the kept answer with the walk;
``tests/sim/test_sim_heartbeat_reference.py`` requires the same event log of both modes on random
workloads, with every speculation rule (a rule's backup changes its job's demand, as Hadoop's
``updateDemand`` counts active attempts: :meth:`Fair.on_rule_backup` marks the job for the next
update()).
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections.abc import Collection, Hashable
from typing import Any, ClassVar

from mropt.model.workload import PoolSpec
from mropt.registry import Param
from mropt.sim.policies.fair_assign import FairAssign
from mropt.sim.policies.fair_offers import FairOffers
from mropt.sim.policies.fair_preemption import FairPreemption
from mropt.sim.policies.fair_quiet import QuietBeat
from mropt.sim.policies.fair_shares import _Pool, compute_fair_shares, priority_factor
from mropt.sim.policies.fair_update import FairUpdate
from mropt.sim.policy import ACCEPT, HEARTBEAT, Admission, Policy, register_policy
from mropt.sim.state import MAP, NODE, REDUCE
from mropt.sim.view import AttemptView, SimView

#: FairScheduler.MAX_AUTOCOMPUTED_LOCALITY_DELAY (ms in Hadoop)
MAX_AUTO_DELAY = 15.0
#: FairScheduler.preemptionInterval
PREEMPTION_INTERVAL = 15.0
_INF = math.inf


_DELAY_HELP = "seconds; -1: auto, min(15 s, 1.5 x heartbeat interval), as Hadoop 1.0.3"


#: the Fair Scheduler's parameters (``hei`` declares them too: it is a Fair Scheduler)
FAIR_PARAMS: dict[str, Param] = {
    "update_interval": Param(
        float, 0.5, "seconds between update() runs (mapred.fairscheduler.update.interval)", minimum=0.001
    ),
    "assign_multiple": Param(bool, True, "several tasks per heartbeat (mapred.fairscheduler.assignmultiple)"),
    "assign_multiple_maps": Param(int, -1, "map cap per heartbeat; -1: the tracker's free slots", minimum=-1),
    "assign_multiple_reduces": Param(int, -1, "reduce cap per heartbeat; -1: the tracker's free slots", minimum=-1),
    "node_delay": Param(float, -1.0, "delay scheduling's node-locality wait, " + _DELAY_HELP, minimum=-1.0),
    "rack_delay": Param(float, -1.0, "delay scheduling's rack-locality wait, " + _DELAY_HELP, minimum=-1.0),
    "preemption": Param(bool, False, "kill tasks of pools over their fair share for starved pools"),
    "min_share_timeout": Param(float, 300.0, "seconds below min share before preempting; -1: never", minimum=-1.0),
    "fair_share_timeout": Param(
        float, 600.0, "seconds below half fair share before preempting; -1: never", minimum=-1.0
    ),
}


@register_policy(
    "fair",
    summary="Hadoop 1.0.3 Fair Scheduler: pools, computeFairShares, needy-first order, delay scheduling",
    source="Hadoop 1.0.3 contrib/fairscheduler (FairScheduler, SchedulingAlgorithms, PoolSchedulable)",
    needs=("slots",),
    params=FAIR_PARAMS,
)
class Fair(FairOffers, FairPreemption, FairUpdate, FairAssign, Policy):
    mode = HEARTBEAT
    #: ``without`` (tests): ``quiet_runs``, the runs of quiet heartbeats in bulk (``_quiet_heartbeats``)
    accelerations = ("quiet_runs",)
    #: the rule of the order and shares, a subclass's choice: False, Hadoop's (max(minShare, R weight));
    #: True, HEI's (``hei``): minShare plus a weighted part of what is left (pools over their minShare
    #: ordered by (running - minShare) / weight)
    additive: ClassVar[bool] = False

    def start(self, sim: SimView) -> None:
        super().start(sim)
        p = self.params
        self.update_interval = float(p["update_interval"])
        self.assign_multiple = bool(p["assign_multiple"])
        self.caps = (int(p["assign_multiple_maps"]), int(p["assign_multiple_reduces"]))
        auto = min(MAX_AUTO_DELAY, 1.5 * sim.heartbeat_interval)
        node_delay = float(p["node_delay"])
        rack_delay = float(p["rack_delay"])
        self.node_delay = auto if node_delay < 0 else node_delay
        self.rack_delay = auto if rack_delay < 0 else rack_delay
        self.preemption = bool(p["preemption"])
        ms, fs = float(p["min_share_timeout"]), float(p["fair_share_timeout"])
        self.min_share_timeout = _INF if ms < 0 else ms
        self.fair_share_timeout = _INF if fs < 0 else fs

        self.specs = {spec.id: spec for spec in sim.workload.pools}
        self.pools: dict[str, _Pool] = {}
        #: per slot type, the FairShareComparator keys of the pools with a candidate job, sorted
        #: (Hadoop sorts every pool it has seen at every heartbeat; a replay with a pool per user
        #: has thousands of idle ones): kept up to date (``_reorder``); ``placed``: each pool's key
        #: in it; ``repool``: pools whose key or membership may have changed since
        self.order: tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]] = ([], [])
        self.placed: tuple[dict[str, tuple[Any, ...]], dict[str, tuple[Any, ...]]] = ({}, {})
        self.repool: set[str] = set()
        #: per slot type: the order holds one pool whose key is not recomputed after its launches and
        #: its tasks' ends (its place cannot change; ``FairOffers._launched``, ``_reorder``, ``_fresh``)
        self.lone_stale = [False, False]
        for spec in sim.workload.pools:
            self.pools[spec.id] = _Pool(spec, 0.0)
        n = len(sim.jobs)
        self.weight = [priority_factor(job.priority) for job in sim.jobs]
        self.is_runnable = bytearray(n)
        self.demand = [[0, 0] for _ in range(n)]
        self.key: list[list[tuple[Any, ...] | None]] = [[None, None] for _ in range(n)]
        self.last_level = [NODE] * n
        self.waited = [0.0] * n
        self.skipped: Collection[int] = []  # (a set after a fast heartbeat: each job's wait is its own sum)
        self.no_locality: dict[tuple[int, int], bool] = {}
        self.input_places: dict[int, tuple[int, frozenset[int] | None, frozenset[int]]] = {}  # (FairOffers)
        self.dirty: set[int] = set()  # jobs whose candidate keys may have changed
        self.demand_dirty: set[int] = set()  # jobs whose demand must be recomputed at the next update
        self.members_changed: set[str] = set()  # pools whose runnability must be recomputed
        self.force_update = False
        self.next_update = 0.0
        self.last_heartbeat: float | None = None
        self.running_total = [0, 0]
        self.runnable_total = [0.0, 0.0]
        self.timer_on = False
        self.last_preempt_check = 0.0
        self.total_slots_at_update = list(sim.total_slots)
        self.quiet: QuietBeat | None = None  # (FairQuiet)
        self.quiet_checked = 0  # (self_check: heartbeats the quiet answer was compared with the walk on)
        # ``FairOffers._launched``'s steps (and ``_job_key``'s) inline in ``_assign_fast`` and ``_refresh_keys``
        # (speed only), unless a subclass has its own
        cls = type(self)
        self.inline_launched = cls._launched is FairOffers._launched and cls._job_key is FairAssign._job_key
        if not self.reference and type(self).assign is Fair.assign:  # ``assign`` without its own call (speed only)
            self.assign = self._assign_fast  # type: ignore[method-assign]
            # runs of quiet heartbeats in bulk (``Policy.quiet_heartbeats``; not under ``self_check``, which
            # compares each quiet answer with the walk)
            if not self.self_check and "quiet_runs" not in self.without:
                self.quiet_heartbeats = self._quiet_heartbeats

    # -- pools and jobs ----------------------------------------------------------------------
    def _pool(self, name: str) -> _Pool:
        pool = self.pools.get(name)
        if pool is None:
            pool = self.pools[name] = _Pool(PoolSpec(id=name), self.sim.now)
        return pool

    def on_arrival(self, job: int) -> Admission:
        j = self.sim.jobs[job]
        pool = self._pool(j.pool)
        insort(pool.members, (-j.priority, j.submit, job))
        if pool.max_running is None:
            self.is_runnable[job] = 1
        self.members_changed.add(pool.name)
        self.dirty.add(job)
        self.demand_dirty.add(job)
        self.force_update = True  # JobListener.jobAdded -> update()
        if self.preemption and not self.timer_on:
            self.timer_on = True
            self.sim.wake_at(self._next_tick(self.sim.now), "update")
        return ACCEPT

    def on_attempts_end(self, attempt: AttemptView, outcome: str, count: int) -> None:
        job, stype = attempt.job, attempt.type
        pool = self.pools[self.sim.jobs[job].pool]
        running = pool.running
        running[stype] -= count
        self.running_total[stype] -= count
        if running[stype] + count >= pool.max[stype]:  # back under its max (FairQuiet)
            self.quiet = None
        # the pool's key of this type changed (its running count; the other type's has no input here)
        order = self.order[stype]
        if pool.cand[stype] and len(order) == 1 and order[0][-1] == pool.name:
            self.lone_stale[stype] = True  # (the order's only pool keeps its place: FairOffers._place)
        else:
            self.repool.add(pool.name)
        self.dirty.add(job)
        self.demand_dirty.add(job)

    def on_stage_end(self, job: int, stage: int) -> None:
        self.quiet = None  # (the job's map input: FairQuiet)
        self.dirty.add(job)
        self.demand_dirty.add(job)

    def on_rule_backup(self, job: int, started: bool) -> None:
        self.demand_dirty.add(job)  # updateDemand counts the rule's backups too (active attempts)

    def on_job_end(self, job: int) -> None:
        j = self.sim.jobs[job]
        pool = self.pools[j.pool]
        for stype in (MAP, REDUCE):
            self._set_key(pool, job, stype, None)
        k = bisect_left(pool.members, (-j.priority, j.submit, job))
        del pool.members[k]
        self.members_changed.add(pool.name)  # FairScheduler.update() removes it at the next update
        self.demand_dirty.add(job)
        self.dirty.discard(job)
        self.input_places.pop(job, None)

    # -- fair shares -----------------------------------------------------------------------------
    def fair_shares(self, stype: int) -> dict[str, float]:
        """Each pool's fair share of ``stype`` slots from the last update's demands (computeFairShares)."""
        names = sorted(self.pools)
        pools = [self.pools[name] for name in names]
        shares = compute_fair_shares(
            [p.demand(stype) for p in pools],
            [float(p.min[stype]) for p in pools],
            [p.weight for p in pools],
            float(self.total_slots_at_update[stype]),
            additive=self.additive,
        )
        return dict(zip(names, shares, strict=True))

    def job_fair_shares(self, stype: int) -> dict[int, float]:
        """Each runnable job's fair share within its pool (PoolSchedulable.redistributeShare); 0 in fifo pools."""
        out: dict[int, float] = {}
        pool_shares = self.fair_shares(stype)
        for name, pool in self.pools.items():
            members = [job for _, _, job in pool.members]
            if pool.fifo:
                out.update({job: 0.0 for job in members})
                continue
            weights = [self.weight[job] if self.is_runnable[job] else 1.0 for job in members]
            shares = compute_fair_shares(
                [float(self.demand[job][stype]) for job in members], [0.0] * len(members), weights, pool_shares[name]
            )
            out.update(zip(members, shares, strict=True))
        return out

    # -- the heartbeat ---------------------------------------------------------------------------
    def job_order(self, stype: int) -> list[int]:
        """Jobs in heartbeat order: pools by FairShareComparator, then jobs by the pool's comparator.

        The order speculation visits jobs in (mropt.sim.speculation); every pool with a job counts,
        pending tasks or not (a job with only running tasks is the one that may speculate).
        """
        keyed = sorted((self._pool_key(pool, stype), pool) for pool in self.pools.values() if pool.members)
        out: list[int] = []
        for _, pool in keyed:
            members = [job for _, _, job in pool.members if self.is_runnable[job]]
            out.extend(sorted(members, key=lambda job: self._job_key(pool, job, stype)))
        return out

    def assign(self, node: int) -> None:
        """A heartbeat of ``node``: the plain rule (``_assign_reference``) under ``reference``, else the
        heartbeat on kept orders (:meth:`~mropt.sim.policies.fair_offers.FairOffers._assign_fast`:
        the same decisions)."""
        if self.reference:
            self._assign_reference(node)
        else:
            self._assign_fast(node)

    # -- preemption --------------------------------------------------------------------------------
    def on_timer(self, tag: Hashable) -> None:
        sim = self.sim
        self.quiet = None  # (the pools' starvation times: FairQuiet)
        self._update()
        if self.dirty and not self.reference:
            self._refresh_keys()
        self._update_preemption_variables()
        if sim.now - self.last_preempt_check >= PREEMPTION_INTERVAL:
            self.last_preempt_check = sim.now
            self._preempt()
        # the chain stops on an idle cluster (no active job), and when nothing can change
        # before a node comes back (nothing running, every node down)
        if sim.active and (sim.busy[MAP] + sim.busy[REDUCE] > 0 or any(sim.node_up)):
            sim.wake_at(self._next_tick(sim.now), "update")
        else:
            self.timer_on = False

    def on_node(self, node: int, up: bool) -> None:
        if up and self.preemption and not self.timer_on and self.sim.active:
            self.timer_on = True
            self.sim.wake_at(self._next_tick(self.sim.now), "update")
