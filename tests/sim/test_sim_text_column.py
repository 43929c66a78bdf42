"""A text column of the attempt table (:class:`mropt.sim.tasks_table.TextColumn`) against a lookup by hand.

Each row's code names a value (``value_of``); the column holds the values of the codes the run used
(``used``, sorted). Where every code from 0 on is used (all the jobs, all the nodes: the usual case)
a code is its own place and no search is made; otherwise it is found in ``used``. Either way the rows'
values, as a list and as an Arrow array, are the values of their codes, whatever the codes' integer type.
"""

from __future__ import annotations

import numpy as np
import pytest

from mropt.sim.tasks_table import TextColumn

NAMES = ["j0", "j1", "j2", "j3", "j4", "j5", None]


@pytest.mark.parametrize(
    "used",
    [[0, 1, 2, 3, 4, 5], [0], [1, 2, 3], [0, 2, 5], [0, 1, 2, 4], [2, 6], [0, 1, 2, 3, 4, 5, 6], [-1, 1]],
)
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_the_rows_get_the_values_of_their_codes(used, dtype):
    rng = np.random.default_rng(len(used))
    codes = rng.choice(np.array(used), 200).astype(dtype)
    column = TextColumn(NAMES.__getitem__, np.array(used, dtype=dtype))
    assert column.dense == (used == list(range(len(used))))
    want = [NAMES[c] for c in codes.tolist()]
    got = column.words(codes)
    assert got == want
    assert column(codes).to_pylist() == want
    same = {id(v) for v in got if v is not None}
    assert len(same) <= len(used)  # one object per value used, shared by its rows
