"""The base of the speculation rules: task progress as Hadoop reports it, and the offer loop.

A rule (a :class:`Speculation`) is given to :class:`mropt.sim.engine.Simulation` as
``speculation=``; the engine offers it a node that still has a free slot after the
scheduling policy's ``assign(node)`` (at a heartbeat in heartbeat mode; in event mode when the
node's capacity frees, and every heartbeat interval while attempts run, so a task that becomes
a candidate later is seen). That is Hadoop's place for speculation: ``JobInProgress.
obtainNewMapTask`` / ``obtainNewReduceTask`` try a speculative task of a job only when the job
has no new task to give (0.21 ``findNewMapTask`` step "II) Running TIP"). One difference,
documented: Hadoop asks each job in the scheduler's order for a new task *then* a speculative
one, so a job early in the order may speculate before a later job's pending task runs; here
the policy gives every pending task it wants first and the rule gets the slots left.

Jobs are visited in the policy's order when it gives one (``Policy.job_order(slot_type)``:
FIFO's queue, the Fair Scheduler's pools and jobs), else in arrival order (``sim.active``).
The first job that has a candidate for the node gets the backup (``sim.speculate(...,
rule=True)``: the policy hears neither its start nor its end), and the loop goes on while the
node has a free slot of that type.

**Progress** (:func:`progress`, Hadoop's reported progress in [0, 1]):

* a map (or any task of a stage that does not follow a map stage): elapsed / running time,
  so its progress rate is 1 / running time (a straggler or a slow node shows a low rate);
* a reduce after a map stage, in Hadoop's three thirds (``ReduceTask``: copy, sort, reduce,
  each 1/3): while the job's maps run, the copy third grows with elapsed / (d/3) but never
  past the fraction of the maps finished (a reduce cannot copy outputs not yet written), so it
  stays below 1/3 until the last map ends; from the end of the copy, ``c = max(start + d/3,
  maps end)`` (the engine's early-reduce timing), the sort and reduce thirds grow linearly to
  1 at ``c + 2d/3`` (d: the attempt's running time).

The **rate** of an attempt is progress / max(1 ms, now - start) (0.21 ``TaskInProgress.
getCurrentProgressRate``), a task's (TIP's) rate and progress the largest over its running
attempts.

**What a rule is given** (:class:`RuleView`, ``self.sim``): what a policy may read and do
(:class:`~mropt.sim.view.SimView`), the policy itself (for its ``job_order``), whether the nodes
have slots, ``next_work`` (the clairvoyant rule's oracle) and ``speculate(..., rule=True)``; the
attempts of its hooks are read-only :class:`RuleAttempt` views (an :class:`~mropt.sim.attempts.
Attempt` of the engine). ``make lint`` checks the rules against these protocols and the engine
against :class:`RuleView` where it hands itself to a rule.

A rule keeps what it needs from the engine's hooks (``started``, ``ended``): the running
attempts of each job and slot type by task (in launch order), the nodes where a task failed,
each task's first dispatch time, the live backups per job and type. Batching is off under a
rule (the engine turns it off: every attempt is one object), which changes no result.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from mropt.sim.state import MAP, REDUCE
from mropt.sim.view import AttemptView, SimView

if TYPE_CHECKING:
    from mropt.sim.policy import Policy

#: Hadoop's SPECULATIVE_LAG: a task must have run this long before it gets a backup (s)
SPECULATIVE_LAG = 60.0
#: the floor of an attempt's elapsed time in a rate (Hadoop: 1 ms)
MIN_ELAPSED = 0.001

TaskKey = tuple[int, int]  # (stage, task) within a job


class RuleAttempt(AttemptView, Protocol):
    """An attempt as a rule sees it: :class:`~mropt.sim.view.AttemptView` and its running time."""

    @property
    def work(self) -> float:
        """The attempt's full running time on its node (speed, locality, straggler draw)."""
        ...


class RuleView(SimView, Protocol):
    """What a speculation rule may read and do through ``self.sim`` (module docstring): a policy's
    :class:`~mropt.sim.view.SimView` and the engine's parts a rule needs besides."""

    @property
    def policy(self) -> Policy:
        """The run's policy (a rule reads its ``job_order``)."""
        ...

    @property
    def uses_slots(self) -> bool:
        """Whether the nodes give map and reduce slots (else resources only)."""
        ...

    def next_work(self, job: int, stage: int, task: int, node: int) -> float:
        """The running time an attempt of the task started on ``node`` now would get (straggler draw peeked)."""
        ...

    def speculate(self, job: int, stage: int, task: int, node: int, *, rule: bool = False) -> int:
        """Start a backup attempt of a running task on ``node``; -1 if it cannot run there."""
        ...


def progress(sim: SimView, a: RuleAttempt, now: float) -> float:
    """The progress Hadoop would report for attempt ``a`` at ``now`` (module docstring)."""
    w = a.work
    start = a.start
    if w <= 0:
        return 1.0
    if a.type == REDUCE and a.stage > 0:
        prev = sim.jobs[a.job].stages[a.stage - 1]
        if prev.type == MAP:
            if prev.end_time is None:  # the copy third, bounded by the maps finished
                done = prev.finished / prev.n if prev.n else 1.0
                return min((now - start) / (w / 3.0), done, 1.0) / 3.0
            copy_end = max(start + w / 3.0, prev.end_time)
            if now <= copy_end:
                return min((now - start) / w, 1.0 / 3.0)
            return min(1.0, 1.0 / 3.0 + (now - copy_end) / w)
    return min(1.0, max(0.0, (now - start) / w))


def rate(sim: SimView, a: RuleAttempt, now: float) -> float:
    """Progress per second of attempt ``a`` since its dispatch (0.21 getCurrentProgressRate)."""
    return progress(sim, a, now) / max(MIN_ELAPSED, now - a.start)


class DataStatistics:
    """Hadoop 0.21 ``JobInProgress.DataStatistics``: count, sum, sum of squares; population variance."""

    __slots__ = ("count", "total", "squares")

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        self.squares = 0.0

    def add(self, x: float) -> None:
        self.count += 1
        self.total += x
        self.squares += x * x

    def update(self, old: float, new: float) -> None:
        """Replace one point ``old`` by ``new`` (``updateStatistics``; sums clamped at 0 as Hadoop does)."""
        self.count -= 1
        self.total = max(self.total - old, 0.0)
        self.squares = max(self.squares - old * old, 0.0)
        self.add(new)

    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0

    def std(self) -> float:
        if not self.count:
            return 0.0
        m = self.total / self.count
        return math.sqrt(max(self.squares / self.count - m * m, 0.0))


def mean_std(values: Iterable[float], stats: DataStatistics | None = None) -> tuple[float, float]:
    """Mean and population standard deviation of ``values`` plus the points of ``stats``."""
    n = stats.count if stats is not None else 0
    s = stats.total if stats is not None else 0.0
    q = stats.squares if stats is not None else 0.0
    for x in values:
        n += 1
        s += x
        q += x * x
    if not n:
        return 0.0, 0.0
    m = s / n
    return m, math.sqrt(max(q / n - m * m, 0.0))


def percentile(values: list[float], pct: float) -> float:
    """The ``pct``-th percentile with linear interpolation between order statistics (numpy's default)."""
    xs = sorted(values)
    if not xs:
        return math.nan
    pos = (len(xs) - 1) * pct / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


class Speculation:
    """A speculation rule: :meth:`choose` names the task to back up on a node, or None.

    Subclasses implement :meth:`choose`; they may override :meth:`on_success` and
    :meth:`on_end` to keep statistics (call the base first).
    """

    name = "none"

    def __init__(self, **params: Any) -> None:
        self.params = dict(params)
        self.sim: RuleView

    # -- the engine's calls -----------------------------------------------------------------
    def start(self, sim: RuleView) -> None:
        """Called once by the engine before the first event."""
        self.sim = sim
        # (job, type) -> {(stage, task): [live attempts, launch order]}, in first-launch order
        self.running: dict[tuple[int, int], dict[TaskKey, list[RuleAttempt]]] = {}
        self.failed_on: dict[tuple[int, int, int], set[int]] = {}
        self.first_dispatch: dict[tuple[int, int, int], float] = {}
        self.live_backups: dict[tuple[int, int], int] = {}
        self.backups_by_type = [0, 0]  # live backups per slot type, all jobs

    def started(self, a: RuleAttempt) -> None:
        """An attempt started (the engine's ``_start``)."""
        key = (a.job, a.type)
        tasks = self.running.get(key)
        if tasks is None:
            tasks = self.running[key] = {}
        tk = (a.stage, a.task)
        if tk in tasks:
            tasks[tk].append(a)
        else:
            tasks[tk] = [a]
        self.first_dispatch.setdefault((a.job, a.stage, a.task), a.start)
        if a.speculative:
            self.live_backups[key] = self.live_backups.get(key, 0) + 1
            self.backups_by_type[a.type] += 1

    def ended(self, a: RuleAttempt, outcome: str) -> None:
        """An attempt ended: ``succeeded`` (before its siblings are killed), ``killed`` or ``failed``."""
        if outcome == "succeeded":
            self.on_success(a)
        key = (a.job, a.type)
        tasks = self.running.get(key)
        tk = (a.stage, a.task)
        if tasks is not None and tk in tasks:
            attempts = tasks[tk]
            if a in attempts:
                attempts.remove(a)
            if not attempts:
                del tasks[tk]
        if a.speculative:
            self.live_backups[key] -= 1
            self.backups_by_type[a.type] -= 1
        if outcome == "failed":
            self.failed_on.setdefault((a.job, a.stage, a.task), set()).add(a.node)
        self.on_end(a, outcome)

    def on_success(self, a: RuleAttempt) -> None:
        """Attempt ``a`` won its task (its siblings still run; they are killed next)."""

    def on_end(self, a: RuleAttempt, outcome: str) -> None:
        """Attempt ``a`` ended (after the bookkeeping)."""

    def offer(self, node: int) -> None:
        """The node has a free slot after the policy's turn: start the backups the rule names."""
        sim = self.sim
        for stype in (MAP, REDUCE):
            guard = 0
            while sim.busy[stype] > 0 and (not sim.uses_slots or sim.free[stype][node] > 0):
                pick = self.choose(node, stype)
                if pick is None:
                    break
                job, stage, task = pick
                if sim.speculate(job, stage, task, node, rule=True) < 0:
                    break
                guard += 1
                if not sim.uses_slots and guard > 10_000:  # pragma: no cover - a rule naming the same task
                    break

    # -- what rules share -----------------------------------------------------------------------
    def choose(self, node: int, stype: int) -> tuple[int, int, int] | None:
        """(job, stage, task) to back up on ``node`` in a ``stype`` slot, or None."""
        return None

    def job_order(self, stype: int) -> Iterable[int]:
        """The active jobs with running attempts of ``stype``, in the policy's order (else arrival)."""
        sim = self.sim
        order = sim.policy.job_order(stype)  # (Policy.job_order: None for arrival order)
        jobs: Iterable[int] = order if order is not None else list(sim.active)
        running = self.running
        return [j for j in jobs if running.get((j, stype)) and j in sim.active]

    def ran_on(self, job: int, stage: int, task: int, attempts: list[RuleAttempt], node: int) -> bool:
        """0.21 ``TaskInProgress.hasRunOnMachine``: an active attempt on the node, or a failure there."""
        for a in attempts:
            if a.node == node:
                return True
        failed = self.failed_on.get((job, stage, task))
        return failed is not None and node in failed

    def tip_progress_rate(self, attempts: list[RuleAttempt], now: float) -> tuple[float, float]:
        """A task's progress and rate: the largest over its running attempts."""
        sim = self.sim
        best_p = best_r = 0.0
        for a in attempts:
            p = progress(sim, a, now)
            r = p / max(MIN_ELAPSED, now - a.start)
            best_p = max(best_p, p)
            best_r = max(best_r, r)
        return best_p, best_r
