"""The report's tables, statistics and plots on hand-made frames (the reports a researcher
would publish): bootstrap, performance profiles, wins/ties/losses, rounding, natural order,
degenerate plots, LaTeX, per-kind references, instance names, and a whole report from a store."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from mropt.harness import formatting as fmt
from mropt.harness import report, stats
from mropt.harness.store import COLUMNS, Store


def run(
    instance: str,
    method: str,
    objective: float | None,
    *,
    gap: float | None = None,
    status: str = "feasible",
    exact: bool = False,
    seed: int = 0,
    group: str = "g",
    jobs: int = 8,
    tag: str | None = "optimal",
    reference: float | None = None,
    bound: float | None = None,
    gap_to_bound: float | None = None,
    wall_time: float = 0.1,
    time_limit: float | None = 10.0,
    kind: str = "admission",
    name: str | None = None,
    verified: bool = True,
) -> dict:
    """One results-frame row (the columns the report reads), gap given directly."""
    row = {c: None for c in COLUMNS}
    row.update(
        experiment="t",
        kind=kind,
        instance_id=name or instance,
        instance_hash=f"{instance:0<64}"[:64],
        instance_group=group,
        instance_params=json.dumps({"jobs": jobs}),
        jobs=jobs,
        method=method,
        method_name=method,
        exact=exact,
        profile="-",
        seed=seed,
        status=status,
        objective=objective,
        bound=bound,
        reference=reference,
        reference_tag=tag,
        gap=gap,
        gap_to_bound=gap_to_bound,
        time_limit=time_limit,
        wall_time=wall_time,
        verified=verified,
        run_key=f"{instance}|{method}|{seed}",
    )
    return row


def frame(*rows: dict) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


# -- bootstrap ------------------------------------------------------------------------------
def test_bootstrap_interval_is_reproducible_with_a_seed():
    values = np.random.default_rng(7).exponential(2.0, size=40)
    a = stats.bootstrap_mean_ci(values, seed=3, key="amb|all")
    assert a == stats.bootstrap_mean_ci(values, seed=3, key="amb|all")  # same seed, same interval, to the bit
    assert a != stats.bootstrap_mean_ci(values, seed=4, key="amb|all")
    assert a != stats.bootstrap_mean_ci(values, seed=3, key="edf|all")  # each cell its own stream
    lo, hi = a
    assert lo < values.mean() < hi and hi - lo < 2.0
    assert stats.bootstrap_mean_ci([5.0], seed=0) is None and stats.bootstrap_mean_ci([], seed=0) is None
    assert stats.bootstrap_mean_ci([2.0, 2.0, 2.0], seed=0) == (2.0, 2.0)
    big = stats.bootstrap_mean_ci(np.arange(10_000.0), seed=1, resamples=300)  # chunked: bounded memory
    assert 4800 < big[0] < big[1] < 5200


def test_gap_table_reports_std_and_the_seeded_interval():
    gaps = np.random.default_rng(1).exponential(0.05, size=12)
    rows = [run(f"i{k}", "amb", 100 * (1 - g), gap=g) for k, g in enumerate(gaps)]
    d = report.prepare(frame(*rows))
    t1 = report.method_table(d, seed=5).frame
    assert t1.loc[0, "std gap %"] == pytest.approx(np.std(100 * gaps, ddof=1))
    assert t1.loc[0, "mean gap %"] == pytest.approx(100 * gaps.mean())
    assert t1.loc[0, "mean gap CI low %"] < 100 * gaps.mean() < t1.loc[0, "mean gap CI high %"]
    assert report.method_table(d, seed=5).frame.equals(t1)
    assert not report.method_table(d, seed=6).frame.equals(t1)


# -- performance profile --------------------------------------------------------------------
def test_performance_profile_on_a_hand_made_frame():
    inf = math.inf
    costs = pd.DataFrame(
        {"A": [1.0, 4.0, inf, math.nan], "B": [2.0, 2.0, 3.0, math.nan]}, index=["p1", "p2", "p3", "p4"]
    )  # p3: A failed; p4: nobody solved it
    prof = stats.performance_profile(costs)
    at = stats.profile_at
    assert at(prof, "A", 1.0) == 0.25 and at(prof, "A", 1.99) == 0.25 and at(prof, "A", 2.0) == 0.5
    assert at(prof, "A", 1e9) == 0.5  # never solves p3 or p4
    assert at(prof, "B", 1.0) == 0.5 and at(prof, "B", 2.0) == 0.75 and at(prof, "B", 1e9) == 0.75
    assert list(prof[prof["method"] == "B"]["ratio"]) == [1.0, 2.0]
    assert (prof.groupby("method")["share"].apply(lambda s: s.is_monotonic_increasing)).all()


def test_gap_profile_counts_problems_within_each_gap():
    gaps = pd.DataFrame({"A": [0.0, 1.0, 3.0, math.nan], "B": [0.0, 0.0, 0.0, 0.0]})
    prof = stats.gap_profile(gaps)
    assert stats.profile_at(prof, "A", 0.0) == 0.25 and stats.profile_at(prof, "A", 1.0) == 0.5
    assert stats.profile_at(prof, "A", 5.0) == 0.75 and stats.profile_at(prof, "B", 0.0) == 1.0


# -- win / tie / loss -----------------------------------------------------------------------
def test_win_tie_loss_on_a_hand_made_frame():
    d = report.prepare(
        frame(
            run("i1", "A", 100.0, gap=0.0),
            run("i1", "B", 90.0, gap=0.1),
            run("i1", "C", 100.0, gap=0.0),
            # within the relative tolerance 1e-9 of each other: a tie, though the gaps differ
            run("i2", "A", 1000.0, gap=0.0),
            run("i2", "B", 1000.0 * (1 - 5e-10), gap=5e-10),
            run("i2", "C", 990.0, gap=0.01),
            # B has no plan (killed): A wins; C was not run on i3
            run("i3", "A", 50.0, gap=0.2),
            run("i3", "B", None, status="time_limit"),
            # nobody has a plan: not compared
            run("i4", "A", None, status="error"),
            run("i4", "B", None, status="error"),
            run("i4", "C", None, status="error"),
        )
    )
    t = report.win_tie_loss_table(d).frame.set_index(["method", "versus"])
    assert t.loc[("A", "B")].tolist() == [2, 1, 0, 3]  # wins i1, i3; tie i2
    assert t.loc[("A", "C")].tolist() == [1, 1, 0, 2]  # i3 not compared: C not run there
    assert t.loc[("B", "C")].tolist() == [1, 0, 1, 2]  # B wins i2, C wins i1
    assert (t["wins"] + t["ties"] + t["losses"] == t["compared"]).all()


def test_seeds_are_paired_problems():
    d = report.prepare(
        frame(
            run("i1", "A", 10.0, gap=0.0, seed=1),
            run("i1", "B", 9.0, gap=0.1, seed=1),
            run("i1", "A", 8.0, gap=0.2, seed=2),
            run("i1", "B", 10.0, gap=0.0, seed=2),
        )
    )
    assert report.win_tie_loss_table(d).frame.iloc[0].tolist() == ["A", "B", 1, 0, 1, 2]


# -- at the optimum, proven optimal, split of plans and bounds --------------------------------
def test_at_optimum_beside_proven_optimal_and_bounds_in_their_own_table():
    d = report.prepare(
        frame(
            run("i1", "exact", 100.0, gap=0.0, status="optimal", exact=True, reference=100.0),
            run("i2", "exact", 80.0, gap=0.0, status="time_limit", exact=True, reference=80.0, tag="best_known"),
            run("i1", "heur", 100.0, gap=0.0, reference=100.0),
            run("i2", "heur", 70.0, gap=0.125, reference=80.0, tag="best_known"),
            run("i1", "ideal", 120.0, gap=0.2, status="bound", bound=120.0, reference=100.0),
            run("i2", "ideal", 88.0, gap=0.1, status="bound", bound=88.0, reference=80.0, tag="best_known"),
        )
    )
    plans = report.method_table(d).frame.set_index("method")
    assert set(plans.index) == {"exact", "heur"}  # no bound among the plans
    assert plans.loc["exact", "proven optimal %"] == 50.0 and plans.loc["exact", "at optimum %"] == 50.0
    assert plans.loc["heur", "proven optimal %"] == 0.0 and plans.loc["heur", "at optimum %"] == 50.0
    bounds = report.bound_table(d).frame
    assert list(bounds["method"]) == ["ideal"] and bounds.loc[0, "mean bound gap %"] == pytest.approx(15.0)
    assert not [c for c in bounds.columns if c.endswith("gap %") and "bound gap" not in c]
    assert not [c for c in plans.columns if "bound" in c]
    inst = report.instance_table(d).frame
    ideal = inst[inst["method"] == "ideal"]
    assert ideal["gap %"].isna().all() and ideal["bound gap %"].notna().all()
    assert inst[inst["method"] != "ideal"]["bound gap %"].isna().all()


def test_kinds_table_counts_references_and_the_unproven_gap_to_bound():
    d = report.prepare(
        frame(
            run("i1", "x", 100.0, gap=0.0, status="optimal", exact=True),
            run("i2", "x", 80.0, gap=0.0, tag="best_known", gap_to_bound=0.05),
            run("i2", "y", 70.0, gap=0.125, tag="best_known", gap_to_bound=0.17),
            run("i3", "x", 60.0, gap=0.0, tag="best_known", gap_to_bound=0.02),
            run("i4", "x", 60.0, gap=0.0, tag="best_known"),  # no bound known
            run("i5", "x", None, status="infeasible", tag="infeasible"),
            run("i6", "x", None, status="error", tag=None),
            run("f1", "drf", 0.5, gap=0.0, kind="fairness"),
        )
    )
    t = report.kinds_table(d).frame.set_index("kind")
    a = t.loc["admission"]
    assert (a["instances"], a["proven"], a["best known"], a["infeasible"], a["no reference"]) == (6, 1, 3, 1, 1)
    assert a["unproven min gap to bound %"] == pytest.approx(2.0)
    assert a["unproven max gap to bound %"] == pytest.approx(5.0)  # i2's best plan, not y's 17 %
    assert a["unproven without bound"] == 1
    assert a["sense"] in ("max", "max (assumed)", "min", "min (assumed)")
    assert list(t.index) == ["admission", "fairness"]


def test_a_sense_column_is_read():
    d = report.prepare(frame(run("i1", "x", 3.0, gap=0.0, kind="priority")).assign(sense="min"))
    assert report.kinds_table(d).frame.loc[0, "sense"] == "min"


def test_instance_table_names_instances_not_hashes():
    d = report.prepare(
        frame(
            run("aaa", "x", 1.0, gap=0.0, name="drf-u3-s1"),
            run("bbb", "x", 1.0, gap=0.0, name="drf-u3-s1"),
            run("ccc", "x", 1.0, gap=0.0, name="amb-n40-s1"),
            run("ddd", "x", 1.0, gap=0.0, name="amb-n8-s1"),
        )
    )
    names = list(report.instance_table(d).frame["instance"])
    assert names == ["amb-n8-s1", "amb-n40-s1", "drf-u3-s1 [aaa00000]", "drf-u3-s1 [bbb00000]"]


# -- rounding and order ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "func, value, text",
    [
        (fmt.percent, 5.55555, "5.56"),
        (fmt.percent, -0.0, "0.00"),
        (fmt.percent, -1e-12, "0.00"),
        (fmt.percent, 100.0, "100.00"),
        (fmt.percent, None, "-"),
        (fmt.percent, math.nan, "-"),
        (fmt.seconds, 0.00083456, "0.000835"),
        (fmt.seconds, 12.345, "12.3"),
        (fmt.seconds, 1234.5, "1230"),
        (fmt.seconds, 2.0, "2"),
        (fmt.seconds, 1e-7, "0.0000001"),
        (fmt.value, 10070.0, "10070"),
        (fmt.value, 12345678.0, "12345678"),
        (fmt.value, 0.333333333, "0.333333"),
        (fmt.value, -3.0, "-3"),
        (fmt.number, 3, "3"),
        (fmt.number, 0.123456, "0.1235"),
        (fmt.number, 10070.5, "10070"),
    ],
)
def test_numbers_are_rounded_for_reading(func, value, text):
    assert func(value) == text


def test_tables_never_show_exponents_or_long_decimals():
    t = report.Table(
        "t",
        pd.DataFrame(
            {
                "method": ["a"],
                "objective": [10070.0],
                "mean gap %": [1.23456789],
                "mean time s": [0.000123456],
                "x": [1.007e4],
            }
        ),
        "t",
    )
    for text in (t.markdown(), t.html(), t.latex(), t.to_markdown_text()):
        assert "e+" not in text and "e-" not in text and "1.23456" not in text
        assert "10070" in text and "1.23" in text and "0.000123" in text


def test_groups_sort_numerically():
    assert sorted(["N = 40", "N = 8", "N = 12", "other"], key=fmt.natural_key) == ["N = 8", "N = 12", "N = 40", "other"]
    assert sorted(["jobs=8 size=150", "jobs=8 size=50.5", "jobs=10 size=1"], key=fmt.natural_key) == [
        "jobs=8 size=50.5",
        "jobs=8 size=150",
        "jobs=10 size=1",
    ]
    d = report.prepare(frame(*[run(f"i{n}", "amb", 1.0, gap=0.0, group=f"N = {n}", jobs=n) for n in (40, 8, 100, 12)]))
    assert list(report.gap_table(d).frame["group"]) == ["N = 8", "N = 12", "N = 40", "N = 100"]


# -- LaTeX ----------------------------------------------------------------------------------
def test_latex_tables_are_booktabs_and_escaped():
    t = report.Table(
        "Gap per method",
        pd.DataFrame({"method": ["edf_greedy"], "mean gap %": [1.5], "N": [8], "objective": [None]}),
        "methods",
    )
    tex = t.latex()
    lines = tex.splitlines()
    assert lines[1].startswith(r"\begin{tabular}{lrr") and lines[-1] == r"\end{tabular}"
    assert tex.index(r"\toprule") < tex.index(r"\midrule") < tex.index(r"\bottomrule")
    assert r"edf\_greedy" in tex and r"mean gap \%" in tex and "1.50" in tex and "--" in tex


# -- plots ----------------------------------------------------------------------------------
def test_value_range_is_never_empty():
    assert report.value_range(0.0, 0.0, nonnegative=True) == (-0.05, 1.0)
    lo, hi = report.value_range(5.0, 5.0)
    assert lo < 5.0 < hi and hi - lo >= 2.0
    assert report.value_range(1.0, 3.0) == pytest.approx((0.9, 3.1))


def test_degenerate_plots_are_left_out_with_a_note(tmp_path):
    d = report.prepare(
        frame(  # one N only, every plan at the reference
            run("i1", "cpsat", 100.0, gap=0.0, status="optimal", exact=True, reference=100.0),
            run("i1", "amb", 100.0, gap=0.0, reference=100.0),
            run("i2", "cpsat", 90.0, gap=0.0, status="optimal", exact=True, reference=90.0),
            run("i2", "amb", 90.0, gap=0.0, reference=90.0),
        )
    )
    notes = report.Notes()
    tto = report.time_to_optimality(d).frame
    figures = report._plots(d, tto, tmp_path, notes)
    names = {f.name for f in figures}
    assert "time_to_optimality" not in names and "gap_profile" not in names
    assert {"gap_distribution", "performance_profile", "solve_curves"} <= names
    assert any("single x value" in n for n in notes.items) and any("gap 0 %" in n for n in notes.items)
    assert not (tmp_path / "time_to_optimality.png").exists() and (tmp_path / "gap_distribution.png").exists()


# -- the whole report from a store (no workers) ---------------------------------------------
def write_store(root, rows):
    store = Store(root)
    store.create()
    for row in rows:
        store.write_row(row)
    return store


def store_rows() -> list[dict]:
    """Six admission instances (N = 8, 40, 12), an exact method, a heuristic and a bound."""
    rows = []
    for n in (8, 40, 12):
        for s in (1, 2):
            inst = f"n{n}s{s}"
            opt = 100.0 * n + s
            rows += [
                run(
                    inst,
                    "cpsat",
                    opt,
                    status="optimal",
                    exact=True,
                    bound=opt,
                    group=f"jobs={n}",
                    jobs=n,
                    name=f"amb-n{n}-s{s}",
                    wall_time=0.01 * n,
                ),
                run(
                    inst,
                    "edf-greedy",
                    opt * (0.9 if s == 1 else 1.0),
                    group=f"jobs={n}",
                    jobs=n,
                    name=f"amb-n{n}-s{s}",
                    wall_time=0.001,
                ),
                run(
                    inst,
                    "ideal",
                    opt * 1.1,
                    status="bound",
                    bound=opt * 1.1,
                    group=f"jobs={n}",
                    jobs=n,
                    name=f"amb-n{n}-s{s}",
                    wall_time=0.001,
                ),
            ]
    return rows


@pytest.mark.slow
def test_report_from_a_store_writes_every_file(tmp_path):
    write_store(tmp_path / "res", store_rows())
    text = report.write_report(tmp_path / "res", tmp_path / "rep", seed=1, resamples=200)
    out = tmp_path / "rep"
    for name in (
        "report.md",
        "report.html",
        "gaps.csv",
        "methods.csv",
        "time_to_optimality.csv",
        "bounds.csv",
        "kinds.csv",
        "instances.csv",
        "win_tie_loss.csv",
        "provenance.csv",
        "performance_profile.csv",
        "gap_profile.csv",
        "solve_curves.csv",
        "gap_distribution.png",
        "bound_gap_distribution.png",
        "performance_profile.png",
        "gap_profile.png",
        "solve_curves.png",
        "time_to_optimality.png",
        "time_to_optimality.pdf",
        "amb_figures.csv",
    ):
        assert (out / name).stat().st_size > 0, name
    for name in ("gaps", "methods", "bounds", "kinds", "instances", "win_tie_loss", "time_to_optimality", "provenance"):
        assert r"\toprule" in (out / f"{name}.tex").read_text(), name
    gaps = pd.read_csv(out / "gaps.csv")
    assert list(gaps["group"].unique()) == ["jobs=8", "jobs=12", "jobs=40"] and "ideal" not in set(gaps["method"])
    inst = pd.read_csv(out / "instances.csv")
    assert inst["instance"].str.startswith("amb-n").all() and list(inst["instance"].unique())[:2] == [
        "amb-n8-s1",
        "amb-n8-s2",
    ]
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") >= 6 and 'src="http' not in page
    assert "e+0" not in re.sub(r'base64,[^"]*', "", page)
    assert "Machine and versions" in page and "predates the study record" in page
    assert "mean gap %" in text and "bound gap %" in text and "e+0" not in text
    md = (out / "report.md").read_text()
    assert "| jobs=8 |" in md and md.index("| jobs=8 |") < md.index("| jobs=40 |")
