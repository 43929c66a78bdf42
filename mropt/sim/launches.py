"""Starting attempts: the launch actions of the engine (:class:`Launches`, mixed into
:class:`mropt.sim.engine.Simulation`).

A policy names a job, a node, a slot type and the worst locality level it accepts
(:meth:`Launches.launch`, one task; :meth:`Launches.launch_tasks`, up to ``count`` in one call,
what that many calls in a row would start). The engine takes the best pending task of the job's
launchable stage for the node (``Stage.take``: node-local, then rack-local, then any; a task
without replicas at every level), if it fits the node's free capacity
(:mod:`mropt.sim.capacity`), and starts an attempt of it (:meth:`Launches._start`): its running
time is :mod:`mropt.sim.attempt_time`'s rule, and it joins the open batch when it may
(:mod:`mropt.sim.attempts`). :meth:`Launches.speculate` starts a backup attempt of a running
task (LATE; a speculation rule's or the policy's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mropt.sim.attempts import Attempt, Batches
from mropt.sim.capacity import FIT_EPS, Capacity
from mropt.sim.event_queue import EventQueue
from mropt.sim.locality_stacks import top_pending
from mropt.sim.offers import C_DONE, EV_DONE
from mropt.sim.state import ACTIVE, ANY, NONE, PENDING, RUNNING, Job, Stage
from mropt.sim.view import Launched

if TYPE_CHECKING:
    from mropt.sim.attempt_time import AttemptTime
    from mropt.sim.policy import Policy
    from mropt.sim.recorder import Recorder
    from mropt.sim.speculation.base import Speculation

#: what a launch that started nothing returns
NOTHING: Launched = (-1, 0, NONE, None)


class Launches:
    """The launch actions (module docstring); the attributes below are the engine's."""

    now: float
    jobs: list[Job]
    slowstart: float | None
    node_rack: list[int]
    node_up: list[bool]
    uses_slots: bool
    free: list[list[int]]
    free_resources: list[list[float]]
    busy: list[int]
    runnable: list[int]
    capacity: Capacity
    timing: AttemptTime
    batches: Batches
    _live: dict[int, Attempt]
    next_attempt: int
    backups: int
    _rule_backups: set[int]
    _queue: EventQueue
    _rows_live: bool
    record: Recorder
    speculation: Speculation | None
    policy: Policy

    def launch(self, job: int, node: int, slot_type: int, level: int = ANY) -> int:
        """Start one pending task of ``job``'s launchable stage of ``slot_type`` on ``node``.

        The task is the best one for the node at locality ``level`` or better (node-local,
        then rack-local, then any; tasks without replicas at every level). Returns its
        attempt id, or -1 when no such task exists or it does not fit the node.
        """
        return self.launch_tasks(job, node, slot_type, level, 1)[0]

    def launch_tasks(self, job: int, node: int, slot_type: int, level: int = ANY, count: int = 1) -> Launched:
        """Start up to ``count`` tasks as :meth:`launch` does, exactly what ``count`` calls in a row
        would, stopping at the first that would return -1; what was started."""
        if not self.node_up[node]:
            return NOTHING
        uses_slots = self.uses_slots
        free = self.free[slot_type]
        if uses_slots and free[node] <= 0:
            return NOTHING
        j = self.jobs[job]
        if j.status != ACTIVE:
            return NOTHING
        # Job.launchable, its common case inline (the current stage, of this type, with pending tasks)
        stages, k = j.stages, j.cur
        stage = stages[k] if k < len(stages) else None
        if stage is None or stage.type != slot_type or not stage.pending:
            stage = j.launchable(slot_type, self.slowstart)
            if stage is None:
                return NOTHING
        demands = stage.demands
        one_demand = len(demands) == 1
        if one_demand and demands[0] is not None and not self.capacity.fits(node, demands[0]):
            return NOTHING  # (before looking for a task)
        state = stage.state
        no_replicas = stage.replicas is None
        timing = self.timing
        drawing = timing.rate != 0
        batches = self.batches
        now = self.now
        rows_live = self._rows_live
        node_rack = self.node_rack
        rack = node_rack[node]
        far = False
        work_level = -2
        first = -1
        launched = 0
        last_level = NONE
        demand = None
        while True:
            if no_replicas and not stage.requeue:  # Stage.take's fresh-pointer case, inline
                if not stage.pending:
                    break
                task = stage.fresh
                while state[task] != PENDING:
                    task += 1
                stage.fresh = task
                got = NONE
            elif far:  # (the node's and its rack's stacks came up empty for an earlier task of the run)
                task, got = stage.take_far(node, rack, node_rack)
                if task < 0:
                    break
            else:
                task, got = stage.take(node, rack, level, node_rack)
                if task < 0:
                    break
            if one_demand:
                demand = demands[0]  # (checked before the first task; a run checks each next one)
                if launched and demand is not None and not self.capacity.fits(node, demand):
                    break
            else:
                demand = stage.demand_of(task)
                if demand is not None and not self.capacity.fits(node, demand):
                    break
            state[task] = RUNNING
            stage.pending -= 1
            j.runnable[slot_type] -= 1
            self.runnable[slot_type] -= 1
            # a task's time depends on its stage, node and level alone where the stage has one duration
            # and nothing is drawn: a run's tasks at one level share it (``work_level``: the level it is
            # for, -2 when none), computed once
            if got != work_level:
                work = timing.of(stage, task, node, got, drawing and timing.draw(j.index, stage.index, task))
                work_level = got if count > 1 and not drawing and len(stage.durations) == 1 else -2
            o = batches.open
            if (
                o is not None
                and o.work == work
                and o.start == now
                and batches.stage is stage
                and o.level == got
                and o.demand is demand
            ):  # the batch join (module docstring), the common case of a launch run
                aid = self.next_attempt
                self.next_attempt = aid + 1
                tasks = o.tasks
                if tasks is None:
                    o.tasks = [o.task, task]
                    o.nodes = [o.node, node]
                else:
                    try:
                        tasks.append(task)  # type: ignore[union-attr]
                    except AttributeError:  # (a range: a launch run's consecutive tasks)
                        o.tasks = [*tasks, task]
                    o.nodes.append(node)  # type: ignore[union-attr]
                o.n += 1
                o.live += 1
                # what ``_start`` does once the attempt is made, inline (a call per task was 4 % of a
                # wave's launch); its job has started already, and no speculation rule watches batches
                self._live[aid] = o
                stage.running += 1
                j.running[slot_type] += 1
                self.busy[slot_type] += 1
                if uses_slots:
                    free[node] -= 1
                if demand is not None:
                    res = self.free_resources[node]
                    if len(demand) == 2:  # (cpu, mem)
                        res[0] -= demand[0]
                        res[1] -= demand[1]
                    else:
                        for k, amount in enumerate(demand):
                            res[k] -= amount
                if rows_live:
                    self.record.started(o, j)
            else:
                aid = self._start(j, stage, task, node, got, False, demand, work)
            if first < 0:
                first = aid
            launched += 1
            last_level = got
            if launched >= count or (uses_slots and free[node] <= 0):
                break
            far = got == ANY or got == NONE  # (a replicated stage's stacks of the node and rack came up empty)
            if (
                count - launched > 3
                and far
                and got == work_level
                and one_demand
                and (not uses_slots or free[node] > 3)
                and not rows_live
                and batches.open is not None
            ):  # (four more tasks at least: ``_join_far``'s set-up costs about three passes of the loop)
                launched += self._join_far(j, stage, node, got, count - launched, demand)
                if launched >= count or (uses_slots and free[node] <= 0):
                    break
        return (first, launched, last_level, demand) if launched else NOTHING

    def _join_far(self, j: Job, stage: Stage, node: int, got: int, room: int, demand: tuple[float, ...] | None) -> int:
        """The next tasks of a :meth:`launch_tasks` run on ``node``, up to ``room``, once its tasks come from
        beyond the node's and its rack's stacks (``Stage.take_far``, level ``got``) and join the open
        batch: how many joined. Each is what the loop's next pass would start (the same task, fit and
        level; the batch join, since the run's tasks share its time, level, demand and instant), its
        counts added once for all. It stops where that pass would stop (no pending task, the demand does
        not fit, no free slot) or start an attempt of its own (a task at another level: ``take_far``
        reads it from a listed task's replicas), and leaves that to the loop, which tests again. The loop
        calls it where four tasks or more may follow: its set-up costs about three of the loop's passes
        (benchmarks/RESULTS.md, "a launch run's far tasks joined in one loop"). It repeats the loop's
        batch join and ``Stage.take_far``'s choice of task: a change to either is made here too."""
        replicas = stage.replicas
        by_task = False  # (a listed task's level is ANY or NONE by its replicas: ``take_far``)
        if replicas is not None:
            stacks = stage.node_q
            if stacks is None or stacks.padded:
                return 0  # (``take_far`` asks ``level_on``)
            by_task = not isinstance(replicas, np.ndarray)
        two = demand is not None and len(demand) == 2
        if demand is not None and not two:
            return 0
        if self.uses_slots:
            room = min(room, self.free[stage.type][node])
        state, requeue = stage.state, stage.requeue
        pending, k, n = stage.pending, stage.fresh, stage.n
        if two:
            assert demand is not None
            res = self.free_resources[node]
            d0, d1, r0, r1 = demand[0], demand[1], res[0], res[1]
        taken: list[int] = []
        while len(taken) < room and pending:
            task = top_pending(requeue, state) if requeue else -1
            if task < 0:
                while k < n and state[k] != PENDING:
                    k += 1
                if k == n:
                    break
                task = k
            if by_task and (ANY if len(replicas[task]) else NONE) != got:  # type: ignore[index]
                break
            if two:  # (``Capacity.fits`` and the subtraction of ``launch_tasks``: the same float operations)
                if not (d0 <= r0 + FIT_EPS and d1 <= r1 + FIT_EPS):
                    break
                r0 -= d0
                r1 -= d1
            state[task] = RUNNING
            pending -= 1
            taken.append(task)
        stage.fresh = k
        m = len(taken)
        if not m:
            return 0
        if two:
            res[0] = r0
            res[1] = r1
        stype = stage.type
        stage.pending = pending
        j.runnable[stype] -= m
        self.runnable[stype] -= m
        stage.running += m
        j.running[stype] += m
        self.busy[stype] += m
        if self.uses_slots:
            self.free[stype][node] -= m
        o = self.batches.open
        assert o is not None
        tasks = o.tasks
        if tasks is None:
            o.tasks = [o.task, *taken]
            o.nodes = [o.node, *([node] * m)]
        else:
            if type(tasks) is range:  # (a launch run's consecutive tasks: a join makes them a list)
                o.tasks = [*tasks, *taken]
            else:
                tasks.extend(taken)
            o.nodes.extend([node] * m)  # type: ignore[union-attr]
        o.n += m
        o.live += m
        first = self.next_attempt
        self.next_attempt = first + m
        live = self._live
        for aid in range(first, first + m):
            live[aid] = o
        return m

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
        if demand is not None and not self.capacity.fits(node, demand):
            return -1
        level = st.level_on(task, node, self.node_rack[node], self.node_rack)
        self.batches.close()  # a backup never joins a batch
        running_of = st.running_of
        if task not in running_of:  # its one attempt (perhaps a batch member) becomes a list
            running_of[task] = [
                aid for aid, a in self._live.items() if a.job == job and a.stage == stage and a.task_of(aid) == task
            ]
        timing = self.timing
        work = timing.of(st, task, node, level, timing.rate != 0 and timing.draw(job, stage, task))
        aid = self._start(j, st, task, node, level, True, demand, work)
        running_of[task].append(aid)
        self.backups += 1
        if rule:
            self._rule_backups.add(aid)
            self.policy.on_rule_backup(job, True)
        return aid

    def _start(
        self,
        j: Job,
        stage: Stage,
        task: int,
        node: int,
        level: int,
        speculative: bool,
        demand: tuple[float, ...] | None,
        work: float,
    ) -> int:
        """Start a new attempt (no batch join) of ``task``, taken off the pending tasks, on ``node``: its id.

        Its completion is scheduled, and it is the batch later launches may join, unless it is an
        early reduce (slow-start: it waits for its job's maps to end) or a backup. It runs, and it
        holds its slot and demand on its node until it ends (``Capacity.release``); a batch
        member's start, the same for a member, is inline in :meth:`launch_tasks`, and
        ``LaunchRuns.segment`` (:mod:`mropt.sim.launch_runs`) opens a batch with all its members
        inline for the runs it may start (no speculation, straggler draw, demand or second node
        speed there), and :meth:`_join_far` joins a run's far tasks to the open batch: a step added
        here must be added there too.
        """
        now = self.now
        aid = self.next_attempt
        self.next_attempt = aid + 1
        stype = stage.type
        attempt = Attempt(aid, j.index, stage.index, task, node, stype, now, level, speculative, work, demand)
        batches = self.batches
        if stage.index > j.cur:  # an early reduce (slow-start): it waits for the maps to end
            stage.waiting.append(aid)
            batches.open = None
        else:
            attempt.end = now + work
            self._queue.push(attempt.end, C_DONE, EV_DONE, attempt)
            if batches.on and not speculative:
                batches.open = attempt
                batches.stage = stage
            else:
                batches.open = None
        # it runs (no call of its own: a new attempt's start is the engine's most frequent step)
        self._live[aid] = attempt
        stage.running += 1
        j.running[stype] += 1
        self.busy[stype] += 1
        if self.uses_slots:  # the attempt holds a slot of its type and its demand on the node
            self.free[stype][node] -= 1
        if demand is not None:
            res = self.free_resources[node]
            if len(demand) == 2:  # (cpu, mem): the common case, spelled out
                res[0] -= demand[0]
                res[1] -= demand[1]
            else:
                for k, amount in enumerate(demand):
                    res[k] -= amount
        if j.first_start is None:
            j.first_start = now
        if self._rows_live:
            self.record.started(attempt, j)
        if self.speculation is not None:
            self.speculation.started(attempt)
        return aid
