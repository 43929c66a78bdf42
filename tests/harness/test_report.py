"""`mropt report`: tables, PNG/PDF plots and one self-contained HTML page."""

from __future__ import annotations

import os
import platform
import shutil
import socket
import subprocess

import numpy as np
import pandas as pd
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
    for name in (
        "report.md",
        "report.html",
        "gaps.csv",
        "methods.csv",
        "amb_figures.csv",
        "time_to_optimality.csv",
        "gap_distribution.png",
        "gap_distribution.pdf",
        "amb_figures.png",
        "amb_figures.pdf",
        "kinds.csv",
        "instances.csv",
        "win_tie_loss.csv",
        "bounds.csv",
        "provenance.csv",
        "methods.tex",
        "gaps.tex",
        "amb_figures.tex",
        "kinds.tex",
        "instances.tex",
    ):
        assert (out / name).stat().st_size > 0, name
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") >= 2 and "<table" in page and 'src="http' not in page
    # the study's configuration and machine are in the report
    assert "[[instances]]" in page and "Machine and versions" in page and socket.gethostname() in page
    provenance = pd.read_csv(out / "provenance.csv")
    assert provenance.loc[0, "experiment"] == "report" and provenance.loc[0, "python"] == platform.python_version()
    for col in ("mropt", "numpy", "ortools", "highspy", "pulp", "CPUs", "platform"):
        assert str(provenance.loc[0, col]) not in ("-", "nan"), col


def test_rows_carry_kind_and_metrics_and_old_stores_get_their_kind(write_experiment, tmp_path):
    """Every row names its instance kind and the kind's own measures (decision and verify
    summaries); a store written before the ``kind`` column gets it from its instance files."""
    import json

    import pyarrow.parquet as pq

    exp = load_experiment(
        write_experiment(STUDY.replace('methods = ["edf-greedy", "test-trivial"]', 'methods = ["edf-greedy"]'))
    )
    run_study(exp, tmp_path / "res", workers=1, progress=False)
    df = results_frame(tmp_path / "res")
    assert set(df["kind"]) == {"admission"}
    metrics = [json.loads(m) for m in df["metrics"]]
    assert all(m["accepted"] == m["on_time"] + m["late"] for m in metrics)
    assert list(df["on_time"]) == [m["on_time"] for m in metrics]
    for f in (tmp_path / "res").rglob("*.parquet"):
        pq.write_table(pq.read_table(f).drop(["kind"]), f)
    assert set(results_frame(tmp_path / "res")["kind"]) == {"admission"}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="Chromium is not installed (apt-get install chromium)")
def test_html_report_renders_in_a_headless_browser(tmp_path):
    """The page as a reader sees it: Chromium renders report.html to a PNG that is not blank."""
    from matplotlib.image import imread

    from mropt.harness.report import write_report

    from .test_report_tables import store_rows, write_store

    write_store(tmp_path / "res", store_rows())
    write_report(tmp_path / "res", tmp_path / "rep", resamples=200)
    shot = tmp_path / "page.png"
    args = [
        "chromium",
        "--headless",
        f"--screenshot={shot}",
        "--window-size=1200,2000",
        "--disable-gpu",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium refuses to run as root inside its sandbox
    done = subprocess.run(
        [*args, (tmp_path / "rep" / "report.html").resolve().as_uri()],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    pixels = imread(shot)[..., :3]
    assert pixels.shape[:2] == (2000, 1200)
    colours = np.unique(pixels.reshape(-1, 3), axis=0)
    ink = (pixels < 0.9).any(axis=-1).mean()  # share of pixels that are not (nearly) white
    assert len(colours) > 50 and ink > 0.02, (len(colours), ink)


def test_report_refuses_a_linked_report_entry_of_a_received_folder(write_experiment, tmp_path):
    """A result folder from someone else whose ``report`` entry links elsewhere: the default
    ``DIR/report`` would write the report there; one line, exit 2, nothing written."""
    exp = load_experiment(write_experiment(STUDY.replace("seeds = [1, 2]", "seeds = [1]")))
    run_study(exp, tmp_path / "res", workers=1, progress=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "res" / "report").symlink_to(elsewhere)
    done = mropt("report", str(tmp_path / "res"))
    assert done.returncode == 2 and "is a symlink, not a report folder" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not list(elsewhere.iterdir())
    named = tmp_path / "mine"
    done = mropt("report", str(tmp_path / "res"), "--out", str(named))  # a folder the user names: written
    assert done.returncode == 0, done.stderr
    assert (named / "report.md").is_file()
