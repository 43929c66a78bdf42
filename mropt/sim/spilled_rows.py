"""Utilisation rows a run wrote to a temporary file as it ran, read back a block at a time (issue 32, speed only).

A compiled run (:mod:`mropt.sim.compiled`: each of its loops) makes the utilisation rows itself, as
``Recorder.flush`` would at the end of each instant: the Alibaba day under ``fair`` has 23 million of
them, which built after the run from the ended attempts (:mod:`mropt.sim.utilisation_rows`) cost some
14 s a read, and the summary and ``--out`` each read them; held in memory they would be 487 MiB. The
loop's driver appends them here at each pause instead, 21 bytes a row in an anonymous temporary file
in the system's temporary folder (``TMPDIR``; removed when it is closed, or when the process ends; where
that folder is a tmpfs the rows are held in memory after all), and :meth:`SpilledRows.blocks` reads them back as
:meth:`Recorder.utilisation_blocks <mropt.sim.recorder.Recorder.utilisation_blocks>` gives rows: typed
blocks of time (float64), slot type (int8), pool (C int), busy and capacity (int64).
"""

from __future__ import annotations

import os
import tempfile
import weakref
from collections.abc import Iterator

import numpy as np

from mropt.model.errors import InputError

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
        self.cluster = [0, 0]  # the cluster's rows (pool 0) of each slot type
        self._types: set[int] = set()
        self._pools: set[int] = set()

    def add(self, time: np.ndarray, stype: np.ndarray, pool: np.ndarray, busy: np.ndarray, cap: np.ndarray) -> None:
        """Append rows given as columns of one length (a full disk: a one-line InputError naming the folder)."""
        k = len(time)
        if not k:
            return
        rows = np.empty(k, dtype=ROW)
        rows["time"], rows["type"], rows["pool"], rows["busy"], rows["capacity"] = time, stype, pool, busy, cap
        try:
            os.pwrite(self._file.fileno(), rows.tobytes(), self.n * ROW.itemsize)
        except OSError as exc:
            raise InputError(
                f"simulate: the utilisation rows' temporary file in {tempfile.gettempdir()}: {exc.strerror} "
                "(free space there, or name another folder in TMPDIR)"
            ) from None
        self.n += k
        cluster = pool == 0
        for code in (0, 1):
            self.cluster[code] += int(np.count_nonzero(cluster & (stype == code)))
        # (codes from 0: counted, not sorted, as np.unique would)
        self._types.update(np.flatnonzero(np.bincount(stype)).tolist())
        self._pools.update(np.flatnonzero(np.bincount(pool)).tolist())

    def blocks(self, size: int) -> Iterator[tuple[np.ndarray, ...]]:
        """The rows in order, ``size`` at a time (one empty block when there are none). Each block is read
        at its own offset: several readers may go through the rows at once."""
        done = 0
        fd = self._file.fileno()
        while done < self.n:
            k = min(size, self.n - done)
            rows = np.frombuffer(os.pread(fd, k * ROW.itemsize, done * ROW.itemsize), dtype=ROW)
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
