"""The discrete-event engine of the cluster simulator.

One event queue (:mod:`mropt.sim.event_queue`: a heap of distinct times, per time one list of
``(kind, argument)`` tuples per class) and no per-event object beyond the tuple (SimPy
measured 3x slower here: ``../shared/reference/schedulers-and-simulators.md`` sec. 5).
Simultaneous events follow one total order: completions (class 0) before kills (node
failures, class 1) before arrivals and recoveries (class 2) before timers and heartbeats
(class 3), then the order they were scheduled in. Scheduling decisions come after every event
of their instant, so a slot freed at t can be given to a job that arrives at t (the Batsim #14
lesson).

**Assignment modes** (:mod:`mropt.sim.policy`):

* ``event``: after the events of an instant, the policy is offered every node whose capacity
  freed, in node order; when new work appeared (an accepted arrival, a stage made runnable,
  a task re-queued, a policy timer), every node with free capacity. Nodes are offered only
  while tasks of a type they have room for are pending: idle nodes are never polled.
* ``heartbeat``: Hadoop 1.x trackers report every ``max(3 s, ceil(nodes / 100) s)``
  (JobTracker 1.0.3: ``getNextHeartbeatInterval`` with 100 heartbeats per second); node i's
  heartbeats fall at ``i / nodes`` of an interval plus whole intervals. Only a node with free
  capacity while work of that type is pending has its next heartbeat scheduled; with task
  demands, only while some pending task fits its free resources (capacity freeing on it, or new
  work, schedules it again).

**Attempt time** = base duration / node speed x locality factor (1 node-local or without
replicas, ``rack_factor`` rack-local, ``remote_factor`` off-rack; Mumak's 1.0 / 1.5 / 3.0)
x ``straggler_slowdown`` with probability ``straggler_rate`` (one seeded draw per attempt,
in launch order, from ``random.Random(seed)``; with ``straggler_draws="task"``, the default
under a speculation rule, the draw of the k-th attempt of a task is a hash of the seed, the
job, stage and task indices and k instead, so runs whose launch orders differ (with and
without backups, or under two rules) meet the same stragglers).

**Reduce slow-start** (off unless ``timing.reduce_slowstart`` is set): a reduce stage right
after a map stage may launch once ``ceil(slowstart x maps)`` maps finished (slow-start 0: as
soon as the map stage becomes current, as Hadoop's ``JobInProgress.scheduleReduces``). An
early reduce does its first third (the copy) while maps run and its last two thirds (sort,
reduce) once the last map ends: it ends at ``max(launch + d/3, maps end) + 2d/3`` (Hadoop
reports reduce progress in these thirds).

**Failures**: a node going down kills its running attempts (outcome ``failed``) and re-queues
their tasks; its slots are gone until it comes back. Map outputs already written on it are
kept (a simplification: Hadoop would re-run completed maps of jobs still in their reduces).

**Batches** (on unless ``Simulation(batch=False)``; they change no simulated time and no row
of any table, ``tests/sim/test_sim_batching.py``): a launch joins the attempt object made by
the launch just before it when both started at this instant, are of the same job and stage,
have the same locality level, resource demand and running time (base duration / node speed x
locality factor x straggler draw, compared exactly), and neither is speculative nor an early
(slow-start) reduce. The nodes may differ. A batch of ``n`` tasks is one :class:`Attempt`
with ``n`` consecutive attempt ids and one completion event instead of ``n``; when it ends,
its tasks are completed in id order, in bulk when nothing can tell the difference (no
``on_attempt_end`` hook, no backup attempt in the stage, no slow-start map stage), else one by
one exactly as single attempts. Only the last attempt object can be joined, and any other
completion scheduled in between (another attempt, an early reduce's end) closes it, so the
order of simultaneous completions is the order single attempts would have. Straggler draws
stay one per task in launch order; a task drawn slow does not join. Batches stay killable per
task: ``kill(aid)`` of a member (a policy's, a node failure's, a drop's, the loser of a
speculative race) ends that task alone and the others run on; ``speculate`` works on a member.
``running`` maps every attempt id, members included (:class:`Running`, :class:`Member`
views), and the recorder writes one row per task (``tasks.parquet`` is unchanged).
``launch(..., count=k)`` starts up to k tasks in one call (what k calls in a row would).
``events`` counts heap events, so a batched run counts fewer.

**A run ends** when no event is left. Accepted jobs that could not finish are reported
unfinished, with their cause in ``jobs.parquet``'s ``unfinished_cause``
(:mod:`mropt.sim.unfinished`): ``no_node`` when no node up at the end can run a task of theirs
(failed for good); a heartbeat run whose policy keeps declining work while nothing else
happens stops after ``stall_limit`` heartbeats in a row (``stalled``); a policy that left
runnable work unlaunched otherwise gets no cause, and verify rejects the run.
"""

from __future__ import annotations

import gc
import math
import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from mropt.model.errors import InputError
from mropt.model.workload import WorkloadInstance
from mropt.sim.demand_index import DemandIndex
from mropt.sim.event_queue import EventQueue, drain
from mropt.sim.placement import place_replicas
from mropt.sim.policy import EVENT, MODES, Policy
from mropt.sim.recorder import _OUTCOME_CODE, Recorder
from mropt.sim.state import (
    ACTIVE,
    ANY,
    DONE,
    DROPPED,
    FINISHED,
    MAP,
    NODE,
    NONE,
    PENDING,
    REDUCE,
    REJECTED,
    RUNNING,
    Job,
    build_jobs,
    node_indices,
    slowstart_threshold,
)

# event classes (the order of simultaneous events) and kinds
C_DONE, C_KILL, C_ARRIVE, C_DECIDE = 0, 1, 2, 3
EV_DONE, EV_DOWN, EV_UP, EV_ARRIVE, EV_TIMER, EV_HEARTBEAT, EV_SPECULATE = 0, 1, 2, 3, 4, 5, 6

#: the float slack of a resource fit (``docs/tolerances.md``, CAPACITY_RTOL's absolute cousin)
_FIT_EPS = 1e-9


#: how straggler draws are made (``Simulation(straggler_draws=...)``, module docstring)
STRAGGLER_DRAWS = ("stream", "task")
_MASK64 = (1 << 64) - 1


def _task_uniform(seed: int, job: int, stage: int, task: int, k: int) -> float:
    """A uniform in [0, 1) from (seed, job, stage, task, attempt number): splitmix64 finalisers chained."""
    x = seed & _MASK64
    for v in (job, stage, task, k):
        x = ((x ^ (v & _MASK64)) + 0x9E3779B97F4A7C15) & _MASK64
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
        x ^= x >> 31
    return (x >> 11) * (1.0 / (1 << 53))


def heartbeat_interval(n_nodes: int) -> float:
    """Hadoop 1.0.3 JobTracker: max(3 s, ceil(trackers / 100) s)."""
    return max(3.0, float(math.ceil(n_nodes / 100)))


class Attempt:
    """One attempt of a task on a node (the row of ``tasks.parquet`` it becomes), or a batch.

    A batch (``n > 1``, see the module docstring) is one object for ``n`` attempts of the same
    stage that started at the same instant and end at the same time: member ``i`` has attempt
    id ``id + i``, task ``tasks[i]`` and node ``nodes[i]``; the object's own ``task`` and
    ``node`` are member 0's. ``live`` counts the members still running; ``dead`` maps a
    member killed early to the time it ended.
    """

    __slots__ = (
        "id",
        "job",
        "stage",
        "task",
        "node",
        "type",
        "start",
        "end",
        "level",
        "speculative",
        "work",
        "demand",
        "n",
        "live",
        "tasks",
        "nodes",
        "dead",
    )

    def __init__(
        self,
        aid: int,
        job: int,
        stage: int,
        task: int,
        node: int,
        stype: int,
        start: float,
        level: int,
        speculative: bool,
        work: float,
        demand: tuple[float, ...] | None,
    ) -> None:
        self.id = aid
        self.job = job
        self.stage = stage
        self.task = task
        self.node = node
        self.type = stype
        self.start = start
        self.end: float | None = None
        self.level = level
        self.speculative = speculative
        self.work = work  # the attempt's full running time on its node
        self.demand = demand
        self.n = 1
        self.live = 1
        self.tasks: list[int] | None = None
        self.nodes: list[int] | None = None
        self.dead: dict[int, float] | None = None

    def member(self, i: int) -> Attempt | Member:
        """Member ``i``'s view (the object itself for a single attempt)."""
        return self if self.n == 1 else Member(self, i)


class Member:
    """The attempt view of one member of a batch (read-only; ``mropt.sim.view.AttemptView``)."""

    __slots__ = ("batch", "i")

    def __init__(self, batch: Attempt, i: int) -> None:
        self.batch = batch
        self.i = i

    @property
    def id(self) -> int:
        return self.batch.id + self.i

    @property
    def job(self) -> int:
        return self.batch.job

    @property
    def stage(self) -> int:
        return self.batch.stage

    @property
    def task(self) -> int:
        tasks = self.batch.tasks
        return tasks[self.i] if tasks is not None else self.batch.task

    @property
    def node(self) -> int:
        nodes = self.batch.nodes
        return nodes[self.i] if nodes is not None else self.batch.node

    @property
    def type(self) -> int:
        return self.batch.type

    @property
    def start(self) -> float:
        return self.batch.start

    @property
    def end(self) -> float | None:
        dead = self.batch.dead
        if dead is not None and self.i in dead:
            return dead[self.i]
        return self.batch.end

    @property
    def level(self) -> int:
        return self.batch.level

    @property
    def speculative(self) -> bool:
        return self.batch.speculative

    @property
    def work(self) -> float:
        return self.batch.work

    @property
    def demand(self) -> tuple[float, ...] | None:
        return self.batch.demand


class Running(Mapping[int, "Attempt | Member"]):
    """The running attempts by id, batch members included (``Simulation.running``).

    Iterates in attempt id order, like the dict it stands for; a batch member's value is a
    :class:`Member` view made on access.
    """

    __slots__ = ("of",)

    def __init__(self) -> None:
        self.of: dict[int, Attempt] = {}  # attempt id -> its attempt (a batch for each member)

    def __getitem__(self, aid: int) -> Attempt | Member:
        a = self.of[aid]
        return a if aid == a.id else Member(a, aid - a.id)

    def __contains__(self, aid: object) -> bool:
        return aid in self.of

    def __iter__(self) -> Iterator[int]:
        return iter(self.of)

    def __len__(self) -> int:
        return len(self.of)

    def pop(self, aid: int, default: Any = None) -> Any:
        """Remove an id (the engine's, not a policy's); its view, or ``default``."""
        a = self.of.pop(aid, None)
        if a is None:
            return default
        return a if aid == a.id else Member(a, aid - a.id)


class Simulation:
    """A run of one policy on one workload with one seed; :meth:`run` returns a :class:`Recorder`."""

    def __init__(
        self,
        workload: WorkloadInstance,
        policy: Policy,
        *,
        seed: int = 0,
        mode: str | None = None,
        heartbeat: float | None = None,
        stall_limit: int = 100_000,
        record_utilisation: bool = True,
        batch: bool = True,
        speculation: Any = None,
        straggler_draws: str | None = None,
    ) -> None:
        mode = mode or policy.mode
        if mode not in MODES:
            raise InputError(f"simulate: mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.workload = workload
        self.policy = policy
        self.seed = seed
        self.mode = mode
        self.now = 0.0
        self.stall_limit = stall_limit
        timing = workload.timing
        self.slowstart = timing.reduce_slowstart
        self._factors = (1.0, timing.rack_factor, timing.remote_factor)
        self._straggler_rate = timing.straggler_rate
        self._straggler_slowdown = timing.straggler_slowdown
        self._rng = random.Random(seed)
        # straggler draws: "stream" (one stream in launch order) or "task" (a hash of the seed and
        # the attempt's job, stage, task and attempt number: the same draws whatever the order)
        if straggler_draws is None:
            straggler_draws = "stream" if speculation is None else "task"
        if straggler_draws not in STRAGGLER_DRAWS:
            raise InputError(
                f"simulate: straggler_draws must be one of {', '.join(STRAGGLER_DRAWS)}, got {straggler_draws!r}"
            )
        self.straggler_draws = straggler_draws
        self._task_draws: dict[tuple[int, int, int], int] | None = {} if straggler_draws == "task" else None

        ids, racks, self.rack_names, speeds = node_indices(workload)
        self.node_ids = ids
        self.node_index = {node_id: i for i, node_id in enumerate(ids)}
        self.n_nodes = len(ids)
        self.node_rack = racks
        self.node_speed = speeds
        self.node_up = [True] * self.n_nodes
        self.heartbeat_interval = heartbeat if heartbeat is not None else heartbeat_interval(self.n_nodes)
        self.resources: list[str] = sorted({r for spec in workload.nodes for r in spec.resources})
        capacity: list[list[int]] = [[], []]
        res_cap: list[list[float]] = []
        for spec in workload.nodes:
            for _ in range(spec.count):
                capacity[MAP].append(spec.map_slots if spec.map_slots is not None else 0)
                capacity[REDUCE].append(spec.reduce_slots if spec.reduce_slots is not None else 0)
                res_cap.append([spec.resources.get(r, 0.0) for r in self.resources])
        self.uses_slots = workload.uses_slots
        self._capacity = capacity
        self.slots = [list(capacity[MAP]), list(capacity[REDUCE])]
        self.free = [list(capacity[MAP]), list(capacity[REDUCE])]
        self.total_slots = [sum(capacity[MAP]), sum(capacity[REDUCE])]
        self._res_cap = res_cap
        self.free_resources = [list(c) for c in res_cap]
        self.busy = [0, 0]
        self.runnable = [0, 0]
        self.remaining = [0, 0]  # unfinished tasks of active jobs per slot type (all their stages)

        placed = place_replicas(workload, racks) if workload.placement is not None else None
        # locality stacks are built by a stage when first asked for a task (Stage.take)
        self.jobs: list[Job] = build_jobs(workload, self.resources, self.node_index, placed)
        self.active: dict[int, Job] = {}
        self.running = Running()
        self._live = self.running.of
        self._next_attempt = 0
        self.launched = 0  # tasks started by the last launch call
        self.launched_level = NONE  # locality and demand of the last task it started
        self.launched_demand: tuple[float, ...] | None = None
        # a speculation rule (mropt.sim.speculation) or None; a rule sees every attempt
        # start and end, so batching is off under one (batches change no result)
        self._spec: Any = speculation
        self.batching = batch and speculation is None
        self.backups = 0  # backup attempts started (sim.speculate)
        self.wasted_work = 0.0  # slot-seconds of attempts killed because a sibling attempt won
        self._rule_backups: set[int] = set()  # backups the rule started: the policy never hears of them
        self._spec_tick = False
        self._spec_all = False
        self._peek: tuple[int, bool] | None = None  # (next attempt id, its straggler draw), next_work
        # the attempt (or batch) the next launch may join, and its stage; None once it may
        # not grow (it ended, lost a member, or another completion was scheduled after it)
        self._open: Attempt | None = None
        self._open_stage: Any = None
        self._util = record_utilisation
        self._queue = EventQueue()
        self._dirty: set[int] = set()
        self._held: set[int] = set()  # freed nodes a pass did not offer (see _event_pass)
        self._new_work = False
        self._hb_pending = bytearray(self.n_nodes)
        # heartbeat mode with task demands: a node beats only while some waiting task fits it
        has_demands = any(d is not None for j in self.jobs for st in j.stages for d in st.demands)
        self._fit_index = DemandIndex(self) if mode != EVENT and has_demands else None
        self._stalled_heartbeats = 0
        self.stalled = False
        self.events = 0
        self.record = Recorder(self, record_utilisation)
        self._notify_attempt = type(policy).on_attempt_end is not Policy.on_attempt_end
        # counts-only policies get one on_attempts_end per batch (bulk completion kept)
        self._notify_batch = not self._notify_attempt and type(policy).on_attempts_end is not Policy.on_attempts_end

    # -- the event queue ------------------------------------------------------------------
    def _push(self, time: float, cls: int, kind: int, arg: Any) -> None:
        self._queue.push(time, cls, kind, arg)

    def wake_at(self, time: float, tag: Any = None) -> None:
        """Call the policy's ``on_timer(tag)`` at ``time`` (not before now)."""
        self._push(max(time, self.now), C_DECIDE, EV_TIMER, tag)

    # -- the run ---------------------------------------------------------------------------
    def run(self) -> Recorder:
        """Simulate until no event is left; the recorder holds every outcome.

        Python's cyclic garbage collector is paused during the run (and restored after): the
        engine's objects form no reference cycles, so it would find nothing, yet each of its
        full passes walks every live object, millions in a trace-sized run. Memory is still
        freed as objects are dropped.
        """
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._run()
        finally:
            if enabled:
                gc.enable()

    def _run(self) -> Recorder:
        order = sorted(range(len(self.jobs)), key=lambda j: (self.jobs[j].submit, j))
        for j in order:
            self._push(self.jobs[j].submit, C_ARRIVE, EV_ARRIVE, j)
        for fault in self.workload.faults:
            node = self.node_index[fault.node]
            self._push(fault.down, C_KILL, EV_DOWN, node)
            if fault.up is not None:
                self._push(fault.up, C_ARRIVE, EV_UP, node)
        self.policy.start(self)
        spec = self._spec
        if spec is not None:
            spec.start(self)
        queue = self._queue
        event_mode = self.mode == EVENT
        record = self.record
        while queue:
            now, lists = queue.next_instant()
            self.now = now
            for kind, arg in drain(lists):
                self.events += 1
                if kind == EV_DONE:
                    self._on_done(arg)
                elif kind == EV_ARRIVE:
                    self._on_arrive(arg)
                elif kind == EV_HEARTBEAT:
                    self._on_heartbeat(arg)
                elif kind == EV_TIMER:
                    self.policy.on_timer(arg)
                    self._new_work = True
                elif kind == EV_DOWN:
                    self._on_down(arg)
                elif kind == EV_UP:
                    self._on_up(arg)
                else:  # EV_SPECULATE: every node with a free slot is offered to the rule
                    self._spec_tick = False
                    self._spec_all = True
                if self.stalled:
                    break
            if self.stalled:
                queue.clear()
            else:
                queue.close(now)
            if event_mode:
                if spec is None:
                    self._event_pass()
                else:
                    freed: Sequence[int] = range(self.n_nodes) if self._spec_all else sorted(self._dirty)
                    self._spec_all = False
                    self._event_pass()
                    self._speculation_pass(freed)
            elif self._new_work:
                self._wake_free_nodes()
            record.flush(now)
        record.finish()
        return record

    # -- assignment -------------------------------------------------------------------------
    def _has_room(self, node: int) -> bool:
        """Whether ``node`` may take pending work: it is up, with a free slot of a type that has
        pending tasks and (heartbeat mode, tasks with demands) free resources that some pending
        task fits (:class:`~mropt.sim.demand_index.DemandIndex`)."""
        runnable = self.runnable
        if not self.node_up[node]:
            return False
        if self.uses_slots:
            room = (runnable[MAP] > 0 and self.free[MAP][node] > 0) or (
                runnable[REDUCE] > 0 and self.free[REDUCE][node] > 0
            )
        else:
            room = runnable[MAP] + runnable[REDUCE] > 0
        return room and (self._fit_index is None or self._fit_index.any_fits(node))

    def _event_pass(self) -> None:
        """Offer the nodes whose capacity freed, or every node when work appeared (event mode).

        A policy may name fewer nodes for new work (``Policy.new_work_nodes``); nodes that
        freed capacity but were not offered (no work to give then, or no free slot of a type
        with work) are *held* and offered at the next such pass, so such a policy still sees
        every node whose capacity grew.
        """
        runnable = self.runnable
        free_map, free_reduce = self.free
        node_up = self.node_up
        uses_slots = self.uses_slots
        assign = self.policy.assign
        dirty = self._dirty
        held = self._held
        while dirty or self._new_work:
            if self._new_work:
                self._new_work = False
                chosen = self.policy.new_work_nodes()
                if chosen is None:
                    nodes: Sequence[int] = range(self.n_nodes)
                    held.clear()
                else:
                    nodes = sorted(dirty.union(held, chosen))
                    held.clear()
                dirty.clear()
            else:
                nodes = sorted(dirty)
                dirty.clear()
            for i, node in enumerate(nodes):
                maps, reduces = runnable
                if maps + reduces == 0:
                    dirty.clear()
                    held.update(nodes[i:])
                    return
                if not node_up[node]:
                    continue
                if uses_slots and not ((maps and free_map[node] > 0) or (reduces and free_reduce[node] > 0)):
                    held.add(node)
                    continue
                assign(node)

    # -- speculation (a rule given: mropt.sim.speculation) ------------------------------------
    def _spec_room(self, node: int) -> bool:
        """Whether the rule may be offered the node: it is up with a free slot of a type that has running attempts."""
        if not self.node_up[node]:
            return False
        busy = self.busy
        if self.uses_slots:
            return (busy[MAP] > 0 and self.free[MAP][node] > 0) or (busy[REDUCE] > 0 and self.free[REDUCE][node] > 0)
        return busy[MAP] + busy[REDUCE] > 0

    def _speculation_pass(self, nodes: Sequence[int]) -> None:
        """Event mode: after the policy's pass, offer the rule the nodes freed at this instant
        (every node at a speculation tick); while attempts run and a slot is free, a tick
        comes back every heartbeat interval, so a task that becomes a candidate later (the
        60 s lag) is seen without a node freeing."""
        spec = self._spec
        for node in nodes:
            if self._spec_room(node):
                spec.offer(node)
        busy = self.busy
        running = busy[MAP] + busy[REDUCE]
        room = not self.uses_slots or running < self.total_slots[MAP] + self.total_slots[REDUCE]
        if not self._spec_tick and running > 0 and room:
            self._spec_tick = True
            self._push(self.now + self.heartbeat_interval, C_DECIDE, EV_SPECULATE, None)

    def _next_beat(self, node: int) -> float:
        interval = self.heartbeat_interval
        phase = interval * node / self.n_nodes
        k = math.ceil((self.now - phase) / interval)
        return phase + max(k, 0) * interval

    def _schedule_heartbeat(self, node: int) -> None:
        if not self._hb_pending[node] and (self._has_room(node) or (self._spec is not None and self._spec_room(node))):
            self._hb_pending[node] = 1
            self._push(self._next_beat(node), C_DECIDE, EV_HEARTBEAT, node)

    def _wake_free_nodes(self) -> None:
        self._new_work = False
        for node in range(self.n_nodes):
            if not self._hb_pending[node]:
                self._schedule_heartbeat(node)
        self._dirty.clear()

    def _on_heartbeat(self, node: int) -> None:
        self._hb_pending[node] = 0
        if self._spec is not None:
            self._on_heartbeat_speculating(node)
            return
        if not self._has_room(node):
            return
        before = self._next_attempt
        self.policy.assign(node)
        if self._next_attempt == before:
            self._stalled_heartbeats += 1
            if self._stalled_heartbeats > self.stall_limit:
                self.stalled = True
                return
        else:
            self._stalled_heartbeats = 0
        if self._has_room(node):
            self._hb_pending[node] = 1
            self._push(self.now + self.heartbeat_interval, C_DECIDE, EV_HEARTBEAT, node)

    def _on_heartbeat_speculating(self, node: int) -> None:
        """A heartbeat under a speculation rule: the policy first (when work is pending), then the
        rule on the slots left (Hadoop's obtainNewMapTask tries a speculative task when it has
        no new task to give); a heartbeat only the rule was offered never counts as stalled."""
        pending = self._has_room(node)
        if not pending and not self._spec_room(node):
            return
        before = self._next_attempt
        if pending:
            self.policy.assign(node)
        launched = self._next_attempt != before
        if self._spec_room(node):
            self._spec.offer(node)
        if pending and not launched:
            self._stalled_heartbeats += 1
            if self._stalled_heartbeats > self.stall_limit:
                self.stalled = True
                return
        elif launched:
            self._stalled_heartbeats = 0
        if self._has_room(node) or self._spec_room(node):
            self._hb_pending[node] = 1
            self._push(self.now + self.heartbeat_interval, C_DECIDE, EV_HEARTBEAT, node)

    def _freed(self, node: int) -> None:
        if self.mode == EVENT:
            self._dirty.add(node)
        else:
            self._schedule_heartbeat(node)

    # -- queries for policies --------------------------------------------------------------
    def launchable(self, job: int, slot_type: int) -> bool:
        return self.jobs[job].launchable(slot_type, self.slowstart) is not None

    def fits(self, job: int, slot_type: int, node: int) -> bool:
        if not self.node_up[node]:
            return False
        if self.uses_slots and self.free[slot_type][node] <= 0:
            return False
        stage = self.jobs[job].launchable(slot_type, self.slowstart)
        if stage is None:
            return False
        demand = stage.demands[0] if len(stage.demands) == 1 else None
        if demand is None and len(stage.demands) > 1:
            demand = next((d for d in stage.demands if d is not None), None)
        return demand is None or self._fits_demand(node, demand)

    def _fits_demand(self, node: int, demand: tuple[float, ...]) -> bool:
        free = self.free_resources[node]
        if len(demand) == 2:  # (cpu, mem): the common case, spelled out
            return demand[0] <= free[0] + _FIT_EPS and demand[1] <= free[1] + _FIT_EPS
        return all(amount <= free[k] + _FIT_EPS for k, amount in enumerate(demand))

    def next_work(self, job: int, stage: int, task: int, node: int) -> float:
        """The running time an attempt of the task started on ``node`` now would get: base
        duration / speed x locality factor x the straggler draw it would take (the next draw
        of the run's stream, peeked at and not consumed). What the clairvoyant rule knows."""
        st = self.jobs[job].stages[stage]
        level = st.level_on(task, node, self.node_rack[node], self.node_rack)
        durations = st.durations
        work = (durations[0] if len(durations) == 1 else st.duration_of(task)) / self.node_speed[node]
        if level > NODE:
            work *= self._factors[level]
        if self._straggler_rate and self._task_draws is not None:
            if _task_uniform(self.seed, job, stage, task, self._task_draws.get((job, stage, task), 0)) < (
                self._straggler_rate
            ):
                work *= self._straggler_slowdown
        elif self._straggler_rate:
            # draws happen only at launches, so the next draw is known until the next attempt id
            peek = self._peek
            if peek is None or peek[0] != self._next_attempt:
                state = self._rng.getstate()
                peek = self._peek = (self._next_attempt, self._rng.random() < self._straggler_rate)
                self._rng.setstate(state)
            if peek[1]:
                work *= self._straggler_slowdown
        return work

    def predicted_duration(self, job: int, stage: int, task: int, node: int) -> float:
        st = self.jobs[job].stages[stage]
        level = st.level_on(task, node, self.node_rack[node], self.node_rack)
        factor = self._factors[level] if level >= 0 else 1.0
        return st.duration_of(task) / self.node_speed[node] * factor

    # -- actions ------------------------------------------------------------------------------
    def launch(self, job: int, node: int, slot_type: int, level: int = ANY, count: int = 1) -> int:
        """Start up to ``count`` pending tasks of ``job``'s launchable stage of ``slot_type`` on ``node``.

        Each task is the best one for the node at locality ``level`` or better (node-local,
        then rack-local, then any; tasks without replicas at every level). Returns the first
        attempt id (the others follow it: ``id .. id + sim.launched - 1``), or -1 when no
        such task exists or it does not fit the node. ``count = k`` starts exactly what k
        calls in a row would, stopping at the first that would return -1.
        """
        self.launched = 0
        if not self.node_up[node]:
            return -1
        uses_slots = self.uses_slots
        free = self.free[slot_type]
        if uses_slots and free[node] <= 0:
            return -1
        j = self.jobs[job]
        if j.status != ACTIVE:
            return -1
        stage = j.launchable(slot_type, self.slowstart)
        if stage is None:
            return -1
        node_rack = self.node_rack
        rack = node_rack[node]
        demands = stage.demands
        one_demand = len(demands) == 1
        if one_demand and demands[0] is not None and not self._fits_demand(node, demands[0]):
            return -1  # (before looking for a task)
        durations = stage.durations
        one_duration = len(durations) == 1
        # without straggler draws a task's running time is known here: the common case, a
        # task joining the open batch, is done inline (what _start does for it)
        inline = not self._straggler_rate
        speed = self.node_speed[node]
        now = self.now
        live = self._live
        first = -1
        launched = 0
        state = stage.state
        take = stage.take
        no_replicas = stage.replicas is None
        while True:
            if no_replicas and not stage.requeue:  # Stage.take's fresh-pointer case, inline
                if not stage.pending:
                    break
                task = stage.fresh
                while state[task] != PENDING:
                    task += 1
                stage.fresh = task
                got = NONE
            else:
                task, got = take(node, rack, level, node_rack)
                if task < 0:
                    break
            if one_demand:
                demand = demands[0]  # (checked before the first task; a run checks each next one)
                if launched and demand is not None and not self._fits_demand(node, demand):
                    break
            else:
                demand = stage.demand_of(task)
                if demand is not None and not self._fits_demand(node, demand):
                    break
            state[task] = RUNNING
            stage.pending -= 1
            j.runnable[slot_type] -= 1
            self.runnable[slot_type] -= 1
            o = self._open
            if inline and o is not None and self._open_stage is stage:
                work = (durations[0] if one_duration else stage.duration_of(task)) / speed
                if got > NODE:
                    work *= self._factors[got]
                if o.work == work and o.start == now and o.level == got and o.demand is demand:
                    aid = self._next_attempt
                    self._next_attempt = aid + 1
                    tasks = o.tasks
                    if tasks is None:
                        o.tasks = [o.task, task]
                        o.nodes = [o.node, node]
                    else:
                        tasks.append(task)
                        o.nodes.append(node)  # type: ignore[union-attr]
                    o.n += 1
                    o.live += 1
                    live[aid] = o
                    stage.running += 1
                    j.running[slot_type] += 1
                    self.busy[slot_type] += 1
                    if uses_slots:
                        free[node] -= 1
                    if demand is not None:
                        res = self.free_resources[node]
                        for k, amount in enumerate(demand):
                            res[k] -= amount
                    if self._util:
                        self.record.started(o, j)
                else:
                    aid = self._start(j, stage, task, node, got, False, demand)
            else:
                aid = self._start(j, stage, task, node, got, False, demand)
            if first < 0:
                first = aid
            launched += 1
            self.launched_level = got
            self.launched_demand = demand
            if launched >= count or (uses_slots and free[node] <= 0):
                break
        self.launched = launched
        return first

    def speculate(self, job: int, stage: int, task: int, node: int, *, rule: bool = False) -> int:
        """Start a backup attempt of a running task on ``node`` (LATE); -1 if it cannot run there.

        ``rule``: started by the run's speculation rule, not the policy; the policy hears
        neither its start nor its end (its own counters count the slots it gave).
        """
        j = self.jobs[job]
        st = j.stages[stage]
        if j.status != ACTIVE or st.state[task] != RUNNING or not self.node_up[node]:
            return -1
        if self.uses_slots and self.free[st.type][node] <= 0:
            return -1
        demand = st.demand_of(task)
        if demand is not None and not self._fits_demand(node, demand):
            return -1
        level = st.level_on(task, node, self.node_rack[node], self.node_rack)
        self._open = None  # a backup never joins a batch
        running_of = st.running_of
        if task not in running_of:  # its one attempt (perhaps a batch member) becomes a list
            running_of[task] = [
                aid
                for aid, a in self._live.items()
                if a.job == job and a.stage == stage and (a.task if a.tasks is None else a.tasks[aid - a.id]) == task
            ]
        aid = self._start(j, st, task, node, level, True, demand)
        running_of[task].append(aid)
        self.backups += 1
        if rule:
            self._rule_backups.add(aid)
        return aid

    def _start(
        self, j: Job, stage: Any, task: int, node: int, level: int, speculative: bool, demand: tuple[float, ...] | None
    ) -> int:
        stype = stage.type
        now = self.now
        durations = stage.durations
        work = (durations[0] if len(durations) == 1 else stage.duration_of(task)) / self.node_speed[node]
        if level > NODE:
            work *= self._factors[level]
        if self._straggler_rate:
            draws = self._task_draws
            if draws is None:
                if self._rng.random() < self._straggler_rate:
                    work *= self._straggler_slowdown
            else:
                key = (j.index, stage.index, task)
                k = draws.get(key, 0)
                draws[key] = k + 1
                if _task_uniform(self.seed, j.index, stage.index, task, k) < self._straggler_rate:
                    work *= self._straggler_slowdown
        aid = self._next_attempt
        self._next_attempt = aid + 1
        o = self._open
        if (
            o is not None
            and o.work == work
            and o.start == now
            and self._open_stage is stage
            and o.level == level
            and o.demand is demand
        ):
            # join the batch: same stage, start, running time (so the same end) and demand
            tasks = o.tasks
            if tasks is None:
                o.tasks = [o.task, task]
                o.nodes = [o.node, node]
            else:
                tasks.append(task)
                o.nodes.append(node)  # type: ignore[union-attr]
            o.n += 1
            o.live += 1
            attempt = o
        else:
            attempt = Attempt(aid, j.index, stage.index, task, node, stype, now, level, speculative, work, demand)
            if stage.index > j.cur:  # an early reduce (slow-start): it waits for the maps to end
                stage.waiting.append(aid)
                self._open = None
            else:
                attempt.end = now + work
                self._queue.push(attempt.end, C_DONE, EV_DONE, attempt)
                if self.batching and not speculative:
                    self._open = attempt
                    self._open_stage = stage
                else:
                    self._open = None
        self._live[aid] = attempt
        stage.running += 1
        j.running[stype] += 1
        self.busy[stype] += 1
        if self.uses_slots:
            self.free[stype][node] -= 1
        if demand is not None:
            free = self.free_resources[node]
            for k, amount in enumerate(demand):
                free[k] -= amount
        if j.first_start is None:
            j.first_start = now
        if self._util:
            self.record.started(attempt, j)
        if self._spec is not None:
            self._spec.started(attempt)
        return aid

    def _release(self, stype: int, node: int, demand: tuple[float, ...] | None, j: Job, stage: Any) -> None:
        j.running[stype] -= 1
        self.busy[stype] -= 1
        stage.running -= 1
        if self.node_up[node]:
            if self.uses_slots:
                self.free[stype][node] += 1
            if demand is not None:
                free = self.free_resources[node]
                for k, amount in enumerate(demand):
                    free[k] += amount
            self._freed(node)

    def kill(self, attempt: int, outcome: str = "killed") -> None:
        """End a running attempt now; its task goes back to pending unless another attempt runs it.

        A member of a batch is killed alone: the other members run on.
        """
        a = self._live.pop(attempt, None)
        if a is None:
            return
        if self._open is a:
            self._open = None
        i = attempt - a.id
        now = self.now
        a.live -= 1
        if a.n == 1:
            a.end = now
            task, node = a.task, a.node
        else:
            if a.dead is None:
                a.dead = {}
            a.dead[i] = now
            task, node = a.tasks[i], a.nodes[i]  # type: ignore[index]
        j = self.jobs[a.job]
        stage = j.stages[a.stage]
        self._release(a.type, node, a.demand, j, stage)
        self.record.ended(a, i, now, _OUTCOME_CODE[outcome])
        if self._spec is not None:
            self._spec.ended(a, outcome)
        if attempt in stage.waiting:
            stage.waiting.remove(attempt)
        running_of = stage.running_of
        if task in running_of:
            aids = running_of[task]
            aids.remove(attempt)
            if not aids:
                del running_of[task]
        if task not in running_of and stage.state[task] == RUNNING and j.status == ACTIVE:
            stage.requeue_task(task, self.node_rack)
            if stage.index == j.cur or j.launchable(stage.type, self.slowstart) is stage:
                j.runnable[stage.type] += 1
                self.runnable[stage.type] += 1
            self._new_work = True
            if self._fit_index is not None:
                self._fit_index.note(j.index)
        if self._rule_backups and attempt in self._rule_backups:
            return  # the rule's backup: the policy never heard of it
        if self._notify_attempt:
            self.policy.on_attempt_end(a.member(i), outcome)
        elif self._notify_batch:
            self.policy.on_attempts_end(a.member(i), outcome, 1)

    def drop(self, job: int, reason: str) -> None:
        """Stop an accepted job: kill its attempts, forget its pending tasks (AMB timeout handling)."""
        j = self.jobs[job]
        if j.status != ACTIVE:
            return
        j.status = DROPPED
        j.reason = reason
        for aid in [aid for aid, a in self._live.items() if a.job == job]:
            self.kill(aid, "killed")
        for stype in (MAP, REDUCE):
            self.runnable[stype] -= j.runnable[stype]
            j.runnable[stype] = 0
            self.remaining[stype] -= j.remaining[stype]
        del self.active[job]
        j.finish = None
        self.record.job_ended(j)
        self.policy.on_job_end(job)

    # -- event handlers ---------------------------------------------------------------------
    def _on_arrive(self, job: int) -> None:
        j = self.jobs[job]
        decision = self.policy.on_arrival(job)
        j.reason = decision.reason
        if not decision.accept:
            j.status = REJECTED
            self.record.job_ended(j)
            return
        j.status = ACTIVE
        self.active[job] = j
        self.remaining[MAP] += j.remaining[MAP]
        self.remaining[REDUCE] += j.remaining[REDUCE]
        self._stage_ready(j)

    def _stage_ready(self, j: Job) -> None:
        """Make the current stage's pending tasks runnable (and a slow-start reduce stage's).

        A map stage that becomes current has no map finished yet, so a threshold of 0 maps
        (slow-start 0: ``ceil(0 x maps)``) is met now, not at a completion: the reduce stage
        after it opens at once, as Hadoop's ``JobInProgress.scheduleReduces`` (finished maps
        >= 0) lets reduces launch on the first heartbeat.
        """
        stage = j.stages[j.cur]
        j.runnable[stage.type] += stage.pending
        self.runnable[stage.type] += stage.pending
        self._new_work = True
        if self._fit_index is not None:
            self._fit_index.note(j.index)
        if self.slowstart is not None and stage.type == MAP:
            self._maybe_open_reduces(j, stage)

    def _on_done(self, a: Attempt) -> None:
        if a is self._open:  # (a task of no time, ending at its start)
            self._open = None
        if a.live == 0:  # killed before it finished
            return
        j = self.jobs[a.job]
        stage = j.stages[a.stage]
        if a.n == 1:
            a.live = 0
            del self._live[a.id]
            self._done_one(a, 0, a.task, a.node, j, stage)
            return
        if self._notify_attempt or stage.running_of or (self.slowstart is not None and stage.type == MAP):
            # one member after the other, exactly as single attempts (a hook may kill a member)
            live = self._live
            tasks, nodes = a.tasks, a.nodes
            assert tasks is not None and nodes is not None
            for i in range(a.n):
                if a.id + i not in live:
                    continue
                a.live -= 1
                del live[a.id + i]
                self._done_one(a, i, tasks[i], nodes[i], j, stage)
            return
        self._done_batch(a, j, stage)

    def _done_one(self, a: Attempt, i: int, task: int, node: int, j: Job, stage: Any) -> None:
        """A single attempt (or member ``i`` of a batch) succeeded."""
        stype = stage.type
        self._release(stype, node, a.demand, j, stage)
        self.record.ended(a, i, a.end, 0)  # type: ignore[arg-type]
        if self._spec is not None:
            self._spec.ended(a, "succeeded")
        stage.state[task] = DONE
        running_of = stage.running_of
        if task in running_of:  # the first attempt to finish wins; its siblings (backups) are killed
            others = running_of.pop(task)
            for other in others:
                if other != a.id + i:
                    loser = self._live.get(other)
                    if loser is not None:  # its slot time so far is wasted work
                        self.wasted_work += self.now - loser.start
                    self.kill(other, "killed")
        stage.finished += 1
        j.remaining[stype] -= 1
        self.remaining[stype] -= 1
        if self._rule_backups and a.id + i in self._rule_backups:
            pass  # the rule's backup: the policy never heard of it
        elif self._notify_attempt:
            self.policy.on_attempt_end(a.member(i), "succeeded")
        elif self._notify_batch:
            self.policy.on_attempts_end(a.member(i), "succeeded", 1)
        if self.slowstart is not None and stage.index == j.cur and stype == MAP:
            self._maybe_open_reduces(j, stage)
        if stage.finished == stage.n:
            self._stage_done(j, stage)

    def _done_batch(self, a: Attempt, j: Job, stage: Any) -> None:
        """Every live member of a batch succeeded: what ``_done_one`` would do member by member."""
        k = a.live
        a.live = 0
        stype = stage.type
        live = self._live
        node_up = self.node_up
        free = self.free[stype] if self.uses_slots else None
        demand = a.demand
        dead = a.dead
        event_mode = self.mode == EVENT
        dirty = self._dirty
        state = stage.state
        tasks, nodes = a.tasks, a.nodes
        assert tasks is not None and nodes is not None
        base = a.id
        for i in range(a.n):
            if dead is not None and i in dead:
                continue
            del live[base + i]
            node = nodes[i]
            state[tasks[i]] = DONE
            if node_up[node]:
                if free is not None:
                    free[node] += 1
                if demand is not None:
                    res = self.free_resources[node]
                    for r, amount in enumerate(demand):
                        res[r] += amount
                if event_mode:
                    dirty.add(node)
                else:
                    self._schedule_heartbeat(node)
        j.running[stype] -= k
        self.busy[stype] -= k
        stage.running -= k
        self.record.ended(a, -1, a.end, 0, k)  # type: ignore[arg-type]
        stage.finished += k
        j.remaining[stype] -= k
        self.remaining[stype] -= k
        if self._notify_batch:
            self.policy.on_attempts_end(a, "succeeded", k)
        if stage.finished == stage.n:
            self._stage_done(j, stage)

    def _maybe_open_reduces(self, j: Job, stage: Any) -> None:
        """Open the reduce stage after the current map stage when exactly its threshold of maps
        has finished (``ceil(slowstart x maps)``; 0 when the map stage becomes current)."""
        nxt_index = stage.index + 1
        if nxt_index >= len(j.stages) or j.stages[nxt_index].type != REDUCE:
            return
        nxt = j.stages[nxt_index]
        assert self.slowstart is not None
        if stage.finished == slowstart_threshold(stage.n, self.slowstart) and stage.finished < stage.n:
            j.runnable[REDUCE] += nxt.pending
            self.runnable[REDUCE] += nxt.pending
            self._new_work = True
            if self._fit_index is not None:
                self._fit_index.note(j.index)

    def _stage_done(self, j: Job, stage: Any) -> None:
        now = self.now
        stage.end_time = now
        stage.drop_locality()
        if stage.index == j.map_stage_last:
            j.map_end = now
        self.policy.on_stage_end(j.index, stage.index)
        j.cur += 1
        if j.cur == len(j.stages):
            if j.status == ACTIVE:
                j.status = FINISHED
                j.finish = now
                del self.active[j.index]
                self.record.job_ended(j)
                self.policy.on_job_end(j.index)
            return
        nxt = j.stages[j.cur]
        opened_early = (
            self.slowstart is not None
            and stage.type == MAP
            and nxt.type == REDUCE
            and slowstart_threshold(stage.n, self.slowstart) < stage.n
        )
        if opened_early:
            # pending reduces are already runnable; the waiting early ones start their last two thirds
            self._open = None  # completions pushed here must not be joined by later launches
            for aid in nxt.waiting:
                a = self._live[aid]
                a.end = max(a.start + a.work / 3.0, now) + a.work * 2.0 / 3.0
                self._push(a.end, C_DONE, EV_DONE, a)
            nxt.waiting.clear()
        else:
            self._stage_ready(j)

    def _on_down(self, node: int) -> None:
        if not self.node_up[node]:
            return
        on_node = [aid for aid, a in self._live.items() if (a.node if a.nodes is None else a.nodes[aid - a.id]) == node]
        for aid in on_node:
            self.kill(aid, "failed")
        self.node_up[node] = False
        for stype in (MAP, REDUCE):
            self.total_slots[stype] -= self.slots[stype][node]
            self.slots[stype][node] = 0
            self.free[stype][node] = 0
        self.free_resources[node] = [0.0] * len(self.resources)
        self._dirty.discard(node)
        self.policy.on_node(node, False)

    def _on_up(self, node: int) -> None:
        if self.node_up[node]:
            return
        self.node_up[node] = True
        for stype in (MAP, REDUCE):
            self.slots[stype][node] = self._capacity[stype][node]
            self.free[stype][node] = self._capacity[stype][node]
            self.total_slots[stype] += self._capacity[stype][node]
        self.free_resources[node] = list(self._res_cap[node])
        self.policy.on_node(node, True)
        self._freed(node)

    # -- summary helpers -----------------------------------------------------------------------
    def unfinished(self) -> Mapping[int, Job]:
        """Accepted jobs not finished (after :meth:`run`: jobs a stalled or starved run left behind)."""
        return self.active


def simulate(
    workload: WorkloadInstance,
    policy: Policy,
    *,
    seed: int = 0,
    mode: str | None = None,
    heartbeat: float | None = None,
) -> Recorder:
    """Run ``policy`` on ``workload``; the recorder has the job, attempt and utilisation tables."""
    return Simulation(workload, policy, seed=seed, mode=mode, heartbeat=heartbeat).run()


__all__ = [
    "Attempt",
    "Member",
    "Running",
    "Simulation",
    "heartbeat_interval",
    "simulate",
]
