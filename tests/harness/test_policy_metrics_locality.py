"""The study's locality shares (:func:`mropt.harness.policy_metrics.run_metrics`) against counts by hand.

``locality_node`` and ``locality_rack`` are the node-local and rack-local shares of the attempts that
have a locality level: an attempt without one (None, NaN from a Parquet file, pandas' NA) counts in
neither the numerator nor the denominator; no attempt with a level gives None. Computed by hand here
for the recorder's column dicts and for frames, Arrow-backed strings included.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from mropt.harness.policy_metrics import run_metrics
from mropt.model.workload import WorkloadInstance

WORKLOAD = WorkloadInstance.from_dict(
    {
        "kind": "workload",
        "schema_version": 1,
        "cluster": {"nodes": [{"id": "n0", "map_slots": 1, "reduce_slots": 1}]},
        "jobs": [{"id": "j", "stages": [{"type": "map", "tasks": [{"duration": 1.0}]}]}],
    }
)
JOBS = {
    "job_id": ["j"],
    "submit_time": [0.0],
    "finish": [1.0],
    "deadline": [None],
    "on_time": [None],
    "accepted": [True],
}
#: 7 attempts with a level (3 node, 2 rack, 2 any) among 11: shares 3/7 and 2/7
LEVELS = ["node", None, "rack", "any", "node", math.nan, "rack", None, "any", "node", math.nan]


def shares(tasks: object) -> tuple[object, object]:
    got = run_metrics(WORKLOAD, JOBS, tasks)
    return got["locality_node"], got["locality_rack"]


def test_the_shares_count_only_the_attempts_with_a_level():
    want = (float(f"{3 / 7:.12g}"), float(f"{2 / 7:.12g}"))
    assert shares({"locality": LEVELS}) == want
    assert shares(pd.DataFrame({"locality": LEVELS})) == want
    arrow = pd.DataFrame({"locality": pd.array([v if isinstance(v, str) else None for v in LEVELS], "string[pyarrow]")})
    assert shares(arrow) == want


@pytest.mark.parametrize("column", [[], [None, math.nan]])
def test_no_attempt_with_a_level_gives_no_share(column):
    assert shares({"locality": column}) == (None, None)


def test_one_level_only():
    assert shares({"locality": ["any", None, "any"]}) == (0.0, 0.0)
    assert shares({"locality": ["node"] * 5 + [None] * 1000}) == (1.0, 0.0)
