"""`mropt report`: tables, PNG/PDF plots and one self-contained HTML page."""

from __future__ import annotations

import pytest

from mropt.admission.report_panels import figure_data
from mropt.harness.experiment import load_experiment
from mropt.harness.runner import results_frame, run_study

from .conftest import mropt

STUDY = """
name = "report"
imports = ["tests.harness.fake_methods"]
time_limit = 5
methods = ["edf-greedy", "test-trivial"]
[[instances]]
generator = "admission"
group = "L"
seeds = [1, 2]
params = {jobs = 6}
sweep = {size = [100, 200]}
[[instances]]
generator = "admission"
group = "N"
seeds = [1, 2]
sweep = {jobs = [4, 8]}
"""


@pytest.mark.slow
def test_report_writes_tables_plots_and_html(write_experiment, tmp_path):
    exp = load_experiment(write_experiment(STUDY))
    run_study(exp, tmp_path / "res", workers=2, progress=False)
    df = results_frame(tmp_path / "res")
    data = figure_data(df)
    assert set(data["axis"]) == {"size", "jobs"}
    greedy = data[(data["method"] == "edf-greedy")]
    assert ((greedy["completion"] == 1.0) & (greedy["acceptance"] > 0)).all()
    done = mropt("report", str(tmp_path / "res"))
    assert done.returncode == 0, done.stderr
    assert "edf-greedy" in done.stdout and "mean gap %" in done.stdout
    out = tmp_path / "res" / "report"
    for name in ("report.md", "report.html", "gaps.csv", "methods.csv", "amb_figures.csv",
                 "gap_distribution.png", "gap_distribution.pdf", "amb_figures.png", "amb_figures.pdf"):
        assert (out / name).stat().st_size > 0, name
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") >= 2 and "<table" in page and 'src="http' not in page


def test_rows_carry_kind_and_metrics_and_old_stores_get_their_kind(write_experiment, tmp_path):
    """Every row names its instance kind and the kind's own measures (decision and verify
    summaries); a store written before the ``kind`` column gets it from its instance files."""
    import json

    import pyarrow.parquet as pq

    exp = load_experiment(write_experiment(STUDY.replace('methods = ["edf-greedy", "test-trivial"]',
                                                         'methods = ["edf-greedy"]')))
    run_study(exp, tmp_path / "res", workers=1, progress=False)
    df = results_frame(tmp_path / "res")
    assert set(df["kind"]) == {"admission"}
    metrics = [json.loads(m) for m in df["metrics"]]
    assert all(m["accepted"] == m["on_time"] + m["late"] for m in metrics)
    assert list(df["on_time"]) == [m["on_time"] for m in metrics]
    for f in (tmp_path / "res").rglob("*.parquet"):
        pq.write_table(pq.read_table(f).drop(["kind"]), f)
    assert set(results_frame(tmp_path / "res")["kind"]) == {"admission"}
