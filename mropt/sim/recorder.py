"""What a simulation records: the job table, the attempt table and the utilisation series.

Columns (the contract of ``jobs.parquet``, ``tasks.parquet`` and ``utilisation.parquet``):

* jobs: ``job_id``, ``submit_time``, ``user``, ``pool``, ``queue``, ``priority``, ``decision``
  (``accepted``, ``rejected``; a dropped job was accepted; ``not_submitted``: the run stopped,
  or stalled, before the job's arrival, ``accepted`` false and benefit 0), ``accepted``,
  ``reason``, ``dropped``, ``first_start``, ``map_end``, ``finish``, ``unfinished_cause`` (why
  an accepted, not dropped job has no ``finish``: ``no_node``, ``stalled``, ``stopped``, or
  ``""``, which verify rejects; ``""`` for every other job; :mod:`mropt.sim.unfinished`),
  ``deadline``, ``on_time``,
  ``lateness`` (finish - deadline; positive when late), ``benefit`` (earned under AMB eq. 1:
  the job's benefit when an accepted job ends by its deadline, ``-alpha`` times it when an
  accepted job ends late, is dropped or never finishes, 0 when rejected), ``job_benefit``
  (the benefit the job offered), ``tasks``, ``ideal_span`` (:func:`ideal_span`: the job's time
  alone on an idle cluster, the denominator of its slowdown);
* tasks (one row per attempt): ``job_id``, ``stage``, ``stage_type``, ``task``, ``attempt``,
  ``node``, ``rack``, ``start``, ``end``, ``locality`` (``node``, ``rack``, ``any``; null for a
  task without input replicas), ``speculative``, ``outcome`` (``succeeded``, ``killed``,
  ``failed``), ``input_mb`` (MB the task reads: its task group's ``input_mb``, default one
  128 MB block, for a map; NaN for a reduce), and on a cluster of resources one column
  ``demand_<name>`` per resource (``demand_cpu``, ``demand_mem``: the amount the attempt held
  on its node from start to end; 0 for a task that demands none of it);
* utilisation: the exact step function of busy slots: a row at every instant where a count
  changed, ``time``, ``slot_type``, ``pool`` (``*`` for the whole cluster), ``busy``,
  ``capacity`` (slots of the nodes up; for a pool, the cluster's).

The engine hands over attempt objects (a batch of k tasks is one object, ``mropt.sim.engine``);
the recorder keeps one entry per object ending and builds the per-attempt columns (``a_job``,
``a_task``, ... and so the tables and the event-log hash) when first read, one row per task,
in the order the tasks ended: the same rows as an unbatched run.

A job's deadline is met when ``finish <= deadline * (1 + TIME_RTOL)``
(:func:`mropt.model.tolerance.deadline_limit`, ``docs/tolerances.md``).
"""

from __future__ import annotations

import hashlib
from array import array
from typing import TYPE_CHECKING, Any

import numpy as np

from mropt.model.tolerance import deadline_limit
from mropt.model.workload import WorkloadInstance, WorkloadJob
from mropt.sim.state import DROPPED, LEVEL_NAMES, REJECTED, SLOT_TYPES, WAITING, Job
from mropt.sim.unfinished import unfinished_causes

if TYPE_CHECKING:
    from mropt.sim.engine import Attempt, Simulation

OUTCOMES = ("succeeded", "killed", "failed")
_OUTCOME_CODE = {name: k for k, name in enumerate(OUTCOMES)}
_ROW_FIELDS = ("job", "stage", "type", "task", "id", "node", "start", "end", "level", "spec", "outcome")
_DTYPE = {"q": np.int64, "i": np.intc, "b": np.int8, "d": np.float64}
#: the typed arrays of attempts that ended alone (array type codes; C ints for the indices but
#: the attempt id: 44 bytes an attempt, not 60, kept to the end of a replay of millions)
_ONE_FIELDS = (
    ("job", "i"),
    ("stage", "i"),
    ("type", "b"),
    ("task", "i"),
    ("id", "q"),
    ("node", "i"),
    ("start", "d"),
    ("end", "d"),
    ("level", "b"),
    ("spec", "b"),
    ("outcome", "b"),
)


def ideal_span(job: WorkloadJob, speed: float) -> float:
    """The job's time alone on an idle, unbounded cluster of nodes of ``speed``: the sum over its
    stages (a chain) of the stage's longest base task duration over ``speed`` (node-local, no
    stragglers); a job's slowdown is its completion time over this (the usual slowdown of
    scheduling studies: response time over the time the job would take alone)."""
    return sum(max(g.duration for g in stage.tasks) for stage in job.stages) / speed


def _ideal_spans(workload: WorkloadInstance) -> np.ndarray:
    """:func:`ideal_span` of every job on the workload's fastest node."""
    speed = max(spec.speed for spec in workload.nodes)
    return np.array([ideal_span(job, speed) for job in workload.jobs], dtype=float)


class Recorder:
    """Collects rows while the engine runs; builds the tables afterwards."""

    def __init__(self, sim: Simulation, utilisation: bool = True) -> None:
        self.sim = sim
        self._utilisation = utilisation
        # attempts that ended alone are kept as columns (``_one``: typed arrays, a few bytes a
        # field, so a replay of millions of tasks keeps no attempt object); a batch whose live
        # members ended together is one row (attempt, -1, end, outcome code) in ``_rows``.
        # ``_order`` lists every entry in the order it ended: k >= 0 the k-th single attempt,
        # -k - 1 the k-th batch row. The columns (a_job, ...) are built when first read.
        self._rows: list[tuple[Attempt, int, float, int]] = []
        self._one: dict[str, array[Any]] = {name: array(code) for name, code in _ONE_FIELDS}
        self._appends = tuple(self._one[name].append for name, _ in _ONE_FIELDS)  # (in that order)
        self._one_demand: list[tuple[float, ...] | None] = []
        self._order = array("q")
        self._built = -1
        self._cols: dict[str, list[Any]] = {}
        # utilisation rows
        self.u_time: list[float] = []
        self.u_type: list[int] = []
        self.u_pool: list[int] = []
        self.u_busy: list[int] = []
        self.u_cap: list[int] = []
        self.pools: dict[str, int] = {"*": 0}
        self._pool_busy: dict[tuple[int, int], int] = {}
        self._changed: set[tuple[int, int]] = set()
        self._last_total = [-1, -1, -1, -1]
        self._skip_flush = False  # (``skip_next_flush``)
        self.job_end_order: list[int] = []

    @property
    def utilisation(self) -> bool:
        """Whether utilisation rows are recorded (``flush`` at the end of every instant)."""
        return self._utilisation

    # -- hooks called by the engine ---------------------------------------------------------
    def started(self, attempt: Attempt, job: Job) -> None:
        """One more task of ``attempt`` started (called only when utilisation is recorded)."""
        key = (self.pools.setdefault(job.pool, len(self.pools)), attempt.type)
        self._pool_busy[key] = self._pool_busy.get(key, 0) + 1
        self._changed.add(key)

    def ended(self, attempt: Attempt, member: int, end: float, outcome: int, count: int = 1) -> None:
        """Member ``member`` of ``attempt`` ended (-1: its ``count`` live members, all at ``end``)."""
        if member < 0 and attempt.n > 1:
            self._order.append(-len(self._rows) - 1)
            self._rows.append((attempt, member, end, outcome))
        else:
            self._order.append(len(self._one_demand))
            i = max(member, 0)
            a_job, a_stage, a_type, a_task, a_id, a_node, a_start, a_end, a_level, a_spec, a_outcome = self._appends
            a_job(attempt.job)
            a_stage(attempt.stage)
            a_type(attempt.type)
            a_task(attempt.task if attempt.tasks is None else attempt.tasks[i])
            a_id(attempt.id + i)
            a_node(attempt.node if attempt.nodes is None else attempt.nodes[i])
            a_start(attempt.start)
            a_end(end)
            a_level(attempt.level)
            a_spec(attempt.speculative)
            a_outcome(outcome)
            self._one_demand.append(attempt.demand)
        if self._utilisation:
            key = (self.pools[self.sim.jobs[attempt.job].pool], attempt.type)
            self._pool_busy[key] -= count
            self._changed.add(key)

    # -- the attempt columns, in the order the attempts ended -----------------------------------
    def _columns(self) -> dict[str, list[Any]]:
        if self._built == len(self._order):
            return self._cols
        cols: dict[str, list[Any]] = {name: [] for name in _ROW_FIELDS}
        job, stage, stype, task, aid = cols["job"], cols["stage"], cols["type"], cols["task"], cols["id"]
        node, start, end, level, spec, outcome = (
            cols["node"],
            cols["start"],
            cols["end"],
            cols["level"],
            cols["spec"],
            cols["outcome"],
        )
        one = self._one
        o_job, o_stage, o_type, o_task, o_id, o_node = (
            one["job"],
            one["stage"],
            one["type"],
            one["task"],
            one["id"],
            one["node"],
        )
        o_start, o_end, o_level, o_spec, o_outcome = one["start"], one["end"], one["level"], one["spec"], one["outcome"]
        rows = self._rows
        for k in self._order:
            if k >= 0:
                job.append(o_job[k])
                stage.append(o_stage[k])
                stype.append(o_type[k])
                task.append(o_task[k])
                aid.append(o_id[k])
                node.append(o_node[k])
                start.append(o_start[k])
                end.append(o_end[k])
                level.append(o_level[k])
                spec.append(bool(o_spec[k]))
                outcome.append(o_outcome[k])
                continue
            a, _, t, code = rows[-k - 1]
            assert a.tasks is not None and a.nodes is not None
            if a.dead:
                members = [m for m in range(a.n) if m not in a.dead]
                task.extend([a.tasks[m] for m in members])
                node.extend([a.nodes[m] for m in members])
                aid.extend([a.id + m for m in members])
                n = len(members)
            else:
                task.extend(a.tasks)
                node.extend(a.nodes)
                aid.extend(range(a.id, a.id + a.n))
                n = a.n
            job.extend([a.job] * n)
            stage.extend([a.stage] * n)
            stype.extend([a.type] * n)
            start.extend([a.start] * n)
            end.extend([t] * n)
            level.extend([a.level] * n)
            spec.extend([a.speculative] * n)
            outcome.extend([code] * n)
        self._cols = cols
        self._built = len(self._order)
        return cols

    @property
    def a_job(self) -> list[int]:
        """Job index per attempt row (likewise ``a_stage``, ``a_type``, ``a_task``, ``a_id``, ...)."""
        return self._columns()["job"]

    @property
    def a_stage(self) -> list[int]:
        return self._columns()["stage"]

    @property
    def a_type(self) -> list[int]:
        return self._columns()["type"]

    @property
    def a_task(self) -> list[int]:
        return self._columns()["task"]

    @property
    def a_id(self) -> list[int]:
        return self._columns()["id"]

    @property
    def a_node(self) -> list[int]:
        return self._columns()["node"]

    @property
    def a_start(self) -> list[float]:
        return self._columns()["start"]

    @property
    def a_end(self) -> list[float]:
        return self._columns()["end"]

    @property
    def a_level(self) -> list[int]:
        return self._columns()["level"]

    @property
    def a_spec(self) -> list[bool]:
        return self._columns()["spec"]

    @property
    def a_outcome(self) -> list[int]:
        return self._columns()["outcome"]

    def spans(self) -> dict[str, np.ndarray]:
        """The attempt rows as the engine ended them, without expanding batches.

        One row per attempt that ended alone or per batch whose live members ended together:
        ``job``, ``type``, ``level``, ``outcome``, ``start``, ``end``, ``count`` (attempts in
        the row) and ``demand`` (rows x ``sim.resources``, one attempt's; 0 without
        demand). Made for analyses of a long run (:mod:`mropt.sim.shares`): a replay of
        millions of tasks has far fewer rows here than in :meth:`tasks_columns`.
        """
        n_res = len(self.sim.resources)
        one, rows, order = self._one, self._rows, self._order
        n = len(order)
        out = {
            "job": np.empty(n, np.int64),
            "type": np.empty(n, np.int64),
            "level": np.empty(n, np.int64),
            "outcome": np.empty(n, np.int64),
            "start": np.empty(n),
            "end": np.empty(n),
            "count": np.ones(n, np.int64),
            "demand": np.zeros((n, n_res)),
        }
        where = np.frombuffer(order, dtype=np.int64) if n else np.zeros(0, dtype=np.int64)
        singles = where >= 0
        idx = where[singles]
        for name in ("job", "type", "level", "outcome", "start", "end"):
            column = np.frombuffer(one[name], dtype=_DTYPE[one[name].typecode]) if len(one[name]) else np.zeros(0)
            out[name][singles] = column[idx]
        demand = out["demand"]
        one_demand = self._one_demand
        for r in np.flatnonzero(singles).tolist():
            d = one_demand[order[r]]
            if d is not None:
                demand[r] = d
        for r in np.flatnonzero(~singles).tolist():
            a, _, t, code = rows[-order[r] - 1]
            out["job"][r], out["type"][r], out["level"][r], out["outcome"][r] = a.job, a.type, a.level, code
            out["start"][r], out["end"][r] = a.start, t
            out["count"][r] = a.n - len(a.dead or ())
            if a.demand is not None:
                demand[r] = a.demand
        return out

    def job_ended(self, job: Job) -> None:
        self.job_end_order.append(job.index)

    def flush(self, now: float) -> None:
        """End of an instant: a utilisation row for every count that changed in it."""
        if not self._utilisation:
            return
        if self._skip_flush:
            self._skip_flush = False
            return
        sim = self.sim
        busy, slots, last = sim.busy, sim.total_slots, self._last_total
        # most instants change no count (a heartbeat that launched nothing): nothing to build
        if (
            busy[0] == last[0]
            and busy[1] == last[1]
            and slots[0] == last[2]
            and slots[1] == last[3]
            and not self._changed
        ):
            return
        total = [busy[0], busy[1], slots[0], slots[1]]
        if total != last:
            for stype in (0, 1):
                if total[stype] != self._last_total[stype] or total[2 + stype] != self._last_total[2 + stype]:
                    self._row(now, stype, 0, total[stype], total[2 + stype])
            self._last_total = total
        if self._changed:
            for key in sorted(self._changed):
                pool, stype = key
                self._row(now, stype, pool, self._pool_busy[key], total[2 + stype])
            self._changed.clear()

    def skip_next_flush(self) -> None:
        """The next flush does nothing: the changes since the last one belong to an instant the
        engine has still to end (a lone heartbeat ran ahead of it and pushed an event at its own
        time, ``mropt.sim.lone_beats``), not to the one it is ending."""
        self._skip_flush = self._utilisation

    def _row(self, time: float, stype: int, pool: int, busy: int, cap: int) -> None:
        self.u_time.append(time)
        self.u_type.append(stype)
        self.u_pool.append(pool)
        self.u_busy.append(busy)
        self.u_cap.append(cap)

    def finish(self) -> None:
        """Attempts still running when the run stopped (stalled, or stopped early) are recorded as killed, ending now."""
        sim = self.sim
        killed = _OUTCOME_CODE["killed"]
        for aid, attempt in list(sim.running.of.items()):
            self.ended(attempt, aid - attempt.id, sim.now, killed)

    # -- tables ----------------------------------------------------------------------------
    def jobs_columns(self) -> dict[str, Any]:
        """The job table as columns (see the module docstring)."""
        sim = self.sim
        jobs = sim.jobs
        alpha = sim.workload.alpha
        n = len(jobs)
        deadline = np.array([np.nan if j.deadline is None else j.deadline for j in jobs], dtype=float)
        finish = np.array([np.nan if j.finish is None else j.finish for j in jobs], dtype=float)
        accepted = np.array([j.status != REJECTED and j.status != "waiting" for j in jobs], dtype=bool)
        dropped = np.array([j.status == DROPPED for j in jobs], dtype=bool)
        has_deadline = ~np.isnan(deadline)
        limit = np.where(has_deadline, deadline_limit(np.nan_to_num(deadline, nan=0.0)), np.nan)
        finished = ~np.isnan(finish)
        on_time = np.where(has_deadline, accepted & finished & (finish <= limit), np.nan)
        offered = np.array([np.nan if j.benefit is None else j.benefit for j in jobs], dtype=float)
        value = np.nan_to_num(offered, nan=0.0)
        ok = np.where(has_deadline, on_time == 1.0, finished)
        earned = np.where(accepted, np.where(ok, value, -alpha * value), 0.0)
        return {
            "job_id": [j.id for j in jobs],
            "submit_time": np.array([j.submit for j in jobs], dtype=float),
            "user": [j.user for j in jobs],
            "pool": [j.pool for j in jobs],
            "queue": [j.queue for j in jobs],
            "priority": np.array([j.priority for j in jobs], dtype=np.int64),
            "decision": [
                "accepted" if a else "not_submitted" if j.status == WAITING else "rejected"
                for a, j in zip(accepted, jobs, strict=True)
            ],
            "accepted": accepted,
            "reason": [j.reason for j in jobs],
            "dropped": dropped,
            "first_start": np.array([np.nan if j.first_start is None else j.first_start for j in jobs], dtype=float),
            "map_end": np.array([np.nan if j.map_end is None else j.map_end for j in jobs], dtype=float),
            "finish": finish,
            "unfinished_cause": unfinished_causes(sim),
            "deadline": deadline,
            "on_time": [None if np.isnan(v) else bool(v) for v in on_time],
            "lateness": finish - deadline,
            "benefit": earned,
            "job_benefit": offered,
            "tasks": np.array([j.n_tasks for j in jobs], dtype=np.int64),
            "ideal_span": _ideal_spans(sim.workload),
            "_n": n,
        }

    def tasks_columns(self) -> dict[str, Any]:
        """The attempt table as columns, one row per attempt (a batch of k tasks gives k rows)."""
        sim = self.sim
        ids = [j.id for j in sim.jobs]
        node = np.array(self.a_node, dtype=np.int64)
        racks = np.array(sim.node_rack, dtype=np.int64)
        return {
            "job_id": [ids[j] for j in self.a_job],
            "stage": np.array(self.a_stage, dtype=np.int64),
            "stage_type": [SLOT_TYPES[t] for t in self.a_type],
            "task": np.array(self.a_task, dtype=np.int64),
            "attempt": np.array(self.a_id, dtype=np.int64),
            "node": [sim.node_ids[k] for k in self.a_node],
            "rack": [sim.rack_names[r] for r in racks[node]] if len(node) else [],
            "start": np.array(self.a_start, dtype=float),
            "end": np.array(self.a_end, dtype=float),
            "locality": [LEVEL_NAMES[v] for v in self.a_level],
            "speculative": np.array(self.a_spec, dtype=bool),
            "outcome": [OUTCOMES[k] for k in self.a_outcome],
            "input_mb": self._input_mb(),
            **self._demands(),
        }

    def _demands(self) -> dict[str, np.ndarray]:
        """``demand_<name>`` per resource of the cluster: each attempt's demand (its task group's, as the engine held it)."""
        sim = self.sim
        if not sim.resources:
            return {}
        out = np.zeros((len(self.a_job), len(sim.resources)))
        for row, (job, stage, task) in enumerate(zip(self.a_job, self.a_stage, self.a_task, strict=True)):
            demand = sim.jobs[job].stages[stage].demand_of(task)
            if demand is not None:
                out[row] = demand
        return {f"demand_{name}": out[:, k] for k, name in enumerate(sim.resources)}

    def _input_mb(self) -> np.ndarray:
        """MB each attempt's task reads: its task group's ``input_mb`` (default one block) for a map, NaN for a reduce."""
        spec = self.sim.workload.jobs
        sizes: dict[tuple[int, int], np.ndarray | None] = {}
        out = np.full(len(self.a_job), np.nan)
        for row, (job, stage, task) in enumerate(zip(self.a_job, self.a_stage, self.a_task, strict=True)):
            key = (job, stage)
            if key not in sizes:
                st = spec[job].stages[stage]
                groups = st.tasks
                sizes[key] = (
                    np.repeat([g.task_input_mb for g in groups], [g.count for g in groups])
                    if st.type == "map"
                    else None
                )
            per_task = sizes[key]
            if per_task is not None:
                out[row] = per_task[task]
        return out

    def utilisation_columns(self) -> dict[str, Any]:
        names = list(self.pools)
        return {
            "time": np.array(self.u_time, dtype=float),
            "slot_type": [SLOT_TYPES[t] for t in self.u_type],
            "pool": [names[p] for p in self.u_pool],
            "busy": np.array(self.u_busy, dtype=np.int64),
            "capacity": np.array(self.u_cap, dtype=np.int64),
        }

    def event_log_hash(self) -> str:
        """SHA-256 of the run's event log: every attempt and every job outcome, in order.

        Same workload, policy, parameters and seed give the same hash (the engine is deterministic).
        """
        h = hashlib.sha256()
        for column in (self.a_job, self.a_stage, self.a_task, self.a_id, self.a_node, self.a_level, self.a_outcome):
            h.update(np.asarray(column, dtype=np.int64).tobytes())
        h.update(np.asarray(self.a_start, dtype=float).tobytes())
        h.update(np.asarray(self.a_end, dtype=float).tobytes())
        h.update(np.asarray(self.a_spec, dtype=bool).tobytes())
        for j in self.sim.jobs:
            h.update(f"{j.id}\x00{j.status}\x00{j.reason}\x00{j.finish!r}\x00".encode())
        return h.hexdigest()
