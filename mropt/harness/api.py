"""The Python API of gap studies, for notebooks and scripts (what ``mropt gap`` and ``mropt report`` do).

::

    from mropt.harness import load_experiment, results_frame, run_study, write_report

    exp = load_experiment("benchmarks/smoke.toml")     # checked: a bad key raises InputError
    run_study(exp, "results/smoke", workers=2)          # resumes: finished runs are skipped
    df = results_frame("results/smoke")                 # one row per run, gaps against the reference
    df[df["status"] != "bound"].groupby("method")["gap"].mean()
    write_report("results/smoke")                       # results/smoke/report/report.html, CSV, TeX

The same four names are exported by :mod:`mropt.harness` and by the package :mod:`mropt`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mropt.harness import experiment as _experiment
from mropt.harness import runner as _runner
from mropt.harness.experiment import Experiment
from mropt.harness.runner import StudySummary


def load_experiment(path: str | Path) -> Experiment:
    """Read and check an experiment file (TOML; schema in :mod:`mropt.harness.experiment`).

    Every key is checked before anything runs: instance sets (a generator sweep over
    ``admission``, ``fairness`` or ``priority`` parameters, importer windows, a folder, a
    named set), methods and their parameters, solver profiles, seeds. A bad key raises
    :class:`mropt.InputError` with a one-line message naming the file and the key.
    ``exp.instances()`` lists the instances, ``exp.runs()`` every (instance, method,
    profile, seed) run.
    """
    return _experiment.load_experiment(path)


def run_study(
    experiment: Experiment | str | Path,
    out: str | Path | None = None,
    *,
    workers: int = 1,
    executor: str = "local",
    scheduler: str | None = None,
    progress: bool = False,
    compact: bool = True,
) -> StudySummary:
    """Run every run of ``experiment`` (an :class:`Experiment` or the path of its file) into ``out``.

    Each run goes to an isolated worker process (``workers`` at a time; ``executor="dask"``
    or a ``scheduler`` address for Dask); a run past its time limit plus ``kill_grace`` is
    killed and stored as ``time_limit``, a crash as ``error``. Each finished run is stored
    at once (Parquet); calling again with the same ``out`` resumes, skipping finished runs.
    ``out`` defaults to ``results/NAME``. ``progress`` shows a progress bar (off by
    default, for notebooks). Returns the counts: ``total``, ``skipped``, ``ran``,
    ``failures``, ``seconds`` and the folder ``out``.
    """
    exp = experiment if isinstance(experiment, Experiment) else load_experiment(experiment)
    folder = Path(out) if out is not None else exp.results_folder()
    return _runner.run_study(
        exp, folder, executor=executor, workers=workers, scheduler=scheduler, progress=progress, compact=compact
    )


def results_frame(out: str | Path) -> Any:
    """Every stored run of the result folder ``out`` as a pandas DataFrame, one row per run.

    Gaps are recomputed against the folder's current references (``reference.solu`` and
    every row), so they are the same whatever order the runs finished in. Columns include
    ``experiment``, ``kind``, ``instance_id`` (the instance's name), ``instance_hash``,
    ``instance_group``, ``instance_params`` (JSON), ``jobs`` (N), ``method`` (the label),
    ``profile``, ``seed``, ``exact``, ``status`` (optimal, feasible, time_limit, bound,
    infeasible, error), ``objective``, ``bound``, ``reference``, ``reference_tag``
    (optimal, best_known, infeasible), ``gap``, ``plan_gap``, ``bound_gap``, ``gap_to_bound``,
    ``wall_time``, ``time_limit``, ``verified``, ``metrics`` (JSON), ``host`` and versions.

    Gaps are fractions, never percentages (0.05 is 5%), relative to ``|reference|``, and never
    negative (README, "Gap studies"; ``mropt.model.sense``):

    * ``plan_gap``: for a run that gave a plan (a heuristic's, or an exact method's answer),
      how much worse its objective is than the reference; null for bound rows;
    * ``bound_gap``: for a bound row (status ``bound``, or a method that solves a relaxation,
      ``relaxation`` true), how far the bound lies beyond the reference; null for plans;
    * ``gap``: the two in one column (``plan_gap`` where there is one, else ``bound_gap``),
      what ``mropt report`` averages per method: never average it over plans and bounds together;
    * ``gap_to_bound``: a plan's shortfall from the best proven bound (or the optimum).

    A row without a reference, or whose answer ``verify`` rejected, has none of them, and
    neither has a simulation's row (kind ``workload``, a policy study's: measured, not
    optimised; its measures are in ``metrics``, :mod:`mropt.harness.policy_report`).
    """
    import pandas as pd

    from mropt.harness.reference import is_relaxation

    df = _runner.results_frame(out)
    rows = df.to_dict("records")
    bound = pd.Series([r.get("status") == "bound" or is_relaxation(r) for r in rows], index=df.index, dtype=bool)
    gap = df["gap"] if "gap" in df else pd.Series(None, index=df.index, dtype=float)
    df["plan_gap"] = gap.where(~bound)
    df["bound_gap"] = gap.where(bound)
    return df


def write_report(out: str | Path, report: str | Path | None = None, *, seed: int = 0, resamples: int = 2000) -> Path:
    """Write the report of the result folder ``out`` into ``report`` (default ``out/report``).

    Tables as CSV and LaTeX, plots as PNG and PDF, ``report.md`` and a self-contained
    ``report.html`` (:mod:`mropt.harness.report` lists them). ``seed`` and ``resamples``
    set the bootstrap intervals (the same seed gives the same intervals). Returns the folder.
    """
    from mropt.harness.report import write_report as _write

    folder = Path(report) if report is not None else Path(out) / "report"
    _write(out, folder, seed=seed, resamples=resamples)
    return folder


__all__ = ["Experiment", "StudySummary", "load_experiment", "results_frame", "run_study", "write_report"]
