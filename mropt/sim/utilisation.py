"""The summary's ``utilisation`` (:mod:`mropt.sim.summary`): per slot type, busy over capacity
slot-seconds (:func:`utilisation_ratio`), or on a cluster of resources, per resource, held over
capacity amount-seconds (:func:`resource_ratio`), both on ``[0, horizon]`` (the run's makespan)
with the capacity of the nodes up; and :func:`plain`, the summary's floats as JSON writes them.

Read from the finished run's recorder: the utilisation rows a block at a time
(:meth:`~mropt.sim.recorder.Recorder.utilisation_blocks`), the attempts' spans a piece at a time
(:meth:`~mropt.sim.recorder.Recorder.span_pieces`), so that a day of a trace (the Alibaba 2017
day: millions of rows) is never copied whole (issue 32). Moved out of :mod:`mropt.sim.run`,
which re-exports these names.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np

from mropt.model.workload import WorkloadInstance
from mropt.sim.recorder import Recorder
from mropt.sim.state import SLOT_TYPES


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
        ratio = rows.ratio()
        out[name] = None if ratio is None else plain(ratio)
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
        """Busy over capacity slot-seconds on [0, horizon], the quotient unrounded (None without rows or
        capacity; :func:`utilisation_ratio` rounds it, :func:`plain`)."""
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
        return busy / capacity if capacity > 0 else None


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
        resource_name(r, names): plain(float(held[k] / capacity[k])) if capacity[k] > 0 else None
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


def plain(x: float) -> float:
    """A finite float as JSON writes it (rounded to 12 significant digits: sums of float times)."""
    if not math.isfinite(x):
        return x
    return float(f"{x:.12g}")
