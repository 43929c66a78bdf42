"""Reports of a result folder: gap tables, plots, and one self-contained HTML page.

:func:`write_report` writes into the report folder:

* ``gaps.csv`` / ``report.md`` — per method and instance group: runs, the runs the gap
  statistics are over (``gap runs``: runs with a gap; failed runs have none), mean, median
  and max gap (in %, against the reference, see :mod:`mropt.harness.reference`; always
  >= 0, in the sense of the instance kind: larger is worse), share proven optimal, share
  verified, failures (errors, time limits without a plan, answers ``verify`` rejected:
  :func:`mropt.harness.runner.is_failure`), mean and max wall time;
* ``gap_distribution.png/.pdf`` — the gap distribution per method (box plot);
* ``time_to_optimality.png/.pdf`` and ``time_to_optimality.csv`` — exact methods' median
  time of the runs proven optimal, and the share proven optimal, against N;
* ``<panel>.csv`` and ``<panel>.png/.pdf`` — the panels each problem package registers for
  its kind (:class:`mropt.registry.ReportPanel`), for the kinds of the study: e.g. the AMB
  paper's Figures 7-9 (``amb_figures``, :mod:`mropt.admission.report_panels`);
* ``report.html`` — all the tables and the plots (inline base64 PNG) in one file.
"""

from __future__ import annotations

import base64
import html
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mropt.harness.table import render
from mropt.model.files import make_folder, write_bytes, write_text
from mropt.registry import report_panels

@dataclass
class Table:
    title: str
    frame: pd.DataFrame

    def to_markdown_text(self) -> str:
        rows = [[_cell(v) for v in r] for r in self.frame.itertuples(index=False)]
        return f"{self.title}\n\n{render(list(self.frame.columns), rows)}"

    def markdown(self) -> str:
        head = "| " + " | ".join(self.frame.columns) + " |"
        sep = "|" + "|".join("---" for _ in self.frame.columns) + "|"
        body = ["| " + " | ".join(_text(_cell(v)) for v in r) + " |" for r in self.frame.itertuples(index=False)]
        return "\n".join([f"### {self.title}", "", head, sep, *body])


def _cell(v: Any) -> Any:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return round(float(v), 4)
    return v


def _text(v: Any) -> str:
    return "-" if v is None else str(v)


# -- tables ---------------------------------------------------------------------------------
def _percent(s: pd.Series) -> pd.Series:
    return s.astype(float) * 100.0


def failed(df: pd.DataFrame) -> pd.Series:
    """Per row: a failure (:func:`mropt.harness.runner.is_failure`)."""
    from mropt.harness.runner import is_failure

    if df.empty:
        return pd.Series([], dtype=bool, index=df.index)
    return df.apply(is_failure, axis=1).astype(bool)


def senses(df: pd.DataFrame) -> dict[str, str]:
    """Instance kind -> ``maximisation`` or ``minimisation``, for the kinds of the rows."""
    from mropt.model.errors import InputError
    from mropt.model.io import objective_sense
    from mropt.model.sense import WORDS

    out = {}
    for kind in sorted(df["kind"].dropna().unique()) if len(df) and "kind" in df else []:
        try:
            out[str(kind)] = WORDS[objective_sense(str(kind))]
        except InputError:
            out[str(kind)] = "unknown sense"
    return out


def _sense_note(df: pd.DataFrame) -> str:
    named = senses(df)
    return "" if not named else " (" + "; ".join(f"{k}: {w}" for k, w in named.items()) + ")"


def gap_table(df: pd.DataFrame) -> Table:
    """Per method and instance group: gap statistics (%) and the runs they are over, share optimal, failures, time."""
    cols = ["method", "group", "runs", "gap runs", "mean gap %", "median gap %", "max gap %", "optimal %",
            "verified %", "failed", "mean time s", "max time s"]
    title = "Gap to the reference per method and instance group" + _sense_note(df)
    if df.empty:
        return Table(title, pd.DataFrame(columns=cols))
    fails = failed(df)
    rows = []
    for (method, group), g in df.groupby(["method", "instance_group"], sort=True):
        gap = _percent(g["gap"].dropna())
        rows.append([
            method, group, len(g), len(gap),
            gap.mean() if len(gap) else None, gap.median() if len(gap) else None, gap.max() if len(gap) else None,
            100.0 * (g["status"] == "optimal").mean(), 100.0 * g["verified"].fillna(False).astype(bool).mean(),
            int(fails.loc[g.index].sum()), g["wall_time"].mean(), g["wall_time"].max(),
        ])
    return Table(title, pd.DataFrame(rows, columns=cols))


def method_table(df: pd.DataFrame) -> Table:
    """One line per method over all instances (the headline table)."""
    t = gap_table(df.assign(instance_group="all")).frame.drop(columns=["group"])
    return Table("Gap to the reference per method (all instances)" + _sense_note(df), t)


def time_to_optimality(df: pd.DataFrame) -> Table:
    cols = ["method", "N", "runs", "optimal %", "failed", "median time to optimality s", "max time s"]
    exact = df[df["exact"].fillna(False).astype(bool)]
    fails = failed(exact)
    rows = []
    for (method, n), g in exact.groupby(["method", "jobs"], sort=True):
        opt = g[g["status"] == "optimal"]
        rows.append([method, int(n), len(g), 100.0 * len(opt) / len(g), int(fails.loc[g.index].sum()),
                     opt["wall_time"].median() if len(opt) else None, g["wall_time"].max()])
    return Table("Time to optimality against N (exact methods)", pd.DataFrame(rows, columns=cols))


# -- plots ----------------------------------------------------------------------------------
def _save(fig: Any, out: Path, stem: str) -> str:
    """Write PNG and PDF; return the PNG as base64 for the HTML page."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(out / f"{stem}.pdf")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    write_bytes(out / f"{stem}.png", buf.getvalue())
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _plots(df: pd.DataFrame, tto: pd.DataFrame, out: Path) -> list[tuple[str, str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    images = []
    gaps = df[df["gap"].notna()]
    if not gaps.empty:
        methods = sorted(gaps["method"].unique())
        fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(methods) + 2), 3.8))
        ax.boxplot([_percent(gaps[gaps["method"] == m]["gap"]) for m in methods], showmeans=True)
        ax.set_xticks(range(1, len(methods) + 1), methods, rotation=30, ha="right")
        ax.set_ylabel("gap to reference (%, >= 0: worse)")
        ax.set_title("Gap distribution per method" + _sense_note(df), fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        images.append(("Gap distribution per method", "gap_distribution", _save(fig, out, "gap_distribution")))
    if not tto.empty:
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.6))
        for method, g in tto.groupby("method"):
            a1.plot(g["N"], g["median time to optimality s"], marker="o", label=method)
            a2.plot(g["N"], g["optimal %"], marker="o", label=method)
        a1.set_xlabel("N (jobs)")
        a1.set_ylabel("median time to optimality (s)")
        a2.set_xlabel("N (jobs)")
        a2.set_ylabel("runs proven optimal (%)")
        a1.legend(fontsize=8)
        for a in (a1, a2):
            a.grid(alpha=0.3)
        images.append(("Time to optimality against N", "time_to_optimality", _save(fig, out, "time_to_optimality")))
    return images


def _panels(df: pd.DataFrame, out: Path) -> tuple[list[Table], list[tuple[str, str, str]]]:
    """The registered panels of every kind in the study: their tables (CSV) and plots."""
    tables, images = [], []
    for kind in sorted(df["kind"].dropna().unique()) if len(df) else []:
        rows = df[df["kind"] == kind]
        for panel in report_panels(kind):
            data = panel.table(rows)
            data.to_csv(out / f"{panel.name}.csv", index=False)
            if not len(data):
                continue
            tables.append(Table(f"{panel.title} data (means per point)", data))
            fig = panel.plot(data) if panel.plot is not None else None
            if fig is not None:
                images.append((f"{panel.title} panels", panel.name, _save(fig, out, panel.name)))
    return tables, images


# -- the report -----------------------------------------------------------------------------
def write_report(result_dir: str | Path, out: str | Path) -> str:
    """Write every table and plot into ``out``; return the Markdown text of the tables."""
    from mropt.harness.runner import results_frame

    df = results_frame(result_dir)
    out = Path(out)
    make_folder(out)
    headline, by_group, tto = method_table(df), gap_table(df), time_to_optimality(df)
    for name, table in zip(("methods", "gaps", "time_to_optimality"), (headline, by_group, tto)):
        table.frame.to_csv(out / f"{name}.csv", index=False)
    images = _plots(df, tto.frame, out)
    panel_tables, panel_images = _panels(df, out)
    tables = [headline, by_group, tto, *panel_tables]
    images += panel_images
    experiments = ", ".join(sorted(df["experiment"].unique())) if len(df) else "-"
    named = senses(df)
    sense = ("Objective sense: " + "; ".join(f"{k} {w}" for k, w in named.items()) + ". ") if named else ""
    n_failed = int(failed(df).sum()) if len(df) else 0
    intro = (f"Study {experiments}: {len(df)} runs ({n_failed} failed), "
             f"{df['instance_hash'].nunique() if len(df) else 0} instances. {sense}"
             "Gap = how much worse than the reference, relative, always >= 0: (reference - objective) / "
             "max(|reference|, 1e-9) for maximisation, (objective - reference) / max(|reference|, 1e-9) for "
             "minimisation; for bounds and relaxations, how far the bound lies beyond the reference (above it "
             "for maximisation, below for minimisation). Values within a relative 1e-9 of the reference have gap 0. "
             "The reference is the optimum where proven, else the best known value (reference.solu); a "
             "relaxation's value is a bound, never the reference. Gap statistics are over the 'gap runs' "
             "(failed runs have no gap).")
    shown = [t for t in tables if len(t.frame)]
    md = "\n\n".join([f"# Gap report\n\n{intro}", *[t.markdown() for t in shown],
                      *[f"![{title}]({stem}.png)" for title, stem, _ in images]]) + "\n"
    write_text(out / "report.md", md)
    parts = [f"<h1>Gap report</h1><p>{html.escape(intro)}</p>"]
    for t in shown:
        parts.append(f"<h2>{html.escape(t.title)}</h2>" + t.frame.to_html(index=False, na_rep="-", float_format=lambda v: f"{v:.4g}"))
    for title, _, b64 in images:
        parts.append(f"<h2>{html.escape(title)}</h2><img alt=\"{html.escape(title)}\" src=\"data:image/png;base64,{b64}\">")
    page = ("<!doctype html><html><head><meta charset=\"utf-8\"><title>mropt gap report</title><style>"
            "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:13px}"
            "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}img{max-width:100%}"
            "</style></head><body>" + "\n".join(parts) + "</body></html>\n")
    write_text(out / "report.html", page)
    return "\n\n".join(t.to_markdown_text() for t in (headline, by_group, tto))

