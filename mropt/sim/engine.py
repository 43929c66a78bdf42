"""The discrete-event engine of the cluster simulator: the event loop and the rules of a run.

One event queue (:mod:`mropt.sim.event_queue`: a heap of distinct times, per time one list of
``(kind, argument)`` tuples per class) and no per-event object beyond the tuple (the same
FIFO model written with SimPy's processes and events runs several times slower:
``benchmarks/bench_sim.py``, ``benchmarks/RESULTS.md``).
Simultaneous events follow one total order: completions (class 0) before kills (node
failures, class 1) before arrivals and recoveries (class 2) before timers and heartbeats
(class 3), then the order they were scheduled in. Scheduling decisions come after every event
of their instant, so a slot freed at t can be given to a job that arrives at t (the Batsim #14
lesson). When the policy is offered a node is the assignment mode's (:mod:`mropt.sim.offers`:
``event`` or ``heartbeat``).

**Launches** (:meth:`Simulation.launch`, :meth:`Simulation.launch_tasks`): a policy names a
job, a node, a slot type and the worst locality level it accepts; the engine takes the best
pending task of the job's launchable stage for the node (``Stage.take``: node-local, then
rack-local, then any) if it fits the node's free capacity (:mod:`mropt.sim.capacity`), and
starts an attempt of it whose running time is :mod:`mropt.sim.attempt_time`'s rule.

**Reduce slow-start** (off unless ``timing.reduce_slowstart`` is set): a reduce stage right
after a map stage may launch once ``ceil(slowstart x maps)`` maps finished (slow-start 0: as
soon as the map stage becomes current, as Hadoop's ``JobInProgress.scheduleReduces``). An
early reduce does its first third (the copy) while maps run and its last two thirds (sort,
reduce) once the last map ends: it ends at ``max(launch + d/3, maps end) + 2d/3`` (Hadoop
reports reduce progress in these thirds).

**Failures**: a node going down kills its running attempts (outcome ``failed``) and re-queues
their tasks; its slots are gone until it comes back. Map outputs already written on it are
kept (a simplification: Hadoop would re-run completed maps of jobs still in their reduces).

**Speed** (no decision depends on it): identical attempts that start together are one batch
(:mod:`mropt.sim.attempts`), completed in bulk when nothing can tell the difference (no
``on_attempt_end`` hook, no backup attempt in the stage, no slow-start map stage:
:mod:`mropt.sim.completions`), else one by one exactly as single attempts; ``events`` counts
heap events, so a batched run counts fewer. The utilisation rows are built after the run
(:mod:`mropt.sim.utilisation_rows`; ``utilisation_rows="live"`` writes them at the end of every
instant instead, through the recorder's ``started``, ``ended`` and ``flush``): the loop only
marks a *break* where an instant has the time of the one before it. Heartbeat mode runs an
instant that holds a lone heartbeat outside the queue (:mod:`mropt.sim.lone_beats`) through the
engine's calls for such instants (``next_time``, ``queued_times``, ``push_heartbeat``,
``before_decide``, ``advance``, ``count_events``, ``stall``, ``end_rows``, ``defer_rows``): what
the loop does with an instant, one step a call, so that the queue and the recorder stay the
engine's own.

**A run ends** when no event is left. Accepted jobs that could not finish are reported
unfinished, with their cause in ``jobs.parquet``'s ``unfinished_cause``
(:mod:`mropt.sim.unfinished`): ``no_node`` when no node up at the end can run a task of theirs
(failed for good); a heartbeat run whose policy keeps declining work while nothing else
happens stops after ``stall_limit`` heartbeats in a row (``stalled``); a policy that left
runnable work unlaunched otherwise gets no cause, and verify rejects the run.

**A run stopped early** (``stopped``, :mod:`mropt.sim.watch`) ends at the end of an instant:
``until`` T, after the events of T (the first instant later is not processed; the run's
time is then T), or when its :class:`~mropt.sim.watch.Watch` says so (a wall-clock limit,
Ctrl-C), looked at once every ``watch.every`` events. Attempts still running are recorded
ending then, ``killed`` (as a stalled run's), jobs not yet submitted stay ``not_submitted``
and accepted jobs not finished are ``stopped`` (:mod:`mropt.sim.unfinished`). A run that
reaches its last event by T is not stopped: it is the whole run, event for event.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Hashable, KeysView, Mapping
from heapq import heappop
from typing import TYPE_CHECKING

from mropt.model.errors import InputError
from mropt.model.workload import WorkloadInstance
from mropt.sim.attempt_time import STRAGGLER_DRAWS, AttemptTime
from mropt.sim.attempts import Attempt, Batches, Running
from mropt.sim.capacity import Capacity
from mropt.sim.completions import Completions
from mropt.sim.event_queue import EventQueue
from mropt.sim.heartbeat_offers import HeartbeatOffers
from mropt.sim.launches import Launches
from mropt.sim.offers import (
    C_ARRIVE,
    C_DECIDE,
    C_KILL,
    EV_ARRIVE,
    EV_DONE,
    EV_DOWN,
    EV_HEARTBEAT,
    EV_TIMER,
    EV_UP,
    EventOffers,
    Offers,
    heartbeat_interval,
)
from mropt.sim.placement import place_replicas
from mropt.sim.policy import EVENT, MODES, Policy
from mropt.sim.recorder import _OUTCOME_CODE, Recorder
from mropt.sim.state import (
    ACTIVE,
    DROPPED,
    MAP,
    REDUCE,
    REJECTED,
    RUNNING,
    Job,
    build_jobs,
    node_indices,
)
from mropt.sim.utilisation_rows import RowMarks
from mropt.sim.watch import UNTIL, Watch

if TYPE_CHECKING:
    from mropt.sim.speculation.base import Speculation

_NEVER = float("inf")
_NO_LOOK = 1 << 62  # no watch: the loop's event count never reaches it
#: how the utilisation rows are made: built after the run (the default), or written at each instant
UTILISATION_ROWS = ("after", "live")


class Simulation(Launches, Completions):
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
        utilisation_rows: str = "after",
        batch: bool = True,
        speculation: Speculation | None = None,
        straggler_draws: str | None = None,
        until: float | None = None,
        watch: Watch | None = None,
    ) -> None:
        mode = mode or policy.mode
        if mode not in MODES:
            raise InputError(f"simulate: mode must be one of {', '.join(MODES)}, got {mode!r}")
        if utilisation_rows not in UTILISATION_ROWS:
            raise InputError(
                f"simulate: utilisation_rows must be one of {', '.join(UTILISATION_ROWS)}, got {utilisation_rows!r}"
            )
        self.workload = workload
        self.policy = policy
        self.seed = seed
        self.mode = mode
        self.now = 0.0
        self.stall_limit = stall_limit
        self.slowstart = workload.timing.reduce_slowstart
        ids, racks, self.rack_names, speeds = node_indices(workload)
        self.node_ids = ids
        self.node_index = {node_id: i for i, node_id in enumerate(ids)}
        self.n_nodes = len(ids)
        self.node_rack = racks
        self.node_speed = speeds
        # straggler draws: "stream" (one stream in launch order) or "task" (a hash of the seed and
        # the attempt's job, stage, task and attempt number: the same draws whatever the order)
        if straggler_draws is None:
            straggler_draws = "stream" if speculation is None else "task"
        self.straggler_draws = straggler_draws
        self.timing = AttemptTime(workload.timing, speeds, seed, self.straggler_draws)
        self.heartbeat_interval = heartbeat if heartbeat is not None else heartbeat_interval(self.n_nodes)
        cap = self.capacity = Capacity(workload)
        self.uses_slots = cap.uses_slots
        self.resources = cap.resources
        self.node_up, self.slots, self.free = cap.node_up, cap.slots, cap.free
        self.total_slots, self.free_resources = cap.total_slots, cap.free_resources
        self.busy = [0, 0]
        self.runnable = [0, 0]
        self.remaining = [0, 0]  # unfinished tasks of active jobs per slot type (all their stages)

        placed = place_replicas(workload, racks) if workload.placement is not None else None
        # locality stacks are built by a stage when first asked for a task (Stage.take)
        self.jobs: list[Job] = build_jobs(workload, self.resources, self.node_index, placed)
        self.active: dict[int, Job] = {}
        self.running = Running()
        self._live = self.running.of
        self.next_attempt = 0  # the id of the next attempt started
        # a speculation rule (mropt.sim.speculation) or None; a rule sees every attempt
        # start and end, so batching is off under one (batches change no result)
        self.speculation = speculation
        self.batches = Batches(batch and speculation is None)
        self.backups = 0  # backup attempts started (sim.speculate)
        self.wasted_work = 0.0  # slot-seconds of attempts killed because a sibling attempt won
        self._rule_backups: set[int] = set()  # backups the rule started: the policy never hears of them
        # the utilisation rows: written live at the end of each instant (``_rows_live``), or built after
        # the run from the ended attempts and the marks below (``_marks``, mropt.sim.utilisation_rows)
        self._rows_live = record_utilisation and utilisation_rows == "live"  # live rows only, not "has rows"
        self._marks = RowMarks() if record_utilisation and utilisation_rows == "after" else None
        self._deferred = -1  # (``defer_rows``: the event count of the instant whose rows were deferred)
        self._queue = EventQueue()
        self.push = self._queue.push  # type: ignore[method-assign]  # (``push``, without a call in between)
        self.stalled = False
        self.events = 0
        self.jobs_finished = 0
        # stopping early (mropt.sim.watch): at simulated time ``until``, or when the watch says
        # (wall-clock limit, Ctrl-C); ``stopped`` is then the reason, and None for a run to its end
        self.until = until
        self.watch = watch
        self.stopped: str | None = None
        self.offers: Offers = EventOffers(self) if mode == EVENT else HeartbeatOffers(self)
        cap.freed = self.offers.freed
        self.record = Recorder(self, self._rows_live, record_utilisation)
        if self._rows_live:  # (``end_rows``: the recorder's flush, without a call in between)
            self.end_rows = self.record.flush  # type: ignore[method-assign]
        self._notify_attempt = type(policy).on_attempt_end is not Policy.on_attempt_end
        # counts-only policies get one on_attempts_end per batch (bulk completion kept)
        self._notify_batch = not self._notify_attempt and type(policy).on_attempts_end is not Policy.on_attempts_end
        self._tell_ends = self._notify_attempt or self._notify_batch  # (else ``_notify`` tells only the rule's backups)

    # -- the event queue ------------------------------------------------------------------
    def push(self, time: float, cls: int, kind: int, arg: object) -> None:
        """Schedule an event (module docstring: classes and their order)."""
        self._queue.push(time, cls, kind, arg)

    def wake_at(self, time: float, tag: Hashable = None) -> None:
        """Call the policy's ``on_timer(tag)`` at ``time`` (not before now)."""
        self._queue.push(max(time, self.now), C_DECIDE, EV_TIMER, tag)

    # -- instants run outside the queue (heartbeat mode's lone heartbeats: mropt.sim.lone_beats) --
    # What an instant of the loop does, as separate calls, for an instant that holds one heartbeat
    # and nothing else: the loop would set the clock, count the event, run it, clear the queue of a
    # stalled run and end the instant (the offers, then the utilisation rows at its time).
    def next_time(self) -> float:
        """The time of the queue's next instant; infinity when the queue is empty."""
        times = self._queue.times
        return times[0] if times else _NEVER

    def queued_times(self) -> KeysView[float]:
        """The times at which events wait in the queue (the instant being run included), a live
        view: ``t in sim.queued_times()`` says whether the loop will run an instant at ``t``."""
        return self._queue.at.keys()

    def push_heartbeat(self, time: float, node: int) -> None:
        """Put node ``node``'s heartbeat into the queue at ``time`` (after the events of its class
        pushed there before it)."""
        self._queue.push(time, C_DECIDE, EV_HEARTBEAT, node)

    def before_decide(self, hook: Callable[[float], None] | None) -> None:
        """Have ``hook(t)`` called before an event of the decision class (a timer, a heartbeat) is
        pushed at time ``t``, so that a heartbeat held outside the queue at ``t``, scheduled
        before it, goes in first; None: no call (``EventQueue.before_decide``)."""
        self._queue.before_decide = hook

    def advance(self, time: float) -> None:
        """The clock moves to ``time``: a lone heartbeat's instant (nothing queued comes before it),
        called once the rows of what came before were written (``end_rows``). At the time the clock
        shows, it is a new instant of the rows at that time: a break (``_row_break``)."""
        if time == self.now and self._marks is not None:
            self._row_break(time)
        self.now = time

    def count_events(self, n: int) -> None:
        """``n`` events ran outside the queue; ``events`` counts them as the loop counts its own."""
        self.events += n

    def stall(self) -> None:
        """The run stalled (``stall_limit`` heartbeats in a row launched nothing while nothing
        else happened): it ends, its queue cleared, as the loop ends a stalled instant."""
        self.stalled = True
        self._queue.clear()

    @property
    def rows_live(self) -> bool:
        """Whether utilisation rows are written live, at the end of each instant (``utilisation_rows``
        ``live``); when not, ``end_rows`` does nothing (rows built after the run, or none)."""
        return self._rows_live

    def end_rows(self, now: float) -> None:
        """The utilisation rows of the instant at ``now`` (``Recorder.flush``), as the loop writes
        them at the end of each of its instants (nothing unless they are written live)."""
        if self._rows_live:
            self.record.flush(now)

    def defer_rows(self) -> None:
        """The loop's next end of an instant writes no rows: the changes since the last rows belong
        to an instant still to be run (``Recorder.skip_next_flush``; rows built after the run: that
        end of an instant is no break, ``_row_break``)."""
        if self._marks is not None:
            self._deferred = self.events  # (the loop's count at the end of the instant being ended)
        self.record.skip_next_flush()

    def _row_break(self, time: float) -> None:
        """The rows of an instant at ``time`` were written, and the next instant has the same time:
        what changes from now on is after them (:class:`~mropt.sim.utilisation_rows.RowMarks`)."""
        assert self._marks is not None
        self._marks.breaks.append((time, self.next_attempt, len(self.record.ended_attempts), len(self._marks.capacity)))

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
            if self.watch is not None:
                self.watch.end(self)
            if enabled:
                gc.enable()

    def _run(self) -> Recorder:
        order = sorted(range(len(self.jobs)), key=lambda j: (self.jobs[j].submit, j))
        for j in order:
            self.push(self.jobs[j].submit, C_ARRIVE, EV_ARRIVE, j)
        for fault in self.workload.faults:
            node = self.node_index[fault.node]
            self.push(fault.down, C_KILL, EV_DOWN, node)
            if fault.up is not None:
                self.push(fault.up, C_ARRIVE, EV_UP, node)
        self.policy.start(self)
        if self.speculation is not None:
            self.speculation.start(self)
        self.offers.start()
        record = self.record
        until = _NEVER if self.until is None else self.until
        watch = self.watch
        look_at = _NO_LOOK  # (events) the next look at the watch, at the end of an instant
        if watch is not None:
            watch.begin(self)
            look_at = watch.every
        times, at = self._queue.times, self._queue.at  # next_instant and close, inlined (event_queue)
        offers = self.offers
        after_instant = offers.after_instant
        flush = record.flush if self._rows_live else None
        marks = self._marks
        if marks is not None and times and times[0] <= until:
            marks.first = times[0]
        last, counted = -_NEVER, -1  # the time and the event count of the instant before
        while times:
            now = times[0]
            if now > until:  # the events of ``until`` itself are the run's last
                self.stopped = UNTIL
                self.now = until
                break
            if now == last and marks is not None and self._deferred != counted:
                self._row_break(now)  # (the instant before wrote its rows at this time)
            last = self.now = now
            # the instant's events in ``event_queue.drain``'s order, walked with an index per class
            # (its module docstring); a push may make a class's list, so each is read after every event
            lists = at[now]
            d = k = a = c = 0
            while True:
                if lists[0] and d < len(lists[0]):  # (most are empty: a truth test before a len call)
                    kind, arg = lists[0][d]
                    d += 1
                elif lists[1] and k < len(lists[1]):
                    kind, arg = lists[1][k]
                    k += 1
                elif lists[2] and a < len(lists[2]):
                    kind, arg = lists[2][a]
                    a += 1
                elif c < len(lists[3]):
                    kind, arg = lists[3][c]
                    c += 1
                else:
                    break
                if kind == EV_HEARTBEAT:  # (the kinds tested most frequent first)
                    offers.beat(arg)
                elif kind == EV_DONE:
                    self._on_done(arg)
                elif kind == EV_ARRIVE:
                    self._on_arrive(arg)
                elif kind == EV_TIMER:
                    self.policy.on_timer(arg)
                    offers.work_appeared(None)
                elif kind == EV_DOWN:
                    self._on_down(arg)
                elif kind == EV_UP:
                    self._on_up(arg)
                else:  # EV_SPECULATE
                    offers.tick()
                if self.stalled:
                    break
            self.events = counted = self.events + d + k + a + c
            if self.stalled:
                self._queue.clear()
            else:  # queue.close(now), inlined
                heappop(times)
                del at[now]
            after_instant()
            if flush is not None:
                flush(now)
            if self.events >= look_at:
                assert watch is not None
                self.stopped = watch.check(self)
                if self.stopped is not None:
                    break
                look_at = self.events + watch.every
        if marks is not None:  # what comes now, the kills of ``finish``, writes no rows
            if self._deferred != counted:
                self._row_break(self.now)
            marks.cut = self.now
        record.finish()
        if marks is not None:
            record.keep_row_marks(marks)
        return record

    # -- queries for policies --------------------------------------------------------------
    def launchable(self, job: int, slot_type: int) -> bool:
        """Whether the job has a pending task of this slot type that may launch now."""
        return self.jobs[job].launchable(slot_type, self.slowstart) is not None

    def fits(self, job: int, slot_type: int, node: int) -> bool:
        """Whether a task of this type of the job fits the node's free capacity now (its stage's first demand)."""
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
        return demand is None or self.capacity.fits(node, demand)

    def next_work(self, job: int, stage: int, task: int, node: int) -> float:
        """The running time an attempt of the task started on ``node`` now would get, with the
        straggler draw it would take (peeked at, not made). What the clairvoyant rule knows."""
        st = self.jobs[job].stages[stage]
        level = st.level_on(task, node, self.node_rack[node], self.node_rack)
        timing = self.timing
        return timing.of(st, task, node, level, timing.peek(job, stage, task, self.next_attempt))

    def predicted_duration(self, job: int, stage: int, task: int, node: int) -> float:
        """The time the task would take on the node (speed and locality; no straggler draw)."""
        st = self.jobs[job].stages[stage]
        return self.timing.of(st, task, node, st.level_on(task, node, self.node_rack[node], self.node_rack))

    def unfinished(self) -> Mapping[int, Job]:
        """Accepted jobs not finished (after :meth:`run`: jobs a stalled or starved run left behind)."""
        return self.active

    # -- actions (launch, launch_tasks, speculate: mropt.sim.launches) ------------------------
    def kill(self, attempt: int, outcome: str = "killed") -> None:
        """End a running attempt now; its task goes back to pending unless another attempt runs it.

        A member of a batch is killed alone: the other members run on.
        """
        a = self._live.pop(attempt, None)
        if a is None:
            return
        if self.batches.open is a:
            self.batches.close()
        i = attempt - a.id
        now = self.now
        a.live -= 1
        if a.n == 1:
            a.end = now
        else:
            if a.dead is None:
                a.dead = {}
            a.dead[i] = now
        task, node = a.task_of(attempt), a.node_of(attempt)
        j = self.jobs[a.job]
        stage = j.stages[a.stage]
        self._release(a.type, node, a.demand, j, stage)
        self.record.ended(a, i, now, _OUTCOME_CODE[outcome])
        if self.speculation is not None:
            self.speculation.ended(a, outcome)
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
            self.offers.work_appeared(j.index)
        self._notify(a, i, outcome)

    def _notify(self, a: Attempt, i: int, outcome: str) -> None:
        """Tell the policy that member ``i`` of ``a`` ended (unless it is the rule's backup)."""
        if self._rule_backups and a.id + i in self._rule_backups:
            self.policy.on_rule_backup(a.job, False)  # the rule's backup: not an attempt the policy gave
            return
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

    # -- event handlers (an attempt's end: mropt.sim.completions) ----------------------------
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

    def _on_down(self, node: int) -> None:
        if not self.node_up[node]:
            return
        for aid in [aid for aid, a in self._live.items() if a.node_of(aid) == node]:
            self.kill(aid, "failed")
        self.capacity.down(node)
        self._capacity_changed()
        self.offers.down(node)
        self.policy.on_node(node, False)

    def _capacity_changed(self) -> None:
        """The cluster's slots changed now (a node went down or came up): the rows built after the run read it."""
        if self._marks is not None:
            self._marks.capacity.append((self.now, self.total_slots[0], self.total_slots[1]))

    def _on_up(self, node: int) -> None:
        if self.node_up[node]:
            return
        self.capacity.up(node)
        self._capacity_changed()
        self.policy.on_node(node, True)
        self.offers.freed(node)


__all__ = [
    "STRAGGLER_DRAWS",
    "Simulation",
    "heartbeat_interval",
]
