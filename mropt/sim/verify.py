"""Independent check of a simulation's outputs against its workload.

It reads only the workload (``mropt.model.workload``) and the output tables (the columns
of ``jobs.parquet`` and ``tasks.parquet``, as dicts or pandas frames) and shares no code with
the engine, its state or its recorder. What it checks:

* every attempt runs on a node of the cluster, starts no earlier than its job's submit time
  and ends no earlier than it starts; rejected jobs have no attempts;
* capacity: at no instant does a node run more attempts of a slot type than it has slots,
  or more demand of a resource than it has (a sweep over starts and ends; an end at t frees
  its slot for a start at t);
* a node that is down runs nothing: attempts on it end by its failure time and start no
  earlier than its recovery;
* every task of an accepted job that was not dropped succeeds exactly once, unless the job
  is left unfinished for a stated cause (``unfinished_cause`` of ``jobs.parquet``,
  :mod:`mropt.sim.unfinished`): ``no_node``, checked here from the workload alone (some task
  of the job that never succeeded fits no node that is up at the end, after the faults in
  their order, with a slot of its type and the resources for its demand), ``stalled`` (the
  heartbeat run stopped early: its horizon) or ``stopped`` (the run was stopped before its last
  event: ``--until``, ``--time-limit``, Ctrl-C; its tables are checked as those of a run that
  ended there, every rule above holding up to the stop); an unfinished job without one, or a table
  without the column, is an error, and a task never succeeds twice; a stage's
  attempts end no earlier than the last success of the stage before (reduces launched early
  by slow-start included) and, without slow-start, start no earlier than it;
* a succeeded attempt takes base duration / node speed x its locality factor, or that times
  the straggler slowdown when the workload has stragglers (relative 1e-9; early reduces of
  a slow-start run are exempt);
* speculative attempts (backups): two attempts of one task overlap in time only if one of
  them is speculative; a speculative attempt starts while another attempt of its task runs;
  once a task succeeds nothing of it runs on (the first attempt to finish wins, the others
  end at that instant, killed); :func:`wasted_work` recomputes the slot time of those losers;
* the job table: finish is the last success of the job's last stage, map end that of its
  map phase, ``on_time`` is ``finish <= deadline * (1 + 1e-9)`` in exact arithmetic
  (``docs/tolerances.md``: the recorder's float limit is that value rounded down),
  ``benefit`` is AMB eq. 1, and their sums.

:func:`verify_simulation` returns a :class:`~mropt.model.solution.Verdict` whose
``objective`` is the total benefit recomputed here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from mropt.model.solution import Verdict
from mropt.model.workload import WorkloadInstance

_RTOL = 1e-9
_TIME_RTOL = Fraction(1, 10**9)  # TIME_RTOL exactly: the on-time rule (docs/tolerances.md), compared exactly
_MAX_PROBLEMS = 20


def _col(table: Any, name: str) -> list[Any]:
    values = table[name]
    return list(values.tolist() if hasattr(values, "tolist") else values)


def _on_time(finish: float, deadline: float) -> bool:
    """``finish <= deadline * (1 + 1e-9)`` in exact arithmetic (docs/tolerances.md), floats where they decide."""
    if finish <= deadline:
        return True
    if deadline >= 0 and finish > deadline * (1 + 2 * _RTOL):
        return False
    return Fraction(finish) <= Fraction(deadline) + _TIME_RTOL * abs(Fraction(deadline))


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= _RTOL * max(abs(a), abs(b), 1.0)


def verify_simulation(
    workload: WorkloadInstance, jobs: Mapping[str, Any] | Any, tasks: Mapping[str, Any] | Any
) -> Verdict:
    """Check a run's job and attempt tables against the workload (module docstring)."""
    check = _Check(workload, tasks)
    check.check_attempts()
    check.check_races()
    check.check_capacity()
    total, late = check.check_jobs(_Jobs(jobs))
    return Verdict(objective=total, problems=check.problems, checked_schedule=True, late=late)


class _Attempts:
    """The columns of the attempt table (``tasks.parquet``); ``speculative`` is False when absent."""

    def __init__(self, tasks: Mapping[str, Any] | Any) -> None:
        self.job, self.stage, self.task = _col(tasks, "job_id"), _col(tasks, "stage"), _col(tasks, "task")
        self.node, self.start, self.end = _col(tasks, "node"), _col(tasks, "start"), _col(tasks, "end")
        self.loc, self.out = _col(tasks, "locality"), _col(tasks, "outcome")
        self.type = _col(tasks, "stage_type")
        self.spec = _col(tasks, "speculative") if _has(tasks, "speculative") else [False] * len(self.job)


class _Jobs:
    """The columns of the job table (``jobs.parquet``); ``dropped`` and ``unfinished_cause`` default when absent."""

    def __init__(self, jobs: Mapping[str, Any] | Any) -> None:
        self.id = _col(jobs, "job_id")
        self.accepted, self.finish, self.map_end = _col(jobs, "accepted"), _col(jobs, "finish"), _col(jobs, "map_end")
        self.on_time, self.benefit = _col(jobs, "on_time"), _col(jobs, "benefit")
        self.dropped = _col(jobs, "dropped") if _has(jobs, "dropped") else [False] * len(self.id)
        self.cause = _col(jobs, "unfinished_cause") if _has(jobs, "unfinished_cause") else [""] * len(self.id)


class _Check:
    """One run's check: the cluster read from the workload alone, the attempt columns, what the attempt
    pass indexes (successes and attempts per task, start and end points per node), the problems found."""

    def __init__(self, workload: WorkloadInstance, tasks: Mapping[str, Any] | Any) -> None:
        self.workload = workload
        self.problems: list[str] = []
        self.slots: dict[str, tuple[int, int]] = {}
        self.capacity: dict[str, dict[str, float]] = {}
        self.speed: dict[str, float] = {}
        for spec in workload.nodes:
            for k in range(spec.count):
                name = spec.id if spec.count == 1 else f"{spec.id}-{k}"
                self.slots[name] = (spec.map_slots or 0, spec.reduce_slots or 0)
                self.capacity[name] = dict(spec.resources)
                self.speed[name] = spec.speed
        self.slotted = workload.nodes[0].map_slots is not None
        self.down: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for fault in workload.faults:
            self.down[fault.node].append((fault.down, math.inf if fault.up is None else fault.up))
        timing = workload.timing
        self.factors = {"node": 1.0, "rack": timing.rack_factor, "any": timing.remote_factor, None: 1.0}
        self.spec_by_id = {job.id: job for job in workload.jobs}
        self.a = _Attempts(tasks)
        self.successes: dict[tuple[str, int, int], list[int]] = defaultdict(list)
        self.of_task: dict[tuple[str, int, int], list[int]] = defaultdict(list)
        self.sweep: dict[str, list[tuple[float, int, int]]] = defaultdict(list)

    def fail(self, text: str) -> None:
        """Record a problem, the first _MAX_PROBLEMS only."""
        if len(self.problems) < _MAX_PROBLEMS:
            self.problems.append(text)

    def check_attempts(self) -> None:
        """Each attempt: of a job of the workload, on a node of the cluster, not before its job's submit
        time, ending no earlier than it starts, of a stage and task that exist, never on a node while
        it is down; indexes the attempts for the checks below."""
        a = self.a
        for i in range(len(a.job)):
            job = self.spec_by_id.get(a.job[i])
            where = f"attempt {i} (job {a.job[i]!r}, stage {a.stage[i]}, task {a.task[i]})"
            if job is None:
                self.fail(f"{where}: no such job in the workload")
                continue
            node = a.node[i]
            if node not in self.slots:
                self.fail(f"{where}: node {node!r} is not in the cluster")
                continue
            start, end = float(a.start[i]), float(a.end[i])
            if start < job.submit_time:
                self.fail(f"{where}: starts at {start:g}, before its job's submit time {job.submit_time:g}")
            if end < start:
                self.fail(f"{where}: ends at {end:g}, before it starts at {start:g}")
            if not 0 <= a.stage[i] < len(job.stages):
                self.fail(f"{where}: the job has no such stage")
                continue
            stage = job.stages[a.stage[i]]
            if a.type[i] != stage.type:
                self.fail(f"{where}: stage type {a.type[i]!r}, the workload says {stage.type!r}")
            if not 0 <= a.task[i] < stage.n_tasks:
                self.fail(f"{where}: the stage has {stage.n_tasks} tasks")
                continue
            for t_down, t_up in self.down.get(node, ()):
                if start < t_up and end > t_down:
                    self.fail(
                        f"{where}: runs on {node!r} over [{start:g}, {end:g}] while it is down [{t_down:g}, {t_up:g})"
                    )
            if a.out[i] == "succeeded":
                self.successes[(job.id, a.stage[i], a.task[i])].append(i)
            self.of_task[(job.id, a.stage[i], a.task[i])].append(i)
            self.sweep[node].append((start, 1, i))
            self.sweep[node].append((end, 0, i))

    def check_races(self) -> None:
        """Attempts of one task (speculative execution, LATE): overlaps need a backup; a backup races a
        running attempt; the first to succeed ends the others at that instant."""
        a = self.a
        for key, rows in self.of_task.items():
            if len(rows) < 2:
                continue
            rows.sort(key=lambda r: (float(a.start[r]), float(a.end[r])))
            where = f"job {key[0]!r} stage {key[1]} task {key[2]}"
            for x, r in enumerate(rows):
                s_r, e_r = float(a.start[r]), float(a.end[r])
                for q in rows[:x]:
                    overlap = float(a.end[q]) > s_r and e_r > s_r and float(a.end[q]) > float(a.start[q])
                    if overlap and not (a.spec[q] or a.spec[r]):
                        self.fail(f"{where}: attempts {q} and {r} overlap and neither is speculative")
                if a.spec[r] and not any(float(a.start[q]) <= s_r < float(a.end[q]) for q in rows if q != r):
                    self.fail(
                        f"{where}: speculative attempt {r} starts at {s_r:g} while no other attempt of its task runs"
                    )
            wins = self.successes.get(key, [])
            if len(wins) == 1:
                t_win = float(a.end[wins[0]])
                for r in rows:
                    if r != wins[0] and float(a.end[r]) > t_win * (1 + _RTOL) + _RTOL:
                        self.fail(
                            f"{where}: attempt {r} runs until {float(a.end[r]):g}, after the task succeeded at {t_win:g}"
                        )

    def check_capacity(self) -> None:
        """Per node, a sweep over starts and ends (an end before a start at the same instant): never
        more attempts of a slot type than its slots, nor more of a resource than it has."""
        a = self.a
        for node, points in self.sweep.items():
            points.sort(key=lambda p: (p[0], p[1]))
            used = [0, 0]
            res: dict[str, float] = defaultdict(float)
            for time, is_start, i in points:
                job = self.spec_by_id[a.job[i]]
                stage = job.stages[a.stage[i]]
                kind = 0 if stage.type == "map" else 1
                demand = _group_of(stage, a.task[i]).demand
                sign = 1 if is_start else -1
                used[kind] += sign
                for name, amount in demand.items():
                    res[name] += sign * amount
                if is_start:
                    if self.slotted and used[kind] > self.slots[node][kind]:
                        self.fail(
                            f"node {node!r}: {used[kind]} {stage.type} attempts at {time:g}, "
                            f"it has {self.slots[node][kind]} slots"
                        )
                    for name, amount in res.items():
                        cap = self.capacity[node].get(name, 0.0)
                        if amount > cap * (1 + _RTOL) + _RTOL:
                            self.fail(f"node {node!r}: {amount:g} {name} in use at {time:g}, it has {cap:g}")

    def check_jobs(self, jt: _Jobs) -> tuple[float, list[str]]:
        """The job table: the workload's job ids, and each job's row; the total benefit (AMB eq. 1)
        and the ids of the jobs with a deadline that missed it."""
        up_at_end = _up_at_end(self.workload, self.slots)
        if sorted(jt.id) != sorted(self.spec_by_id):
            self.fail("jobs table: its job ids are not the workload's")
        attempts_of: dict[str, list[int]] = defaultdict(list)
        for i, jid in enumerate(self.a.job):
            attempts_of[jid].append(i)
        total = 0.0
        late: list[str] = []
        for r, jid in enumerate(jt.id):
            job = self.spec_by_id.get(jid)
            if job is None:
                continue
            accepted, dropped = bool(jt.accepted[r]), bool(jt.dropped[r])
            if not accepted and attempts_of.get(jid):
                self.fail(f"job {jid!r}: rejected, yet it has {len(attempts_of[jid])} attempts")
            finish_expected: float | None = None
            if accepted and not dropped:
                finish_expected = self._finish(jt, r, jid, job, attempts_of[jid], up_at_end)
            if (jt.cause[r] or "") and (finish_expected is not None or not accepted or dropped):
                self.fail(
                    f"job {jid!r}: unfinished_cause {jt.cause[r]!r} for a job that is finished, rejected or dropped"
                )
            total += self._earned(jt, r, jid, job, accepted, finish_expected, late)
        return total, late

    def _finish(self, jt: _Jobs, r: int, jid: str, job: Any, rows: list[int], up_at_end: set[str]) -> float | None:
        """An accepted job that was not dropped: each task succeeds once, stage after stage; its map_end
        and finish are the last successes of its map phase and of its last stage, or it is unfinished
        for a stated cause. The expected finish, None when unfinished."""
        complete = True
        prev_end = job.submit_time
        for s, stage in enumerate(job.stages):
            ends = []
            for t in range(stage.n_tasks):
                wins = self.successes.get((jid, s, t), [])
                if len(wins) != 1:
                    complete = False
                    if len(wins) > 1 or _has_value(jt.finish[r]):
                        self.fail(f"job {jid!r}: stage {s} task {t} succeeded {len(wins)} times")
                    break
                ends.append(float(self.a.end[wins[0]]))
            if not complete:
                break
            self._stage_times(jid, s, stage, prev_end, rows)
            prev_end = max(ends)
            if s == _map_phase_last(job) and not _same(jt.map_end[r], prev_end):
                self.fail(f"job {jid!r}: map_end {jt.map_end[r]} but its map phase ends at {prev_end:g}")
        finish_expected = prev_end if complete else None
        if not _same(jt.finish[r], finish_expected):
            self.fail(f"job {jid!r}: finish {jt.finish[r]} but its last task ends at {finish_expected}")
        if not complete and not _has_value(jt.finish[r]):
            self._cause(jt.cause[r] or "", jid, job, up_at_end)
        return finish_expected

    def _stage_times(self, jid: str, s: int, stage: Any, prev_end: float, rows: list[int]) -> None:
        """Stage ``s``'s attempts: a success ends no earlier than the stage before; without slow-start
        none starts before it; a success takes base duration / node speed x its locality factor, or
        that times the straggler slowdown (relative 1e-9; early reduces of slow-start exempt)."""
        a, timing = self.a, self.workload.timing
        slowstart = timing.reduce_slowstart is not None
        for i in rows:
            if a.stage[i] != s:
                continue
            if float(a.end[i]) < prev_end and a.out[i] == "succeeded":
                self.fail(
                    f"job {jid!r}: stage {s} attempt {i} ends at {a.end[i]:g}, before stage {s - 1} ends at {prev_end:g}"
                )
            if not slowstart and float(a.start[i]) < prev_end and s > 0:
                self.fail(
                    f"job {jid!r}: stage {s} attempt {i} starts at {a.start[i]:g}, before stage {s - 1} ends at {prev_end:g}"
                )
            if a.out[i] == "succeeded" and not (slowstart and stage.type == "reduce" and s > 0):
                loc = a.loc[i] if _has_value(a.loc[i]) else None  # a reduce's: none (null in Parquet: NaN)
                if loc not in self.factors:
                    self.fail(f"job {jid!r}: attempt {i} has locality {loc!r} ('node', 'rack', 'any' or none expected)")
                    continue
                base = _group_of(stage, a.task[i]).duration / self.speed[a.node[i]] * self.factors[loc]
                took = float(a.end[i]) - float(a.start[i])
                if not (
                    _close(took, base) or (timing.straggler_rate > 0 and _close(took, base * timing.straggler_slowdown))
                ):
                    self.fail(f"job {jid!r}: attempt {i} took {took:g}, the model gives {base:g}")

    def _cause(self, cause: str, jid: str, job: Any, up_at_end: set[str]) -> None:
        """An unfinished job states why (:mod:`mropt.sim.unfinished`): ``no_node``, true when some task
        that never succeeded fits no node up at the end, ``stalled`` or ``stopped``."""
        if cause == "no_node":
            if _stuck_task(job, self.successes, up_at_end, self.slots, self.capacity, self.slotted) is None:
                self.fail(f"job {jid!r}: unfinished for cause 'no_node', yet a node up at the end can run each task")
        elif cause not in ("stalled", "stopped"):
            self.fail(
                f"job {jid!r}: accepted, not dropped, yet unfinished with no stated cause "
                f"(unfinished_cause {cause!r}; 'no_node', 'stalled' or 'stopped' expected)"
            )

    def _earned(
        self, jt: _Jobs, r: int, jid: str, job: Any, accepted: bool, finish: float | None, late: list[str]
    ) -> float:
        """The benefit AMB eq. 1 gives the job (its value when it finishes by its deadline, -alpha x
        value otherwise, 0 when rejected), checked against its ``on_time`` and ``benefit``; a late job
        joins ``late``."""
        value = job.benefit or 0.0
        alpha = self.workload.alpha
        if not accepted:
            earned = 0.0
        elif job.deadline is None:
            earned = value if finish is not None else -alpha * value
        else:
            met = finish is not None and _on_time(finish, job.deadline)
            if _has_value(jt.on_time[r]) and bool(jt.on_time[r]) != met:
                self.fail(f"job {jid!r}: on_time {jt.on_time[r]} but finish {finish} against deadline {job.deadline:g}")
            if not met:
                late.append(jid)
            earned = value if met else -alpha * value
        if not _close(float(jt.benefit[r]), earned):
            self.fail(f"job {jid!r}: benefit {jt.benefit[r]} but eq. 1 gives {earned:g}")
        return earned


def check_stop(summary: Mapping[str, Any], jobs: Mapping[str, Any] | Any, tasks: Mapping[str, Any] | Any) -> list[str]:
    """A run's stop against its tables (the summary's ``stopped`` and ``stopped_at``, :mod:`mropt.sim.watch`).

    A run stopped at simulated time S holds nothing after S: no attempt ends later, every job
    submitted by S was decided (accepted or rejected) and none submitted later was
    (``not_submitted``). A run that ran to its end has no job unfinished for cause ``stopped``.
    The problems found, in words.
    """
    problems: list[str] = []
    ids, causes = _col(jobs, "job_id"), _col(jobs, "unfinished_cause") if _has(jobs, "unfinished_cause") else []
    stopped, at = summary.get("stopped"), summary.get("stopped_at")
    if stopped is None:
        cut = [jid for jid, cause in zip(ids, causes, strict=True) if cause == "stopped"]
        if cut:
            problems.append(f"job {cut[0]!r}: unfinished_cause 'stopped', yet the summary says the run was not stopped")
        return problems
    if not isinstance(at, (int, float)) or isinstance(at, bool):
        return [f"summary: stopped {stopped!r} without a simulated time stopped_at"]
    ends = [float(e) for e in _col(tasks, "end")]
    if ends and max(ends) > at:
        problems.append(f"tasks: an attempt ends at {max(ends):g}, after the run stopped at {at:g}")
    decisions = _col(jobs, "decision") if _has(jobs, "decision") else []
    for jid, submit, decision in zip(ids, _col(jobs, "submit_time"), decisions, strict=True):
        if (decision == "not_submitted") != (float(submit) > at):
            problems.append(
                f"job {jid!r}: decision {decision!r} with submit time {float(submit):g} in a run stopped at {at:g}"
            )
            break
    return problems


def wasted_work(tasks: Mapping[str, Any] | Any) -> float:
    """Slot-seconds of attempts that lost a race: killed at the instant another attempt of their
    task succeeded, after running alongside it (``mropt.sim.run``'s ``wasted_work``), from the
    attempt table alone."""
    a_job, a_stage, a_task = _col(tasks, "job_id"), _col(tasks, "stage"), _col(tasks, "task")
    a_start, a_end, a_out = _col(tasks, "start"), _col(tasks, "end"), _col(tasks, "outcome")
    win: dict[tuple[Any, int, int], tuple[float, float]] = {}
    for i in range(len(a_job)):
        if a_out[i] == "succeeded":
            win[(a_job[i], a_stage[i], a_task[i])] = (float(a_start[i]), float(a_end[i]))
    total = 0.0
    for i in range(len(a_job)):
        if a_out[i] != "killed":
            continue
        got = win.get((a_job[i], a_stage[i], a_task[i]))
        if got is None:
            continue
        w_start, w_end = got
        start, end = float(a_start[i]), float(a_end[i])
        if _close(end, w_end) and start <= w_end and (w_start < end or start < w_end):
            total += end - start
    return total


def _up_at_end(workload: WorkloadInstance, nodes: Mapping[str, Any]) -> set[str]:
    """The nodes up after every fault, in time order (at one instant a failure before a recovery)."""
    events = sorted(
        [(f.down, 0, f.node) for f in workload.faults]
        + [(f.up, 1, f.node) for f in workload.faults if f.up is not None]
    )
    up = set(nodes)
    for _, recovery, node in events:
        if recovery:
            up.add(node)
        else:
            up.discard(node)
    return up


def _stuck_task(
    job: Any,
    successes: Mapping[tuple[str, int, int], list[int]],
    up: set[str],
    slots: Mapping[str, tuple[int, int]],
    capacity: Mapping[str, Mapping[str, float]],
    slotted: bool,
) -> tuple[int, int] | None:
    """(stage, task) of a task of ``job`` that never succeeded and that no node in ``up`` can run, or None."""
    for s, stage in enumerate(job.stages):
        kind = 0 if stage.type == "map" else 1
        offset = 0
        for group in stage.tasks:
            task = next((t for t in range(offset, offset + group.count) if not successes.get((job.id, s, t))), -1)
            offset += group.count
            if task < 0:
                continue
            if not any(
                (not slotted or slots[n][kind] > 0)
                and all(a <= capacity[n].get(name, 0.0) * (1 + _RTOL) + _RTOL for name, a in group.demand.items())
                for n in up
            ):
                return s, task
    return None


def _group_of(stage: Any, task: int) -> Any:
    offset = 0
    for group in stage.tasks:
        if task < offset + group.count:
            return group
        offset += group.count
    return stage.tasks[-1]


def _map_phase_last(job: Any) -> int:
    last = 0
    for s, stage in enumerate(job.stages):
        if stage.type == "reduce":
            break
        last = s
    return last


def _has(table: Any, name: str) -> bool:
    try:
        table[name]
    except (KeyError, IndexError):
        return False
    return True


def _has_value(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _same(value: Any, expected: float | None) -> bool:
    if expected is None:
        return not _has_value(value)
    return _has_value(value) and _close(float(value), expected)
