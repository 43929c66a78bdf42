"""``mropt gap``, ``mropt results`` and ``mropt report``: gap studies (mropt.harness)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mropt.model.errors import InputError


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "gap", help="run a gap study (an experiment file): every instance x method x profile x seed",
        description="Run every (instance, method, profile, seed) run of EXPERIMENT.toml in isolated worker "
        "processes, storing each finished run at once in DIR (Parquet). Run the same command again to resume "
        "a stopped study: finished runs are skipped.",
    )
    p.add_argument("experiment", metavar="EXPERIMENT.toml", help="experiment file (see benchmarks/*.toml)")
    p.add_argument("--out", "-o", help="result folder (default results/NAME, NAME the experiment's name)")
    p.add_argument("--executor", choices=("local", "dask"), default="local", help="local processes (default) or Dask")
    p.add_argument("--workers", "-j", type=int, default=None,
                   help="parallel runs: worker processes (local) or LocalCluster workers (dask) (default: CPU count)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address (tcp://host:8786); implies --executor dask")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--check", action="store_true",
                   help="check the file and count the runs, run nothing (not even the file's 'imports')")
    p.set_defaults(handler=run_gap)

    p = sub.add_parser("results", help="print every row of a result folder")
    p.add_argument("dir", metavar="DIR", help="result folder of `mropt gap`")
    p.add_argument("--format", choices=("csv", "json"), default="csv", help="csv (default) or json (one object per line)")
    p.set_defaults(handler=run_results)

    p = sub.add_parser("report", help="gap tables and plots of a result folder (Markdown, CSV, PNG, PDF, HTML)")
    p.add_argument("dir", metavar="DIR", help="result folder of `mropt gap`")
    p.add_argument("--out", "-o", help="report folder (default DIR/report)")
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
    from mropt.harness.report import gap_table
    from mropt.harness.runner import results_frame, run_study

    exp = load_experiment(args.experiment, run_imports=not args.check)  # --check runs no code of the file's
    workers = _workers(args.workers)
    executor = "dask" if args.scheduler else args.executor
    out = Path(args.out) if args.out else exp.results_folder()
    if args.check:
        entries = exp.instances()
        runs = sum(1 for _ in exp.runs(entries))
        note = ""
        if exp.imports:
            note = f" ('imports' not run: {', '.join(exp.imports)}"
            note += f"; methods not checked: {', '.join(exp.unchecked)})" if exp.unchecked else ")"
        print(f"{args.experiment}: ok: {len(entries)} instances, {len(exp.methods)} methods, {runs} runs{note}")
        return 0
    summary = run_study(exp, out, executor=executor, workers=workers, scheduler=args.scheduler,
                        progress=not args.no_progress)
    print(f"{exp.name}: {summary.total} runs ({summary.skipped} already stored, {summary.ran} run now, "
          f"{summary.failures} failed) in {summary.seconds:.1f} s; results in {summary.out}")
    print(gap_table(results_frame(out)).to_markdown_text())
    return 0


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
    text = write_report(args.dir, out)
    print(text)
    print(f"report written to {out} (report.md, report.html, *.csv, *.png, *.pdf)")
    return 0
