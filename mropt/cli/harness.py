"""``mropt gap``, ``mropt results`` and ``mropt report``: gap studies (mropt.harness)."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

from mropt.cli.common import SEED, int_type
from mropt.model.errors import InputError

#: at most this many bootstrap resamples (each a mean over the runs of a cell)
MAX_RESAMPLES = 1_000_000


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "gap",
        help="run a gap study (an experiment file): every instance x method x profile x seed",
        description="Run every (instance, method, profile, seed) run of EXPERIMENT.toml in isolated worker "
        "processes, storing each finished run at once in DIR (Parquet). Run the same command again to resume "
        "a stopped study: finished runs are skipped.",
    )
    p.add_argument("experiment", metavar="EXPERIMENT.toml", help="experiment file (see benchmarks/*.toml)")
    p.add_argument("--out", "-o", help="result folder (default results/NAME, NAME the experiment's name)")
    p.add_argument("--executor", choices=("local", "dask"), default="local", help="local processes (default) or Dask")
    p.add_argument(
        "--workers",
        "-j",
        type=int_type(1),
        default=None,
        help="parallel runs: worker processes (local) or LocalCluster workers (dask) (default: CPU count)",
    )
    p.add_argument(
        "--scheduler", metavar="ADDRESS", help="Dask scheduler address (tcp://host:8786); implies --executor dask"
    )
    p.add_argument(
        "--no-progress", action="store_true", help="no progress bar (drawn on stderr only when it is a terminal)"
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="check the file (keys, parameters, methods of the instances' kind, policies that can run on "
        "them), count the runs and "
        "print the worst-case wall time for -j; run nothing (not even the file's 'imports')",
    )
    p.add_argument(
        "--retry-failed",
        action="store_true",
        help="run the stored failures again (errors, time limits without a plan, rejected answers)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when runs of the study failed or were not run (default: exit 0, the summary says why)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="write into an --out folder that holds another experiment's results (refused otherwise)",
    )
    p.set_defaults(handler=run_gap)

    p = sub.add_parser("results", help="print every row of a result folder")
    p.add_argument("dir", metavar="DIR", help="result folder of `mropt gap`")
    p.add_argument(
        "--format", choices=("csv", "json"), default="csv", help="csv (default) or json (one object per line)"
    )
    p.set_defaults(handler=run_results)

    p = sub.add_parser(
        "report",
        help="tables and plots of a `mropt gap` or `mropt simulate --out` folder (Markdown, HTML, CSV, LaTeX, PNG, PDF)",
        description="Write the report of a result folder: per-kind references, gap tables with "
        "spread and bootstrap intervals, bound gaps, instance x method, wins/ties/losses, time to "
        "optimality (PAR-k), performance profiles, solve curves, the experiment file and the "
        "machine; every table as CSV and LaTeX (booktabs), report.md and a self-contained report.html. "
        "A study of simulator policies gets the policy tables (benefit, on-time, JCT, slowdown, utilisation, "
        "locality, acceptance, with bootstrap intervals) instead of gap columns. A `mropt simulate --out` folder "
        "gets the figures of its run: utilisation, completion-time and slowdown CDFs, locality, a Gantt window "
        "(docs/simulation.md).",
    )
    p.add_argument("dir", metavar="DIR", help="result folder of `mropt gap`, or an `mropt simulate --out` folder")
    p.add_argument("--out", "-o", help="report folder (default DIR/report)")
    p.add_argument("--seed", type=SEED, default=0, help="seed of the bootstrap intervals (default 0)")
    p.add_argument(
        "--resamples", type=int_type(1, MAX_RESAMPLES), default=2000, help="bootstrap resamples (default 2000)"
    )
    p.set_defaults(handler=run_report)


def _workers(value: int | None) -> int:
    import os

    if value is None:
        return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))
    if value < 1:
        raise InputError(f"--workers must be >= 1, got {value}")
    return value


def run_gap(args: argparse.Namespace) -> int:
    from mropt.harness.experiment import load_experiment
    from mropt.harness.report import study_text
    from mropt.harness.runner import MAX_LISTED, StudyInterrupted, results_frame, run_study

    exp = load_experiment(args.experiment, run_imports=not args.check)  # --check runs no code of the file's
    workers = _workers(args.workers)
    executor = "dask" if args.scheduler else args.executor
    out = Path(args.out) if args.out else exp.results_folder()
    if args.check:
        entries = exp.instances()
        runs = list(exp.runs(entries))
        worst = exp.worst_case_seconds(runs, workers)
        if worst is None:
            bound = "unbounded (a run has no time limit)"
        else:
            bound = f"{_duration(worst)} (runs x (limit + kill_grace {exp.kill_grace:g} s) / {workers} workers)"
        note = ""
        if exp.imports:
            note = f" ('imports' not run: {', '.join(exp.imports)}"
            note += f"; methods not checked: {', '.join(exp.unchecked)})" if exp.unchecked else ")"
        policies = sum(1 for m in exp.methods if m.policy)
        listed = [(len(exp.methods) - policies, "methods"), (policies, "policies")]
        what = ", ".join(f"{n} {word}" for n, word in listed if n)  # a study lists methods, policies or both
        print(
            f"{args.experiment}: ok: {len(entries)} instances, {what}, {len(runs)} runs; "
            f"worst-case wall time {bound}{note}"
        )
        return 0
    try:
        summary = run_study(
            exp,
            out,
            executor=executor,
            workers=workers,
            scheduler=args.scheduler,
            progress=not args.no_progress and sys.stderr.isatty(),  # (no redraws in a log)
            retry_failed=args.retry_failed,
            force=args.force,
        )
    except StudyInterrupted as stop:
        print(
            f"mropt: interrupted ({stop.signame}): {stop.stored} of {stop.total} runs stored in {stop.out}; the "
            "runs in flight were not stored: run the same command again to resume",
            file=sys.stderr,
        )
        return 128 + signal.Signals[stop.signame].value
    earlier = summary.study_failures - summary.failures
    print(
        f"{exp.name}: {summary.total} runs ({summary.skipped} already stored, {summary.ran} run now, "
        f"{summary.failures} failed"
        + (f", {summary.interrupted} not run" if summary.interrupted else "")
        + f") in {summary.seconds:.1f} s; results in {summary.out}"
    )
    print(study_text(results_frame(out)))
    if summary.problems:
        what = f"{summary.study_failures} failed" + (f", {summary.interrupted} not run" if summary.interrupted else "")
        print(f"\n{what}:")
        for line in summary.problems[:MAX_LISTED]:
            print(f"  {line}")
        if len(summary.problems) > MAX_LISTED:
            print(f"  ... and {len(summary.problems) - MAX_LISTED} more (mropt results {summary.out})")
        if earlier > 0 and not args.retry_failed:
            print(f"{earlier} of the failures are stored from an earlier invocation: --retry-failed runs them again")
        if summary.interrupted:
            print("runs not run are not stored: run the same command again to run them")
    if summary.refuted:
        print(
            f"\nwarning: {len(summary.refuted)} run(s) claim a bound that a verified plan refutes (their method "
            "is wrong; reference.solu ignores those bounds and optimality claims):"
        )
        for line in summary.refuted[:MAX_LISTED]:
            print(f"  {line}")
        if len(summary.refuted) > MAX_LISTED:
            print(f"  ... and {len(summary.refuted) - MAX_LISTED} more (column bound_refuted of mropt results)")
    if args.strict and (summary.study_failures or summary.interrupted):
        return 1
    return 0


def _duration(seconds: float) -> str:
    """``93784 s (1 d 2 h 3 min)``: seconds and, past a minute, in larger units."""
    text = f"{seconds:.0f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, hours, days = int(seconds // 60) % 60, int(seconds // 3600) % 24, int(seconds // 86400)
    parts = [f"{days} d" if days else "", f"{hours} h" if hours else "", f"{minutes} min" if minutes else ""]
    return f"{text} ({' '.join(p for p in parts if p)})"


def run_results(args: argparse.Namespace) -> int:
    from mropt.harness.runner import results_frame

    df = results_frame(args.dir)
    if args.format == "json":
        for record in json.loads(df.to_json(orient="records")):
            sys.stdout.write(json.dumps(record) + "\n")
    else:
        df.to_csv(sys.stdout, index=False)
    return 0


def run_report(args: argparse.Namespace) -> int:
    from mropt.harness.report import write_report

    out = Path(args.out) if args.out else Path(args.dir) / "report"
    from mropt.sim.outputs import is_simulation_folder, settle_outputs

    settle_outputs(args.dir)  # a `mropt simulate --out DIR` killed mid-swap: finish it
    if is_simulation_folder(args.dir):  # `mropt simulate --out DIR`
        from mropt.harness.sim_report import write_simulation_report

        print(write_simulation_report(args.dir, out))
        print(f"report written to {out} (report.md, report.html, *.png, *.svg)")
        return 0
    text = write_report(args.dir, out, seed=args.seed, resamples=args.resamples)
    print(text)
    print(f"report written to {out} (report.md, report.html, *.csv, *.tex, *.png, *.pdf)")
    return 0
