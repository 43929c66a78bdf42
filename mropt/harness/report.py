"""Reports of a result folder: the tables and plots a researcher would publish.

:func:`write_report` writes into the report folder (``mropt report DIR``; default ``DIR/report``):

Tables, each as ``<name>.csv`` (every digit) and ``<name>.tex`` (a booktabs ``tabular``,
rounded as the page shows it, :mod:`mropt.harness.formatting`):

* ``kinds`` -- per instance kind: the optimisation sense, how many instances have a proven
  reference (``=opt=``), a best-known one (``=best=``), are infeasible or have none, and
  the range of the gap to bound of the unproven ones (the best plan's, in %);
* ``methods`` -- plan methods (heuristics and exact methods) over all instances: runs, mean,
  standard deviation, bootstrap 95 % interval of the mean, median and max of the **gap %**
  (how far a plan is worse than the reference), proven optimal %, at optimum % (the plan
  equals a proven optimum within the objective tolerance, proven or not), verified %,
  failed runs, refuted runs (a verified plan beats the bound or optimum they claim: such a
  claim proves nothing, so proven optimal % leaves it out), mean and max time;
* ``gaps`` -- the same per method and instance group (groups in natural order: N = 8 before 40);
* ``bounds`` -- bound methods per group: the **bound gap %** (how far the bound lies beyond
  the reference), never in a column or on an axis with plan gaps;
* ``instances`` -- instance x method: instance name, group, N, method, seed, status,
  objective, bound, reference and its tag, gap %, gap to bound %, bound gap %, bound
  refuted, time;
* ``win_tie_loss`` -- every pair of plan methods over the same (instance, seed) problems;
  ties within :data:`mropt.model.tolerance.OBJECTIVE_RTOL`;
* ``time_to_optimality`` -- exact methods per N: proven optimal %, median time of the proven
  runs, PAR-2 and PAR-10 (unsolved runs count 2 and 10 times their limit), max time, limit;
* ``provenance`` -- sessions of the study: host, CPUs, platform, Python, mropt, numpy,
  ortools, highspy, pulp (:mod:`mropt.harness.provenance`);
* ``<panel>`` -- the panels each problem package registers for its kind
  (:class:`mropt.registry.ReportPanel`), e.g. the AMB paper's Figures 7-9 (``amb_figures``);
* ``policies`` and ``policy_runs`` -- a study's simulations (rows of kind ``workload``): per
  group and policy, benefit, on-time %, JCT mean and p95, slowdown, utilisation, locality with
  bootstrap intervals, and one row per run (:mod:`mropt.harness.policy_report`). Simulations are
  measured, not optimised: every gap table above is over the methods' rows only, and a study
  of policies alone has none of them (nor their plots).

Plots, each ``<name>.png`` and ``.pdf``: ``gap_distribution`` (plans), ``bound_gap_distribution``
(bounds), ``performance_profile`` (Dolan-More over problems, the cost being the time to a plan
at the reference value), ``gap_profile`` (share of problems within a gap), ``solve_curves``
(share of runs proven optimal by time t, time-limited runs counted), ``time_to_optimality``
(PAR-2 and proven optimal % against N), and the panels' plots. A plot whose axis would be
degenerate (a single N, no run solved, every gap 0) is left out, and the page says why;
a constant series is drawn as points on a sensible range. Plot data: ``performance_profile.csv``,
``gap_profile.csv``, ``solve_curves.csv``.

``report.md`` and ``report.html`` (self-contained: inline PNG) hold every table, plot, the
notes, the experiment files' text and the provenance. Statistics: :mod:`mropt.harness.stats`.
Runs whose bound a verified plan refutes are named in a warning at the top of both pages and
of the text returned (:func:`refuted_warning`).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import pandas as pd

from mropt.harness import stats
from mropt.harness.policy_report import method_rows, policy_plot, policy_rows, policy_table, runs_table
from mropt.harness.report_plots import Figure, Notes, _panels, _plots, _save, value_range
from mropt.harness.report_tables import (
    BOUND_COLUMNS,
    INSTANCE_COLUMNS,
    KIND_COLUMNS,
    PAR_K,
    PLAN_COLUMNS,
    PROBLEM,
    PROVENANCE_COLUMNS,
    TTO_COLUMNS,
    Table,
    _failed,
    _grouped,
    bound_table,
    gap_table,
    instance_names,
    instance_table,
    kind_sense,
    kinds_table,
    method_table,
    prepare,
    provenance_table,
    time_to_optimality,
    win_tie_loss_table,
)
from mropt.model.files import make_folder, write_text
from mropt.model.folders import refuse_linked_entry
from mropt.model.tolerance import OBJECTIVE_RTOL

INTRO = (
    "gap % (plans: heuristics and exact methods) = how far a plan's objective is worse than the reference "
    "value, relative to it and always >= 0, in the sense of the instance kind (maximisation: below the "
    "reference; minimisation: above it; mropt.harness.reference); values within the relative tolerance "
    "{rtol:g} of the reference have gap 0. The reference is the optimum where proven, else the best known "
    "value (reference.solu); a relaxation's value is a bound, never the reference. bound gap % (bound "
    "methods and relaxations) = how far a bound lies beyond the reference; the two are never in one column "
    "or on one axis. gap runs: the runs the gap statistics are over (failed runs, i.e. errors, time limits "
    "without a plan and answers verify rejected, have no gap). std: sample standard deviation over runs; "
    "CI: percentile bootstrap 95 % interval of the mean ({resamples} resamples, seed {seed}). "
    "proven optimal %: the method proved its plan optimal; at optimum %: the plan equals a proven optimum "
    "within the relative tolerance {rtol:g}, whoever proved it. refuted (bound refuted): runs claiming a "
    "bound, or an optimum, that a verified plan of the instance beats beyond that tolerance: their method is "
    "wrong, and the claim counts neither as a bound nor as a proof. A problem of the paired comparisons and "
    "profiles is an (instance, method seed)."
)
POLICY_INTRO = (
    "A study of simulator policies: each run simulates one workload under one policy and seed, and measures "
    "what happened (benefit earned under AMB eq. 1, which is negative when late jobs cost more than on-time "
    "ones earn; deadlines met; completion times; utilisation; locality). Simulations are measured, not "
    "optimised: they have no reference, no gap and no optimality proof (mropt.harness.policy_report)."
)


def _section(title: str, body: str) -> str:
    return f"<h2>{html.escape(title)}</h2>{body}"


def write_report(result_dir: str | Path, out: str | Path, *, seed: int = 0, resamples: int = stats.RESAMPLES) -> str:
    """Write every table and plot of the study in ``result_dir`` into ``out``; return the main
    tables as plain text. ``seed`` and ``resamples`` set the bootstrap (same seed, same intervals)."""
    from mropt.harness.provenance import read_studies
    from mropt.harness.runner import results_frame

    refuse_linked_entry(result_dir, out)
    df = results_frame(result_dir)
    out = Path(out)
    make_folder(out)
    d = prepare(method_rows(df))  # simulations get the policy tables, not gaps (mropt.harness.policy_report)
    notes = Notes()
    headline, by_group = method_table(d, seed=seed, resamples=resamples), gap_table(d, seed=seed, resamples=resamples)
    bounds, kinds, tto = bound_table(d, seed=seed, resamples=resamples), kinds_table(d), time_to_optimality(d)
    wtl, instances = win_tie_loss_table(d), instance_table(d)
    records = read_studies(result_dir)
    provenance = provenance_table(records, df)
    figures = _plots(d, tto.frame, out, notes)
    panel_tables, panel_figures = _panels(df, out)
    policies, policy_figures = _policy_part(df, out, seed, resamples)
    figures += panel_figures + policy_figures
    optimisation = [kinds, headline, bounds, by_group, wtl, tto] if len(d) else []  # none for policies alone
    tables = [*optimisation, *policies, *panel_tables, *([instances] if len(d) else []), provenance]
    for t in tables:
        t.frame.to_csv(out / f"{t.name}.csv", index=False)
        write_text(out / f"{t.name}.tex", t.latex())
    experiments = ", ".join(sorted(df["experiment"].unique())) if len(df) else "-"
    n_instances = df["instance_hash"].nunique() if len(df) else 0
    n_failed = _failed(df) if len(df) else 0
    senses = "; ".join(
        f"{k}: {'minimisation' if kind_sense(str(k), g)[0] == 'min' else 'maximisation'}"
        for (k,), g in _grouped(d, ["kind"])
    )
    head = f"Study {experiments}: {len(df)} runs ({n_failed} failed), {n_instances} instances." + (
        f" Objective sense: {senses}." if senses else ""
    )
    warning = refuted_warning(d)
    head += f" {warning}" if warning else ""
    intro = INTRO.format(resamples=resamples, seed=seed, rtol=OBJECTIVE_RTOL) if len(d) else POLICY_INTRO
    shown = [t for t in tables if len(t.frame)]
    title = "Gap report" if len(d) else "Policy study report"
    _write_markdown(out, (title, head), intro, shown, figures, notes, records)
    _write_html(out, (title, head), intro, shown, figures, notes, records)
    printed = (kinds, headline, bounds, by_group, tto, *policies[:1])
    text = "\n\n".join(t.to_markdown_text() for t in printed if len(t.frame))
    return f"{warning}\n\n{text}" if warning else text


def _policy_part(df: pd.DataFrame, out: Path, seed: int, resamples: int) -> tuple[list[Table], list[Figure]]:
    """The tables (``policies``, ``policy_runs``) and plot of the study's simulations; none without any."""
    if policy_rows(df).empty:
        return [], []
    table = policy_table(df, seed=seed, resamples=resamples)
    fig = policy_plot(table.frame)
    figures = (
        [] if fig is None else [Figure("Policies compared (means, 95 % CI)", "policies", _save(fig, out, "policies"))]
    )
    return [table, runs_table(df)], figures


def study_text(df: pd.DataFrame, *, seed: int = 0, resamples: int = stats.RESAMPLES) -> str:
    """What ``mropt gap`` prints after a study: the gap table of its methods' rows and the policy
    table of its simulations (each only when the study has such rows)."""
    parts = []
    methods = method_rows(df)
    if len(methods) or policy_rows(df).empty:
        parts.append(gap_table(methods, seed=seed, resamples=resamples).to_markdown_text())
    if not policy_rows(df).empty:
        parts.append(policy_table(df, seed=seed, resamples=resamples).to_markdown_text())
    return "\n\n".join(parts)


def refuted_warning(d: pd.DataFrame) -> str:
    """One sentence naming the runs (method on instance) whose bound, or optimum, a verified plan
    of their instance refutes (:meth:`mropt.harness.reference.Reference.refuted`); '' when none."""
    rows = d[d["refuted"]] if "refuted" in d and len(d) else d.iloc[0:0]
    if rows.empty:
        return ""
    runs = sorted(set(f"{m} on {n}" for m, n in zip(rows["mkey"], instance_names(d).loc[rows.index])))
    shown = ", ".join(runs[:10]) + (f" and {len(runs) - 10} more" if len(runs) > 10 else "")
    return (
        f"Warning: {len(rows)} run(s) claim a bound that a verified plan refutes, so their method is wrong: "
        f"{shown}. Those bounds and optimality claims are not references (column 'bound refuted')."
    )


def _configuration(records: list[Any]) -> list[tuple[str, str]]:
    """(title, text) of every recorded experiment file and solver profile."""
    out = []
    for rec in records:
        out.append((f"Experiment {rec.name} ({rec.path})", rec.text))
        for name, text in rec.profiles.items():
            out.append((f"Solver profile {name}", text))
    return out


TAIL = (
    "instances",
    "policy_runs",
    "provenance",
)  # after the plots: the long tables; the machine beside the configuration
LONG = ("instances", "policy_runs")


def _write_markdown(
    out: Path,
    heading: tuple[str, str],
    intro: str,
    tables: list[Table],
    figures: list[Figure],
    notes: Notes,
    records: list[Any],
) -> None:
    title, head = heading
    parts = [f"# {title}\n\n{head}\n\n{intro}"]
    parts += [t.markdown() for t in tables if t.name not in TAIL]
    parts += [f"### {f.title}\n\n![{f.title}]({f.name}.png)" for f in figures]
    if notes.items:
        parts.append("### Plots left out\n\n" + "\n".join(f"* {n}" for n in notes.items))
    parts += [t.markdown() for t in tables if t.name in LONG]
    parts.append("## Configuration")
    parts += [t.markdown() for t in tables if t.name == "provenance"]
    config = _configuration(records)
    parts += [f"{title}:\n\n```toml\n{text.rstrip()}\n```" for title, text in config]
    if not config:
        parts.append("The experiment file was not recorded (the result folder predates study/).")
    write_text(out / "report.md", "\n\n".join(parts) + "\n")


_CSS = (
    "body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;font-size:13px;"
    "margin-bottom:1em}td,th{border:1px solid #ccc;padding:2px 6px}td.num{text-align:right;"
    "font-variant-numeric:tabular-nums}td.txt{text-align:left;white-space:nowrap}th{background:#f3f3f3}img{max-width:100%}"
    "p.note{font-size:13px;color:#555;max-width:60em}pre{background:#f6f6f6;padding:8px;font-size:12px;"
    "overflow-x:auto}"
)


def _write_html(
    out: Path,
    heading: tuple[str, str],
    intro: str,
    tables: list[Table],
    figures: list[Figure],
    notes: Notes,
    records: list[Any],
) -> None:
    title, head = heading
    parts = [f'<h1>{html.escape(title)}</h1><p>{html.escape(head)}</p><p class="note">{html.escape(intro)}</p>']
    parts += [t.html() for t in tables if t.name not in TAIL]
    for f in figures:
        parts.append(_section(f.title, f'<img alt="{html.escape(f.title)}" src="data:image/png;base64,{f.png}">'))
    if notes.items:
        parts.append(
            _section("Plots left out", "<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes.items) + "</ul>")
        )
    for t in tables:
        if t.name in LONG and len(t.frame) > 200:
            parts.append(
                f"<details><summary>{html.escape(t.title)}: {len(t.frame)} rows "
                f"(also {t.name}.csv)</summary>{t.html()}</details>"
            )
        elif t.name in LONG:
            parts.append(t.html())
    parts.append("<h1>Configuration</h1>")
    parts += [t.html() for t in tables if t.name == "provenance"]
    config = _configuration(records)
    parts += [f"<h3>{html.escape(title)}</h3><pre>{html.escape(text)}</pre>" for title, text in config]
    if not config:
        parts.append("<p>The experiment file was not recorded (the result folder predates study/).</p>")
    page = (
        '<!doctype html><html><head><meta charset="utf-8"><title>mropt gap report</title><style>'
        + _CSS
        + "</style></head><body>"
        + "\n".join(parts)
        + "</body></html>\n"
    )
    write_text(out / "report.html", page)


__all__ = [
    "BOUND_COLUMNS",
    "Figure",
    "INSTANCE_COLUMNS",
    "INTRO",
    "POLICY_INTRO",
    "KIND_COLUMNS",
    "Notes",
    "PAR_K",
    "PLAN_COLUMNS",
    "PROBLEM",
    "PROVENANCE_COLUMNS",
    "TAIL",
    "TTO_COLUMNS",
    "Table",
    "bound_table",
    "gap_table",
    "instance_names",
    "instance_table",
    "kind_sense",
    "kinds_table",
    "method_table",
    "prepare",
    "provenance_table",
    "refuted_warning",
    "study_text",
    "time_to_optimality",
    "value_range",
    "win_tie_loss_table",
    "write_report",
]
