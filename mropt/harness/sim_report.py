"""The report of one simulation's output folder (``mropt report DIR`` on ``mropt simulate --out DIR``).

:func:`write_simulation_report` reads ``summary.json``, ``jobs.parquet``, ``tasks.parquet`` and
``utilisation.parquet`` (:mod:`mropt.sim.outputs`) and writes, into the report folder
(default ``DIR/report``), each plot as ``<name>.png`` and ``<name>.svg``:

* ``utilisation`` -- busy slots over time, a step plot per slot type (the exact step series
  of the whole cluster, pool ``*``), with the capacity of the nodes up as a dashed step;
* ``completion_cdf`` -- the empirical CDF of the finished jobs' completion time (finish -
  submit), and beside it, for jobs with a deadline, of their lateness (finish - deadline;
  <= 0 is on time);
* ``gantt`` -- for runs of at most :data:`GANTT_MAX_ATTEMPTS` attempts: one lane per slot
  (node x slot type x slot), each attempt a bar coloured by its job; killed and failed
  attempts hatched. Attempts are put on a node's slots in start order, each on the
  lowest-numbered slot free at its start (the recorder does not name slots; this packing
  is exact for slot counts because a node never runs more attempts of a type than it has
  slots).

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
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mropt.harness.formatting import pyplot
from mropt.harness.table import render
from mropt.model.errors import InputError
from mropt.model.files import make_folder, write_bytes, write_text

GANTT_MAX_ATTEMPTS = 2000
JOB_TABLE_MAX = 200


def _save(fig: Any, out: Path, stem: str) -> str:
    """Write PNG and SVG (each atomically); return the PNG as base64."""
    plt = pyplot()
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


# -- plots -------------------------------------------------------------------------------------
def utilisation_plot(util: pd.DataFrame, horizon: float) -> Any | None:
    rows = util[util["pool"] == "*"]
    if rows.empty:
        return None
    plt = pyplot()
    types = [t for t in ("map", "reduce") if (rows["slot_type"] == t).any()]
    fig, axes = plt.subplots(len(types), 1, figsize=(8, 2.6 * len(types)), sharex=True, squeeze=False)
    for ax, stype in zip(axes[:, 0], types):
        r = rows[rows["slot_type"] == stype].drop_duplicates("time", keep="last")
        t = np.append(r["time"].to_numpy(float), max(horizon, float(r["time"].max())))
        busy = np.append(r["busy"].to_numpy(float), r["busy"].to_numpy(float)[-1])
        cap = np.append(r["capacity"].to_numpy(float), r["capacity"].to_numpy(float)[-1])
        ax.step(t, busy, where="post", label="busy")
        ax.step(t, cap, where="post", linestyle="--", color="grey", label="capacity")
        ax.set_ylabel(f"{stype} slots")
        ax.set_ylim(0, max(1.0, float(cap.max())) * 1.08)
        ax.legend(loc="upper right", fontsize=8)
    axes[-1, 0].set_xlabel("time (s)")
    axes[0, 0].set_title("Slot utilisation over time")
    return fig


def completion_plot(jobs: pd.DataFrame) -> Any | None:
    done = jobs[jobs["finish"].notna()]
    if done.empty:
        return None
    plt = pyplot()
    late = done[done["deadline"].notna()]
    panels = 2 if len(late) else 1
    fig, axes = plt.subplots(1, panels, figsize=(4.2 * panels + 0.6, 3.2), squeeze=False)
    response = np.sort((done["finish"] - done["submit_time"]).to_numpy(float))
    share = np.arange(1, len(response) + 1) / len(jobs)
    ax = axes[0, 0]
    ax.step(np.insert(response, 0, 0.0), np.insert(share, 0, 0.0), where="post")
    ax.set_xlabel("completion time: finish - submit (s)")
    ax.set_ylabel("share of all jobs")
    ax.set_ylim(0, 1.02)
    ax.set_title("Job completion time CDF")
    if panels == 2:
        lateness = np.sort((late["finish"] - late["deadline"]).to_numpy(float))
        ax = axes[0, 1]
        ax.step(lateness, np.arange(1, len(lateness) + 1) / len(lateness), where="post")
        ax.axvline(0.0, color="grey", linestyle=":")
        ax.set_xlabel("finish - deadline (s)")
        ax.set_ylabel("share of finished jobs with a deadline")
        ax.set_ylim(0, 1.02)
        ax.set_title("Lateness CDF")
    return fig


def slot_lanes(tasks: pd.DataFrame) -> pd.Series:
    """Per attempt, its lane ``node/type/k``: the lowest slot of its node and type free at its start."""
    lanes = pd.Series("", index=tasks.index, dtype=object)
    for (node, stype), g in tasks.groupby(["node", "stage_type"], sort=False):
        ends: list[float] = []  # per slot: when it frees
        for idx, start, end in sorted(zip(g.index, g["start"], g["end"]), key=lambda x: (x[1], x[2], x[0])):
            k = next((i for i, e in enumerate(ends) if e <= start), len(ends))
            if k == len(ends):
                ends.append(end)
            else:
                ends[k] = end
            lanes[idx] = f"{node}/{stype}/{k}"
    return lanes


def gantt_plot(tasks: pd.DataFrame) -> Any | None:
    if tasks.empty or len(tasks) > GANTT_MAX_ATTEMPTS:
        return None
    plt = pyplot()
    lanes = slot_lanes(tasks)
    order = sorted(
        lanes.unique(),
        key=lambda s: (s.rsplit("/", 2)[0], s.rsplit("/", 2)[1] != "map", int(s.rsplit("/", 2)[2])),
    )
    row = {lane: i for i, lane in enumerate(order)}
    jobs = list(dict.fromkeys(tasks["job_id"]))
    cmap = plt.get_cmap("tab20")
    colour = {job: cmap(i % 20) for i, job in enumerate(jobs)}
    fig, ax = plt.subplots(figsize=(10, min(14.0, 1.2 + 0.22 * len(order))))
    for job, g in tasks.groupby("job_id", sort=False):
        ok = g["outcome"] == "succeeded"
        for part, hatch in ((g[ok], None), (g[~ok], "//")):
            if part.empty:
                continue
            y = [row[lanes[i]] for i in part.index]
            ax.barh(
                y,
                (part["end"] - part["start"]).to_numpy(float),
                left=part["start"].to_numpy(float),
                height=0.8,
                color=colour[job],
                edgecolor="black" if hatch else colour[job],
                linewidth=0.3,
                hatch=hatch,
                label=str(job) if hatch is None or ok.sum() == 0 else None,
            )
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels(order, fontsize=max(4, min(8, int(400 / max(1, len(order))))))
    ax.invert_yaxis()
    ax.set_xlabel("time (s)")
    ax.set_title("Attempts per slot (hatched: killed or failed)")
    if len(jobs) <= 20:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), title="job")
    return fig


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
    out = Path(out)
    entry = Path(folder) / "report"
    if entry.is_symlink() and os.path.abspath(out) == os.path.abspath(entry):
        raise InputError(f"{entry}: is a symlink, not a report folder: remove it, or give --out")
    make_folder(out)
    horizon = float(tasks["end"].max()) if len(tasks) else 0.0
    figures: list[tuple[str, str, str]] = []  # (title, stem, png base64)
    notes: list[str] = []
    for title, stem, make in (
        ("Slot utilisation over time", "utilisation", lambda: utilisation_plot(util, horizon)),
        ("Job completion time CDF", "completion_cdf", lambda: completion_plot(jobs)),
        ("Gantt chart per slot", "gantt", lambda: gantt_plot(tasks)),
    ):
        fig = make()
        if fig is None:
            if stem == "gantt" and len(tasks) > GANTT_MAX_ATTEMPTS:
                notes.append(f"Gantt chart left out: {len(tasks)} attempts (drawn up to {GANTT_MAX_ATTEMPTS}).")
            else:
                notes.append(f"{title} left out: nothing to draw.")
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
