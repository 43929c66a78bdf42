"""The arrays :mod:`mropt.sim.verify` checks a run with: the workload laid out flat, the attempt
table's columns as arrays.

Read from ``mropt.model.workload`` and the output table alone: nothing is shared with the engine,
its state or its recorder. Every task of the workload gets a global number: job ``j``'s stages are
the flat stages ``stage0[j]`` ... ``stage0[j + 1] - 1``, flat stage ``f``'s tasks the global tasks
``task0[f]`` ... ``task0[f + 1] - 1``, and task group ``g`` covers the global tasks from
``group0[g]`` on (its base ``duration``, its ``demand`` one column per name of ``resources``).
A check then looks up an attempt's job, stage, task group and node with array indexing rather
than a walk of the workload per attempt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import Any

import numpy as np

from mropt.model.errors import InputError
from mropt.model.workload import TaskGroup, WorkloadInstance


class Layout:
    """The workload's jobs, stages and task groups as flat arrays (module docstring)."""

    def __init__(self, workload: WorkloadInstance) -> None:
        self.job_index = {job.id: j for j, job in enumerate(workload.jobs)}
        self.resources: list[str] = []  # every resource name a task group demands, first seen first
        column: dict[str, int] = {}
        stage0, task0, group0 = [0], [0], []
        self.stage_type: list[str] = []
        self.groups: list[TaskGroup] = []
        for job in workload.jobs:
            for stage in job.stages:
                self.stage_type.append(stage.type)
                first = task0[-1]
                for group in stage.tasks:
                    group0.append(first)
                    first += group.count
                    self.groups.append(group)
                    for name in group.demand:
                        column.setdefault(name, len(column))
                task0.append(task0[-1] + stage.n_tasks)
            stage0.append(len(self.stage_type))
        self.resources = list(column)
        self.submit = np.array([job.submit_time for job in workload.jobs], dtype=float)
        self.stage0 = np.array(stage0, dtype=np.int64)
        self.n_stages = np.diff(self.stage0)
        self.task0 = np.array(task0, dtype=np.int64)
        self.n_tasks = np.diff(self.task0)
        self.group0 = np.array(group0, dtype=np.int64)
        self.duration = np.array([g.duration for g in self.groups], dtype=float)
        self.demand = np.zeros((len(self.groups), len(column)))
        for g, group in enumerate(self.groups):
            for name, amount in group.demand.items():
                self.demand[g, column[name]] = amount
        self.type_index = {t: c for c, t in enumerate(dict.fromkeys(self.stage_type))}
        self.type_code = np.array([self.type_index[t] for t in self.stage_type], dtype=np.int64)
        self.is_map = np.array([t == "map" for t in self.stage_type], dtype=bool)
        self.is_reduce = np.array([t == "reduce" for t in self.stage_type], dtype=bool)

    def group_of(self, task: np.ndarray) -> np.ndarray:
        """The task group of each global task."""
        return np.searchsorted(self.group0, task, side="right") - 1


class Attempts:
    """The columns of the attempt table (``tasks.parquet``), one row an attempt: ``job``, ``node``,
    ``loc``, ``out`` and ``type`` as Python lists (the words of a problem), ``start`` and ``end`` as
    float arrays, ``stage`` and ``task`` as given (``stage_no`` and ``task_no``: the same as integers,
    -1 where a value is no integer), ``spec`` a bool array, False when the column is absent."""

    def __init__(self, tasks: Mapping[str, Any] | Any) -> None:
        self.job, self.node, self.type = column(tasks, "job_id"), column(tasks, "node"), column(tasks, "stage_type")
        self.loc, self.out = column(tasks, "locality"), column(tasks, "outcome")
        self.n = len(self.job)
        self.start = np.asarray(tasks["start"], dtype=float)
        self.end = np.asarray(tasks["end"], dtype=float)
        self.stage, self.stage_no = _integers(tasks, "stage")
        self.task, self.task_no = _integers(tasks, "task")
        self.spec = (
            np.asarray(tasks["speculative"], dtype=bool) if has(tasks, "speculative") else np.zeros(self.n, bool)
        )
        self.succeeded = equals(self.out, "succeeded")


def column(table: Any, name: str) -> list[Any]:
    """One column of a table (a dict of lists or arrays, or a pandas frame) as a list."""
    values = table[name]
    return list(values.tolist() if hasattr(values, "tolist") else values)


def has(table: Any, name: str) -> bool:
    """Whether the table has the column."""
    try:
        table[name]
    except (KeyError, IndexError):
        return False
    return True


def codes(values: Sequence[Any], index: Mapping[Any, int]) -> np.ndarray:
    """Each value's number in ``index``; -1 for a value it lacks."""
    return np.fromiter(map(index.get, values, repeat(-1)), dtype=np.int64, count=len(values))


def equals(values: Sequence[Any], word: str) -> np.ndarray:
    """Where a column holds ``word``."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return np.asarray(out == word, dtype=bool)


def _integers(table: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A column as given (for the words of a problem) and as integers, -1 for a value that is none."""
    raw = np.asarray(table[name])
    if raw.dtype.kind in "iub":
        return raw, raw.astype(np.int64)
    try:
        floats = raw.astype(float)
    except (TypeError, ValueError):
        raise InputError(f"tasks: column {name!r} must hold integers, got {raw.dtype}") from None
    whole = np.isfinite(floats) & (floats == np.floor(floats)) & (np.abs(floats) < 2.0**62)
    return raw, np.where(whole, floats, -1).astype(np.int64)
