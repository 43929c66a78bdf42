"""The report of one simulation's output folder (``mropt report DIR`` on ``mropt simulate --out DIR``).

:func:`write_simulation_report` reads ``summary.json``, ``jobs.parquet``, ``tasks.parquet`` and
``utilisation.parquet`` (:mod:`mropt.sim.outputs`) and writes, into the report folder
(default ``DIR/report``), each plot as ``<name>.png`` and ``<name>.svg``:

* ``utilisation`` -- on a cluster of slots, busy slots per slot type over time with the
  capacity of the nodes up; on a cluster of resources (summary.json's ``resources``: Alibaba,
  DRF/DDRF workloads), the share of the cluster's CPU and memory held over time; per pool
  where the workload has several;
* ``shares`` -- resources only: each user's dominant share over time and Jain's index of the
  dominant shares of the users with work;
* ``completion_cdf`` -- CDFs of the finished jobs' completion time (finish - submit), slowdown
  (over ``ideal_span``), lateness (jobs with a deadline; <= 0 is on time) and completion time
  per pool, queue or user where the workload has several; log axes where the data spans
  decades;
* ``locality`` -- node-local, rack-local and remote shares of the attempts with input, per
  stage type and pool;
* ``gantt`` -- one lane per slot (node x slot type x slot), each attempt a bar coloured by its
  job; killed and failed attempts hatched. Attempts are put on a node's slots in start order,
  each on the lowest-numbered slot free at its start (the recorder does not name slots; this
  packing is exact for slot counts because a node never runs more attempts of a type than it
  has slots). A run too large for one chart is drawn over a window its title names.

Each figure is drawn by :mod:`mropt.harness.sim_plots` (the rules: time units, bins, log axes,
windows), from the series of :mod:`mropt.harness.sim_series`; a figure with nothing to draw is
left out with a note saying why, and no figure has an empty panel. Titles are kept inside the
canvas (:func:`mropt.harness.formatting.fit_titles`).

and ``report.md`` and a self-contained ``report.html`` (inline PNG) with the summary table,
a table of the jobs (for at most 200 jobs) and the plots. A folder whose files are not one
run's is refused (:func:`mropt.sim.outputs.check_outputs`), and so is a ``report`` entry of
the folder that is a symlink when the report would go there (it would write outside the folder).
"""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path
from typing import Any

import pandas as pd

from mropt.harness.formatting import fit_titles, pyplot
from mropt.harness.sim_plots import (
    GANTT_MAX_ATTEMPTS,
    completion_figure,
    gantt_figure,
    locality_figure,
    shares_figure,
    slot_lanes,
    utilisation_figure,
)
from mropt.harness.table import render
from mropt.model.files import make_folder, write_bytes, write_text
from mropt.model.folders import refuse_linked_entry

JOB_TABLE_MAX = 200
__all__ = ["GANTT_MAX_ATTEMPTS", "read_simulation", "slot_lanes", "write_simulation_report"]


def _save(fig: Any, out: Path, stem: str) -> str:
    """Write PNG and SVG (each atomically); return the PNG as base64."""
    plt = pyplot()
    fit_titles(fig)
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=110)
    svg = io.BytesIO()
    fig.savefig(svg, format="svg")
    plt.close(fig)
    write_bytes(out / f"{stem}.png", png.getvalue())
    write_bytes(out / f"{stem}.svg", svg.getvalue())
    return base64.b64encode(png.getvalue()).decode()


def read_simulation(folder: str | Path) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The summary and the three tables of a simulation folder; InputError (one line) naming what is wrong.

    :func:`mropt.sim.outputs.check_outputs` first: a folder whose files are of different runs,
    or whose tables are under each other's names, is refused.
    """
    from mropt.sim.outputs import read_outputs

    summary, tables = read_outputs(folder)
    return summary, tables["jobs.parquet"], tables["tasks.parquet"], tables["utilisation.parquet"]


# -- the report --------------------------------------------------------------------------------
def _summary_rows(summary: dict[str, Any], jobs: pd.DataFrame, tasks: pd.DataFrame) -> list[list[Any]]:
    if not summary:  # a folder without summary.json: what the tables say
        return [["jobs", len(jobs)], ["accepted", int(jobs["accepted"].sum())], ["attempts", len(tasks)]]
    keep = [k for k in summary if k not in ("kind", "wall_time")]
    rows = []
    for k in keep:
        v = summary[k]
        rows.append([k, json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v])
    return rows


def write_simulation_report(folder: str | Path, out: str | Path) -> str:
    """Write the plots, ``report.md`` and ``report.html`` of a simulation folder; return the summary as text."""
    summary, jobs, tasks, util = read_simulation(folder)
    refuse_linked_entry(folder, out)
    out = Path(out)
    make_folder(out)
    horizon = float(tasks["end"].max()) if len(tasks) else 0.0
    figures: list[tuple[str, str, str]] = []  # (title, stem, png base64)
    notes: list[str] = []
    totals = {str(k): float(v) for k, v in (summary.get("resources") or {}).items()}
    resources = bool(totals) and any(c.startswith("demand_") for c in tasks.columns)
    if not resources:
        totals = {}
    for title, stem, make in (
        (
            "CPU and memory utilisation over time" if resources else "Slot utilisation over time",
            "utilisation",
            lambda: utilisation_figure(util, tasks, jobs, totals, horizon),
        ),
        ("Dominant shares and Jain's index over time", "shares", lambda: shares_figure(tasks, jobs, totals, horizon)),
        ("Job completion time and slowdown CDFs", "completion_cdf", lambda: completion_figure(jobs)),
        ("Locality of attempts", "locality", lambda: locality_figure(tasks, jobs)),
        ("Gantt chart per slot", "gantt", lambda: gantt_figure(tasks, horizon)),
    ):
        if stem == "shares" and not resources:
            continue  # a cluster of slots has no dominant shares
        fig = make()
        if fig is None:
            why = "no attempt has a locality level" if stem == "locality" else "nothing to draw"
            notes.append(f"{title} left out: {why}.")
            continue
        figures.append((title, stem, _save(fig, out, stem)))
    rows = _summary_rows(summary, jobs, tasks)
    text = render(["field", "value"], rows)
    job_cols = [
        c
        for c in ("job_id", "submit_time", "decision", "reason", "first_start", "map_end", "finish", "deadline")
        + ("on_time", "benefit")
        if c in jobs
    ]
    job_table = jobs[job_cols] if len(jobs) <= JOB_TABLE_MAX else None
    head = f"Simulation of {summary.get('workload') or Path(folder).name} under {summary.get('policy', '?')}"
    md = [f"# {head}", "```\n" + text + "\n```"]
    md += [f"## {t}\n\n![{t}]({stem}.png)" for t, stem, _ in figures]
    md += [f"* {n}" for n in notes]
    if job_table is not None:
        md.append("## Jobs\n\n```\n" + render(job_cols, job_table.astype(object).values.tolist()) + "\n```")
    write_text(out / "report.md", "\n\n".join(md) + "\n")
    parts = [f"<h1>{html.escape(head)}</h1><pre>{html.escape(text)}</pre>"]
    parts += [
        f'<h2>{html.escape(t)}</h2><img alt="{html.escape(t)}" src="data:image/png;base64,{png}">'
        for t, _, png in figures
    ]
    parts += [f"<p>{html.escape(n)}</p>" for n in notes]
    if job_table is not None:
        parts.append("<h2>Jobs</h2>" + job_table.to_html(index=False, na_rep="-"))
    page = (
        '<!doctype html><html><head><meta charset="utf-8"><title>mropt simulation report</title>'
        "<style>body{font-family:sans-serif;margin:2em}img{max-width:100%}table{border-collapse:collapse;"
        "font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px}</style></head><body>"
        + "\n".join(parts)
        + "</body></html>\n"
    )
    write_text(out / "report.html", page)
    return text
