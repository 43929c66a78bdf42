"""The capacity sweep's point order (:func:`mropt.sim.verify_capacity._sweep_order`) against ``np.lexsort``.

The sweep visits a node's points in time order, an end before a start at the same instant, ties in
table order; the nodes one after another by rank. ``np.lexsort((is_start, time, rank))`` states that
order directly; the check sorts by two stable argsorts instead (faster, issue 32), which must give the
very same permutation: with many ties of time, NaN times, ties of both time and kind, few and many
nodes (a rank past 2^15 is not sorted as 16-bit).
"""

from __future__ import annotations

import numpy as np
import pytest

from mropt.sim.verify_capacity import _sweep_order


def lexsorted(time: np.ndarray, rank: np.ndarray) -> np.ndarray:
    m = len(rank)
    return np.lexsort((np.arange(2 * m) < m, time, np.tile(rank, 2)))


@pytest.mark.parametrize("nodes", [1, 3, 600, 2**15 - 1, 2**15, 40_000])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_order_is_lexsorts(nodes, seed):
    rng = np.random.default_rng([seed, nodes])
    m = int(rng.integers(1, 3000))
    rank = rng.integers(0, nodes, m)
    rank[: min(m, 3)] = nodes - 1  # the highest rank present
    start = rng.choice([0.0, 0.5, 1.0, 2.0, 7.25], m)  # many ties
    end = start + rng.choice([0.0, 0.5, 1.0], m)  # zero-length attempts: an end and a start at one instant
    end[rng.random(m) < 0.05] = np.nan
    start[rng.random(m) < 0.02] = np.nan
    time = np.concatenate([start, end])
    got = _sweep_order(time, rank, nodes)
    assert got.dtype.kind == "i"
    np.testing.assert_array_equal(got, lexsorted(time, rank))


def test_one_point_pair_and_equal_everything():
    time = np.array([1.0, 1.0])
    np.testing.assert_array_equal(_sweep_order(time, np.array([0]), 1), [1, 0])  # the end first
    m = 50
    time = np.ones(2 * m)
    np.testing.assert_array_equal(_sweep_order(time, np.zeros(m, np.int64), 1), np.r_[m : 2 * m, 0:m])
