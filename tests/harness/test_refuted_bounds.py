"""A bound that a verified plan refutes is never a reference.

The bug: an exact method that returned the valid empty plan as ``optimal`` with bound 0
made 0 the instance's best bound although verified plans were worth more, so every row
got ``gap_to_bound = 0`` (real heuristics with gaps of 16.7 % and 26.9 % among them) and
``reference.solu`` tagged the best value ``=opt=``. Now such a bound (or optimum) is
refused whatever the order the rows arrive in, the row is flagged ``bound_refuted``, and
``mropt gap`` and ``mropt report`` warn, naming method and instance. The expected numbers
are computed by hand from the values in each test.
"""

from __future__ import annotations

import itertools
import sys

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mropt.harness import reference
from mropt.harness.reference import Reference
from mropt.harness.report import instance_table, method_table, prepare, refuted_warning
from mropt.harness.runner import results_frame
from mropt.harness.store import COLUMNS, SCHEMA, Store

from .conftest import ROOT
from cli_capture import run_cli

H = "c" * 64  # an instance hash


@pytest.fixture(autouse=True)
def fresh_warnings():
    reference._WARNED.clear()


def row(method: str, objective: float | None, *, kind: str = "admission", **kw) -> dict:
    return {
        "instance_hash": H,
        "instance_id": "inst",
        "kind": kind,
        "method": method,
        "method_name": method,
        "status": "feasible",
        "objective": objective,
        "bound": None,
        "verified": True,
        "exact": False,
        "relaxation": False,
        **kw,
    }


def tags(path) -> list[list[str]]:
    """The lines of a reference file that are not comments: tag, instance hash, value."""
    return [ln.split()[:3] for ln in path.read_text().splitlines() if not ln.startswith("#")]


def learn(*rows: dict) -> Reference:
    ref = Reference()
    for r in rows:
        ref.add_row(r)
    return ref


# -- the reference, row by row ------------------------------------------------------------------
def test_an_empty_plan_claimed_optimal_is_no_bound_and_no_proof_in_any_order(tmp_path):
    heuristic = row("edf-greedy", 42.0)
    wrong = row("wrong", 0.0, status="optimal", exact=True, bound=0.0)
    ideal = row("ideal", None, status="bound", bound=50.0)
    for order in itertools.permutations([heuristic, wrong, ideal]):
        ref = learn(*order)
        e = ref.entries[H]
        assert (e.value, e.tag, e.bound) == (42.0, "best_known", 50.0), order
        assert ref.gaps(heuristic)["gap_to_bound"] == pytest.approx(8 / 50)  # against ideal's 50, not the 0
        assert ref.gaps(heuristic)["bound_refuted"] is False and ref.gaps(ideal)["bound_refuted"] is False
        assert ref.gaps(wrong)["bound_refuted"] is True
        assert ref.gaps(wrong)["gap"] == 1.0  # its plan is still a plan: 0 against 42
        assert ref.refuted(wrong) == (0.0, 42.0)
    ref.save(tmp_path / "reference.solu")
    assert tags(tmp_path / "reference.solu") == [["=sense=", "max"], ["=best=", H, "42"], ["=bound=", H, "50"]]


def test_without_another_bound_the_gap_to_bound_is_missing_never_zero(tmp_path):
    heuristic = row("edf-greedy", 42.0)
    wrong = row("wrong", 0.0, status="optimal", exact=True, bound=0.0)
    for rows in ([heuristic, wrong], [wrong, heuristic]):
        ref = learn(*rows)
        assert (ref.entries[H].tag, ref.entries[H].bound) == ("best_known", None)
        assert ref.gaps(heuristic)["gap_to_bound"] is None and ref.gaps(heuristic)["gap"] == 0.0
    ref.save(tmp_path / "r.solu")
    assert tags(tmp_path / "r.solu") == [["=sense=", "max"], ["=best=", H, "42"]]


def test_minimisation_a_claimed_optimum_above_a_verified_plan_is_refuted():
    """Priority minimises slots: `mpsa` verifies 138, a wrong exact method claims 139 optimal."""
    mpsa = row("mpsa", 138.0, kind="priority")
    wrong = row("wrong", 139.0, kind="priority", status="optimal", exact=True, bound=139.0)
    lower = row("lb", None, kind="priority", status="bound", bound=130.0)
    for order in itertools.permutations([mpsa, wrong, lower]):
        ref = learn(*order)
        e = ref.entries[H]
        assert (e.sense, e.value, e.tag, e.bound) == ("min", 138.0, "best_known", 130.0), order
        assert ref.gaps(mpsa)["gap_to_bound"] == pytest.approx(8 / 130)
        assert ref.gaps(wrong)["bound_refuted"] is True and ref.gaps(wrong)["gap"] == pytest.approx(1 / 138)
        assert ref.gaps(lower)["bound_refuted"] is False
    # an optimum claimed without a bound: the objective is the claim
    ref = learn(mpsa, row("wrong", 139.0, kind="priority", status="optimal", exact=True))
    assert ref.refuted(row("wrong", 139.0, kind="priority", status="optimal", exact=True)) == (139.0, 138.0)
    assert ref.entries[H].tag == "best_known"


@pytest.mark.parametrize(("kind", "sign"), [("admission", -1), ("fairness", -1), ("priority", 1)])
def test_only_beyond_the_objective_tolerance(kind, sign):
    """A bound 1e-12 (relative) on the wrong side is float noise: kept, and it proves the value optimal;
    1e-6 on the wrong side is a wrong bound."""
    plan = row("h", 0.1375, kind=kind)
    noisy = row("b", None, kind=kind, status="bound", bound=0.1375 * (1 + sign * 1e-12))
    ref = learn(plan, noisy)
    assert ref.gaps(noisy)["bound_refuted"] is False and ref.entries[H].tag == "optimal"
    wrong = row("b", None, kind=kind, status="bound", bound=0.1375 * (1 + sign * 1e-6))
    ref = learn(plan, wrong)
    assert ref.gaps(wrong)["bound_refuted"] is True
    assert (ref.entries[H].tag, ref.entries[H].bound) == ("best_known", None)


def test_a_relaxation_optimum_below_an_integer_plan_is_refuted():
    lp = row("drf-lp", 0.1, kind="fairness", status="optimal", exact=True, bound=0.1, relaxation=True)
    drf = row("drf", 0.125, kind="fairness")
    ref = learn(lp, drf)
    assert ref.gaps(lp)["bound_refuted"] is True and ref.entries[H].bound is None


def test_a_plan_verify_rejected_refutes_nothing_and_a_heuristic_claims_no_proof():
    ideal = row("ideal", None, status="bound", bound=50.0)
    liar = row("liar", 1e9, verified=False)
    lucky = row("h", 40.0, status="optimal")  # a heuristic's "optimal" proves nothing, so claims nothing
    ref = learn(ideal, liar, lucky)
    assert ref.entries[H].bound == 50.0 and ref.gaps(ideal)["bound_refuted"] is False
    assert ref.gaps(lucky)["bound_refuted"] is False


def test_a_bound_from_a_file_that_a_verified_plan_refutes_is_dropped(tmp_path):
    path = tmp_path / "shipped.solu"
    path.write_text(f"=sense= max\n=bound= {H} 30 inst\n")
    ref = Reference.load(path)
    assert ref.entries[H].bound == 30.0
    ref.add_row(row("edf-greedy", 42.0))
    assert (ref.entries[H].bound, ref.entries[H].tag) == (None, "best_known")
    ref.save(path)
    assert tags(path) == [["=sense=", "max"], ["=best=", H, "42"]]


def test_a_store_written_before_the_column_reads_false(tmp_path):
    old = pa.schema([f for f in SCHEMA if f.name != "bound_refuted"])
    values = {c: None for c in COLUMNS} | {"experiment": "e", "instance_hash": H, "method": "m", "seed": 0}
    store = Store(tmp_path)
    store.create()
    pq.write_table(pa.Table.from_pylist([{c: values[c] for c in old.names}], schema=old), store.runs / "old.parquet")
    assert store.read()["bound_refuted"].tolist() == [False]
    assert store.read_table(["bound_refuted"]).column("bound_refuted").to_pylist() == [False]


# -- a study, end to end ------------------------------------------------------------------------
@pytest.fixture
def wrong_methods():
    """Registers tests.harness.wrong_methods (and so do the study's workers, through ``imports``);
    removes its methods from the registry afterwards."""
    from mropt import registry
    from tests.harness import wrong_methods as module

    yield module
    for name in (module.EMPTY_OPTIMAL, module.ONE_SLOT_MORE):
        registry._METHODS.pop(name, None)
    sys.modules.pop(module.__name__, None)


STUDY = """
name = "{name}"
imports = ["tests.harness.wrong_methods"]
time_limit = 30
methods = {methods}
[[instances]]
generator = "{kind}"
seeds = [1]
params = {params}
"""


def test_a_study_refuses_the_bound_flags_the_row_and_warns(wrong_methods, write_experiment, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # `imports` names tests.harness.wrong_methods from the repository's root
    cases = {
        "admission": (
            "edf-greedy",
            wrong_methods.EMPTY_OPTIMAL,
            '["edf-greedy", "ideal", "{}"]',
            "{jobs = 8, nodes = 6}",
        ),
        "priority": ("mpsa", wrong_methods.ONE_SLOT_MORE, '["mpsa", "{}"]', "{arrival_rate = 0.0005}"),
    }
    for kind, (heuristic, wrong, methods, params) in cases.items():
        exp = write_experiment(
            STUDY.format(name=kind, methods=methods.format(wrong), kind=kind, params=params), f"{kind}.toml"
        )
        out = tmp_path / kind
        done = run_cli("gap", exp, "--out", out, "--no-progress", "-j", "2")
        assert done.code == 0, done.err
        df = results_frame(out).set_index("method")
        h, w = df.loc[heuristic], df.loc[wrong]
        assert w["status"] == "optimal" and bool(w["verified"]) and bool(h["verified"])
        assert h["objective"] != w["objective"]  # a verified plan beats the claimed optimum
        assert bool(w["bound_refuted"]) and not bool(h["bound_refuted"])
        assert h["reference"] == h["objective"] and h["reference_tag"] == "best_known"
        warning = [ln for ln in done.out.splitlines() if ln.startswith("  ") and wrong in ln]
        assert len(warning) == 1 and f"{wrong} on {w['instance_id']}" in warning[0], done.out
        assert "refutes" in done.out
        entry = Reference.load(out / "reference.solu").entries[h["instance_hash"]]
        assert (entry.value, entry.tag) == (h["objective"], "best_known")
        assert entry.bound != w["objective"] and "=opt=" not in [t[0] for t in tags(out / "reference.solu")]
        d = prepare(results_frame(out))
        assert method_table(d).frame.set_index("method").loc[wrong, "refuted"] == 1
        assert instance_table(d).frame.set_index("method").loc[wrong, "bound refuted"]
        assert f"{wrong} on {w['instance_id']}" in refuted_warning(d)
        if kind == "admission":  # the heuristic's gap to bound is against ideal's bound, never the refuted 0
            ideal = df.loc["ideal"]
            assert entry.bound == ideal["bound"] > h["objective"]
            assert h["gap_to_bound"] == pytest.approx((ideal["bound"] - h["objective"]) / ideal["bound"])
        else:  # no other bound: no gap to bound (the refuted 139 is none)
            assert entry.bound is None and pd.isna(h["gap_to_bound"])
