"""The simulator's entry point: :func:`simulate` runs one policy on one workload with one seed.

``simulate(workload_or_admission_instance, policy, params, seed=..., mode=..., plan=...)``
builds the policy (:func:`mropt.sim.policy.make_policy`, parameters checked against their
declarations), runs :class:`mropt.sim.engine.Simulation` and returns a :class:`SimRun`:
the :class:`~mropt.sim.recorder.Recorder` with every table, the summary dict and the wall
time.

**Admission instances** are converted on the fly by
:func:`mropt.instances.workload_convert.to_workload` (the idealised cluster of the
SEQ model, AMB sec. 3: each map and reduce slot a slot of the cluster, no locality penalty, no
stragglers, no faults).

**Plans** (``plan``: a :class:`~mropt.model.solution.Solution`, as ``mropt solve --json``
writes it) are handed to the policy before the run starts (``Policy.use_plan``); a policy
registered with ``needs_plan`` (``seq``) refuses to run without one. A plan that records another
instance's hash, or names jobs the workload lacks, is an :class:`InputError`.

**Before the run**: the run's memory is estimated from the workload
(:func:`mropt.sim.memory.check_memory`: tasks, attempts kept, jobs, nodes, replicas) and a run
above ``max_memory`` (default 16 GiB) is refused; the policy checks that it can run on the
workload (:meth:`mropt.sim.policy.Policy.check_input`: the needs it declared, ``hei``'s history).

**The summary** (the ``mropt simulate --json`` object; a contract for its first eight
keys): ``policy``, ``jobs``, ``accepted``, ``on_time``, ``benefit``, ``makespan``,
``events``, ``wall_time`` (seconds: the run and this summary, which reads the utilisation
rows built after the run), then ``seed``, ``mode``, ``params``, ``rejected``, ``dropped``
(accepted, then dropped by the policy), ``finished``, ``unfinished`` (accepted, neither
finished nor dropped), ``late`` (finished after its deadline), ``attempts``,
``event_log_sha256`` (:meth:`Recorder.event_log_hash`), ``utilisation``, ``ideal`` and
``stopped``:

* ``benefit``: the sum of the jobs' earned benefit, AMB eq. 1 (``mropt.sim.recorder``);
* ``makespan``: the time the last attempt ended (0 when nothing ran);
* ``utilisation``: per slot type, busy slot-seconds over capacity slot-seconds (slots of the
  nodes that are up) on ``[0, makespan]``, from the exact step series of the recorder;
  null for a type without slots; on a cluster of resources, per resource instead (``cpu``,
  ``memory`` for the workload's ``mem``): held over capacity amount-seconds, :func:`resource_ratio`;
* ``on_time``, ``late``: jobs with a deadline that finished by it, or after it; null when no
  job has a deadline (not 0: a trace without deadlines is not "0 on time");
* ``ideal``: AMB sec. 5.1 eq. 4, the fractional knapsack over the jobs with a deadline and
  a benefit: STC(j) = (map work + reduce work) / (speed-weighted map + reduce slots) (the
  SEQ model's ``(M TCm + R TCr)/(M + R)`` with task work in base seconds), ``Max_time`` =
  the latest deadline; null when no job has both, or the cluster has no slots, and for a
  stopped run (the bound is over every job of the workload, not those it submitted). On an
  idealised cluster converted from an admission instance it is the registered ``ideal``
  bound's value;
* ``stopped``: null for a run that reached its last event; ``"until"``, ``"time_limit"`` or
  ``"interrupted"`` for one stopped before (``until``: a simulated time; ``time_limit``:
  wall-clock seconds; Ctrl-C with ``stop_on_interrupt``: :mod:`mropt.sim.watch`), whose
  tables hold what happened by then (:mod:`mropt.sim.engine`: attempts still running end
  then, ``killed``; accepted jobs not finished are ``unfinished``, cause ``stopped``). A
  stopped run's summary adds ``stopped_at`` (the simulated time it stopped at) and
  ``not_submitted`` (jobs whose arrival it did not reach: neither accepted nor rejected; a
  stalled run that left some has it too). ``benefit`` counts an unfinished job as AMB eq. 1
  counts one that never finishes: the run as if it ended there.

A run whose attempts read input replicas (a workload with placement) adds ``locality``
(:func:`locality_shares`): ``attempts``, the attempts (rows of ``tasks.parquet``) with a
locality level, and ``node``, ``rack``, ``any``, the shares of them launched node-local,
rack-local and off-rack: the measure DDRF is about (DDRF paper sec. 4.2, L(E)), the policy
study's ``locality_node`` and ``locality_rack`` (:mod:`mropt.harness.policy_metrics`).

**Speculation** (``speculation``: a rule name of :mod:`mropt.sim.speculation`, default
``none``; ``speculation_params``: its parameters). With a rule other than ``none`` the summary
gains, after ``ideal``: ``speculation`` (the rule's name), ``speculation_params``, ``backups``
(backup attempts started: rows of ``tasks.parquet`` with ``speculative`` true) and
``wasted_work`` (slot-seconds, rounded like the other times: for every task that had two
attempts running when one of them succeeded, the time the other had run when it was killed
at that instant, whichever of the two was the backup; an attempt killed for another reason,
a node failure or preemption, is not counted). With ``none`` the summary and every table are
exactly what they were before speculation existed. ``straggler_draws`` (``stream`` or
``task``; default ``stream`` without a rule, ``task`` with one: :mod:`mropt.sim.engine`)
picks how straggler draws are made; give ``task`` to a run without speculation to compare it
with a rule's run on the same stragglers. The summary records it (``straggler_draws``) when
it is ``task``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mropt.instances.workload_convert import to_workload
from mropt.model.errors import InputError
from mropt.model.solution import Solution
from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.memory import check_memory
from mropt.sim.policy import MODES, make_policy, policy_info
from mropt.sim.recorder import Recorder
from mropt.sim.speculation import make_speculation
from mropt.sim.state import ANY, NODE, RACK, SLOT_TYPES
from mropt.sim.watch import Watch

#: the summary's keys, in order (the first eight are the contract of ``mropt simulate --json``)
SUMMARY_KEYS = (
    "policy",
    "jobs",
    "accepted",
    "on_time",
    "benefit",
    "makespan",
    "events",
    "wall_time",
    "seed",
    "mode",
    "params",
    "rejected",
    "dropped",
    "finished",
    "unfinished",
    "late",
    "attempts",
    "event_log_sha256",
    "utilisation",
    "ideal",
    "stopped",
)


@dataclass
class SimRun:
    """One simulation's outcome: the recorder (tables), the summary and the wall time."""

    workload: WorkloadInstance
    policy: str
    recorder: Recorder
    summary: dict[str, Any]
    wall_time: float
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def simulation(self) -> Simulation:
        return self.recorder.sim


def as_workload(instance: Any) -> WorkloadInstance:
    """The workload itself, or an admission instance converted (``mropt.to_workload``)."""
    if isinstance(instance, WorkloadInstance):
        return instance
    kind = getattr(instance, "kind", None)
    if kind == "admission":
        return to_workload(instance)
    raise InputError(f"simulate: the input must be a workload or an admission instance, got kind {kind!r}")


def read_plan(data: Any, source: str = "plan") -> Solution:
    """A plan (``mropt solve --json`` output) read from its JSON form; one-line errors naming ``source``."""
    if isinstance(data, Solution):
        return data
    try:
        return Solution.from_dict(data)
    except InputError as exc:
        raise InputError(f"{source}: {exc}") from None


def check_plan(plan: Solution, original: Any, workload: WorkloadInstance) -> None:
    """Refuse a plan computed for another instance, or one naming jobs the workload lacks."""
    problem = plan.instance_mismatch(original)
    if problem is not None and original is not workload and plan.instance_mismatch(workload) is None:
        problem = None
    if problem is not None and plan.instance_hash in _recorded_hashes(workload.meta):
        problem = None  # a workload converted from the plan's instance records its hash
    if problem is not None:
        raise InputError(f"--plan: {problem}")
    ids = {job.id for job in workload.jobs}
    for job_id in (*plan.accepted, *(plan.sequence or ())):
        if job_id not in ids:
            raise InputError(f"--plan: the plan names job {job_id!r}, which the workload does not have")


def _recorded_hashes(meta: Mapping[str, Any], depth: int = 0) -> set[str]:
    """Strings recorded in a workload's ``meta`` (two levels deep): a converter keeps its source's hash there."""
    out: set[str] = set()
    for value in meta.values():
        if isinstance(value, str) and len(value) == 64:
            out.add(value)
        elif isinstance(value, Mapping) and depth < 2:
            out |= _recorded_hashes(value, depth + 1)
    return out


def simulate(
    instance: Any,
    policy: str,
    params: Mapping[str, Any] | None = None,
    *,
    seed: int = 0,
    mode: str | None = None,
    plan: Solution | Mapping[str, Any] | None = None,
    record_utilisation: bool = True,
    speculation: str | None = None,
    speculation_params: Mapping[str, Any] | None = None,
    straggler_draws: str | None = None,
    max_memory: int | None = None,
    until: float | None = None,
    time_limit: float | None = None,
    progress: bool = False,
    stop_on_interrupt: bool = False,
) -> SimRun:
    """Run ``policy`` (a registered name, ``mropt policies``) on a workload or an admission instance.

    See the module docstring for plans, conversion and the summary. Bad input (an unknown
    policy or parameter, a mode not ``event``/``heartbeat``, a plan for another instance,
    a policy that needs a plan without one, a workload the policy cannot run,
    :meth:`Policy.check_input`) is a one-line :class:`InputError`, and so is a run whose
    memory estimate exceeds ``max_memory`` bytes (default 16 GiB, :mod:`mropt.sim.memory`),
    refused before the run builds anything.

    ``until`` (simulated seconds >= 0) and ``time_limit`` (wall-clock seconds > 0) stop the run
    early, ``progress`` draws a bar on stderr, and ``stop_on_interrupt`` makes Ctrl-C stop it
    too, keeping what happened (else Ctrl-C raises KeyboardInterrupt): :mod:`mropt.sim.watch`;
    the summary's ``stopped`` says which stopped it.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise InputError(f"simulate: seed must be an integer >= 0, got {seed!r}")
    if mode is not None and mode not in MODES:
        raise InputError(f"simulate: mode must be one of {', '.join(MODES)}, got {mode!r}")
    check_stops(until, time_limit)
    info = policy_info(policy)
    workload = as_workload(instance)
    check_memory(workload, max_memory, speculation=speculation not in (None, "none"), until=until)
    the_plan = None if plan is None else read_plan(plan)
    if the_plan is not None:
        check_plan(the_plan, instance, workload)
    elif info.needs_plan:
        raise InputError(
            f"policy {policy!r} executes a plan: give one (--plan SOLUTION.json from `mropt solve --json`)"
        )
    rule = make_speculation(speculation, speculation_params)
    pol = make_policy(policy, params)
    pol.check_input(workload)
    if the_plan is not None:
        pol.use_plan(the_plan)
    start = time.perf_counter()
    sim = Simulation(
        workload,
        pol,
        seed=seed,
        mode=mode,
        record_utilisation=record_utilisation,
        speculation=rule,
        straggler_draws=straggler_draws,
        until=until,
        watch=Watch(time_limit=time_limit, progress=progress, stop_on_interrupt=stop_on_interrupt)
        if time_limit is not None or progress or stop_on_interrupt
        else None,
    )
    recorder = sim.run()
    release_locality(sim)  # (before the summary reads the utilisation rows: Recorder.keep_row_marks)
    # the summary reads the utilisation rows, built as they are read: its time is the run's too
    summary = summarise(recorder, policy, pol.params, 0.0)
    wall = time.perf_counter() - start
    summary["wall_time"] = wall
    return SimRun(workload, policy, recorder, summary, wall, dict(pol.params))


def release_locality(sim: Simulation) -> None:
    """Drop what only the run's launches read, once it has returned: every stage's input replicas
    and locality stacks (:mod:`mropt.sim.state`). No table, summary or check reads them (the
    attempts' locality is in the recorder's store), and generated placement
    (:mod:`mropt.sim.placement`) is one array for the whole workload, held by the stages' views of
    it: 60 MiB on the Alibaba 2017 day, freed before the summary and ``--out`` build their pieces
    (issue 32). Called by :func:`simulate` only: a :class:`Simulation` is not run twice."""
    for job in sim.jobs:
        for stage in job.stages:
            stage.replicas = None
            stage.drop_locality()


def check_stops(until: Any, time_limit: Any) -> None:
    """``until`` a number >= 0 and ``time_limit`` one > 0, each finite or None (one-line InputError)."""
    for name, value, zero in (("until", until, True), ("time_limit", time_limit, False)):
        if value is None:
            continue
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or value < 0 or (value == 0 and not zero):
            raise InputError(f"simulate: {name} must be a number of seconds {'>= 0' if zero else '> 0'}, got {value!r}")


# -- the summary -----------------------------------------------------------------------------
def summarise(recorder: Recorder, policy: str, params: Mapping[str, Any], wall_time: float) -> dict[str, Any]:
    """The summary dict of a finished run (module docstring)."""
    sim = recorder.sim
    jobs = recorder.jobs_columns()
    accepted = np.asarray(jobs["accepted"], dtype=bool)
    dropped = np.asarray(jobs["dropped"], dtype=bool)
    finish = np.asarray(jobs["finish"], dtype=float)
    finished = accepted & ~np.isnan(finish)
    on_time = np.array([v is True for v in jobs["on_time"]], dtype=bool)
    late = np.array([v is False for v in jobs["on_time"]], dtype=bool) & finished
    deadlines = bool((~np.isnan(np.asarray(jobs["deadline"], dtype=float))).any())  # else on_time, late: null
    makespan = recorder.last_end()
    not_submitted = sum(1 for d in jobs["decision"] if d == "not_submitted")
    out: dict[str, Any] = {
        "policy": policy,
        "jobs": int(jobs["_n"]),
        "accepted": int(accepted.sum()),
        "on_time": int(on_time.sum()) if deadlines else None,
        "benefit": _plain(float(np.sum(jobs["benefit"]))),
        "makespan": _plain(makespan),
        "events": int(sim.events),
        "wall_time": wall_time,
        "seed": int(sim.seed),
        "mode": sim.mode,
        "params": {k: _json_value(v) for k, v in params.items()},
        "rejected": int((~accepted).sum()) - not_submitted,
        "dropped": int(dropped.sum()),
        "finished": int(finished.sum()),
        "unfinished": int((accepted & ~dropped & np.isnan(finish)).sum()),
        "late": int(late.sum()) if deadlines else None,
        "attempts": recorder.attempts,
        "event_log_sha256": recorder.event_log_hash(),
        "utilisation": {**utilisation_ratio(recorder, makespan), **resource_ratio(recorder, makespan)},
        "ideal": ideal_benefit(sim.workload) if sim.stopped is None else None,  # eq. 4 is over every job
        "stopped": sim.stopped,
    }
    locality = locality_shares(recorder)
    if locality is not None:
        out["locality"] = locality
    if sim.stopped is not None:
        out["stopped_at"] = float(sim.now)  # exact (not rounded): verify compares submit times with it
    if sim.stopped is not None or not_submitted:
        out["not_submitted"] = not_submitted
    if sim.straggler_draws != "stream":
        out["straggler_draws"] = sim.straggler_draws
    rule = sim.speculation
    if rule is not None:
        out["speculation"] = rule.name
        out["speculation_params"] = {k: _json_value(v) for k, v in rule.params.items()}
        out["backups"] = int(sim.backups)
        out["wasted_work"] = _plain(float(sim.wasted_work))
    if sim.stalled:
        out["stalled"] = True
    return out


def locality_shares(recorder: Recorder) -> dict[str, Any] | None:
    """The summary's ``locality`` (module docstring), None when no attempt has a level (no replicas).

    Counted on the recorder's entries (one per attempt, or per batch with its attempt count), not
    on expanded rows; the shares are the quotients of these exact counts, as ``run_metrics``'s."""
    store = recorder.ended_attempts
    level, count = store.column("level"), store.column("count")  # (int8 and int32: no widened copies,
    # a mask a level: the Alibaba day's 7.8 M entries would make 190 MB of int64/float64 temporaries)
    counts = {lvl: int(count[level == lvl].sum(dtype=np.int64)) for lvl in (NODE, RACK, ANY)}
    have = sum(counts.values())
    if not have:
        return None
    shares = {name: _plain(counts[lvl] / have) for lvl, name in ((NODE, "node"), (RACK, "rack"), (ANY, "any"))}
    return {"attempts": have, **shares}


def utilisation_ratio(recorder: Recorder, horizon: float) -> dict[str, float | None]:
    """Busy over capacity slot-seconds per slot type on [0, horizon], from the cluster-wide step series.

    Empty for a workload whose nodes give resources, not slots (:func:`resource_ratio` measures it).
    A slot type's cluster-wide rows (pool ``*``, index 0 of ``Recorder.pools``) are gathered from the
    recorder's typed blocks (:meth:`Recorder.utilisation_blocks`), only their time, busy and capacity
    columns: the SWIM day's 1.8 million rows are never made Python strings nor copied whole.
    """
    workload = recorder.sim.workload
    if not workload.uses_slots and any(spec.resources for spec in workload.nodes):
        return {}
    if horizon <= 0:
        return {name: None for name in SLOT_TYPES}
    # per slot type, the cluster's rows read a block at a time (the rows may be built as they are
    # read): each row's width min(next time, horizon) - min(its time, horizon), the last row's
    # horizon - min(its time, horizon), negative ones 0, and its busy slots, each written into an
    # array made once at the rows' bound; the capacity kept as runs of one value. The same floats
    # as from the whole columns: np.dot over whole float64 arrays (its sum's order is BLAS's).
    bound = recorder.utilisation_rows_bound()
    picked = [_ClusterRows(horizon, bound) for _ in SLOT_TYPES]
    for block in recorder.utilisation_blocks():
        cluster = block[2] == 0
        for code, rows in enumerate(picked):
            at = cluster & (block[1] == code)
            rows.add(block[0][at], block[3][at], block[4][at])
    out: dict[str, float | None] = {}
    for name, rows in zip(SLOT_TYPES, picked, strict=True):
        out[name] = rows.ratio()
    return out


class _ClusterRows:
    """One slot type's cluster-wide rows for :func:`utilisation_ratio`, added a block at a time.

    Each row's width and busy slots are written into a float64 array of ``bound`` rows made once
    (``np.empty``: a page is resident once written, so the arrays cost the rows read, not the
    bound), its capacity into runs of one value (it moves only when a node goes down or up). The
    ratio then needs nothing more: the busy dot over the two arrays, then the capacities written
    over the busy slots and their dot. That is 16 bytes a row at most, where the rows gathered in
    pieces, joined, then their capacity made floats held 24, two columns' pieces and their copies
    at once (the Alibaba day under ``fair``: 6.1 million cluster rows; its peak was that step's,
    ``benchmarks/RESULTS.md``)."""

    def __init__(self, horizon: float, bound: int) -> None:
        self.horizon = horizon
        self.width = np.empty(bound)  # (each row's, once the next row is read)
        self.busy = np.empty(bound)
        self.n = 0
        #: the capacity's runs: (value, the first row after the run); the last run ends at ``n``
        self.runs: list[tuple[int, int]] = []
        self.first: float | None = None
        self.last = 0.0  # min(time, horizon) of the last row added

    def add(self, time: np.ndarray, busy: np.ndarray, capacity: np.ndarray) -> None:
        k = len(time)
        if not k:
            return
        n = self.n
        if n + k > len(self.width):  # (never within Recorder.utilisation_rows_bound; any other caller's)
            self.width, self.busy = (np.concatenate([a[:n], np.empty(n + k)]) for a in (self.width, self.busy))
        edge = np.minimum(time, self.horizon)
        if self.first is None:
            self.first = float(time[0])
        else:
            self.width[n - 1] = edge[0] - self.last  # (the width of the row before)
        self.width[n : n + k - 1] = np.diff(edge)
        self.last = edge[-1]
        self.busy[n : n + k] = busy
        moved = (np.flatnonzero(capacity[1:] != capacity[:-1]) + 1).tolist()
        runs = self.runs
        for value, stop in zip(capacity[[0, *moved]].tolist(), [*moved, k], strict=True):
            if runs and runs[-1][0] == value:
                runs[-1] = (value, n + stop)
            else:
                runs.append((value, n + stop))
        self.n = n + k

    def ratio(self) -> float | None:
        """Busy over capacity slot-seconds on [0, horizon] (None without rows or capacity)."""
        if self.first is None:
            return None
        n = self.n
        width = self.width[:n]
        width[n - 1] = self.horizon - self.last
        width[width < 0] = 0.0
        values = self.busy[:n]
        busy = float(np.dot(values, width))
        start = 0
        for value, stop in self.runs:  # the capacities, over the busy slots
            values[start:stop] = value
            start = stop
        # before the first row the cluster held its initial capacity and nothing ran
        lead = self.first if self.first > 0 else 0.0
        capacity = float(np.dot(values, width)) + float(values[0]) * min(lead, self.horizon)
        return _plain(busy / capacity) if capacity > 0 else None


def resource_name(name: str, resources: Sequence[str]) -> str:
    """The summary's key of a resource: ``memory`` for the workload's ``mem`` (unless it has both), else its name."""
    return "memory" if name == "mem" and "memory" not in resources else name


def resource_ratio(recorder: Recorder, horizon: float) -> dict[str, float | None]:
    """Per resource (``cpu``, ``memory``, ...): held over capacity amount-seconds on [0, horizon].

    An attempt holds its demand on its node over [start, end) (:mod:`mropt.sim.capacity`): the
    held amount-seconds are the sum over attempts of demand x (min(end, T) - min(start, T)),
    T = ``horizon``. The capacity is that of the nodes up (as for slots): each node's amount
    times the time it was up in [0, T], replaying the workload's ``faults`` in the engine's
    order (downs before ups at one instant, a down of a node already down and an up of a node
    up ignored). None when T is 0 or the resource has no capacity. Empty without resources.
    """
    sim = recorder.sim
    names = list(sim.resources)
    if not names:
        return {}
    if horizon <= 0:
        return {resource_name(r, names): None for r in names}
    held = _held(recorder, horizon, len(names))
    amounts = np.array(
        [[spec.resources.get(r, 0.0) for r in names] for spec in sim.workload.nodes for _ in range(spec.count)]
    )
    up_time = _up_time(sim.workload, horizon)
    capacity = up_time @ amounts if len(amounts) else np.zeros(len(names))
    return {
        resource_name(r, names): _plain(float(held[k] / capacity[k])) if capacity[k] > 0 else None
        for k, r in enumerate(names)
    }


def _held(recorder: Recorder, horizon: float, n_res: int) -> np.ndarray:
    """Per resource, the sum over the spans of demand x count x (min(end, T) - min(start, T)), the
    sum numpy makes of the spans' rows at once, made a piece of the spans at a time: numpy adds
    the rows of a C array of two or more columns one after the other down axis 0, as a running
    sum over the pieces does (``np.cumsum``, from the first row); one column it sums pairwise,
    so a single resource's rows are gathered and summed at once."""
    pieces = _held_pieces(recorder, horizon)
    if n_res == 1:
        return np.concatenate([np.zeros((0, 1)), *pieces]).sum(axis=0)
    held: np.ndarray | None = None  # the running sum's last row
    for piece in pieces:
        held = np.cumsum(piece if held is None else np.vstack([held, piece]), axis=0)[-1:]
    return np.zeros(n_res) if held is None else held[0]


def _held_pieces(recorder: Recorder, horizon: float) -> Iterator[np.ndarray]:
    """The spans' held amount-seconds (spans x resources), a piece of the spans at a time."""
    for spans in recorder.span_pieces():
        width = np.minimum(spans["end"], horizon) - np.minimum(spans["start"], horizon)
        yield spans["demand"] * (spans["count"] * np.maximum(width, 0.0))[:, None]


def _up_time(workload: WorkloadInstance, horizon: float) -> np.ndarray:
    """Seconds each node (in :attr:`WorkloadInstance.node_ids` order) was up in [0, horizon]."""
    index = {node: k for k, node in enumerate(workload.node_ids)}
    events = []  # (time, 0 down / 1 up, order, node): the engine's order of one instant
    for k, fault in enumerate(workload.faults):
        events.append((fault.down, 0, k, index[fault.node]))
        if fault.up is not None:
            events.append((fault.up, 1, k, index[fault.node]))
    up = np.full(len(index), horizon)
    down_since: dict[int, float] = {}
    for t, kind, _, node in sorted(events):
        if kind == 0 and node not in down_since:
            down_since[node] = t
        elif kind == 1 and node in down_since:
            start = down_since.pop(node)
            up[node] -= max(0.0, min(t, horizon) - min(start, horizon))
    for node, start in down_since.items():
        up[node] -= max(0.0, horizon - min(start, horizon))
    return up


def ideal_benefit(workload: WorkloadInstance) -> float | None:
    """AMB eq. 4 on a workload (module docstring); None when it does not apply."""
    if not workload.uses_slots:
        return None
    slots = sum(((spec.map_slots or 0) + (spec.reduce_slots or 0)) * spec.speed * spec.count for spec in workload.nodes)
    if slots <= 0:
        return None
    items = []
    for k, job in enumerate(workload.jobs):
        if job.deadline is None or job.benefit is None:
            continue
        work = sum(g.duration * g.count for stage in job.stages for g in stage.tasks)
        items.append((job.benefit, work / slots, k))
    if not items:
        return None
    max_time = max(job.deadline for job in workload.jobs if job.deadline is not None)
    items.sort(key=lambda item: (-item[0] / item[1], item[2]))
    used = total = 0.0
    for benefit, stc, _ in items:
        if used + stc <= max_time:
            used += stc
            total += benefit
        else:
            total += (max_time - used) / stc * benefit
            break
    return _plain(total)


def _plain(x: float) -> float:
    """A finite float as JSON writes it (rounded to 12 significant digits: sums of float times)."""
    if not math.isfinite(x):
        return x
    return float(f"{x:.12g}")


def _json_value(v: Any) -> Any:
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): _json_value(x) for k, x in v.items()}
    return str(v)
