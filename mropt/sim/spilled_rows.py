"""Utilisation rows a run wrote to a temporary file as it ran, read back a block at a time (issue 32, speed only).

A compiled ``fair`` run (:mod:`mropt.sim.compiled.fair_core`) makes the utilisation rows itself, as
``Recorder.flush`` would at the end of each instant: the Alibaba day under ``fair`` has 23 million of
them, which built after the run from the ended attempts (:mod:`mropt.sim.utilisation_rows`) cost some
14 s a read, and the summary and ``--out`` each read them; held in memory they would be 487 MiB. The
loop's driver appends them here at each pause instead, 21 bytes a row in an anonymous temporary file
(removed when it is closed, or when the process ends), and :meth:`SpilledRows.blocks` reads them back as
:meth:`Recorder.utilisation_blocks <mropt.sim.recorder.Recorder.utilisation_blocks>` gives rows: typed
blocks of time (float64), slot type (int8), pool (C int), busy and capacity (int64).
"""

from __future__ import annotations

import tempfile
import weakref
from collections.abc import Iterator

import numpy as np

#: one row as the file holds it
ROW = np.dtype([("time", "<f8"), ("type", "i1"), ("pool", "<i4"), ("busy", "<i4"), ("capacity", "<i4")])
_TYPES = (np.float64, np.int8, np.intc, np.int64, np.int64)


class SpilledRows:
    """Rows appended in order (:meth:`add`), read back in blocks (:meth:`blocks`); the slot types and
    pools they use are noted as they come (:meth:`used`)."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="mropt-rows-")  # noqa: SIM115  (open while the recorder is)
        # closed (and so removed) when these rows are dropped with their recorder, or at exit: never left
        # to the file object's own finaliser, which warns (ResourceWarning)
        self._closer = weakref.finalize(self, self._file.close)
        self.n = 0
        self._types: set[int] = set()
        self._pools: set[int] = set()

    def add(self, time: np.ndarray, stype: np.ndarray, pool: np.ndarray, busy: np.ndarray, cap: np.ndarray) -> None:
        """Append rows given as columns of one length."""
        k = len(time)
        if not k:
            return
        rows = np.empty(k, dtype=ROW)
        rows["time"], rows["type"], rows["pool"], rows["busy"], rows["capacity"] = time, stype, pool, busy, cap
        self._file.write(rows.tobytes())
        self.n += k
        self._types.update(np.unique(stype).tolist())
        self._pools.update(np.unique(pool).tolist())

    def blocks(self, size: int) -> Iterator[tuple[np.ndarray, ...]]:
        """The rows in order, ``size`` at a time (one empty block when there are none)."""
        self._file.flush()
        self._file.seek(0)
        done = 0
        while done < self.n:
            k = min(size, self.n - done)
            rows = np.frombuffer(self._file.read(k * ROW.itemsize), dtype=ROW)
            done += k
            yield tuple(rows[name].astype(t) for name, t in zip(ROW.names, _TYPES, strict=True))  # type: ignore[arg-type]
        if not self.n:
            yield tuple(np.zeros(0, dtype=t) for t in _TYPES)

    def used(self) -> tuple[np.ndarray, np.ndarray]:
        """The slot types (int8 codes) and pools the rows use, each sorted."""
        return np.array(sorted(self._types), dtype=np.int8), np.array(sorted(self._pools), dtype=np.intc)

    def close(self) -> None:
        """Close (and remove) the file now; the rows cannot be read after."""
        self._closer()


__all__ = ["ROW", "SpilledRows"]
