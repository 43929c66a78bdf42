"""Resuming reuses a run only when nothing that changes its result changed.

The run key covers the instance's content hash, the method, its checked parameters (the
profile's ``params`` and ``threads`` merged in), the time limit in force and the seed; not the
mropt version. A run whose settings changed runs again and replaces its row; rows of stores
written before (their key a JSON list) are reused when the settings they record are the same.
A folder holding another experiment's results is refused unless ``--force``.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mropt.cli.main import main
from mropt.harness.experiment import load_experiment, run_slot, stored_run_key
from mropt.harness.runner import results_frame, run_study
from mropt.harness.store import Store

BASE = """
name = "keys"
imports = ["tests.harness.fake_methods"]
time_limit = {limit}
method_seeds = [0]
methods = ["edf-greedy", {{name = "test-slow", params = {{delay = {delay}}}}}]
[[instances]]
generator = "admission"
seeds = [1]
params = {{jobs = 6}}
"""


def keys(write_experiment, text: str, name: str = "exp.toml") -> dict[str, str]:
    exp = load_experiment(write_experiment(text, name))
    return {r.slot: r.key for r in exp.runs()}


def test_the_key_covers_limit_params_seed_not_the_version(write_experiment):
    base = keys(write_experiment, BASE.format(limit=4, delay=0.01))
    assert len(base) == 2
    longer = keys(write_experiment, BASE.format(limit=20, delay=0.01))
    assert longer.keys() == base.keys() and all(longer[s] != base[s] for s in base)  # same slots, new keys
    other = keys(write_experiment, BASE.format(limit=4, delay=0.02))
    assert sum(other[s] != base[s] for s in base) == 1  # only test-slow's parameters changed
    same = keys(write_experiment, BASE.format(limit=4.0, delay=0.010))  # 4 and 4.0: the same run
    assert same == base
    seeds = keys(write_experiment, BASE.format(limit=4, delay=0.01).replace("method_seeds = [0]", "method_seeds = [1]"))
    assert not set(seeds.values()) & set(base.values())
    key = json.loads(next(iter(base.values())))
    assert set(key) == {"experiment", "instance", "label", "method", "params", "profile", "seed", "time_limit"}
    assert "version" not in json.dumps(key)


def test_the_key_covers_the_profile_contents(write_experiment, tmp_path):
    def profile(threads: int, workers: int | None = None) -> dict[str, str]:
        extra = "" if workers is None else f"\n[params]\nweight_bits = {workers}\n"
        (tmp_path / "p.toml").write_text(f'backend = "cpsat"\ntime_limit = 5\nthreads = {threads}\n{extra}')
        return keys(
            write_experiment,
            'methods = [{name = "cpsat", profiles = ["p.toml"]}]\n'
            '[[instances]]\ngenerator = "admission"\nseeds = [1]\nparams = {jobs = 4}\n',
        )

    one, two, bits = profile(1), profile(2), profile(1, 30)
    assert one.keys() == two.keys() == bits.keys()
    assert len({*one.values(), *two.values(), *bits.values()}) == 3
    assert json.loads(next(iter(two.values())))["params"]["threads"] == 2


def test_an_old_format_row_is_recognised_by_the_settings_it_records():
    params = {"delay": 0.01}
    row = {
        "run_key": run_slot("e", "h" * 64, "test-slow", "-", 0),
        "experiment": "e",
        "instance_hash": "h" * 64,
        "method": "test-slow",
        "method_name": "test-slow",
        "method_params": json.dumps(params),
        "profile": "-",
        "seed": 0,
        "time_limit": 4.0,
    }
    from mropt.harness.experiment import run_key

    assert stored_run_key(row) == run_key(
        "e", "h" * 64, "test-slow", "-", 0, method="test-slow", params=params, time_limit=4.0
    )
    assert stored_run_key({**row, "method_params": None}) is None  # cannot tell: runs again


@pytest.mark.slow
def test_changed_settings_run_again_and_replace_their_rows(write_experiment, tmp_path):
    out = tmp_path / "out"

    def run(limit: float, delay: float):  # noqa: ANN202
        return run_study(load_experiment(write_experiment(BASE.format(limit=limit, delay=delay))), out, progress=False)

    assert run(4, 0.01).ran == 2
    assert run(4, 0.01).ran == 0
    again = run(20, 0.01)  # the bug: raising the limit re-ran nothing and reported the old results
    assert (again.ran, again.skipped) == (2, 0)
    df = results_frame(out)
    assert len(df) == 2 and set(df["time_limit"]) == {20.0}
    assert run(20, 0.02).ran == 1  # test-slow's parameter changed, edf-greedy's run is kept
    df = results_frame(out)
    assert len(df) == 2 and json.loads(df.set_index("method").loc["test-slow", "method_params"]) == {"delay": 0.02}
    # a store written before the key covered the settings: its keys are the slots
    for f in [*(out / "runs").glob("*.parquet"), *(out / "compacted").glob("*.parquet")]:
        t = pq.read_table(f)
        old = [
            run_slot(e, h, m, p, s)
            for e, h, m, p, s in zip(
                *(t.column(c).to_pylist() for c in ("experiment", "instance_hash", "method", "profile", "seed"))
            )
        ]
        pq.write_table(
            t.set_column(t.schema.get_field_index("run_key"), "run_key", pa.array(old)).drop(["relaxation"]), f
        )
    assert run(20, 0.02).ran == 0  # the same settings, recorded in the rows: reused
    assert run(20, 0.03).ran == 1
    # another experiment joins the folder only with force, and its rows keep their own slots
    other = load_experiment(write_experiment(BASE.format(limit=20, delay=0.03).replace('"keys"', '"other"'), "o.toml"))
    assert run_study(other, out, progress=False, force=True).ran == 2
    assert len(results_frame(out)) == 4


def test_another_experiment_in_the_folder_is_refused_with_one_line(write_experiment, tmp_path):
    out = tmp_path / "out"
    store = Store(out)
    store.create()
    store.write_row(
        {
            "experiment": "first",
            "run_key": "k",
            "instance_hash": "h",
            "method": "m",
            "seed": 0,
            "profile": "-",
            "status": "feasible",
            "objective": 1.0,
            "verified": True,
        }
    )
    exp = write_experiment(
        'name = "second"\nmethods = ["edf-greedy"]\n[[instances]]\ngenerator = "admission"\n'
        "seeds = [1]\nparams = {jobs = 4}\n"
    )
    err = io.StringIO()
    with redirect_stderr(err):
        assert main(["gap", str(exp), "--out", str(out), "--no-progress"]) == 2
    message = err.getvalue()
    assert message.count("\n") == 1 and "'first'" in message and "'second'" in message and "--force" in message
    assert len(store.read()) == 1
