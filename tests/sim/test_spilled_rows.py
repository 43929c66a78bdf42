"""``SpilledRows``: utilisation rows written to a temporary file and read back (mropt.sim.spilled_rows).

The rows must come back exactly, in order, typed as ``Recorder.utilisation_blocks`` gives them, in blocks of
any size; the file must go when the rows are dropped (no ``ResourceWarning``: the CLI's tests treat a
warning as a failure) or closed.
"""

from __future__ import annotations

import gc
import os
import warnings

import numpy as np
import pytest

from mropt.sim.spilled_rows import SpilledRows


def rows(rng: np.random.Generator, k: int) -> tuple[np.ndarray, ...]:
    return (
        np.sort(rng.random(k)) * 1e6,
        rng.integers(0, 2, k).astype(np.int8),
        rng.integers(0, 5000, k).astype(np.int32),
        rng.integers(0, 2**31 - 1, k).astype(np.int32),
        rng.integers(0, 2**31 - 1, k).astype(np.int32),
    )


@pytest.mark.parametrize("size", [1, 7, 1000, 1 << 16])
def test_rows_come_back_in_order_and_typed(size: int) -> None:
    rng = np.random.default_rng(size)
    spilled = SpilledRows()
    parts = [rows(rng, k) for k in (0, 5, 1, 2500, 17)]
    for part in parts:
        spilled.add(*part)
    want = [np.concatenate(column) for column in zip(*parts, strict=True)]
    blocks = list(spilled.blocks(size))
    assert all(len(b[0]) <= size for b in blocks)
    got = [np.concatenate(column) for column in zip(*blocks, strict=True)]
    assert [g.dtype for g in got] == [np.float64, np.int8, np.intc, np.int64, np.int64]
    for g, w in zip(got, want, strict=True):
        assert np.array_equal(g, w)
    assert spilled.n == len(want[0])
    types, pools = spilled.used()
    assert types.tolist() == sorted(set(want[1].tolist())) and pools.tolist() == sorted(set(want[2].tolist()))
    assert [len(c) for c in next(iter(SpilledRows().blocks(size)))] == [0] * 5  # none: one empty block


def test_the_file_goes_with_the_rows_without_a_warning() -> None:
    spilled = SpilledRows()
    spilled.add(*rows(np.random.default_rng(0), 10))
    fd = spilled._file.fileno()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        del spilled
        gc.collect()
    with pytest.raises(OSError):
        os.fstat(fd)  # (closed: the descriptor is gone, and the unnamed file with it)
    closed = SpilledRows()
    closed.close()
    assert closed._file.closed
