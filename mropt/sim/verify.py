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

Each rule is evaluated on every attempt at once with numpy, over the workload laid out as arrays
(:mod:`mropt.sim.verify_tables`; the capacity sweep in :mod:`mropt.sim.verify_capacity`); Python
words the problems found, in the order of a check of one attempt after another, the first
``_MAX_PROBLEMS`` only, and walks the jobs (AMB eq. 1) one by one.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from mropt.model.solution import Verdict
from mropt.model.workload import WorkloadInstance
from mropt.sim.verify_capacity import check_capacity
from mropt.sim.verify_tables import Attempts, Layout, codes, column, equals, has

_RTOL = 1e-9
_TIME_RTOL = Fraction(1, 10**9)  # TIME_RTOL exactly: the on-time rule (docs/tolerances.md), compared exactly
_MAX_PROBLEMS = 20


def _on_time(finish: float, deadline: float) -> bool:
    """``finish <= deadline * (1 + 1e-9)`` in exact arithmetic (docs/tolerances.md), floats where they decide."""
    if finish <= deadline:
        return True
    if deadline >= 0 and finish > deadline * (1 + 2 * _RTOL):
        return False
    return Fraction(finish) <= Fraction(deadline) + _TIME_RTOL * abs(Fraction(deadline))


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= _RTOL * max(abs(a), abs(b), 1.0)


def _all_close(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`_close` of each pair."""
    return np.abs(a - b) <= _RTOL * np.maximum(np.maximum(np.abs(a), np.abs(b)), 1.0)


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


class _Jobs:
    """The columns of the job table (``jobs.parquet``); ``dropped`` and ``unfinished_cause`` default when absent."""

    def __init__(self, jobs: Mapping[str, Any] | Any) -> None:
        self.id = column(jobs, "job_id")
        self.accepted, self.finish = column(jobs, "accepted"), column(jobs, "finish")
        self.map_end, self.on_time, self.benefit = (
            column(jobs, "map_end"),
            column(jobs, "on_time"),
            column(jobs, "benefit"),
        )
        self.dropped = column(jobs, "dropped") if has(jobs, "dropped") else [False] * len(self.id)
        self.cause = column(jobs, "unfinished_cause") if has(jobs, "unfinished_cause") else [""] * len(self.id)


class _Check:
    """One run's check: the cluster read from the workload alone, the workload's arrays, the attempt
    columns, what the attempt pass finds per attempt (its job, node and flat stage, and its global
    task only when it breaks none of the rules of check_attempts but the times and downtimes; -1
    where it has none), the successes per global task, the problems found."""

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
        self.w = Layout(workload)
        self.a = Attempts(tasks)
        self.nodes = list(self.slots)
        self.node_index = {name: k for k, name in enumerate(self.nodes)}
        n = self.a.n
        self.job, self.node = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
        self.stage, self.gtask = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
        self.wins = np.zeros(int(self.w.task0[-1]), np.int64)  # successes per global task

    def fail(self, text: str) -> None:
        """Record a problem, the first _MAX_PROBLEMS only."""
        if self.room():
            self.problems.append(text)

    def room(self) -> bool:
        """Whether another problem would be recorded."""
        return len(self.problems) < _MAX_PROBLEMS

    def check_attempts(self) -> None:
        """Each attempt: of a job of the workload, on a node of the cluster, not before its job's submit
        time, ending no earlier than it starts, of a stage and task that exist, never on a node while
        it is down; numbers the attempts' jobs, nodes, stages and tasks for the checks below (an
        attempt that fails one of the first two rules or the stage or task rule gets no task)."""
        a, w = self.a, self.w
        job = codes(a.job, w.job_index)
        node = codes(a.node, self.node_index)
        known = job >= 0
        on_node = known & (node >= 0)
        j = np.where(known, job, 0)
        early = on_node & (a.start < w.submit[j])
        backwards = on_node & (a.end < a.start)
        in_range = known & (a.stage_no >= 0) & (a.stage_no < w.n_stages[j])
        has_stage = on_node & in_range
        f = np.where(in_range, w.stage0[j] + a.stage_no, 0)
        wrong_type = has_stage & (codes(a.type, w.type_index) != w.type_code[f])
        has_task = has_stage & (a.task_no >= 0) & (a.task_no < w.n_tasks[f])
        down = self._down(has_task, node)
        flagged = ~on_node | early | backwards | (on_node & ~has_stage) | wrong_type | (has_stage & ~has_task)
        flagged[list(down)] = True
        for i in np.flatnonzero(flagged).tolist():
            if not self.room():
                break
            where = f"attempt {i} (job {a.job[i]!r}, stage {a.stage[i]}, task {a.task[i]})"
            if not known[i]:
                self.fail(f"{where}: no such job in the workload")
                continue
            if not on_node[i]:
                self.fail(f"{where}: node {a.node[i]!r} is not in the cluster")
                continue
            start, end, spec = float(a.start[i]), float(a.end[i]), self.spec_by_id[a.job[i]]
            if early[i]:
                self.fail(f"{where}: starts at {start:g}, before its job's submit time {spec.submit_time:g}")
            if backwards[i]:
                self.fail(f"{where}: ends at {end:g}, before it starts at {start:g}")
            if not has_stage[i]:
                self.fail(f"{where}: the job has no such stage")
                continue
            stage = spec.stages[a.stage_no[i]]
            if wrong_type[i]:
                self.fail(f"{where}: stage type {a.type[i]!r}, the workload says {stage.type!r}")
            if not has_task[i]:
                self.fail(f"{where}: the stage has {stage.n_tasks} tasks")
                continue
            for t_down, t_up in down.get(i, ()):
                self.fail(
                    f"{where}: runs on {a.node[i]!r} over [{start:g}, {end:g}] while it is down [{t_down:g}, {t_up:g})"
                )
        self.job[known], self.node[on_node], self.stage[in_range] = job[known], node[on_node], f[in_range]
        self.gtask[has_task] = w.task0[f[has_task]] + a.task_no[has_task]
        self.wins = np.bincount(self.gtask[has_task & a.succeeded], minlength=len(self.wins))

    def _down(self, has_task: np.ndarray, node: np.ndarray) -> dict[int, list[tuple[float, float]]]:
        """The attempts that run on a node while it is down (start before its recovery, end after its
        failure), each with those downtimes in the workload's order."""
        out: dict[int, list[tuple[float, float]]] = defaultdict(list)
        for name, spans in self.down.items():
            rows = np.flatnonzero(has_task & (node == self.node_index.get(name, -2)))
            for t_down, t_up in spans:
                for i in rows[(self.a.start[rows] < t_up) & (self.a.end[rows] > t_down)].tolist():
                    out[i].append((t_down, t_up))
        return out

    def check_races(self) -> None:
        """Attempts of one task (speculative execution, LATE): overlaps need a backup; a backup races a
        running attempt; the first to succeed ends the others at that instant. Tasks with one attempt
        have no race: only those with several are walked, in the order of their first attempt."""
        rows = np.flatnonzero(self.gtask >= 0)
        rows = rows[np.argsort(self.gtask[rows], kind="stable")]
        task = self.gtask[rows]
        first = np.flatnonzero(np.r_[True, task[1:] != task[:-1]])
        size = np.diff(np.r_[first, len(rows)])
        several = sorted(zip(rows[first[size > 1]].tolist(), first[size > 1].tolist(), size[size > 1].tolist()))
        for _, lo, k in several:
            if not self.room():
                break
            self._race(rows[lo : lo + k].tolist())

    def _race(self, rows: list[int]) -> None:
        """The attempts ``rows`` (in table order) of one task."""
        a = self.a
        i = rows[0]
        where = f"job {a.job[i]!r} stage {a.stage[i]} task {a.task[i]}"
        wins = [r for r in rows if a.succeeded[r]]
        rows = sorted(rows, key=lambda r: (float(a.start[r]), float(a.end[r])))
        for x, r in enumerate(rows):
            s_r, e_r = float(a.start[r]), float(a.end[r])
            for q in rows[:x]:
                overlap = float(a.end[q]) > s_r and e_r > s_r and float(a.end[q]) > float(a.start[q])
                if overlap and not (a.spec[q] or a.spec[r]):
                    self.fail(f"{where}: attempts {q} and {r} overlap and neither is speculative")
            if a.spec[r] and not any(float(a.start[q]) <= s_r < float(a.end[q]) for q in rows if q != r):
                self.fail(f"{where}: speculative attempt {r} starts at {s_r:g} while no other attempt of its task runs")
        if len(wins) == 1:
            t_win = float(a.end[wins[0]])
            for r in rows:
                if r != wins[0] and float(a.end[r]) > t_win * (1 + _RTOL) + _RTOL:
                    self.fail(
                        f"{where}: attempt {r} runs until {float(a.end[r]):g}, after the task succeeded at {t_win:g}"
                    )

    def check_capacity(self) -> None:
        """Per node, a sweep over starts and ends (an end before a start at the same instant): never
        more attempts of a slot type than its slots, nor more of a resource than it has
        (:mod:`mropt.sim.verify_capacity`)."""
        if not self.room():
            return
        slots = np.array([self.slots[n] for n in self.nodes], dtype=np.int64).reshape(-1, 2)
        capacity = np.array(
            [[self.capacity[n].get(name, 0.0) for name in self.w.resources] for n in self.nodes], dtype=float
        ).reshape(len(self.nodes), len(self.w.resources))
        rows = np.flatnonzero(self.gtask >= 0)
        check_capacity(
            self.a, self.w, rows, self.node, self.stage, self.nodes, slots, capacity, self.slotted, self.fail, self.room
        )

    def check_jobs(self, jt: _Jobs) -> tuple[float, list[str]]:
        """The job table: the workload's job ids, and each job's row; the total benefit (AMB eq. 1)
        and the ids of the jobs with a deadline that missed it."""
        up_at_end = _up_at_end(self.workload, self.slots)
        if sorted(jt.id) != sorted(self.spec_by_id):
            self.fail("jobs table: its job ids are not the workload's")
        stages = _Stages(self)
        attempts_of = np.bincount(self.job[self.job >= 0], minlength=len(self.spec_by_id)).tolist()
        total = 0.0
        late: list[str] = []
        for r, jid in enumerate(jt.id):
            job = self.spec_by_id.get(jid)
            if job is None:
                continue
            j = self.w.job_index[jid]
            accepted, dropped = bool(jt.accepted[r]), bool(jt.dropped[r])
            if not accepted and attempts_of[j]:
                self.fail(f"job {jid!r}: rejected, yet it has {attempts_of[j]} attempts")
            finish_expected: float | None = None
            if accepted and not dropped:
                finish_expected = self._finish(jt, r, jid, j, job, stages, up_at_end)
            if (jt.cause[r] or "") and (finish_expected is not None or not accepted or dropped):
                self.fail(
                    f"job {jid!r}: unfinished_cause {jt.cause[r]!r} for a job that is finished, rejected or dropped"
                )
            total += self._earned(jt, r, jid, job, accepted, finish_expected, late)
        return total, late

    def _finish(
        self, jt: _Jobs, r: int, jid: str, j: int, job: Any, stages: _Stages, up_at_end: set[str]
    ) -> float | None:
        """An accepted job that was not dropped: each task succeeds once, stage after stage; its map_end
        and finish are the last successes of its map phase and of its last stage, or it is unfinished
        for a stated cause. The expected finish, None when unfinished."""
        complete = True
        prev_end = job.submit_time
        for s in range(len(job.stages)):
            f = stages.first[j] + s
            if stages.incomplete[f]:
                t, n = stages.first_unfinished(f)
                complete = False
                if n > 1 or _has_value(jt.finish[r]):
                    self.fail(f"job {jid!r}: stage {s} task {t} succeeded {n} times")
                break
            for i in stages.late.get(f, ()):
                self._stage_times(jid, s, i, prev_end, stages)
            prev_end = stages.end[f]
            if s == _map_phase_last(job) and not _same(jt.map_end[r], prev_end):
                self.fail(f"job {jid!r}: map_end {jt.map_end[r]} but its map phase ends at {prev_end:g}")
        finish_expected = prev_end if complete else None
        if not _same(jt.finish[r], finish_expected):
            self.fail(f"job {jid!r}: finish {jt.finish[r]} but its last task ends at {finish_expected}")
        if not complete and not _has_value(jt.finish[r]):
            self._cause(jt.cause[r] or "", jid, j, job, up_at_end)
        return finish_expected

    def _stage_times(self, jid: str, s: int, i: int, prev_end: float, stages: _Stages) -> None:
        """Words the problems :class:`_Stages` found with attempt ``i`` of stage ``s``."""
        a = self.a
        if stages.ends_early[i]:
            self.fail(
                f"job {jid!r}: stage {s} attempt {i} ends at {a.end[i]:g}, before stage {s - 1} ends at {prev_end:g}"
            )
        if stages.starts_early[i]:
            self.fail(
                f"job {jid!r}: stage {s} attempt {i} starts at {a.start[i]:g}, before stage {s - 1} ends at {prev_end:g}"
            )
        if stages.bad_locality[i]:
            loc = a.loc[i] if _has_value(a.loc[i]) else None
            self.fail(f"job {jid!r}: attempt {i} has locality {loc!r} ('node', 'rack', 'any' or none expected)")
        elif stages.wrong_time[i]:
            took = float(a.end[i]) - float(a.start[i])
            self.fail(f"job {jid!r}: attempt {i} took {took:g}, the model gives {stages.base[i]:g}")

    def _cause(self, cause: str, jid: str, j: int, job: Any, up_at_end: set[str]) -> None:
        """An unfinished job states why (:mod:`mropt.sim.unfinished`): ``no_node``, true when some task
        that never succeeded fits no node up at the end, ``stalled`` or ``stopped``."""
        if cause == "no_node":
            first = int(self.w.stage0[j])
            succeeded = [
                self.wins[self.w.task0[first + s] : self.w.task0[first + s + 1]] > 0 for s in range(len(job.stages))
            ]
            if _stuck_task(job, succeeded, up_at_end, self.slots, self.capacity, self.slotted) is None:
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


class _Stages:
    """Stage after stage, for every job at once: which stages have a task that did not succeed exactly
    once (``incomplete``), when each stage's last success ends (``end``), and the attempts of a stage
    whose stages so far are complete that break a rule of their stage's times (``late``: flat stage ->
    attempts, in table order): a success ends no earlier than the stage before (``ends_early``);
    without slow-start none starts before it (``starts_early``); a success takes base duration / node
    speed x its locality factor, or that times the straggler slowdown (``bad_locality``,
    ``wrong_time``; relative 1e-9; early reduces of slow-start exempt). The stage before stage 0
    ends at the job's submit time. Attempts on a node outside the cluster get no time check (their
    node has no speed; check_attempts reports them)."""

    def __init__(self, check: _Check) -> None:
        a, w, timing = check.a, check.w, check.workload.timing
        self.first, self.task0, self.wins = w.stage0.tolist(), w.task0, check.wins
        starts = w.task0[:-1]
        won = np.flatnonzero((check.gtask >= 0) & a.succeeded)
        win_end = np.full(len(self.wins), -np.inf)
        win_end[check.gtask[won]] = a.end[won]
        incomplete = np.logical_or.reduceat(self.wins != 1, starts)
        stage_end = np.maximum.reduceat(win_end, starts)
        self.incomplete, self.end = incomplete.tolist(), stage_end.tolist()
        job_of_stage = np.repeat(np.arange(len(w.n_stages)), w.n_stages)
        bad_so_far = np.cumsum(incomplete)
        bad_before_job = (bad_so_far - incomplete)[w.stage0[:-1]]
        complete_so_far = bad_so_far == bad_before_job[job_of_stage]  # this stage and those before it
        prev_end = np.r_[np.nan, stage_end[:-1]]
        prev_end[w.stage0[:-1]] = w.submit
        # each attempt of a job's stage (on any node) against the end of the stage before
        f = check.stage
        of_stage = f >= 0
        fs = np.where(of_stage, f, 0)
        s = np.where(of_stage, a.stage_no, 0)
        checked = of_stage & complete_so_far[fs]
        before = prev_end[fs]
        slowstart = timing.reduce_slowstart is not None
        self.ends_early = checked & a.succeeded & (a.end < before)
        self.starts_early = checked & (not slowstart) & (s > 0) & (a.start < before)
        timed = checked & a.succeeded & ~(slowstart & w.is_reduce[fs] & (s > 0)) & (check.node >= 0)
        factor = _factors(a.loc, check.factors)
        self.bad_locality = timed & np.isnan(factor)
        task = np.clip(a.task_no, 0, w.n_tasks[fs] - 1)  # a task out of range: its stage's first or last group
        speed = np.array([check.speed[n] for n in check.nodes], dtype=float)
        self.base = w.duration[w.group_of(w.task0[fs] + task)] / speed[np.maximum(check.node, 0)] * factor
        took = a.end - a.start
        fits = _all_close(took, self.base)
        if timing.straggler_rate > 0:
            fits |= _all_close(took, self.base * timing.straggler_slowdown)
        self.wrong_time = timed & ~self.bad_locality & ~fits
        self.late: dict[int, list[int]] = defaultdict(list)
        for i in np.flatnonzero(self.ends_early | self.starts_early | self.bad_locality | self.wrong_time).tolist():
            self.late[int(f[i])].append(i)

    def first_unfinished(self, f: int) -> tuple[int, int]:
        """The first task of flat stage ``f`` that did not succeed exactly once, and its successes."""
        wins = self.wins[self.task0[f] : self.task0[f + 1]]
        t = int(np.flatnonzero(wins != 1)[0])
        return t, int(wins[t])


def check_stop(summary: Mapping[str, Any], jobs: Mapping[str, Any] | Any, tasks: Mapping[str, Any] | Any) -> list[str]:
    """A run's stop against its tables (the summary's ``stopped`` and ``stopped_at``, :mod:`mropt.sim.watch`).

    A run stopped at simulated time S holds nothing after S: no attempt ends later, every job
    submitted by S was decided (accepted or rejected) and none submitted later was
    (``not_submitted``). A run that ran to its end has no job unfinished for cause ``stopped``.
    The problems found, in words.
    """
    problems: list[str] = []
    ids, causes = column(jobs, "job_id"), column(jobs, "unfinished_cause") if has(jobs, "unfinished_cause") else []
    stopped, at = summary.get("stopped"), summary.get("stopped_at")
    if stopped is None:
        cut = [jid for jid, cause in zip(ids, causes, strict=True) if cause == "stopped"]
        if cut:
            problems.append(f"job {cut[0]!r}: unfinished_cause 'stopped', yet the summary says the run was not stopped")
        return problems
    if not isinstance(at, (int, float)) or isinstance(at, bool):
        return [f"summary: stopped {stopped!r} without a simulated time stopped_at"]
    ends = np.asarray(tasks["end"], dtype=float)
    ends = ends[~np.isnan(ends)]
    if len(ends) and ends.max() > at:
        problems.append(f"tasks: an attempt ends at {ends.max():g}, after the run stopped at {at:g}")
    decisions = column(jobs, "decision") if has(jobs, "decision") else []
    for jid, submit, decision in zip(ids, column(jobs, "submit_time"), decisions, strict=True):
        if (decision == "not_submitted") != (float(submit) > at):
            problems.append(
                f"job {jid!r}: decision {decision!r} with submit time {float(submit):g} in a run stopped at {at:g}"
            )
            break
    return problems


def wasted_work(tasks: Mapping[str, Any] | Any) -> float:
    """Slot-seconds of attempts that lost a race: killed at the instant another attempt of their
    task succeeded, after running alongside it (``mropt.sim.run``'s ``wasted_work``), from the
    attempt table alone. A task is a (job, stage, task) of the table, its winner its last success;
    only the successes of the jobs with a killed attempt are looked at."""
    outcome = column(tasks, "outcome")
    killed = np.flatnonzero(equals(outcome, "killed")).tolist()
    if not killed:
        return 0.0
    job, stage, task = column(tasks, "job_id"), column(tasks, "stage"), column(tasks, "task")
    a_start, a_end = np.asarray(tasks["start"], dtype=float), np.asarray(tasks["end"], dtype=float)
    of_killed = codes(job, {job[i]: 0 for i in killed}) >= 0
    win: dict[tuple[Any, Any, Any], int] = {}
    for i in np.flatnonzero(equals(outcome, "succeeded") & of_killed).tolist():
        win[(job[i], stage[i], task[i])] = i
    total = 0.0
    for i in killed:
        got = win.get((job[i], stage[i], task[i]))
        if got is None:
            continue
        w_start, w_end = float(a_start[got]), float(a_end[got])
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
    succeeded: list[np.ndarray],
    up: set[str],
    slots: Mapping[str, tuple[int, int]],
    capacity: Mapping[str, Mapping[str, float]],
    slotted: bool,
) -> tuple[int, int] | None:
    """(stage, task) of a task of ``job`` that never succeeded (``succeeded[s][t]`` False) and that no node
    in ``up`` can run, or None."""
    for s, stage in enumerate(job.stages):
        kind = 0 if stage.type == "map" else 1
        offset = 0
        for group in stage.tasks:
            idle = np.flatnonzero(~succeeded[s][offset : offset + group.count])
            task = offset + int(idle[0]) if len(idle) else -1
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


def _factors(locs: list[Any], factors: Mapping[Any, float]) -> np.ndarray:
    """Each attempt's locality factor: ``factors[loc]`` for a key of ``factors``, else
    :func:`_rare_factor` (a lookup of every attempt's level at once, :func:`codes`; the others one by one)."""
    known = codes(locs, {key: k for k, key in enumerate(factors)})
    factor = np.take(np.array(list(factors.values()), dtype=float), known)
    for i in np.flatnonzero(known < 0).tolist():
        factor[i] = _rare_factor(locs[i], factors)
    return factor


def _rare_factor(loc: Any, factors: Mapping[Any, float]) -> float:
    """The locality factor of a locality that is no key of ``factors``: a reduce's none (NaN when read
    from Parquet) or NaN, the mark of a locality that is none of 'node', 'rack', 'any'."""
    return math.nan if _has_value(loc) else factors[None]


def _map_phase_last(job: Any) -> int:
    last = 0
    for s, stage in enumerate(job.stages):
        if stage.type == "reduce":
            break
        last = s
    return last


def _has_value(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _same(value: Any, expected: float | None) -> bool:
    if expected is None:
        return not _has_value(value)
    return _has_value(value) and _close(float(value), expected)
