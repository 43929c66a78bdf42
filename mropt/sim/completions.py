"""Attempts ending: the completions of the engine (:class:`Completions`, mixed into
:class:`mropt.sim.engine.Simulation`).

An attempt that succeeds releases its slot and demand (:mod:`mropt.sim.capacity`), marks its task
done, and may end its stage: the next stage's pending tasks become runnable (or, under reduce
slow-start, the waiting early reduces start their last two thirds), and the job finishes after
its last stage. A batch of identical attempts (:mod:`mropt.sim.attempts`) is completed in bulk
when nothing can tell the difference (no ``on_attempt_end`` hook, no backup attempt in the stage,
no slow-start map stage: :meth:`Completions._done_batch`), else member by member exactly as
single attempts (:meth:`Completions._done_one`). Reduce slow-start's rule (Hadoop's
``JobInProgress.scheduleReduces``) is the engine's module docstring's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mropt.sim.attempts import Attempt, Batches
from mropt.sim.capacity import Capacity
from mropt.sim.offers import C_DONE, EV_DONE
from mropt.sim.state import ACTIVE, DONE, FINISHED, MAP, REDUCE, Job, Stage, slowstart_threshold

_DONE = bytearray([DONE])  # (a bytearray: a slice set from bytes would copy them into one first)

if TYPE_CHECKING:
    from mropt.sim.offers import Offers
    from mropt.sim.policy import Policy
    from mropt.sim.recorder import Recorder
    from mropt.sim.speculation.base import Speculation


class Completions:
    """The completion handlers (module docstring); the attributes below are the engine's."""

    now: float
    jobs: list[Job]
    active: dict[int, Job]
    slowstart: float | None
    busy: list[int]
    runnable: list[int]
    remaining: list[int]
    capacity: Capacity
    batches: Batches
    _live: dict[int, Attempt]
    wasted_work: float
    jobs_finished: int
    _notify_attempt: bool
    _notify_batch: bool
    _tell_ends: bool
    _rule_backups: set[int]
    offers: Offers
    record: Recorder
    speculation: Speculation | None
    policy: Policy

    if TYPE_CHECKING:

        def push(self, time: float, cls: int, kind: int, arg: object) -> None: ...
        def kill(self, attempt: int, outcome: str = "killed") -> None: ...
        def _notify(self, a: Attempt, i: int, outcome: str) -> None: ...

    def _release(self, stype: int, node: int, demand: tuple[float, ...] | None, j: Job, stage: Stage) -> None:
        """One attempt of ``stage`` on ``node`` ended: its counts and its capacity."""
        j.running[stype] -= 1
        self.busy[stype] -= 1
        stage.running -= 1
        self.capacity.release_one(stype, node, demand)

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
        self.offers.work_appeared(j.index)
        if self.slowstart is not None and stage.type == MAP:
            self._maybe_open_reduces(j, stage)

    def _on_done(self, a: Attempt) -> None:
        if a is self.batches.open:  # (a task of no time, ending at its start)
            self.batches.close()
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

    def _done_one(self, a: Attempt, i: int, task: int, node: int, j: Job, stage: Stage) -> None:
        """A single attempt (or member ``i`` of a batch) succeeded."""
        stype = stage.type
        j.running[stype] -= 1  # (``_release``, inline)
        self.busy[stype] -= 1
        stage.running -= 1
        self.capacity.release_one(stype, node, a.demand)
        self.record.ended(a, i, a.end, 0)  # type: ignore[arg-type]
        if self.speculation is not None:
            self.speculation.ended(a, "succeeded")
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
        if self._tell_ends or self._rule_backups:
            self._notify(a, i, "succeeded")
        if self.slowstart is not None and stage.index == j.cur and stype == MAP:
            self._maybe_open_reduces(j, stage)
        if stage.finished == stage.n:
            self._stage_done(j, stage)

    def _done_batch(self, a: Attempt, j: Job, stage: Stage) -> None:
        """Every live member of a batch succeeded: what ``_done_one`` would do member by member."""
        k = a.live
        a.live = 0
        stype = stage.type
        state = stage.state
        if a.dead is None:  # every member (``k`` is ``n``)
            live = self._live
            tasks, nodes, base = a.tasks, a.nodes, a.id
            assert tasks is not None and nodes is not None
            if type(tasks) is range:  # (consecutive: a launch run's)
                for aid in range(base, base + k):
                    del live[aid]
                state[tasks.start : tasks.stop] = _DONE * k
            else:
                for i in range(k):
                    del live[base + i]
                    state[tasks[i]] = DONE
        else:
            nodes = self._alive_done(a, state)
        self.capacity.release(stype, nodes, a.demand)
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

    def _alive_done(self, a: Attempt, state: bytearray) -> list[int]:
        """Batch ``a``'s live members (some were killed) leave the running attempts, their tasks
        done: their nodes, in member order."""
        live, dead, base = self._live, a.dead, a.id
        tasks, nodes = a.tasks, a.nodes
        assert dead is not None and tasks is not None and nodes is not None
        alive = []
        for i in range(a.n):
            if i not in dead:
                del live[base + i]
                state[tasks[i]] = DONE
                alive.append(nodes[i])
        return alive

    def _maybe_open_reduces(self, j: Job, stage: Stage) -> None:
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
            self.offers.work_appeared(j.index)

    def _stage_done(self, j: Job, stage: Stage) -> None:
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
                self.jobs_finished += 1
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
            self.batches.close()  # completions pushed here must not be joined by later launches
            for aid in nxt.waiting:
                a = self._live[aid]
                a.end = max(a.start + a.work / 3.0, now) + a.work * 2.0 / 3.0
                self.push(a.end, C_DONE, EV_DONE, a)
            nxt.waiting.clear()
        else:
            self._stage_ready(j)


__all__ = ["Completions"]
