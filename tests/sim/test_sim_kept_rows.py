"""The utilisation rows built after a run, kept from the first read to the end for the next reads when
they are few (``Recorder._built_rows``, ``recorder.KEEP_BUILT_ROWS``; issue 32: the summary reads them
and ``--out`` writes them, a second build of a few million rows was some 5 s of an Alibaba day).

Every read gives the rows of a fresh run's first read, the second without building them again (a spy
on ``build_rows``); rows beyond the bound are built again at each read and never kept; kept rows are
read-only, so no reader can change what the next one reads.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from test_sim_drf_reference import random_workload

from mropt.sim import recorder
from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy


def _rows(rec: recorder.Recorder) -> list[np.ndarray]:
    return [np.concatenate(column) for column in zip(*rec.utilisation_blocks(), strict=True)]


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = recorder.build_rows

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(recorder, "build_rows", spy)
    return calls


@pytest.mark.parametrize("policy", ["drf", "ddrf"])
def test_a_second_read_is_the_first_without_a_build(policy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder, "UTILISATION_CHUNK", 5)  # (rows in many blocks)
    calls = _counting(monkeypatch)
    rng = random.Random(f"kept-rows-{policy}")
    for k in range(20):
        w = random_workload(rng)
        params = {"e1": 1, "e2": 2} if policy == "ddrf" else {}
        rec = Simulation(w, make_policy(policy, params)).run()
        fresh = _rows(Simulation(w, make_policy(policy, params)).run())
        calls.clear()
        first, second = _rows(rec), _rows(rec)
        assert len(calls) == 1, f"workload {k}: {len(calls)} builds for two reads"
        for a, b, c in zip(first, second, fresh, strict=True):
            assert a.dtype == b.dtype == c.dtype and np.array_equal(a, c) and np.array_equal(b, c), f"workload {k}"
        assert all(not column.flags.writeable for block in rec.utilisation_blocks() for column in block)


def test_rows_beyond_the_bound_are_built_at_each_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder, "UTILISATION_CHUNK", 3)
    monkeypatch.setattr(recorder, "KEEP_BUILT_ROWS", 4)
    calls = _counting(monkeypatch)
    rng = random.Random("kept-rows-bound")
    w = random_workload(rng)
    while True:  # a workload of more rows than the bound
        rec = Simulation(w, make_policy("drf", {})).run()
        if sum(len(block[0]) for block in rec.utilisation_blocks()) > 4:
            break
        w = random_workload(rng)
    calls.clear()
    first, second = _rows(rec), _rows(rec)
    assert len(calls) == 2 and rec._kept_rows is None
    assert all(np.array_equal(a, b) for a, b in zip(first, second, strict=True))


def test_a_read_left_early_keeps_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder, "UTILISATION_CHUNK", 2)
    calls = _counting(monkeypatch)
    w = random_workload(random.Random("kept-rows-early"))
    rec = Simulation(w, make_policy("drf", {}), record_utilisation=True).run()
    calls.clear()
    next(iter(rec.utilisation_blocks()))  # (a reader that stops after its first block)
    assert rec._kept_rows is None
    assert _rows(rec) and len(calls) == 2
