"""The compiled ``fair`` run's utilisation rows (written as it runs: ``Recorder.keep_spilled_rows``) and the summary.

A compiled ``fair`` run makes the utilisation rows itself, at the end of each instant, into a temporary
file (:mod:`mropt.sim.spilled_rows`), so that neither the summary's utilisation ratio nor ``--out`` builds
them from the ended attempts. They must be exactly the rows the Python engine's run builds (every pool's,
with the same pool names), and the summary the same, on random workloads of the shape the loop runs
(``drf``'s random workloads, with map and some reduce slots).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy
from mropt.sim.run import simulate
from mropt.sim.utilisation import utilisation_ratio

from compiled_helpers import slotted

pytest.importorskip("numba")


@pytest.fixture(scope="module", name="fair_engine")
def fair_engine_fixture() -> Any:
    from mropt.sim.compiled import fair_engine

    return fair_engine


def same_columns(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal tables of columns: the same names, each column equal (arrays element by element, exactly)."""
    return list(a) == list(b) and all(np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in a)


@pytest.mark.parametrize("chunk", range(4))
def test_rows_are_the_python_runs_rows(fair_engine: Any, chunk: int) -> None:
    for seed in range(chunk * 30, chunk * 30 + 30):
        w = slotted(seed)
        sim = Simulation(w, make_policy("fair", {}))
        rec = sim.run()
        compiled = Simulation(w, make_policy("fair", {}))
        mine = fair_engine.run_compiled(compiled)
        assert mine._spilled is not None and mine._spilled.n > 0, seed  # (the rows came from the file)
        for got, want in zip(mine.utilisation_arrays(), rec.utilisation_arrays(), strict=True):
            assert got.dtype == want.dtype and np.array_equal(got, want), seed
        assert mine.pools == rec.pools, seed
        assert [a.tolist() for a in mine.utilisation_used()] == [a.tolist() for a in rec.utilisation_used()], seed
        assert same_columns(mine.utilisation_columns(), rec.utilisation_columns()), seed
        horizon = max(sim.now, 1.0)
        assert repr(utilisation_ratio(mine, horizon)) == repr(utilisation_ratio(rec, horizon)), seed


def test_rows_of_a_run_stopped_at_until_are_the_python_runs_rows(fair_engine: Any) -> None:
    for seed in range(20):
        w = slotted(seed)
        until = float(seed % 7 + 1)
        sim = Simulation(w, make_policy("fair", {}), until=until)
        rec = sim.run()
        compiled = Simulation(w, make_policy("fair", {}), until=until)
        mine = fair_engine.run_compiled(compiled)
        assert compiled.stopped == sim.stopped and compiled.now == sim.now, seed
        assert same_columns(mine.utilisation_columns(), rec.utilisation_columns()), seed


def test_the_summary_and_the_out_tables_of_both_engines_are_the_same(fair_engine: Any, tmp_path: Any) -> None:
    from mropt.sim.outputs import run_tables

    for seed in range(10):
        w = slotted(seed)
        py = simulate(w, "fair", engine="python")
        cc = simulate(w, "fair", engine="compiled")
        assert cc.summary.pop("engine") == "compiled"
        for summary in (py.summary, cc.summary):
            summary.pop("wall_time")
        assert repr(cc.summary) == repr(py.summary), seed
        mine, theirs = run_tables(cc), run_tables(py)
        assert list(mine) == list(theirs)
        for name, table in mine.items():
            other = theirs[name]
            assert table.schema == other.schema, (seed, name)
            for column in table.column_names:  # (NaN equal to NaN: ``Table.equals`` has them unequal)
                a, b = table[column].to_numpy(zero_copy_only=False), other[column].to_numpy(zero_copy_only=False)
                nan = a.dtype.kind == "f"
                assert np.array_equal(a, b, equal_nan=nan), (seed, name, column)


def test_closing_the_run_removes_its_rows_file_at_once(fair_engine: Any) -> None:
    # (the recorder and its simulation refer to each other: without close the file waits for the cyclic
    # garbage collector; a harness worker runs many simulations in one process)
    run = simulate(slotted(3), "fair", engine="compiled")
    spilled = run.recorder._spilled
    assert spilled is not None and not spilled._file.closed
    run.close()
    assert spilled._file.closed
    python_run = simulate(slotted(3), "fair", engine="python")
    python_run.close()  # (nothing outside memory: a no-op)
    assert python_run.recorder.utilisation_arrays()[0].size > 0
