"""The utilisation rows built after the run, from what the run records anyway (issue 32, speed only).

``utilisation.parquet`` (:mod:`mropt.sim.recorder`) is the step series of busy slots: at the end of
every instant of the run that changed a count, a row for the whole cluster (pool ``*``) per slot
type whose busy count or capacity changed since the last such row (both types at the run's
first instant), then a row per (pool, slot type) *touched* at the instant (a task of it started
or ended there, even when its count came back to where it was), in (pool, type) order, a pool's
index being the order of its first attempt's start. Written live (``Recorder.flush``), that was
a Python call at the end of each of the SWIM day's 1.9 million instants, and a pool count per
start and end: 8-12 % of a run (``benchmarks/RESULTS.md``).

The rows are a function of what the run keeps for its tables: each attempt's start and end, its
job (so its pool), slot type and count (:mod:`mropt.sim.ended_attempts`, one entry per attempt or
per batch that ended together), plus the cluster's capacity after each node went down or came
up (``Simulation``'s capacity log) and a few marks of the engine (:class:`RowMarks`). A count
changes at the time of its change (``Simulation.now``), and the rows of an instant carry its time.
Instants are told apart by their time, except where two of them, each with its rows, share a
time value: an instant pushed at the time of the one that just closed (a task of no time, a
policy's timer for now, a heartbeat due now), or a lone heartbeat (:mod:`mropt.sim.lone_beats`)
at the engine's instant's time. There the engine marks a *break* (:class:`RowMarks`): the next
attempt id, the number of ended entries and of capacity changes at that point, so every change
at that time is before or after it. A change's *epoch* is (time, breaks at that time before
it); the rows are those of the epochs in order. The run's last changes, whose rows the live
recorder never wrote, are left out: the attempts ``Recorder.finish`` kills when the run stops,
and a lone heartbeat's whose rows were deferred to an instant the run stopped before
(``RowMarks.cut``).

:func:`build_rows` makes them with numpy as they are read, a window of simulated time at a time
(about :data:`WINDOW` entries' ends; the starts in it read from every block that reaches into
it): the window's starts and ends are summed per (epoch, pool, type), sorted, and made rows with
the counts the windows before left. What is held is a window's changes and rows, never the run's
rows nor an object per task (the Alibaba day under ``fair``: 23 million rows; summing the whole
run's changes first held about 50 bytes a row, 1.2 GB, besides the 21 a row the recorder kept).
``tests/sim/test_sim_utilisation_rows.py`` compares them, byte for byte, with the live recorder's
(``Simulation(utilisation_rows="live")``) on every policy and mode.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from mropt.sim.ended_attempts import block_values

if TYPE_CHECKING:
    from mropt.sim.ended_attempts import EndedAttempts
    from mropt.sim.state import Job

#: rows (about) of a piece :func:`build_rows` hands out (a piece ends with an epoch)
PIECE = 1 << 16
#: ended entries (about) whose ends fall in one window of simulated time: the build sums a
#: window's changes and makes its rows before it reads the next window's, so it holds a window's
#: changes, never the run's (the Alibaba day under ``fair``: 23 million rows)
WINDOW = 1 << 16
#: the columns the build reads, as the types it reads them in
_CODES = {"job": "q", "type": "q", "id": "q", "count": "q", "start": "d", "end": "d"}
_NEVER = np.iinfo(np.int64).max


@dataclass
class RowMarks:
    """What the engine marks for the rows (module docstring).

    ``first``: the time of the run's first instant (None: the run ran none, and has no rows);
    ``breaks``: (time, next attempt id, ended entries, capacity changes) where an instant's rows
    were written and the next instant has the same time; ``capacity``: (time, map slots, reduce
    slots) after each change of the cluster's slots; ``cut``: the time of the run's last changes
    whose rows were never written (those after the last break at that time).
    """

    first: float | None = None
    breaks: list[tuple[float, int, int, int]] = field(default_factory=list)
    capacity: list[tuple[float, int, int]] = field(default_factory=list)
    cut: float = float("inf")


def _view(block: array[Any], code: str) -> np.ndarray:
    """A store block as a numpy array of its own type, widened to ``code``."""
    values = block_values(block) if len(block) else np.zeros(0, dtype=code)
    return values.astype(code, copy=False)


class _Breaks:
    """The breaks of one run, as sorted keys: the epoch of a change at a time and a mark."""

    def __init__(self, breaks: Sequence[tuple[float, int, int, int]]) -> None:
        table = np.array([b[1:] for b in breaks], dtype=np.int64).reshape(-1, 3)
        times = np.array([b[0] for b in breaks], dtype=float)
        self.times = np.unique(times)
        rank = np.searchsorted(self.times, times)
        # (time rank, mark) as one int64 key per kind of mark: breaks are in time order and
        # every mark grows with time, so each key column is sorted
        self._span = int(table.max(initial=0)) + 2
        self._keys = [rank * self._span + table[:, k] for k in range(3)]

    def at(self, times: np.ndarray) -> np.ndarray:
        """Whether each of ``times`` is a break's time."""
        if not len(self.times):
            return np.zeros(len(times), dtype=bool)
        k = np.minimum(np.searchsorted(self.times, times), len(self.times) - 1)
        return self.times[k] == times

    def epochs(self, times: np.ndarray, marks: np.ndarray, kind: int) -> np.ndarray:
        """The breaks at each change's time before it (change ``k`` at ``times[k]`` with mark
        ``marks[k]``: an attempt id, ended entry or capacity change, ``kind`` 0, 1, 2)."""
        out = np.zeros(len(times), dtype=np.int64)
        at = self.at(times)
        if at.any():
            base = np.searchsorted(self.times, times[at]) * self._span
            keys = self._keys[kind]
            out[at] = np.searchsorted(keys, base + marks[at], "right") - np.searchsorted(keys, base, "left")
        return out

    def last(self, time: float) -> int:
        """The breaks at ``time`` (the epoch of a change after all of them)."""
        k = np.searchsorted(self.times, time)
        if k >= len(self.times) or self.times[k] != time:
            return 0
        keys = self._keys[0]
        return int(np.searchsorted(keys, (k + 1) * self._span, "left") - np.searchsorted(keys, k * self._span, "left"))


def _sum(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The changes (``columns``: time, key, delta; emptied, so that each is freed once sorted)
    summed per (time, key), sorted by time then key (a key with a sum of 0 kept)."""
    time, key, delta = columns
    columns.clear()
    if not len(time):
        return time, key, delta
    order = np.lexsort((key, time))
    time = time[order]
    key = key[order]
    delta = delta[order]
    del order
    first = np.ones(len(time), dtype=bool)
    first[1:] = (time[1:] != time[:-1]) | (key[1:] != key[:-1])
    at = np.flatnonzero(first)
    del first
    return time[at], key[at], np.add.reduceat(delta, at)


def _member_ids(ids: np.ndarray, counts: np.ndarray, entries: np.ndarray, store: EndedAttempts) -> np.ndarray:
    """The attempt ids of the members of the entries (``entries``: their indices in the store)."""
    total = int(counts.sum())
    starts = np.cumsum(counts) - counts
    out = np.repeat(ids, counts) + np.arange(total, dtype=np.int64) - np.repeat(starts, counts)
    if store.gaps:
        for k, entry in enumerate(entries.tolist()):
            gap = store.gaps.get(entry)
            if gap is not None:
                out[starts[k] : starts[k] + counts[k]] = np.frombuffer(gap, dtype=np.int64)
    return out


def build_rows(
    store: EndedAttempts,
    jobs: Sequence[Job],
    capacity: tuple[int, int],
    marks: RowMarks,
    pools_read: tuple[dict[str, int], np.ndarray, np.ndarray] | None = None,
) -> tuple[dict[str, int], Iterator[tuple[np.ndarray, ...]]]:
    """The pools (name -> index, ``*`` first) and the utilisation rows (time, slot type, pool,
    busy, capacity: float64, and integers of any type) of a run (module docstring), in pieces of
    consecutive rows, made as they are read, a window of simulated time at a time (:data:`WINDOW`);
    ``capacity``: the cluster's slots per type before any node went down; ``pools_read``: what
    :func:`row_pools` gave for this store and jobs (read again when None)."""
    pools, pool_code, pool_index = row_pools(store, jobs) if pools_read is None else pools_read
    if marks.first is None:  # no instant: no rows
        return pools, iter(())
    return pools, _windows(store, pool_code, pool_index, len(pools), capacity, marks)


def epochs_bound(store: EndedAttempts, marks: RowMarks) -> int:
    """At most how many epochs with rows the run has, so rows of one (pool, slot type): each has a
    change (an entry's end, an entry's start or, at a break's time, a member's, a capacity change)
    or is the run's first instant."""
    return len(store) + store.n_rows + len(marks.capacity) + 1


def row_pools(store: EndedAttempts, jobs: Sequence[Job]) -> tuple[dict[str, int], np.ndarray, np.ndarray]:
    """The rows' pools (name -> index: ``*`` 0, then in the order of their first attempt's start),
    each job's pool code and each pool code's index."""
    store.flush()
    codes: dict[str, int] = {}
    pool_code = np.array([codes.setdefault(j.pool, len(codes)) for j in jobs], dtype=np.int64)
    first_id = np.full(len(codes), _NEVER, dtype=np.int64)
    entry = store.entry
    n_blocks, done = len(entry["count"]), 0
    while done < n_blocks:  # each pool's first attempt, about PIECE entries at a time
        end, n = done, 0
        while end < n_blocks and n < PIECE:
            n += len(entry["count"][end])
            end += 1
        code, ids = (np.concatenate([_view(b, "q") for b in entry[name][done:end]]) for name in ("job", "id"))
        np.minimum.at(first_id, pool_code[code], ids)  # (each code's least id: no sort)
        done = end
    pools, pool_index = _pools(codes, first_id)
    return pools, pool_code, pool_index


class _BlockSpans:
    """The store's blocks as the build reads them: each block's first entry, and the least and the
    greatest start and end of each (so a window reads only the blocks that reach into it).

    A block's ends are close together (entries are stored as they end), its starts not: a block
    holding a long attempt reaches into every window since that attempt's start, and is decoded
    again in each (the Alibaba day under ``fair``: about 24 entries decoded for each one read, an
    estimated 3 s of CPU a read). Decoding each block once would hold its values from window to
    window, during the read, where the summary's peak falls; not done
    (``benchmarks/RESULTS.md``)."""

    def __init__(self, store: EndedAttempts) -> None:
        self.store = store
        entry = store.entry
        sizes = np.array([len(b) for b in entry["count"]], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(sizes)])
        self.span = {}
        for name in ("start", "end"):
            span = np.empty((len(sizes), 2))
            for k, block in enumerate(entry[name]):
                values = _view(block, "d")
                span[k] = (values.min(), values.max()) if len(values) else (np.inf, -np.inf)
            self.span[name] = span

    def read(self, by: str, lo: float, hi: float, names: Sequence[str]) -> dict[str, np.ndarray]:
        """Columns ``names`` and ``index`` (the entry's) of the entries whose ``by`` (start or end)
        is in [lo, hi), in store order (each block's taken before the next is read: a block of
        long attempts reaches into many windows, and only its entries in this one are held)."""
        span = self.span[by]
        entry, offsets = self.store.entry, self.offsets
        parts: dict[str, list[np.ndarray]] = {name: [] for name in (by, *names, "index")}
        for k in np.flatnonzero((span[:, 1] >= lo) & (span[:, 0] < hi)).tolist():
            values = _view(entry[by][k], "d")
            inside = np.flatnonzero((values >= lo) & (values < hi))
            parts[by].append(values[inside])
            for name in names:
                parts[name].append(_view(entry[name][k], _CODES[name])[inside])
            parts["index"].append(inside + offsets[k])
        codes = {**_CODES, "index": "q"}
        return {
            name: np.concatenate(p, dtype=codes[name]) if p else np.zeros(0, dtype=codes[name])
            for name, p in parts.items()
        }


def _changes(
    blocks: _BlockSpans,
    lo: float,
    hi: float,
    pool_code: np.ndarray,
    n_keys: int,
    breaks: _Breaks,
    types: tuple[type, ...],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The changes at times in [lo, hi), summed per (time, epoch x keys + key), sorted (:func:`_sum`)."""
    # ends: an entry's members ended together (its index in the store is its mark)
    cols = blocks.read("end", lo, hi, ("job", "type", "count"))
    key = pool_code[cols["job"]] * 2 + cols["type"]
    end_epoch = breaks.epochs(cols["end"], cols["index"], 1)
    times, keys, deltas = [cols["end"]], [end_epoch * n_keys + key], [-cols["count"]]
    # starts: an entry's members started together, but at a break's time they may lie on both
    # sides of it (their ids are the marks): counted member by member there
    cols = blocks.read("start", lo, hi, ("job", "type", "count", "id"))
    key = pool_code[cols["job"]] * 2 + cols["type"]
    start, count = cols["start"], cols["count"]
    split = breaks.at(start)
    whole = ~split
    times.append(start[whole])
    keys.append(key[whole])
    deltas.append(count[whole])
    if split.any():
        ids = _member_ids(cols["id"][split], count[split], cols["index"][split], blocks.store)
        member_start = np.repeat(start[split], count[split])
        times.append(member_start)
        keys.append(breaks.epochs(member_start, ids, 0) * n_keys + np.repeat(key[split], count[split]))
        deltas.append(np.ones(len(ids), dtype=np.int64))
    del cols
    return _sum([np.concatenate(c).astype(t, copy=False) for c, t in zip((times, keys, deltas), types, strict=True)])


def _pools(codes: dict[str, int], first_id: np.ndarray) -> tuple[dict[str, int], np.ndarray]:
    """The pools by index (``*`` 0, then in the order of their first start: ids grow with the
    starts), and each pool code's index."""
    started = np.flatnonzero(first_id < np.iinfo(np.int64).max)
    started = started[np.argsort(first_id[started], kind="stable")]
    names = list(codes)
    index = np.zeros(max(len(codes), 1), dtype=np.int64)
    index[started] = np.arange(1, len(started) + 1)
    return {"*": 0, **{names[c]: k + 1 for k, c in enumerate(started.tolist())}}, index


def _epochs(
    time: np.ndarray, epoch: np.ndarray, extra_time: np.ndarray, extra_epoch: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The epochs, in order, of changes sorted by (time, epoch) and of a few more (``extra_``,
    sorted: the first instant's, the capacity changes'): their times, each change's epoch index
    and each extra one's."""
    head = np.ones(len(time), dtype=bool)
    head[1:] = (time[1:] != time[:-1]) | (epoch[1:] != epoch[:-1])
    own_time, own_epoch = time[head], epoch[head]
    at = np.cumsum(head) - 1  # each change's among the changes' epochs
    del head
    # where each extra one falls among those (the changes' epochs before it), and whether it is one
    place = np.searchsorted(own_time, extra_time, "left")
    same_time = np.searchsorted(own_time, extra_time, "right")
    for k in range(len(extra_time)):  # (few: epochs are sorted by time, then epoch)
        place[k] += np.searchsorted(own_epoch[place[k] : same_time[k]], extra_epoch[k], "left")
    is_own = place < len(own_time)
    is_own[is_own] = (own_time[place[is_own]] == extra_time[is_own]) & (own_epoch[place[is_own]] == extra_epoch[is_own])
    new = ~is_own
    new[1:] &= (extra_time[1:] != extra_time[:-1]) | (extra_epoch[1:] != extra_epoch[:-1])  # (once each)
    inserted = place[new]  # before which of the changes' epochs each new one goes
    if len(inserted):
        at += np.searchsorted(inserted, at, "right")
    extra_at = place + np.searchsorted(inserted, place, "right")
    extra_at[new] = place[new] + np.arange(len(inserted))
    extra_at[~new & ~is_own] = extra_at[np.maximum.accumulate(np.where(new, np.arange(len(new)), 0))][~new & ~is_own]
    times = np.insert(own_time, inserted, extra_time[new])
    return times, at, extra_at


def _windows(
    store: EndedAttempts,
    pool_code: np.ndarray,
    pool_index: np.ndarray,
    n_pools: int,
    capacity: tuple[int, int],
    marks: RowMarks,
) -> Iterator[tuple[np.ndarray, ...]]:
    """:func:`build_rows`' rows, a window of simulated time at a time: each window's changes
    summed and sorted by time, then epoch, pool code, type (:func:`_changes`), made rows by
    :func:`_pieces` with the counts that run on from the windows before (:class:`_Counts`)."""
    n_keys = 2 * len(pool_index)
    breaks = _Breaks(marks.breaks)
    wide = (len(marks.breaks) + 1) * n_keys >= 1 << 31 or store.n_rows >= 1 << 31
    types = (np.float64, np.int64 if wide else np.int32, np.int64 if wide else np.int32)
    # the capacity changes: (time, epoch) and each type's change
    cap_time = np.array([c[0] for c in marks.capacity], dtype=float)
    cap_epoch = breaks.epochs(cap_time, np.arange(len(cap_time), dtype=np.int64), 2)
    cap_delta = np.diff(np.array([capacity, *(c[1:] for c in marks.capacity)], dtype=np.int64), axis=0)
    # what the run's stop left unwritten: the last epoch at ``cut``
    last = breaks.last(marks.cut)
    keep = ~((cap_time == marks.cut) & (cap_epoch == last))
    # the epochs with a change, and the run's first instant's (its cluster rows whatever changed)
    extra_time = np.concatenate([[marks.first], cap_time[keep]])
    extra_epoch = np.concatenate([[0], cap_epoch[keep]])
    extra_delta = np.vstack([np.zeros((1, 2), dtype=np.int64), cap_delta[keep]])
    order = np.lexsort((extra_epoch, extra_time))
    if order[0] != 0:
        raise AssertionError("utilisation rows: a change before the run's first instant")
    extra_time, extra_epoch, extra_delta = extra_time[order], extra_epoch[order], extra_delta[order]
    blocks = _BlockSpans(store)
    # the windows' bounds: the end of every WINDOW-th entry (at a block's end), then past the last
    ends = blocks.span["end"][:, 1]
    cuts = np.searchsorted(blocks.offsets[1:], np.arange(WINDOW, blocks.offsets[-1], WINDOW), "left")
    bounds = np.append(np.unique(ends[cuts]), np.inf)
    counts = _Counts(n_keys, capacity)
    lo = -np.inf
    for hi in bounds.tolist():
        time, key, delta = _changes(blocks, lo, hi, pool_code, n_keys, breaks, types)
        epoch = key // n_keys
        key -= epoch * n_keys  # (pool code, type)
        drop = (time == marks.cut) & (epoch == last)
        if drop.any():
            keep = ~drop
            time, key, delta, epoch = time[keep], key[keep], delta[keep], epoch[keep]
        if len(time) and time[0] < marks.first:
            raise AssertionError("utilisation rows: a change before the run's first instant")
        x = slice(*np.searchsorted(extra_time, [lo, hi], "left").tolist())
        if len(time) or x.start < x.stop:
            epoch_time, row_at, extra_at = _epochs(time, epoch, extra_time[x], extra_epoch[x])
            del time, epoch
            # the cluster's capacity after each of the window's epochs: the capacity before it, then
            # after each of its capacity changes (few)
            cap_sums = counts.capacity + np.cumsum(
                np.vstack([np.zeros((1, 2), dtype=np.int64), extra_delta[x]]), axis=0
            )
            counts.capacity = cap_sums[-1]
            capacity_at = (np.concatenate([[-1], extra_at]), cap_sums)
            yield from _pieces(epoch_time, row_at, key, delta, capacity_at, counts, pool_index, n_keys, n_pools)
            del epoch_time, row_at, extra_at, capacity_at
        del key, delta  # (before the next window's are made)
        lo = hi


class _Counts:
    """The counts the rows run on with, from piece to piece and window to window: each key's busy
    slots, the cluster's per type, the cluster's (busy, capacity) per type at the last epoch (-1:
    none yet) and its capacity."""

    def __init__(self, n_keys: int, capacity: tuple[int, int]) -> None:
        self.current = np.zeros(n_keys, dtype=np.int64)
        self.cluster = np.zeros(2, dtype=np.int64)
        self.before = np.full((2, 2), -1, dtype=np.int64)
        self.capacity = np.array(capacity, dtype=np.int64)


def _pieces(
    epoch_time: np.ndarray,
    row_at: np.ndarray,
    kc: np.ndarray,
    delta: np.ndarray,
    capacity_at: tuple[np.ndarray, np.ndarray],
    counts_before: _Counts,
    pool_index: np.ndarray,
    n_keys: int,
    n_pools: int,
) -> Iterator[tuple[np.ndarray, ...]]:
    """The rows of a window in order, a range of epochs at a time (about :data:`PIECE` keys' rows):
    per epoch the cluster's rows (type 0, then 1) where its busy slots or capacity of the type moved
    since the epoch before (both at the run's first), then a row per (pool, type) touched, by
    (pool, type), at its count then. Counts run on from piece to piece and window to window
    (``counts_before``, updated): each key's, the cluster's per type."""
    n_epochs, n = len(epoch_time), len(row_at)
    current = counts_before.current  # each key's busy count so far
    cluster = counts_before.cluster  # the cluster's per type
    before = counts_before.before  # (busy, capacity) per type at the epoch before
    first, a = 0, 0
    while first < n_epochs:
        end = n_epochs if a + PIECE >= n else int(row_at[a + PIECE]) + 1
        b = int(np.searchsorted(row_at, end, "left"))
        k, d, at = kc[a:b], delta[a:b].astype(np.int64), row_at[a:b]
        # each touched key's count: the piece's changes summed per key in order (a stable sort by
        # key: a radix sort on 16 bits below 32,768 keys), from its count before the piece
        order = np.argsort(k.astype(np.int16) if n_keys < 1 << 15 else k, kind="stable")
        group, step = k[order], d[order]
        run = np.cumsum(step)
        head = np.ones(len(group), dtype=bool)
        head[1:] = group[1:] != group[:-1]
        starts = np.flatnonzero(head)
        run += np.repeat(current[group[starts]] - run[starts] + step[starts], np.diff(np.append(starts, len(group))))
        busy = np.empty(len(k), dtype=np.int64)
        busy[order] = run
        np.add.at(current, k, d)
        # the cluster's counts after each epoch of the piece
        epochs = np.arange(first, end)
        stype = k & 1
        cap_epochs, cap_sums = capacity_at
        caps = cap_sums[np.searchsorted(cap_epochs, epochs, "right") - 1]  # (epochs x types)
        parts = []
        for t in (0, 1):
            moved = np.bincount(at - first, np.where(stype == t, d, 0), end - first).astype(np.int64)
            counts = cluster[t] + np.cumsum(moved)
            cluster[t] = counts[-1]
            now = np.column_stack([counts, caps[:, t]])
            changed = np.any(now != np.vstack([before[t], now[:-1]]), axis=1)
            before[t] = now[-1]
            e = np.flatnonzero(changed)
            parts.append((e + first, np.full(len(e), t), np.zeros(len(e), dtype=np.int64), counts[e], caps[e, t]))
        parts.append((at, stype, pool_index[k >> 1], busy, caps[at - first, stype]))
        at, stype, pool, counts, cap = (np.concatenate(column) for column in zip(*parts, strict=True))
        order = np.argsort((at * n_pools + pool) * 2 + stype, kind="stable")
        yield (epoch_time[at[order]], stype[order], pool[order], counts[order], cap[order])
        first, a = end, b


__all__ = ["PIECE", "WINDOW", "RowMarks", "build_rows", "epochs_bound", "row_pools"]
