"""Dominant shares over time from a finished run (mropt.sim.shares), on a hand scenario."""

from __future__ import annotations

import numpy as np
import pytest

from mropt.model.errors import InputError
from mropt.sim.shares import dominant_shares

from sim_helpers import run, workload


def scenario() -> object:
    """One node <6 CPU, 8 GB>: user a's one task <1, 2> for 10 s, user b's two tasks <2, 1> for 5 s.

    Everything fits at 0: a's dominant share is mem 2/8 = 0.25, b's is CPU 4/6 while its tasks run.
    """
    node = [{"id": "n", "resources": {"cpu": 6, "mem": 8}}]
    jobs = [
        {
            "id": "A",
            "user": "a",
            "stages": [{"type": "map", "tasks": [{"duration": 10, "demand": {"cpu": 1, "mem": 2}}]}],
        },
        {
            "id": "B",
            "user": "b",
            "stages": [{"type": "map", "tasks": [{"duration": 5, "count": 2, "demand": {"cpu": 2, "mem": 1}}]}],
        },
    ]
    return workload(node, jobs)


def test_dominant_shares_by_hand() -> None:
    sim, _ = run(scenario(), "drf")
    s = dominant_shares(sim, 2.5)
    assert s["time"].tolist() == [0.0, 2.5, 5.0, 7.5, 10.0]
    assert s["users"].tolist() == [2, 2, 1, 1, 0]
    a, b = 0.25, 4 / 6
    np.testing.assert_allclose(s["max_share"], [b, b, a, a, 0.0])
    np.testing.assert_allclose(s["mean_share"], [(a + b) / 2] * 2 + [a, a, 0.0])
    jain = (a + b) ** 2 / (2 * (a * a + b * b))
    np.testing.assert_allclose(s["jain"], [jain, jain, 1.0, 1.0, 0.0])
    np.testing.assert_allclose(s["use_cpu"], [5 / 6, 5 / 6, 1 / 6, 1 / 6, 0.0])
    np.testing.assert_allclose(s["use_mem"], [4 / 8, 4 / 8, 2 / 8, 2 / 8, 0.0])


def test_step_is_checked() -> None:
    sim, _ = run(scenario(), "drf")
    with pytest.raises(InputError, match="'step' must be > 0, got 0"):
        dominant_shares(sim, 0)
