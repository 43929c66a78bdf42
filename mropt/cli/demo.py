"""``mropt demo`` (what ``make demo`` runs): a small real gap study.

Paper defaults (AMB Table 2, N = 30), 10 instance seeds; AMB and the EDF baseline against
the exact optimum (``cpsat-portfolio``, solver profile ``cpsat-portfolio``: the exact method
that proved the most in ``benchmarks/bench_exact.py --frontier``) and the Ideal upper bound (AMB eq. 4),
run by the gap harness (isolated worker processes, a resumable Parquet store in
``results/demo-n30-s10``) and summarised as the gap table. Methods that are not registered are left
out with a message, and the study runs with the others.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from mropt.cli.common import int_type
from mropt.registry import methods

#: (method, profile or None) of the demo study, in the order of the table.
DEMO_METHODS = (("amb", None), ("edf-greedy", None), ("ideal", None), ("cpsat-portfolio", "cpsat-portfolio"))


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="a small gap study: AMB against the exact optimum and Ideal (paper defaults)")
    p.add_argument("--jobs", "-n", type=int_type(1), default=30, help="N (default 30)")
    p.add_argument("--seeds", type=int_type(1), default=10, help="instance seeds 1..K (default 10)")
    p.add_argument("--time-limit", type=float, default=30.0, help="seconds per exact run (default 30)")
    p.add_argument("--out", "-o", help="result folder (default results/demo-nN-sK)")
    p.add_argument("--workers", "-j", type=int_type(1), default=None, help="parallel runs (default: CPU count)")
    p.set_defaults(handler=run_demo)


def experiment_text(args: argparse.Namespace, chosen: list[tuple[str, str | None]]) -> str:
    entries = []
    for name, profile in chosen:
        if profile is None:
            entries.append(f'"{name}"')
        else:
            entries.append(f'{{name = "{name}", profiles = ["{profile}"], time_limit = {args.time_limit}}}')
    return (
        'name = "demo"\n'
        f"time_limit = {args.time_limit}\nkill_grace = 10\n"
        f"methods = [{', '.join(entries)}]\n"
        "[[instances]]\n"
        'generator = "admission"\n'
        f"seeds = {{start = 1, count = {args.seeds}}}\n"
        f"params = {{jobs = {args.jobs}}}\n"
    )


def run_demo(args: argparse.Namespace) -> int:
    from mropt.cli.harness import _workers
    from mropt.harness.experiment import load_experiment
    from mropt.harness.report import bound_table, gap_table, method_table
    from mropt.harness.runner import results_frame, run_study

    args.out = args.out or f"results/demo-n{args.jobs}-s{args.seeds}"
    known = {m.name for m in methods()}
    chosen = []
    for name, profile in DEMO_METHODS:
        if name not in known:
            print(f"mropt demo: method {name!r} is not registered in this mropt; leaving it out")
            continue
        if profile is not None:
            try:
                from mropt.harness.profiles import load_profile

                load_profile(profile)
            except Exception as exc:  # noqa: BLE001 - profile module or file missing
                print(f"mropt demo: solver profile {profile!r} unavailable ({exc}); running {name} without it")
                profile = None
        chosen.append((name, profile))
    print(
        f"gap study: AMB paper defaults (Table 2), N = {args.jobs}, seeds 1-{args.seeds}; methods: "
        f"{', '.join(n for n, _ in chosen)}; results in {args.out}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "demo.toml"
        path.write_text(experiment_text(args, chosen), encoding="utf-8")
        exp = load_experiment(path)
        summary = run_study(exp, args.out, workers=_workers(args.workers), progress=sys.stderr.isatty())
    df = results_frame(args.out)
    print(
        f"{summary.total} runs ({summary.skipped} already stored) in {summary.seconds:.1f} s, "
        f"{summary.failures} failed. Gap = (reference - objective) / reference, the reference being the "
        "proven optimum (or the best known value); for Ideal, how far the bound lies above it."
    )
    table = method_table(df)
    verified = df.groupby("method")["verified"].apply(lambda v: "yes" if v.fillna(False).astype(bool).all() else "NO")
    table.frame["verified %"] = [verified.get(m, "-") for m in table.frame["method"]]
    table.frame = table.frame.rename(columns={"verified %": "verified"})[
        [
            "method",
            "runs",
            "mean gap %",
            "median gap %",
            "max gap %",
            "proven optimal %",
            "at optimum %",
            "verified",
            "failed",
            "mean time s",
            "max time s",
        ]
    ]
    print(table.to_markdown_text())
    bounds = bound_table(df.assign(instance_group="all"))
    bounds.frame = bounds.frame[
        [
            "method",
            "runs",
            "mean bound gap %",
            "median bound gap %",
            "max bound gap %",
            "failed",
            "mean time s",
            "max time s",
        ]
    ]
    bounds.title = "Bound gap per bound method (all instances): how far the bound lies above the reference"
    if len(bounds.frame):
        print()
        print(bounds.to_markdown_text())
    if df["instance_group"].nunique() > 1:
        print()
        print(gap_table(df).to_markdown_text())
    print(f"\nmore: mropt report {args.out}   (tables, plots, report.html)")
    return 0
