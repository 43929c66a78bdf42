"""The gap-study API for notebooks: load_experiment, run_study, results_frame, write_report
from mropt.harness and from mropt, documented."""

from __future__ import annotations

import pytest

import mropt
import mropt.harness
from mropt.harness import api

NAMES = ("load_experiment", "run_study", "results_frame", "write_report")


@pytest.mark.parametrize("name", NAMES)
def test_exported_from_the_harness_and_the_facade_with_docstrings(name):
    func = getattr(mropt.harness, name)
    assert func is getattr(mropt, name) is getattr(api, name)
    assert name in mropt.harness.__all__ and name in mropt.__all__
    assert len(func.__doc__ or "") > 200, name


def test_unknown_names_are_attribute_errors():
    with pytest.raises(AttributeError):
        mropt.harness.no_such_thing  # noqa: B018
    with pytest.raises(AttributeError):
        mropt.no_such_thing  # noqa: B018


@pytest.mark.slow
def test_a_study_from_python(write_experiment, tmp_path):
    path = write_experiment(
        'name = "py"\nmethods = ["edf-greedy", "ideal"]\n[[instances]]\ngenerator = "admission"\n'
        "seeds = [1, 2]\nparams = {jobs = 6}\n"
    )
    summary = mropt.run_study(path, tmp_path / "res")  # a path is loaded
    assert (summary.total, summary.ran, summary.failures) == (4, 4, 0)
    assert mropt.run_study(mropt.load_experiment(path), tmp_path / "res").skipped == 4  # resumed
    df = mropt.results_frame(tmp_path / "res")
    assert len(df) == 4 and set(df["method"]) == {"edf-greedy", "ideal"}
    folder = mropt.write_report(tmp_path / "res")
    assert folder == tmp_path / "res" / "report" and (folder / "report.html").is_file()


@pytest.mark.slow
def test_results_frame_separates_plan_gaps_from_bound_gaps(write_experiment, tmp_path):
    """Gaps are fractions; a plan's is ``plan_gap``, a bound's ``bound_gap``, ``gap`` keeps both."""
    path = write_experiment(
        'methods = ["edf-greedy", "ideal"]\n[[instances]]\ngenerator = "admission"\n'
        "seeds = [1]\nparams = {jobs = 10, deadline = 200}\n"
    )
    mropt.run_study(path, tmp_path / "res")
    df = mropt.results_frame(tmp_path / "res").set_index("method")
    plan, bound = df.loc["edf-greedy"], df.loc["ideal"]
    assert plan["status"] == "feasible" and bound["status"] == "bound"
    assert plan["reference"] == plan["objective"]  # the only plan is the best known
    # by hand: how far the Ideal bound lies above the reference, relative, as a fraction
    expected = (bound["bound"] - bound["reference"]) / abs(bound["reference"])
    assert 0.1 < expected < 10 and bound["bound_gap"] == pytest.approx(expected, rel=1e-12)
    assert bound["gap"] == bound["bound_gap"] and bound["plan_gap"] != bound["plan_gap"]  # NaN
    assert plan["plan_gap"] == plan["gap"] == 0.0 and plan["bound_gap"] != plan["bound_gap"]
    assert "fractions" in mropt.results_frame.__doc__ and "plan_gap" in mropt.results_frame.__doc__
