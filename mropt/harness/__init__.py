"""Experiment harness: solver profiles (``solvers/*.toml``), experiment files, isolated
worker runs, the kill-safe Parquet store, reference optima and gaps, and reports.

The API for notebooks and scripts (:mod:`mropt.harness.api`)::

    from mropt.harness import load_experiment, results_frame, run_study, write_report

``load_experiment(path)`` reads and checks an experiment file; ``run_study(exp, out)``
runs (or resumes) it; ``results_frame(out)`` returns one row per run with its gaps;
``write_report(out)`` writes the tables, plots and HTML page. They are imported on
first use, so ``import mropt.harness`` stays light.
"""

from typing import Any

from mropt.harness.profiles import SolverProfile, load_profile

_API = ("Experiment", "StudySummary", "load_experiment", "results_frame", "run_study", "write_report")


def __getattr__(name: str) -> Any:
    if name in _API:
        from mropt.harness import api

        return getattr(api, name)
    raise AttributeError(f"module 'mropt.harness' has no attribute {name!r}")


__all__ = [
    "Experiment",
    "SolverProfile",
    "StudySummary",
    "load_experiment",
    "load_profile",
    "results_frame",
    "run_study",
    "write_report",
]
