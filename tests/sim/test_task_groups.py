"""Finding many rows' task groups at once (``mropt.sim.task_groups.TaskGroups``) and the distinct codes of
the recorder's blocks (``mropt.sim.ended_attempts._distinct``), against plain Python: ``bisect_right`` over
each stage's group starts (``Stage.demand_of``'s rule) and ``sorted(set(...))``.
"""

from __future__ import annotations

from bisect import bisect_right

import numpy as np
import pytest

from mropt.sim.ended_attempts import _distinct
from mropt.sim.task_groups import TaskGroups


def random_jobs(rng: np.random.Generator, groups_per_stage: tuple[int, int]) -> list[list[list[int]]]:
    low, high = groups_per_stage
    return [
        [[int(c) for c in rng.integers(0, 4, rng.integers(low, high + 1))] for _ in range(rng.integers(1, 4))]
        for _ in range(rng.integers(1, 30))
    ]


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("shape", [(1, 1), (1, 4), (0, 3)])
def test_each_rows_group_is_the_last_one_starting_at_or_before_its_task(seed: int, shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(seed)
    jobs = random_jobs(rng, shape)
    groups = TaskGroups(jobs)
    assert groups.one_each == all(len(stage) == 1 for stages in jobs for stage in stages)
    rows, want, flat = [], [], 0
    for j, stages in enumerate(jobs):
        for s, counts in enumerate(stages):
            starts = [sum(counts[:g]) for g in range(len(counts))]
            for task in range(sum(counts)):
                rows.append((j, s, task))
                want.append(flat + bisect_right(starts, task) - 1)
            flat += len(counts)
    if not rows:
        return
    job, stage, task = (np.array(c, dtype=np.int64) for c in zip(*rows, strict=True))
    assert groups.of(job, stage, task).tolist() == want


@pytest.mark.parametrize(
    "blocks",
    [
        [[3, 1, 3], [], [0, 7]],
        [[5]],
        [[-2, 4], [1]],  # a negative code: sorted by np.unique
        [[1 << 30, 2], [2]],  # beyond the flags' table
        [[], []],
    ],
)
def test_the_distinct_codes_are_the_sorted_set(blocks: list[list[int]]) -> None:
    arrays = [np.array(b, dtype=np.int64) for b in blocks]
    got = _distinct(arrays, np.intc)
    assert got.dtype == np.intc and got.tolist() == sorted({v for b in blocks for v in b})


def test_the_distinct_floats_are_the_sorted_set() -> None:
    got = _distinct([np.array([2.5, 1.0]), np.array([1.0, np.nan])], np.float64)
    assert got[:2].tolist() == [1.0, 2.5] and np.isnan(got[2]) and len(got) == 3


def test_a_few_large_codes_are_sorted_not_flagged(monkeypatch: pytest.MonkeyPatch) -> None:
    # (two values up to 10**6: no table of a million flags for them)
    monkeypatch.setattr(np, "flatnonzero", None)  # the flags' path would fail
    assert _distinct([np.array([10**6, 3], dtype=np.int64)], np.int64).tolist() == [3, 10**6]
