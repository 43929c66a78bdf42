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


def test_two_readers_at_once_each_read_every_row() -> None:
    # (a reader's blocks are read at their own offsets: the summary and --out may go through them together)
    spilled = SpilledRows()
    spilled.add(*rows(np.random.default_rng(1), 10))
    first, second = spilled.blocks(3), spilled.blocks(3)
    a = [next(first)]
    b = [next(second), next(second)]
    a += list(first)
    b += list(second)
    for got in (a, b):
        assert np.array_equal(np.concatenate([block[0] for block in got]), next(iter(spilled.blocks(100)))[0])


def test_the_cluster_rows_are_counted_by_type() -> None:
    spilled = SpilledRows()
    time = np.arange(6, dtype=float)
    spilled.add(time, np.array([0, 1, 0, 0, 0, 1], np.int8), np.array([0, 0, 3, 0, 0, 4], np.int32), time, time)
    assert spilled.cluster == [3, 1]


def test_a_full_disk_is_a_one_line_input_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from mropt.model.errors import InputError
    from mropt.sim import spilled_rows

    def full(*_: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spilled_rows.os, "pwrite", full)
    with pytest.raises(InputError, match="No space left on device") as caught:
        SpilledRows().add(*rows(np.random.default_rng(2), 3))
    assert "\n" not in str(caught.value) and "TMPDIR" in str(caught.value)
