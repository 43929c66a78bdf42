"""`mropt report`: tables, PNG/PDF plots and one self-contained HTML page."""

from __future__ import annotations

import pytest

from mropt.harness.experiment import load_experiment
from mropt.harness.report import figure_data
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
