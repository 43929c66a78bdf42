"""The attempts that ended, kept as typed columns until the tables are built (the recorder's store).

A replay of a production trace ends millions of attempts, and ``tasks.parquet`` needs every
one, so the :class:`~mropt.sim.recorder.Recorder` keeps them to the end of the run, and what
it keeps per attempt is most of the run's memory (issue 32: the Alibaba 2017 day's 10.5
million tasks). :class:`EndedAttempts` keeps no Python object per attempt or per batch.

One *entry* per ``Recorder.ended`` call, in the order they came: an attempt that ended alone
(or one member of a batch, :mod:`mropt.sim.attempts`), or the live members of a batch that
ended together. What an entry's rows share (job, stage, slot type, first attempt id, start,
end, locality level, speculative, outcome, row count) is one element of a C-typed array each;
its rows' tasks and nodes go, in member order, to two C-int member columns. The rows' attempt
ids are consecutive from the first, except in a batch that lost members to kills, whose ids
are kept apart (``gaps``). That is 48 bytes an attempt that ended alone, and 44 bytes a batch
plus 8 a member (an attempt object and a row tuple per batch, and 60 bytes per lone attempt,
before).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from mropt.sim.attempts import Attempt
    from mropt.sim.state import Job

#: an entry's columns (array type codes), in the order of ``EndedAttempts._appends``
ENTRY_FIELDS = (
    ("job", "i"),
    ("stage", "i"),
    ("type", "b"),
    ("id", "q"),
    ("start", "d"),
    ("end", "d"),
    ("level", "b"),
    ("spec", "b"),
    ("outcome", "b"),
    ("count", "i"),
)
_DTYPE = {"q": np.int64, "i": np.intc, "b": np.int8, "d": np.float64}


def _np(values: array[Any]) -> np.ndarray:
    """An ``array``'s elements as a numpy array (a view; an empty one of its type when empty)."""
    dtype = _DTYPE[values.typecode]
    return np.frombuffer(values, dtype=dtype) if len(values) else np.zeros(0, dtype=dtype)


class EndedAttempts:
    """The ended attempts' entries and member columns (module docstring)."""

    __slots__ = ("entry", "task", "node", "gaps", "_appends")

    def __init__(self) -> None:
        self.entry: dict[str, array[Any]] = {name: array(code) for name, code in ENTRY_FIELDS}
        self.task = array("i")  # per row, in entry order
        self.node = array("i")
        self.gaps: dict[int, array[int]] = {}  # entry -> its rows' attempt ids, where not consecutive
        self._appends = tuple(self.entry[name].append for name, _ in ENTRY_FIELDS)

    def __len__(self) -> int:
        return len(self.entry["job"])

    def add(self, a: Attempt, member: int, end: float, outcome: int) -> None:
        """Member ``member`` of ``a`` ended alone (the attempt itself when single), or with
        ``member`` -1 every live member of batch ``a`` ended, at ``end`` with ``outcome``."""
        e_job, e_stage, e_type, e_id, e_start, e_end, e_level, e_spec, e_outcome, e_count = self._appends
        if member < 0 and a.n > 1:
            tasks, nodes, dead = a.tasks, a.nodes, a.dead
            assert tasks is not None and nodes is not None
            if dead:
                alive = [m for m in range(a.n) if m not in dead]
                self.gaps[len(self.entry["job"])] = array("q", [a.id + m for m in alive])
                self.task.extend([tasks[m] for m in alive])
                self.node.extend([nodes[m] for m in alive])
                first, count = a.id + alive[0], len(alive)
            else:
                self.task.extend(tasks)
                self.node.extend(nodes)
                first, count = a.id, a.n
        else:
            i = max(member, 0)
            self.task.append(a.task if a.tasks is None else a.tasks[i])
            self.node.append(a.node if a.nodes is None else a.nodes[i])
            first, count = a.id + i, 1
        e_job(a.job)
        e_stage(a.stage)
        e_type(a.type)
        e_id(first)
        e_start(a.start)
        e_end(end)
        e_level(a.level)
        e_spec(a.speculative)
        e_outcome(outcome)
        e_count(count)

    def rows(self) -> dict[str, list[Any]]:
        """One list per column (``job``, ``stage``, ``type``, ``task``, ``id``, ``node``, ``start``,
        ``end``, ``level``, ``spec`` (bools), ``outcome``), one element per attempt, in the order the
        attempts ended."""
        entry = self.entry
        count = _np(entry["count"])
        out: dict[str, list[Any]] = {}
        for name in ("job", "stage", "type"):
            out[name] = np.repeat(_np(entry[name]), count).tolist()
        out["task"] = _np(self.task).tolist()
        ids = np.repeat(_np(entry["id"]), count)
        starts = np.cumsum(count, dtype=np.int64) - count
        ids += np.arange(len(ids), dtype=np.int64) - np.repeat(starts, count)
        for k, gap in self.gaps.items():
            ids[starts[k] : starts[k] + count[k]] = _np(gap)
        out["id"] = ids.tolist()
        out["node"] = _np(self.node).tolist()
        for name in ("start", "end", "level"):
            out[name] = np.repeat(_np(entry[name]), count).tolist()
        out["spec"] = np.repeat(_np(entry["spec"]).astype(bool), count).tolist()
        out["outcome"] = np.repeat(_np(entry["outcome"]), count).tolist()
        return out

    def spans(self, jobs: Sequence[Job], n_res: int) -> dict[str, np.ndarray]:
        """One row per entry (``Recorder.spans``): ``job``, ``type``, ``level``, ``outcome``,
        ``start``, ``end``, ``count`` and ``demand`` (entries x ``n_res``: an attempt's, its
        stage's for its task, as the engine held it; 0 without demand)."""
        entry = self.entry
        out = {name: _np(entry[name]).astype(np.int64) for name in ("job", "type", "level", "outcome", "count")}
        out["start"] = _np(entry["start"]).copy()
        out["end"] = _np(entry["end"]).copy()
        demand = out["demand"] = np.zeros((len(self), n_res))
        if n_res and len(self):
            count = out["count"]
            first_task = _np(self.task)[np.cumsum(count) - count].tolist()
            zero = (0.0,) * n_res
            held = [
                jobs[j].stages[s].demand_of(t) or zero
                for j, s, t in zip(out["job"].tolist(), _np(entry["stage"]).tolist(), first_task, strict=True)
            ]
            demand[:] = held
        return out


__all__ = ["ENTRY_FIELDS", "EndedAttempts"]
