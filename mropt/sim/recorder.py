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
  ``capacity`` (slots of the nodes up; for a pool, the cluster's). The rows are built after
  the run from the attempts that ended (:meth:`Recorder.keep_row_marks`,
  :mod:`mropt.sim.utilisation_rows`), or written at the end of every instant (:meth:`flush`,
  with :meth:`started` and :meth:`ended` counting each pool's busy slots) when the engine is
  asked for them live (``Simulation(utilisation_rows="live")``, the reference): the same rows.

The engine hands over attempt objects (a batch of k tasks is one object, ``mropt.sim.engine``);
the recorder keeps one entry per object ending, as typed columns without an object per attempt
(:mod:`mropt.sim.ended_attempts`), and builds the per-attempt columns from them when read, one
row per task, in the order the tasks ended: the same rows as an unbatched run. The event-log
hash reads them a piece at a time, the attempt table is built as Arrow columns a row group at a
time (:mod:`mropt.sim.tasks_table`), so a replay of millions of attempts makes no Python object
per attempt; ``a_job``, ``a_task``, ... give a column as a list, for small runs.

A job's deadline is met when ``finish <= deadline * (1 + TIME_RTOL)``
(:func:`mropt.model.tolerance.deadline_limit`, ``docs/tolerances.md``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from mropt.model.tolerance import deadline_limit
from mropt.model.workload import WorkloadInstance, WorkloadJob
from mropt.sim.ended_attempts import EndedAttempts
from mropt.sim.spilled_rows import SpilledRows
from mropt.sim.state import DROPPED, REJECTED, SLOT_TYPES, WAITING, Job
from mropt.sim.unfinished import unfinished_causes
from mropt.sim.utilisation_rows import RowMarks, build_rows, epochs_bound, row_pools

if TYPE_CHECKING:
    from mropt.sim.engine import Attempt, Simulation

OUTCOMES = ("succeeded", "killed", "failed")
#: attempt rows hashed at a time (:meth:`Recorder.event_log_hash`)
HASH_PIECE = 1 << 18
#: utilisation rows kept in lists before they move into typed arrays (``Recorder._store_rows``)
UTILISATION_CHUNK = 1 << 16
#: the most utilisation rows built after the run that a read to the end keeps for the next reads
#: (``Recorder._built_rows``; 21 bytes a row: 88 MB at most): the summary reads them and ``--out``
#: writes them; a day of few pools has a few million (the Alibaba day under ``drf``: 1.8 M, under
#: ``ddrf`` 2.2 M), one of many pools more (under ``fair``: 23 M, built again at each read)
KEEP_BUILT_ROWS = 1 << 22
_ROW_TYPES = (np.float64, np.int8, np.intc, np.int64, np.int64)  # time, slot type, pool, busy, capacity
#: busy and capacity are kept as int32 where a block's values fit (counts of slots and attempts):
#: 21 bytes a row instead of 29 (the Alibaba day: 1.8 M rows); read back as int64
_NARROW = np.iinfo(np.int32)
_OUTCOME_CODE = {name: k for k, name in enumerate(OUTCOMES)}


def _narrow(block: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """A block of utilisation rows as kept: busy and capacity as int32 where the block's values fit."""
    for k in (3, 4):
        values = block[k]
        if not len(values) or (values.min() >= _NARROW.min and values.max() <= _NARROW.max):
            block[k] = values.astype(np.int32)
    return tuple(block)


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

    def __init__(self, sim: Simulation, live: bool = True, rows: bool | None = None) -> None:
        """``live``: the utilisation rows are written live, through :meth:`started`,
        :meth:`ended` and :meth:`flush`; ``rows`` (default: ``live``): the run has utilisation
        rows, live or built after it (:meth:`keep_row_marks`)."""
        self.sim = sim
        self._rows_live = live  # rows written live, at each instant (not: the run has rows, ``_rows``)
        self._rows = live if rows is None else rows
        # the attempts that ended, as typed columns (a replay of millions of tasks keeps no
        # attempt object); the columns (a_job, ...) are built from them at each read
        self.ended_attempts = EndedAttempts()
        self._add = self.ended_attempts.add
        if not live:  # no pool counts to keep: an ending goes to the store in one call (issue 32)
            self.ended = self._add  # type: ignore[method-assign,assignment]
        # utilisation rows
        self.u_time: list[float] = []
        self.u_type: list[int] = []
        self.u_pool: list[int] = []
        self.u_busy: list[int] = []
        self.u_cap: list[int] = []
        self._u_blocks: list[tuple[np.ndarray, ...]] = []  # earlier rows, typed (``_store_rows``)
        self._pools: dict[str, int] = {"*": 0}
        self._marks: RowMarks | None = None  # rows built at each read, or kept at the first (``keep_row_marks``)
        self._built_pools: tuple[dict[str, int], np.ndarray, np.ndarray] | None = None  # (``row_pools``)
        self._used: tuple[np.ndarray, np.ndarray] | None = None  # (``utilisation_used``)
        self._kept_rows: list[tuple[np.ndarray, ...]] | None = None  # (``_built_rows``)
        self._spilled: SpilledRows | None = None  # rows a compiled run wrote as it ran (``keep_spilled_rows``)
        self._pool_busy: dict[tuple[int, int], int] = {}
        self._changed: set[tuple[int, int]] = set()
        self._last_total = [-1, -1, -1, -1]
        self._skip_flush = False  # (``skip_next_flush``)
        self.job_end_order: list[int] = []

    @property
    def utilisation(self) -> bool:
        """Whether the run has utilisation rows (written live or built after it)."""
        return self._rows

    # -- hooks called by the engine ---------------------------------------------------------
    def started(self, attempt: Attempt, job: Job) -> None:
        """One more task of ``attempt`` started (called only when the rows are written live)."""
        pools = self._pools
        key = (pools.setdefault(job.pool, len(pools)), attempt.type)
        self._pool_busy[key] = self._pool_busy.get(key, 0) + 1
        self._changed.add(key)

    def ended(self, attempt: Attempt, member: int, end: float, outcome: int, count: int = 1) -> None:
        """Member ``member`` of ``attempt`` ended (-1: its ``count`` live members, all at ``end``)."""
        self._add(attempt, member, end, outcome)
        if self._rows_live:
            key = (self._pools[self.sim.jobs[attempt.job].pool], attempt.type)
            self._pool_busy[key] -= count
            self._changed.add(key)

    # -- the attempt columns, in the order the attempts ended -----------------------------------
    @property
    def attempts(self) -> int:
        """Attempt rows kept (one per task of every attempt that ended)."""
        return self.ended_attempts.n_rows

    def last_end(self) -> float:
        """When the last attempt ended (0.0 when none did): the run's makespan."""
        return self.ended_attempts.last_end()

    def attempt_column(self, name: str) -> np.ndarray:
        """Attempt column ``name`` (``job``, ``stage``, ``type``, ``task``, ``id``, ``node``, ``start``,
        ``end``, ``level``, ``spec``, ``outcome``) as a typed numpy array
        (:data:`mropt.sim.ended_attempts.ROW_COLUMNS`), one element per attempt."""
        return self.ended_attempts.rows((name,))[name]

    @property
    def a_job(self) -> list[int]:
        """Job index per attempt row, as a list (likewise ``a_stage``, ``a_type``, ``a_task``, ``a_id``, ...):
        made on each read, for small runs; a long run's analyses take :meth:`attempt_column`."""
        return self.attempt_column("job").tolist()

    @property
    def a_stage(self) -> list[int]:
        return self.attempt_column("stage").tolist()

    @property
    def a_type(self) -> list[int]:
        return self.attempt_column("type").tolist()

    @property
    def a_task(self) -> list[int]:
        return self.attempt_column("task").tolist()

    @property
    def a_id(self) -> list[int]:
        return self.attempt_column("id").tolist()

    @property
    def a_node(self) -> list[int]:
        return self.attempt_column("node").tolist()

    @property
    def a_start(self) -> list[float]:
        return self.attempt_column("start").tolist()

    @property
    def a_end(self) -> list[float]:
        return self.attempt_column("end").tolist()

    @property
    def a_level(self) -> list[int]:
        return self.attempt_column("level").tolist()

    @property
    def a_spec(self) -> list[bool]:
        return self.attempt_column("spec").tolist()

    @property
    def a_outcome(self) -> list[int]:
        return self.attempt_column("outcome").tolist()

    def spans(self) -> dict[str, np.ndarray]:
        """The attempt rows as the engine ended them, without expanding batches.

        One row per attempt that ended alone or per batch whose live members ended together:
        ``job``, ``type``, ``level``, ``outcome``, ``start``, ``end``, ``count`` (attempts in
        the row) and ``demand`` (rows x ``sim.resources``, one attempt's; 0 without
        demand). Made for analyses of a long run (:mod:`mropt.sim.shares`): a replay of
        millions of tasks has far fewer rows here than in :meth:`tasks_columns`.
        """
        return self.ended_attempts.spans(self.sim.jobs, len(self.sim.resources))

    def span_pieces(self) -> Iterator[dict[str, np.ndarray]]:
        """:meth:`spans` a piece at a time (whole blocks, about 2^16 rows a piece)."""
        return self.ended_attempts.span_pieces(self.sim.jobs, len(self.sim.resources))

    def job_ended(self, job: Job) -> None:
        self.job_end_order.append(job.index)
        if len(self.u_time) >= UTILISATION_CHUNK:
            self._store_rows()

    def _store_rows(self) -> None:
        """Move the utilisation rows from the lists (``flush`` appends to them) into typed arrays:
        done when a job ends and the lists hold :data:`UTILISATION_CHUNK` rows (the Alibaba day
        writes 1.8 million rows, about 100 bytes each in lists, 21 here: busy and capacity as int32
        when the block's values fit, else int64; :meth:`utilisation_blocks` gives them as int64)."""
        rows = (self.u_time, self.u_type, self.u_pool, self.u_busy, self.u_cap)
        self._u_blocks.append(_narrow([np.array(r, dtype=t) for r, t in zip(rows, _ROW_TYPES, strict=True)]))
        for r in rows:
            r.clear()

    def flush(self, now: float) -> None:
        """End of an instant: a utilisation row for every count that changed in it."""
        if not self._rows_live:
            return
        if self._skip_flush:
            self._skip_flush = False
            return
        sim = self.sim
        changed = self._changed
        busy, slots, last = sim.busy, sim.total_slots, self._last_total
        # most instants change no count (a heartbeat that launched nothing): nothing to build
        if not changed and busy[0] == last[0] and busy[1] == last[1] and slots[0] == last[2] and slots[1] == last[3]:
            return
        total = [busy[0], busy[1], slots[0], slots[1]]
        # the rows, appended here: the SWIM day under fifo writes 1.8 million
        u_time, u_type, u_pool, u_busy, u_cap = self.u_time, self.u_type, self.u_pool, self.u_busy, self.u_cap
        if total != last:
            for stype in (0, 1):
                if total[stype] != last[stype] or total[2 + stype] != last[2 + stype]:
                    u_time.append(now)
                    u_type.append(stype)
                    u_pool.append(0)
                    u_busy.append(total[stype])
                    u_cap.append(total[2 + stype])
            self._last_total = total
        if changed:
            pool_busy = self._pool_busy
            for key in sorted(changed) if len(changed) > 1 else changed:
                pool, stype = key
                u_time.append(now)
                u_type.append(stype)
                u_pool.append(pool)
                u_busy.append(pool_busy[key])
                u_cap.append(total[2 + stype])
            changed.clear()

    def keep_row_marks(self, marks: RowMarks) -> None:
        """Keep the engine's marks: the utilisation rows and ``pools`` are built from them and the
        ended attempts (:func:`mropt.sim.utilisation_rows.build_rows`) at each read (``pools``,
        :meth:`utilisation_blocks`), a window of simulated time at a time, and kept only when they
        are few (:data:`KEEP_BUILT_ROWS`): the Alibaba day under ``fair`` has 23 million rows (487
        MiB as :meth:`flush` keeps them, and the build held twice that). ``simulate()`` reads them
        once, for the summary, after it has released the run's locality state
        (``mropt.sim.run.release_locality``); ``--out`` once more. ``u_time``, ... and the blocks
        stay empty."""
        self._marks = marks

    def keep_spilled_rows(self, rows: SpilledRows) -> None:
        """Keep the utilisation rows a compiled run wrote as it ran (:mod:`mropt.sim.spilled_rows`): every
        read (:meth:`utilisation_blocks`) reads them back instead of building them from the marks, which
        stay for :attr:`pools` (``tests/sim/test_compiled_fair_rows.py`` compares the two, row by row)."""
        self._spilled = rows

    def close(self) -> None:
        """Close the utilisation rows' file a compiled run wrote (:meth:`keep_spilled_rows`), removing it;
        nothing else (a recorder without one holds nothing outside memory)."""
        if self._spilled is not None:
            self._spilled.close()

    @property
    def pools(self) -> dict[str, int]:
        """Pool name -> its index in the utilisation rows (``*``, the whole cluster, is 0; the others
        in the order of their first attempt's start)."""
        if self._marks is not None and self._built_pools is None:
            self._built_pools = row_pools(self.ended_attempts, self.sim.jobs)
        return self._pools if self._built_pools is None else self._built_pools[0]

    def _built_rows(self) -> Iterator[tuple[np.ndarray, ...]]:
        """The rows :meth:`flush` would have written, built as they are read (:meth:`keep_row_marks`),
        in blocks of :data:`_ROW_TYPES` of :data:`UTILISATION_CHUNK` rows (the last shorter; one empty
        block when there are none). A read to the end notes the slot types and pools the rows use
        (:meth:`utilisation_used`), and keeps them, read-only, for the next reads when they are at most
        :data:`KEEP_BUILT_ROWS`."""
        from mropt.sim.tasks_table import recut  # (it imports this module)

        if self._kept_rows is not None:
            yield from self._kept_rows
            return
        sim = self.sim
        marks = self._marks
        assert marks is not None
        if self._built_pools is None:
            self._built_pools = row_pools(self.ended_attempts, sim.jobs)
        _, pieces = build_rows(self.ended_attempts, sim.jobs, sim.capacity.initial_slots, marks, self._built_pools)
        rows = 0
        used: tuple[set[int], set[int]] = (set(), set())
        kept: list[tuple[np.ndarray, ...]] | None = []
        for piece in recut(pieces, UTILISATION_CHUNK):
            block = tuple(column.astype(t, copy=False) for column, t in zip(piece, _ROW_TYPES, strict=True))
            used[0].update(np.unique(block[1]).tolist())
            used[1].update(np.unique(block[2]).tolist())
            rows += len(block[0])
            if kept is not None:
                if rows > KEEP_BUILT_ROWS:
                    kept = None
                else:
                    for column in block:
                        column.flags.writeable = False  # (a reader that wrote into them would change the next read)
                    kept.append(block)
            yield block
        if not rows:
            block = tuple(np.zeros(0, dtype=t) for t in _ROW_TYPES)
            if kept is not None:
                kept.append(block)
            yield block
        self._used = (np.array(sorted(used[0]), dtype=_ROW_TYPES[1]), np.array(sorted(used[1]), dtype=_ROW_TYPES[2]))
        self._kept_rows = kept

    def utilisation_used(self) -> tuple[np.ndarray, np.ndarray]:
        """The slot types (int8 codes) and the pools (indices in :attr:`pools`) the utilisation rows
        use, each sorted, once: of rows built after the run, as the last read to the end noted them
        (a read if none was made)."""
        if self._spilled is not None:
            return self._spilled.used()
        if self._marks is not None:
            if self._used is None:
                for _ in self._built_rows():
                    pass
            assert self._used is not None
            return self._used
        blocks = list(self.utilisation_blocks())
        return tuple(np.unique(np.concatenate([b[k] for b in blocks])) for k in (1, 2))  # type: ignore[return-value]

    def skip_next_flush(self) -> None:
        """The next flush does nothing: the changes since the last one belong to an instant the
        engine has still to end (a lone heartbeat ran ahead of it and pushed an event at its own
        time, ``mropt.sim.lone_beats``), not to the one it is ending."""
        self._skip_flush = self._rows_live

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
        """The attempt table as columns, one row per attempt (a batch of k tasks gives k rows): the
        text columns as lists (one string object per distinct value, shared by its rows), the others
        numpy arrays (:meth:`mropt.sim.tasks_table.TasksTable.columns`). ``tasks.parquet`` is written
        from the same :class:`~mropt.sim.tasks_table.TasksTable`, a row group at a time."""
        from mropt.sim.tasks_table import TasksTable

        return TasksTable(self).columns()

    def utilisation_blocks(self) -> Iterator[tuple[np.ndarray, ...]]:
        """The utilisation rows, in order, as blocks of typed arrays: time (float64), slot type (int8
        code), pool (C int, index in ``pools``), busy and capacity (int64)."""
        if self._spilled is not None:
            yield from self._spilled.blocks(UTILISATION_CHUNK)
            return
        if self._marks is not None:
            yield from self._built_rows()
            return
        for block in self._u_blocks:
            yield (*block[:3], block[3].astype(np.int64, copy=False), block[4].astype(np.int64, copy=False))
        rows = (self.u_time, self.u_type, self.u_pool, self.u_busy, self.u_cap)
        yield tuple(np.array(r, dtype=t) for r, t in zip(rows, _ROW_TYPES, strict=True))

    def utilisation_rows_bound(self) -> int:
        """At most how many utilisation rows one (pool, slot type) has (``mropt.sim.utilisation.utilisation_ratio``
        makes its arrays of a type's cluster rows that long): the rows kept, or, built after the run,
        the epochs' bound (:func:`mropt.sim.utilisation_rows.epochs_bound`)."""
        if self._spilled is not None:
            return max(self._spilled.cluster)
        if self._marks is not None:
            return epochs_bound(self.ended_attempts, self._marks)
        return sum(len(block[0]) for block in self._u_blocks) + len(self.u_time)

    def utilisation_arrays(self) -> tuple[np.ndarray, ...]:
        """The utilisation rows as typed arrays, each whole (:meth:`utilisation_blocks`)."""
        return tuple(np.concatenate(parts) for parts in zip(*self.utilisation_blocks(), strict=True))

    def utilisation_columns(self) -> dict[str, Any]:
        names = list(self.pools)
        time, stype, pool, busy, cap = self.utilisation_arrays()
        return {
            "time": time,
            "slot_type": [SLOT_TYPES[t] for t in stype.tolist()],
            "pool": [names[p] for p in pool.tolist()],
            "busy": busy,
            "capacity": cap,
        }

    def event_log_hash(self) -> str:
        """SHA-256 of the run's event log: every attempt and every job outcome, in order.

        Same workload, policy, parameters and seed give the same hash (the engine is deterministic).
        """
        h = hashlib.sha256()
        # each column whole, in turn, as int64 (start, end: float64; spec: bool), read a piece at a time
        for name in ("job", "stage", "task", "id", "node", "level", "outcome", "start", "end", "spec"):
            for piece in self.ended_attempts.chunks(HASH_PIECE, (name,)):
                values = piece[name]
                h.update((values if values.dtype in (np.float64, np.bool_) else values.astype(np.int64)).data)
        for j in self.sim.jobs:
            h.update(f"{j.id}\x00{j.status}\x00{j.reason}\x00{j.finish!r}\x00".encode())
        return h.hexdigest()
