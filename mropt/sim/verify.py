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
  their order, with a slot of its type and the resources for its demand), or ``stalled`` (the
  heartbeat run stopped early: its horizon); an unfinished job without one, or a table
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
    problems: list[str] = []

    def fail(text: str) -> None:
        if len(problems) < _MAX_PROBLEMS:
            problems.append(text)

    # -- the cluster ----------------------------------------------------------------------
    slots: dict[str, tuple[int, int]] = {}
    capacity: dict[str, dict[str, float]] = {}
    speed: dict[str, float] = {}
    rack: dict[str, str] = {}
    for spec in workload.nodes:
        for k in range(spec.count):
            name = spec.id if spec.count == 1 else f"{spec.id}-{k}"
            slots[name] = (spec.map_slots or 0, spec.reduce_slots or 0)
            capacity[name] = dict(spec.resources)
            speed[name] = spec.speed
            rack[name] = spec.rack
    slotted = workload.nodes[0].map_slots is not None
    down: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for fault in workload.faults:
        down[fault.node].append((fault.down, math.inf if fault.up is None else fault.up))
    timing = workload.timing
    factors = {"node": 1.0, "rack": timing.rack_factor, "any": timing.remote_factor, None: 1.0}

    # -- the attempts --------------------------------------------------------------------------
    spec_by_id = {job.id: job for job in workload.jobs}
    a_job, a_stage, a_task = _col(tasks, "job_id"), _col(tasks, "stage"), _col(tasks, "task")
    a_node, a_start, a_end = _col(tasks, "node"), _col(tasks, "start"), _col(tasks, "end")
    a_loc, a_out = _col(tasks, "locality"), _col(tasks, "outcome")
    a_type = _col(tasks, "stage_type")
    successes: dict[tuple[str, int, int], list[int]] = defaultdict(list)
    of_task: dict[tuple[str, int, int], list[int]] = defaultdict(list)
    a_spec = _col(tasks, "speculative") if _has(tasks, "speculative") else [False] * len(a_job)
    sweep: dict[str, list[tuple[float, int, int]]] = defaultdict(list)
    for i in range(len(a_job)):
        job = spec_by_id.get(a_job[i])
        where = f"attempt {i} (job {a_job[i]!r}, stage {a_stage[i]}, task {a_task[i]})"
        if job is None:
            fail(f"{where}: no such job in the workload")
            continue
        node = a_node[i]
        if node not in slots:
            fail(f"{where}: node {node!r} is not in the cluster")
            continue
        start, end = float(a_start[i]), float(a_end[i])
        if start < job.submit_time:
            fail(f"{where}: starts at {start:g}, before its job's submit time {job.submit_time:g}")
        if end < start:
            fail(f"{where}: ends at {end:g}, before it starts at {start:g}")
        if not 0 <= a_stage[i] < len(job.stages):
            fail(f"{where}: the job has no such stage")
            continue
        stage = job.stages[a_stage[i]]
        if a_type[i] != stage.type:
            fail(f"{where}: stage type {a_type[i]!r}, the workload says {stage.type!r}")
        if not 0 <= a_task[i] < stage.n_tasks:
            fail(f"{where}: the stage has {stage.n_tasks} tasks")
            continue
        for t_down, t_up in down.get(node, ()):
            if start < t_up and end > t_down:
                fail(f"{where}: runs on {node!r} over [{start:g}, {end:g}] while it is down [{t_down:g}, {t_up:g})")
        if a_out[i] == "succeeded":
            successes[(job.id, a_stage[i], a_task[i])].append(i)
        of_task[(job.id, a_stage[i], a_task[i])].append(i)
        sweep[node].append((start, 1, i))
        sweep[node].append((end, 0, i))

    # attempts of one task: overlaps need a backup; a backup races a running attempt; the winner ends it
    for key, rows in of_task.items():
        if len(rows) < 2:
            continue
        rows.sort(key=lambda r: (float(a_start[r]), float(a_end[r])))
        where = f"job {key[0]!r} stage {key[1]} task {key[2]}"
        for x, r in enumerate(rows):
            s_r, e_r = float(a_start[r]), float(a_end[r])
            for q in rows[:x]:
                overlap = float(a_end[q]) > s_r and e_r > s_r and float(a_end[q]) > float(a_start[q])
                if overlap and not (a_spec[q] or a_spec[r]):
                    fail(f"{where}: attempts {q} and {r} overlap and neither is speculative")
            if a_spec[r] and not any(float(a_start[q]) <= s_r < float(a_end[q]) for q in rows if q != r):
                fail(f"{where}: speculative attempt {r} starts at {s_r:g} while no other attempt of its task runs")
        wins = successes.get(key, [])
        if len(wins) == 1:
            t_win = float(a_end[wins[0]])
            for r in rows:
                if r != wins[0] and float(a_end[r]) > t_win * (1 + _RTOL) + _RTOL:
                    fail(f"{where}: attempt {r} runs until {float(a_end[r]):g}, after the task succeeded at {t_win:g}")

    # capacity sweep per node: ends before starts at the same instant
    for node, points in sweep.items():
        points.sort(key=lambda p: (p[0], p[1]))
        used = [0, 0]
        res: dict[str, float] = defaultdict(float)
        for time, is_start, i in points:
            job = spec_by_id[a_job[i]]
            stage = job.stages[a_stage[i]]
            kind = 0 if stage.type == "map" else 1
            demand = _group_of(stage, a_task[i]).demand
            sign = 1 if is_start else -1
            used[kind] += sign
            for name, amount in demand.items():
                res[name] += sign * amount
            if is_start:
                if slotted and used[kind] > slots[node][kind]:
                    fail(
                        f"node {node!r}: {used[kind]} {stage.type} attempts at {time:g}, it has {slots[node][kind]} slots"
                    )
                for name, amount in res.items():
                    cap = capacity[node].get(name, 0.0)
                    if amount > cap * (1 + _RTOL) + _RTOL:
                        fail(f"node {node!r}: {amount:g} {name} in use at {time:g}, it has {cap:g}")

    # -- jobs --------------------------------------------------------------------------------------
    j_id = _col(jobs, "job_id")
    j_acc, j_fin, j_mapend = _col(jobs, "accepted"), _col(jobs, "finish"), _col(jobs, "map_end")
    j_ontime, j_benefit = _col(jobs, "on_time"), _col(jobs, "benefit")
    j_dropped = _col(jobs, "dropped") if _has(jobs, "dropped") else [False] * len(j_id)
    j_cause = _col(jobs, "unfinished_cause") if _has(jobs, "unfinished_cause") else [""] * len(j_id)
    up_at_end = _up_at_end(workload, slots)
    if sorted(j_id) != sorted(spec_by_id):
        fail("jobs table: its job ids are not the workload's")
    attempts_of: dict[str, list[int]] = defaultdict(list)
    for i, jid in enumerate(a_job):
        attempts_of[jid].append(i)
    total = 0.0
    late: list[str] = []
    slowstart = timing.reduce_slowstart is not None
    for r, jid in enumerate(j_id):
        job = spec_by_id.get(jid)
        if job is None:
            continue
        accepted, dropped = bool(j_acc[r]), bool(j_dropped[r])
        if not accepted and attempts_of.get(jid):
            fail(f"job {jid!r}: rejected, yet it has {len(attempts_of[jid])} attempts")
        finish_expected: float | None = None
        if accepted and not dropped:
            complete = True
            prev_end = job.submit_time
            for s, stage in enumerate(job.stages):
                ends = []
                for t in range(stage.n_tasks):
                    wins = successes.get((jid, s, t), [])
                    if len(wins) != 1:
                        complete = False
                        if len(wins) > 1 or _has_value(j_fin[r]):
                            fail(f"job {jid!r}: stage {s} task {t} succeeded {len(wins)} times")
                        break
                    ends.append(float(a_end[wins[0]]))
                if not complete:
                    break
                for i in attempts_of[jid]:
                    if a_stage[i] != s:
                        continue
                    if float(a_end[i]) < prev_end and a_out[i] == "succeeded":
                        fail(
                            f"job {jid!r}: stage {s} attempt {i} ends at {a_end[i]:g}, before stage {s - 1} ends at {prev_end:g}"
                        )
                    if not slowstart and float(a_start[i]) < prev_end and s > 0:
                        fail(
                            f"job {jid!r}: stage {s} attempt {i} starts at {a_start[i]:g}, before stage {s - 1} ends at {prev_end:g}"
                        )
                    if a_out[i] == "succeeded" and not (slowstart and stage.type == "reduce" and s > 0):
                        base = _group_of(stage, a_task[i]).duration / speed[a_node[i]] * factors[a_loc[i]]
                        took = float(a_end[i]) - float(a_start[i])
                        if not (
                            _close(took, base)
                            or (timing.straggler_rate > 0 and _close(took, base * timing.straggler_slowdown))
                        ):
                            fail(f"job {jid!r}: attempt {i} took {took:g}, the model gives {base:g}")
                prev_end = max(ends)
                if s == _map_phase_last(job) and not _same(j_mapend[r], prev_end):
                    fail(f"job {jid!r}: map_end {j_mapend[r]} but its map phase ends at {prev_end:g}")
            if complete:
                finish_expected = prev_end
            if not _same(j_fin[r], finish_expected):
                fail(f"job {jid!r}: finish {j_fin[r]} but its last task ends at {finish_expected}")
            if not complete and not _has_value(j_fin[r]):
                cause = j_cause[r] or ""
                if cause == "no_node":
                    if _stuck_task(job, successes, up_at_end, slots, capacity, slotted) is None:
                        fail(f"job {jid!r}: unfinished for cause 'no_node', yet a node up at the end can run each task")
                elif cause != "stalled":
                    fail(
                        f"job {jid!r}: accepted, not dropped, yet unfinished with no stated cause "
                        f"(unfinished_cause {cause!r}; 'no_node' or 'stalled' expected)"
                    )
        if (j_cause[r] or "") and (finish_expected is not None or not accepted or dropped):
            fail(f"job {jid!r}: unfinished_cause {j_cause[r]!r} for a job that is finished, rejected or dropped")
        value = job.benefit or 0.0
        if not accepted:
            earned = 0.0
        elif job.deadline is None:
            earned = value if finish_expected is not None else -workload.alpha * value
        else:
            met = finish_expected is not None and _on_time(finish_expected, job.deadline)
            if _has_value(j_ontime[r]) and bool(j_ontime[r]) != met:
                fail(
                    f"job {jid!r}: on_time {j_ontime[r]} but finish {finish_expected} against deadline {job.deadline:g}"
                )
            if not met:
                late.append(jid)
            earned = value if met else -workload.alpha * value
        if not _close(float(j_benefit[r]), earned):
            fail(f"job {jid!r}: benefit {j_benefit[r]} but eq. 1 gives {earned:g}")
        total += earned
    return Verdict(objective=total, problems=problems, checked_schedule=True, late=late)


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
