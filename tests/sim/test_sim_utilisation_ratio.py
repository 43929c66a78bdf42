"""The summary's ``utilisation`` ratio (``mropt.sim.utilisation.utilisation_ratio``): the same float as the
dots over the whole cluster columns, and what it holds.

The ratio was computed from each slot type's cluster rows gathered in pieces, joined, and their
capacities made floats: 24 bytes a row at its peak, the Alibaba day's peak under ``fair`` (6.1
million cluster rows; ``benchmarks/RESULTS.md``). It now writes each row's width and busy slots
into two float64 arrays made once, keeps the capacity as runs, and writes the capacities over the
busy slots for their dot: nothing a row is made at the end. Its float must stay the one of
``np.dot`` over whole float64 arrays (BLAS's order of the sum), bit for bit.
"""

from __future__ import annotations

import dataclasses
import random
import tracemalloc

import numpy as np
import pytest

from mropt.model.workload import Fault
from mropt.sim import recorder
from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy
from mropt.sim.summary import summarise
from mropt.sim.utilisation import _ClusterRows, utilisation_ratio

from sim_helpers import pooled_workload


def whole_columns_ratio(time: np.ndarray, busy: np.ndarray, capacity: np.ndarray, horizon: float) -> float:
    """The ratio as it was computed before (the whole columns joined): widths min(next time, T) -
    min(time, T), the last row's T - min(time, T), negative ones 0; the dots of the capacities and
    of the busy slots (float64) with them; the capacity before the first row the first row's."""
    edge = np.minimum(time, horizon)
    width = np.append(np.diff(edge), horizon - edge[-1])
    width[width < 0] = 0.0
    c = capacity.astype(float)
    lead = time[0] if time[0] > 0 else 0.0
    held = float(np.dot(c, width)) + float(c[0]) * min(lead, horizon)
    return float(np.dot(busy.astype(float), width)) / held


@pytest.mark.parametrize("mode", ["heartbeat", "event"])
def test_the_ratio_is_the_dot_over_the_whole_columns_bit_for_bit(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs with nodes going down and up (the capacity moves), the rows read in blocks of 7: each
    type's ratio is the whole columns' float (``_ClusterRows.ratio`` is unrounded), and so is a
    ``_ClusterRows`` whose arrays must grow (bound 1)."""
    monkeypatch.setattr(recorder, "UTILISATION_CHUNK", 7)
    rng = random.Random(f"utilisation-ratio-{mode}")
    moved = 0
    for k in range(6):
        w = pooled_workload(rng)
        down = float(rng.randint(2, 15))
        faults = (Fault("n1", down, down + rng.randint(1, 20)), Fault("n0", float(rng.randint(5, 30))))
        w = dataclasses.replace(w, faults=faults[: 1 + k % 2])
        sim = Simulation(w, make_policy(rng.choice(["fifo", "fair", "capacity"])), seed=k, mode=mode)
        rec = sim.run()
        horizon = rec.last_end()
        time, stype, pool, busy, cap = rec.utilisation_arrays()
        for code, name in enumerate(("map", "reduce")):
            at = (pool == 0) & (stype == code)
            want = whole_columns_ratio(time[at], busy[at], cap[at], horizon)
            moved += len(np.unique(cap[at])) > 1
            for bound in (rec.utilisation_rows_bound(), 1):
                rows = _ClusterRows(horizon, bound)
                for block in rec.utilisation_blocks():
                    here = (block[2] == 0) & (block[1] == code)
                    rows.add(block[0][here], block[3][here], block[4][here])
                got = rows.ratio()  # (the raw float, every last bit)
                assert got is not None and got == want, (k, name, bound)
        summary = summarise(rec, "x", {}, 0.0)
        assert summary["utilisation"] == utilisation_ratio(rec, horizon)
    assert moved >= 3  # the capacity moved in some runs


def test_the_ratio_makes_nothing_a_row_at_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """300,000 cluster rows in blocks, the capacity moving 4 times: the rows are held in the two
    arrays made at the start and 5 capacity runs; the ratio then allocates about a byte a row (the
    mask of negative widths), where joining the pieces and making the capacities floats took 24."""
    rng = np.random.default_rng(3)
    n, horizon = 300_000, 1e6
    time = np.cumsum(rng.integers(0, 5, n)).astype(float)
    busy = rng.integers(0, 100, n)
    cap = np.repeat([100, 90, 100, 80, 120], n // 5)
    rows = _ClusterRows(horizon, n)
    for lo in range(0, n, 4096):
        rows.add(time[lo : lo + 4096], busy[lo : lo + 4096], cap[lo : lo + 4096])
    assert [value for value, _ in rows.runs] == [100, 90, 100, 80, 120]
    tracemalloc.start()
    try:
        got = rows.ratio()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1.5 * n
    assert got == whole_columns_ratio(time, busy, cap, horizon)
