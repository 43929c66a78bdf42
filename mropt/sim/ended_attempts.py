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
are kept apart (``gaps``). That is at most 48 bytes an attempt that ended alone, and 40 bytes
a batch plus 8 a member (an attempt object and a row tuple per batch, and 60 bytes per lone
attempt, before this store). Each block of an integer column keeps the narrowest C integer
type that holds its values (:func:`_block`: an attempt id in 4 bytes below 2^31, a stage or a
batch's count mostly in one, a node in two below 32,768 nodes), widened back to the column's
type wherever it is read (:func:`_joined`, so no reader sees what a block keeps): on the
Alibaba 2017 day, 261 MiB instead of 381 (7,846,643 entries, 10,528,237 attempts: 26 bytes an
attempt instead of 38).
An ending is first a tuple in a Python list, moved by thousands (:data:`CHUNK`) into
arrays of their own, a block per column, made to size and never grown: an ``array.append``
costs ten times a ``list.append``, and a column of millions grown in place leaves the heap
a hole of its old size at each move.

The per-attempt columns (:data:`ROW_COLUMNS`) are made from the blocks with numpy, whole
(:meth:`EndedAttempts.rows`) or in pieces of a given number of rows (:meth:`EndedAttempts.chunks`:
the event-log hash and ``tasks.parquet``, :mod:`mropt.sim.tasks_table`), never as Python lists.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from struct import pack
from typing import TYPE_CHECKING, Any

import numpy as np

from mropt.sim.task_groups import TaskGroups, demand_groups

if TYPE_CHECKING:
    from mropt.sim.attempts import Attempt
    from mropt.sim.state import Job

#: an entry's columns (array type codes: the types their readers get, whatever a block keeps), in the
#: order :meth:`EndedAttempts.add` appends them
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
_DTYPE = {"q": np.int64, "i": np.intc, "h": np.int16, "b": np.int8, "d": np.float64}
#: the integer type codes, narrowest first: a block of an integer column takes the first its values fit
NARROW = ("b", "h", "i", "q")
#: the least and the greatest value of each type of :data:`NARROW`
_BOUNDS = {code: (-(1 << (8 * array(code).itemsize - 1)), (1 << (8 * array(code).itemsize - 1)) - 1) for code in NARROW}
#: the per-attempt columns of :meth:`EndedAttempts.rows`, typed as the entry columns they repeat
#: (``task``, ``node``: C ints; ``id``: int64; ``spec``: bool)
ROW_COLUMNS = ("job", "stage", "type", "task", "id", "node", "start", "end", "level", "spec", "outcome")
#: the scales a block of starts or ends may be kept at, as C ints (:class:`Scaled`): whole seconds, then
#: tenths, hundredths (a heartbeat's offset), thousandths
SCALES = (1.0, 10.0, 100.0, 1000.0)
#: endings (and member tasks and nodes) held in Python lists before they move into a block of arrays
CHUNK = 4096
#: entries of a piece of :meth:`EndedAttempts.span_pieces`
SPAN_PIECE = 1 << 16


class Scaled(array):
    """A block of a float column (a start or an end) kept as C ints ``k``, each value ``k / scale``
    exactly (:func:`_block`): 4 bytes a value instead of 8. A copy keeps its scale (pickle does);
    a slice or a sum is a plain ``array('i')`` of the ints: read a block through :func:`_np`."""

    scale: float

    def __copy__(self) -> Scaled:
        block = Scaled(self.typecode, self.tobytes())
        block.scale = self.scale
        return block

    def __deepcopy__(self, memo: dict[int, Any]) -> Scaled:
        return self.__copy__()


def _distinct(arrays: list[np.ndarray], dtype: Any) -> np.ndarray:
    """The values of ``arrays``, sorted, each once, as ``dtype``: marked in a table of flags where they are
    codes from 0 (jobs, nodes, tasks, levels: no sort of each block, a second on a day of 10 M attempts),
    else by ``np.unique``."""
    full = [a for a in arrays if len(a)]
    if not full:
        return np.zeros(0, dtype=dtype)
    if not all(np.issubdtype(a.dtype, np.integer) for a in full):
        return np.unique(np.concatenate([np.unique(a) for a in full], dtype=dtype))
    low = min(int(a.min()) for a in full)
    top = max(int(a.max()) for a in full)
    # (the flags' table: at most 8 bytes a value, and 128 MiB, or the sort)
    limit = min(1 << 27, 8 * sum(len(a) for a in full) + 4096)
    if low < 0 or top >= limit:
        return np.unique(np.concatenate([np.unique(a) for a in full], dtype=dtype))
    seen = np.zeros(top + 1, dtype=np.bool_)
    for a in full:
        seen[a] = True
    return np.flatnonzero(seen).astype(dtype)


def _np(values: array[Any]) -> np.ndarray:
    """An ``array``'s elements as a numpy array (a view; an empty one of its type when empty); a
    :class:`Scaled` block's as the floats it holds (a new array)."""
    dtype = _DTYPE[values.typecode]
    out = np.frombuffer(values, dtype=dtype) if len(values) else np.zeros(0, dtype=dtype)
    if isinstance(values, Scaled):
        return out.astype(np.float64) / values.scale
    return out


def _scaled(view: np.ndarray) -> array[Any]:
    """Floats (a float64 numpy array) as a :class:`Scaled` block, of the first of :data:`SCALES` by
    which every value is exactly a C int over it (decoded as :func:`_np` decodes, bit for bit: no
    -0.0, NaN or infinity), else as an ``array('d')`` of them."""
    wide = array("d", view.tobytes())
    if np.signbit(view).any() or not np.isfinite(view).all():
        return wide
    least, most = _BOUNDS["i"]
    for scale in SCALES:
        k = np.round(view * scale)
        if k.min() < least or k.max() > most:
            continue
        ints = k.astype(np.intc)
        if np.array_equal(ints.astype(np.float64) / scale, view):
            block = Scaled("i", ints.tobytes())
            block.scale = scale
            return block
    return wide


def _block(code: str, values: Sequence[Any]) -> array[Any]:
    """``values`` as a block of a column of type ``code``; of an integer column, in the narrowest
    type of :data:`NARROW` that holds each of them; of a float column, :class:`Scaled` where its
    values allow (:func:`_joined` and :func:`_np` widen them back). The values are packed by
    ``struct`` (as C int64 or double), in fewer instructions than ``array(code, values)`` takes,
    whose items each go through ``PyArg_Parse`` (issue 32, callgrind)."""
    if not values:
        return array(code)
    packed = "d" if code == "d" else "q"
    return _block_of(code, np.frombuffer(pack(f"{len(values)}{packed}", *values), dtype=_DTYPE[packed]))


def _block_of(code: str, values: np.ndarray) -> array[Any]:
    """:func:`_block` of a numpy array of values (no Python object per value)."""
    if not len(values):
        return array(code)
    if code == "d":
        return _scaled(np.ascontiguousarray(values, dtype=np.float64))
    low, high = int(values.min()), int(values.max())
    for narrow in NARROW[: NARROW.index(code) + 1]:
        least, most = _BOUNDS[narrow]
        if least <= low and high <= most:
            return array(narrow, values.astype(_DTYPE[narrow]).tobytes())
    raise OverflowError(f"values {low}..{high} do not fit array type {code!r}")


def _joined(blocks: list[array[Any]], code: str) -> np.ndarray:
    """A column's blocks as one numpy array of the column's type ``code`` (a copy, blocks kept
    narrower widened: no reader sees what type a block keeps)."""
    dtype = _DTYPE[code]
    return np.concatenate([_np(b) for b in blocks], dtype=dtype) if blocks else np.zeros(0, dtype=dtype)


class EndedAttempts:
    """The ended attempts' entries and member columns (module docstring)."""

    __slots__ = ("entry", "task", "node", "gaps", "_n", "_entries", "_tasks", "_nodes")

    def __init__(self) -> None:
        self.entry: dict[str, list[array[Any]]] = {name: [] for name, _ in ENTRY_FIELDS}  # blocks
        self.task: list[array[int]] = []  # per row, in entry order (blocks)
        self.node: list[array[int]] = []
        self._n = 0  # entries in the blocks
        self.gaps: dict[int, array[int]] = {}  # entry -> its rows' attempt ids, where not consecutive
        # not yet moved into the arrays: entries (tuples in ENTRY_FIELDS order), rows' tasks and nodes
        self._entries: list[tuple[Any, ...]] = []
        self._tasks: list[int] = []
        self._nodes: list[int] = []

    def __len__(self) -> int:
        return self._n + len(self._entries)

    def flush(self) -> None:
        """Move what the lists hold into a new block of arrays (done by :meth:`rows` and :meth:`spans`)."""
        if self._entries:
            for (name, code), values in zip(ENTRY_FIELDS, zip(*self._entries), strict=True):
                self.entry[name].append(_block(code, values))
            self._n += len(self._entries)
            self._entries.clear()
        if self._tasks:
            self.task.append(_block("i", self._tasks))
            self.node.append(_block("i", self._nodes))
            self._tasks.clear()
            self._nodes.clear()

    def column(self, name: str) -> np.ndarray:
        """Entry column ``name`` (``ENTRY_FIELDS``) as one numpy array."""
        self.flush()
        return _joined(self.entry[name], dict(ENTRY_FIELDS)[name])

    def add(self, a: Attempt, member: int, end: float, outcome: int, count: int = 1) -> None:
        """Member ``member`` of ``a`` ended alone (the attempt itself when single), or with
        ``member`` -1 every live member of batch ``a`` ended, at ``end`` with ``outcome``.
        ``count`` (those members' number) is not read: it is ``Recorder.ended``'s signature, which
        is this method in a run without live utilisation rows."""
        if a.n == 1:  # a single attempt (its ``task`` and ``node``), the most frequent end
            self._tasks.append(a.task)
            self._nodes.append(a.node)
            first, count = a.id, 1
        elif member < 0:
            tasks, nodes, dead = a.tasks, a.nodes, a.dead
            assert tasks is not None and nodes is not None
            if dead:
                alive = [m for m in range(a.n) if m not in dead]
                self.gaps[len(self)] = array("q", [a.id + m for m in alive])
                self._tasks.extend([tasks[m] for m in alive])
                self._nodes.extend([nodes[m] for m in alive])
                first, count = a.id + alive[0], len(alive)
            else:
                self._tasks.extend(tasks)
                self._nodes.extend(nodes)
                first, count = a.id, a.n
        else:  # member ``member`` of a batch
            tasks, nodes = a.tasks, a.nodes
            assert tasks is not None and nodes is not None
            self._tasks.append(tasks[member])
            self._nodes.append(nodes[member])
            first, count = a.id + member, 1
        entries = self._entries
        entries.append((a.job, a.stage, a.type, first, a.start, end, a.level, a.speculative, outcome, count))
        if len(entries) >= CHUNK or len(self._tasks) >= CHUNK:
            self.flush()

    def add_columns(
        self, entries: dict[str, np.ndarray], tasks: np.ndarray, nodes: np.ndarray, piece: int = 1 << 16
    ) -> None:
        """Entries given whole as columns (``ENTRY_FIELDS``' names, one element per entry, in the order
        they ended) and their rows' tasks and nodes (in entry order, ``count`` rows each), as
        :meth:`add` would keep them one by one: a compiled run's store (:mod:`mropt.sim.compiled`)."""
        self.flush()
        counts = entries["count"].astype(np.int64)
        ends = np.cumsum(counts)
        for first in range(0, len(counts), piece):
            last = min(first + piece, len(counts))
            row0 = int(ends[first - 1]) if first else 0
            row1 = int(ends[last - 1])
            for name, code in ENTRY_FIELDS:
                self.entry[name].append(_block_of(code, entries[name][first:last]))
            self.task.append(_block_of("i", tasks[row0:row1]))
            self.node.append(_block_of("i", nodes[row0:row1]))
            self._n += last - first

    @property
    def n_rows(self) -> int:
        """Attempts (rows) kept: one per member of every entry."""
        return sum(len(b) for b in self.task) + len(self._tasks)

    def last_end(self) -> float:
        """The latest end of an attempt that ended (0.0 when none did)."""
        self.flush()
        return max((float(_np(b).max()) for b in self.entry["end"] if len(b)), default=0.0)

    def used(self, name: str) -> np.ndarray:
        """The values column ``name`` (an entry column, ``task`` or ``node``) takes, sorted, each once."""
        self.flush()
        blocks = getattr(self, name) if name in ("task", "node") else self.entry[name]
        if not blocks:
            return np.zeros(0, dtype=np.int64)
        code = "i" if name in ("task", "node") else dict(ENTRY_FIELDS)[name]
        return _distinct([_np(b) for b in blocks], _DTYPE[code])

    def rows(self, names: Sequence[str] = ROW_COLUMNS) -> dict[str, np.ndarray]:
        """The columns ``names`` (:data:`ROW_COLUMNS`), one element per attempt, in the order the
        attempts ended, as numpy arrays of the types :data:`ROW_COLUMNS` gives."""
        self.flush()
        return self._expand(0, len(self.task), 0, names)

    def chunks(self, size: int, names: Sequence[str] = ROW_COLUMNS) -> Iterator[dict[str, np.ndarray]]:
        """:meth:`rows` in consecutive pieces of ``size`` rows (the last one shorter; none when
        empty): a whole column of a replay of millions of attempts is never made at once."""
        self.flush()
        blocks, done, entry = len(self.task), 0, 0
        held: dict[str, np.ndarray] = {}  # rows expanded but not yet handed out (fewer than a block's)
        while done < blocks:
            end, rows = done, len(held[names[0]]) if held else 0
            while end < blocks and rows < size:
                rows += len(self.task[end])
                end += 1
            part = self._expand(done, end, entry, names, held)
            entry += sum(len(b) for b in self.entry["count"][done:end])
            done = end
            cut = 0
            while rows - cut >= size:
                yield {name: values[cut : cut + size] for name, values in part.items()}
                cut += size
            held = {name: values[cut:].copy() for name, values in part.items()} if cut < rows else {}
            del part
        if held:
            yield held

    def _expand(
        self, first: int, end: int, entry: int, names: Sequence[str], head: dict[str, np.ndarray] | None = None
    ) -> dict[str, np.ndarray]:
        """Columns ``names`` of the rows of blocks ``first`` to ``end`` (excluded), whose first entry is
        ``entry``, after the rows of ``head`` when given.

        An entry block and a member block are made by the same :meth:`flush`, so block k of the
        entry columns holds the entries whose rows block k of ``task`` and ``node`` holds."""
        count = _joined(self.entry["count"][first:end], "i")
        out: dict[str, np.ndarray] = {}
        for name in names:
            if name in ("task", "node"):
                values = _joined(getattr(self, name)[first:end], "i")
            elif name == "id":
                values = self._ids(first, end, entry, count)
            else:
                values = np.repeat(_joined(self.entry[name][first:end], dict(ENTRY_FIELDS)[name]), count)
                if name == "spec":
                    values = values.astype(bool)
            out[name] = np.concatenate((head[name], values)) if head else values
        return out

    def _ids(self, first: int, end: int, entry: int, count: np.ndarray) -> np.ndarray:
        """The rows' attempt ids: consecutive from each entry's first, but where ``gaps`` holds them."""
        ids = np.repeat(_joined(self.entry["id"][first:end], "q"), count)
        starts = np.cumsum(count, dtype=np.int64) - count
        ids += np.arange(len(ids), dtype=np.int64) - np.repeat(starts, count)
        for k, gap in self.gaps.items():
            if entry <= k < entry + len(count):
                ids[starts[k - entry] : starts[k - entry] + count[k - entry]] = _np(gap)
        return ids

    def spans(self, jobs: Sequence[Job], n_res: int) -> dict[str, np.ndarray]:
        """One row per entry (``Recorder.spans``): ``job``, ``type``, ``level``, ``outcome``,
        ``start``, ``end``, ``count`` and ``demand`` (entries x ``n_res``: an attempt's, its
        stage's for its task, as the engine held it; 0 without demand)."""
        self.flush()
        return self._spans(0, len(self.task), n_res, demand_groups(jobs, n_res) if n_res else None)

    def span_pieces(self, jobs: Sequence[Job], n_res: int, size: int | None = None) -> Iterator[dict[str, np.ndarray]]:
        """:meth:`spans` in consecutive pieces of whole blocks, about ``size`` (:data:`SPAN_PIECE`)
        entries each (none when empty)."""
        size = size or SPAN_PIECE
        self.flush()
        groups = demand_groups(jobs, n_res) if n_res else None
        blocks, done = len(self.task), 0
        while done < blocks:
            end, entries = done, 0
            while end < blocks and entries < size:
                entries += len(self.entry["count"][end])
                end += 1
            yield self._spans(done, end, n_res, groups)
            done = end

    def _spans(
        self, first: int, end: int, n_res: int, groups: tuple[TaskGroups, np.ndarray] | None
    ) -> dict[str, np.ndarray]:
        """The spans of the entries of blocks ``first`` to ``end`` (excluded)."""
        codes = dict(ENTRY_FIELDS)
        out: dict[str, np.ndarray] = {
            name: _joined(self.entry[name][first:end], codes[name]).astype(np.int64)
            for name in ("job", "type", "level", "outcome", "count")
        }
        out["start"] = _joined(self.entry["start"][first:end], "d")
        out["end"] = _joined(self.entry["end"][first:end], "d")
        count = out["count"]
        out["demand"] = np.zeros((len(count), n_res))
        if groups is not None and len(count):
            first_task = _joined(self.task[first:end], "i")[np.cumsum(count) - count]
            stage = _joined(self.entry["stage"][first:end], "i")
            task_groups, demand = groups
            out["demand"] = demand[task_groups.of(out["job"], stage, first_task)]
        return out


def block_values(block: array[Any]) -> np.ndarray:
    """A block of the store as the numpy array of the values it holds (:class:`Scaled` ones decoded)."""
    return _np(block)


__all__ = ["ENTRY_FIELDS", "ROW_COLUMNS", "SCALES", "EndedAttempts", "Scaled", "block_values"]
