"""The attempt table (``tasks.parquet``) built from the recorder's typed store, a row group at a time.

A replay of a production trace ends millions of attempts (the Alibaba 2017 day: 10.5
million), and its attempt table built from Python lists took about 3 GB (issue 32).
:class:`TasksTable` builds the columns as Arrow arrays straight from the numpy columns of
:class:`~mropt.sim.ended_attempts.EndedAttempts`, :data:`ROW_GROUP` rows at a time, so a file
written piece by piece holds the row groups ``pyarrow.parquet.write_table(...,
row_group_size=ROW_GROUP)`` makes of the whole table, and the same values.

* A text column (``job_id``, ``stage_type``, ``node``, ``rack``, ``locality``, ``outcome``)
  is its codes (job, slot type, node, rack, locality level, outcome) looked up in the
  values the run used, typed as ``pyarrow.array`` types a list of those values: ``string``,
  or ``null`` where every value is None (``locality`` of a run without replicas) or there
  is no attempt, as the table built from Python lists was.
* ``input_mb`` and ``demand_<name>`` are their task group's, found for a piece's rows at once
  (:mod:`mropt.sim.task_groups`).

The columns and what they mean: :mod:`mropt.sim.recorder`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from mropt.sim.recorder import OUTCOMES
from mropt.sim.state import LEVEL_NAMES, SLOT_TYPES
from mropt.sim.task_groups import demand_groups, input_groups

if TYPE_CHECKING:
    from mropt.sim.recorder import Recorder

#: rows of a piece of the table and of a row group of its file (pyarrow's default is 2^20: a piece
#: of 2^20 rows of the Alibaba day held about 200 MB while it was written, one of 2^16 about 40)
ROW_GROUP = 1 << 16


class TextColumn:
    """A text column: each row's code looked up in the values the run used (sorted codes ``used``)."""

    def __init__(self, value_of: Callable[[int], Any], used: np.ndarray) -> None:
        self.used = used
        # every code from 0 on used (all the jobs, nodes, ...): a code is its own place in ``used``
        self.dense = len(used) > 0 and used[0] == 0 and used[-1] == len(used) - 1
        words = [value_of(int(code)) for code in used]
        self.values = pa.array(words)
        self.objects = np.empty(len(words), dtype=object)  # the same values as Python objects
        self.objects[:] = words

    def __call__(self, codes: np.ndarray) -> pa.Array:
        return self.values.take(pa.array(self._places(codes)))

    def words(self, codes: np.ndarray) -> list[Any]:
        """The rows' values as a list (one Python object per value used, shared by its rows)."""
        return self.objects[self._places(codes)].tolist()

    def _places(self, codes: np.ndarray) -> np.ndarray:
        """Each code's place in ``used`` (the codes themselves where every code from 0 on is used:
        no search of 755,983 codes on the SWIM day)."""
        return codes if self.dense else np.searchsorted(self.used, codes)


class TasksTable:
    """The attempt table of a finished run (:class:`~mropt.sim.recorder.Recorder`): :attr:`schema`,
    :meth:`pieces` of :data:`ROW_GROUP` rows, or the whole :meth:`table`."""

    def __init__(self, recorder: Recorder) -> None:
        sim = recorder.sim
        store = self.store = recorder.ended_attempts
        self.node_rack = np.asarray(sim.node_rack, dtype=np.int64)
        ids = [j.id for j in sim.jobs]
        nodes = store.used("node")
        self.text = {
            "job_id": TextColumn(ids.__getitem__, store.used("job")),
            "stage_type": TextColumn(SLOT_TYPES.__getitem__, store.used("type")),
            "node": TextColumn(sim.node_ids.__getitem__, nodes),
            "rack": TextColumn(sim.rack_names.__getitem__, np.unique(self.node_rack[nodes])),
            "locality": TextColumn(LEVEL_NAMES.__getitem__, store.used("level")),
            "outcome": TextColumn(OUTCOMES.__getitem__, store.used("outcome")),
        }
        self.input_groups, self.input_mb = input_groups(sim.workload.jobs)
        self.resources = list(sim.resources)
        if self.resources:
            self.demand_groups, self.demand = demand_groups(sim.jobs, len(self.resources))
        text = self.text
        self.schema = pa.schema(
            [
                ("job_id", text["job_id"].values.type),
                ("stage", pa.int64()),
                ("stage_type", text["stage_type"].values.type),
                ("task", pa.int64()),
                ("attempt", pa.int64()),
                ("node", text["node"].values.type),
                ("rack", text["rack"].values.type),
                ("start", pa.float64()),
                ("end", pa.float64()),
                ("locality", text["locality"].values.type),
                ("speculative", pa.bool_()),
                ("outcome", text["outcome"].values.type),
                ("input_mb", pa.float64()),
                *((f"demand_{name}", pa.float64()) for name in self.resources),
            ]
        )

    def pieces(self, rows: int | None = None) -> Iterator[pa.Table]:
        """The table in consecutive pieces of ``rows`` rows (default :data:`ROW_GROUP`; the last one
        shorter; none without attempts)."""
        for columns in self.store.chunks(rows or ROW_GROUP):
            piece = self._piece(columns)
            del columns  # (nor the arrays of this piece while the next one is built)
            yield piece
            del piece

    def table(self) -> pa.Table:
        """The whole table (one chunk per :data:`ROW_GROUP` rows)."""
        return whole(self.schema, self.pieces())

    def columns(self) -> dict[str, Any]:
        """The whole table as ``Recorder.tasks_columns`` gives it, built from the store's columns
        without Arrow: the text columns as lists, the others numpy arrays (the values and types of
        :meth:`table`'s columns)."""
        text = self.text
        return {
            name: text[name].words(values) if name in text else values
            for name, values in self._arrays(self.store.rows()).items()
        }

    def _piece(self, rows: dict[str, np.ndarray]) -> pa.Table:
        text = self.text
        columns = [
            text[name](values) if name in text else pa.array(values) for name, values in self._arrays(rows).items()
        ]
        return pa.Table.from_arrays(columns, schema=self.schema)

    def _arrays(self, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The table's columns of the store's ``rows`` as numpy arrays, a text column as its codes
        (:class:`TextColumn`)."""
        job, stage, task, node = rows["job"], rows["stage"], rows["task"], rows["node"]
        out = {
            "job_id": job,
            "stage": stage.astype(np.int64),
            "stage_type": rows["type"],
            "task": task.astype(np.int64),
            "attempt": rows["id"],
            "node": node,
            "rack": self.node_rack[node],
            "start": rows["start"],
            "end": rows["end"],
            "locality": rows["level"],
            "speculative": rows["spec"],
            "outcome": rows["outcome"],
            "input_mb": self.input_mb[self.input_groups.of(job, stage, task)],
        }
        if self.resources:
            demand = self.demand[self.demand_groups.of(job, stage, task)]
            out.update((f"demand_{name}", np.ascontiguousarray(demand[:, k])) for k, name in enumerate(self.resources))
        return out


def whole(schema: pa.Schema, pieces: Iterable[pa.Table]) -> pa.Table:
    """The table of ``pieces`` (of ``schema``; none: its empty table)."""
    tables = list(pieces)
    return pa.concat_tables(tables) if tables else schema.empty_table()


def recut(blocks: Iterable[tuple[np.ndarray, ...]], size: int) -> Iterator[tuple[np.ndarray, ...]]:
    """The rows of ``blocks`` (each a tuple of columns of one length, in order) in consecutive pieces
    of ``size`` rows (the last one shorter; none without rows): the rows a block leaves over are held
    (copied) until the next block's make a piece."""
    held: tuple[np.ndarray, ...] | None = None
    for block in blocks:
        rows = block if held is None else tuple(np.concatenate(c) for c in zip(held, block, strict=True))
        cut = 0
        while len(rows[0]) - cut >= size:
            yield tuple(c[cut : cut + size] for c in rows)
            cut += size
        held = tuple(c[cut:].copy() for c in rows) if cut < len(rows[0]) else None
    if held is not None:
        yield held


__all__ = ["ROW_GROUP", "TasksTable", "TextColumn", "recut", "whole"]
