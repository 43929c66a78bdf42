"""The plots of a gap report (:func:`mropt.harness.report.write_report`), each written as
``<name>.png`` and ``.pdf``: the gap and bound gap distributions, the Dolan-More performance
profile and the gap profile over (instance, method seed) problems, the solve curves, time to
optimality against N, and the plots of the panels each problem package registers for its kind
(:func:`mropt.registry.report_panels`). A plot whose axis would be degenerate is left out and
the reason recorded in :class:`Notes`; :func:`value_range` keeps a constant series on a
sensible axis. Each plot comes back as a :class:`Figure` holding its PNG in base64 for the
self-contained HTML page.
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mropt.harness import formatting as fmt
from mropt.harness import stats
from mropt.harness.report_tables import Table, _floats, _grouped, _matrix
from mropt.model.files import write_bytes
from mropt.registry import report_panels


@dataclass
class Figure:
    title: str
    name: str
    png: str  # base64


@dataclass
class Notes:
    """Why a plot was left out (one sentence each)."""

    items: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.items.append(text)


# -- plots ----------------------------------------------------------------------------------
def _save(fig: Any, out: Path, stem: str) -> str:
    """Write PNG and PDF; return the PNG as base64 for the HTML page."""
    plt = fmt.pyplot()
    fmt.fit_titles(fig)
    fig.tight_layout()
    fig.savefig(out / f"{stem}.pdf")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    write_bytes(out / f"{stem}.png", buf.getvalue())
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def value_range(lo: float, hi: float, *, nonnegative: bool = False) -> tuple[float, float]:
    """An axis range around [lo, hi], never empty: a constant gets +/- max(1, 10 %) around it."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return (0.0, 1.0)
    span = hi - lo
    if span <= 1e-9 * max(1.0, abs(hi)):
        pad = max(1.0, 0.1 * abs(hi))
        top = hi + pad
        bottom = lo - pad
        if nonnegative and lo >= 0 and bottom < 0:
            bottom = -0.05 * top
        return (bottom, top)
    pad = 0.05 * span
    bottom = lo - pad
    if nonnegative and lo >= 0:
        bottom = max(bottom, -0.05 * (hi + pad))
    return (bottom, hi + pad)


def _distribution(d: pd.DataFrame, role: str, ylabel: str, title: str, out: Path, stem: str) -> Figure | None:
    rows = d[(d["role"] == role) & d["pct"].notna()]
    if rows.empty:
        return None
    plt = fmt.pyplot()
    methods = sorted(rows["mkey"].unique(), key=fmt.natural_key)
    data = [rows[rows["mkey"] == m]["pct"].to_numpy(dtype=float) for m in methods]
    fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(methods) + 2), 3.8))
    ax.boxplot(data, showmeans=True)
    for i, v in enumerate(data, start=1):  # the runs themselves, so a constant series shows as points
        jitter = (np.random.default_rng(i).random(len(v)) - 0.5) * 0.25
        ax.plot(i + jitter, v, "o", ms=3, alpha=0.5, color="tab:blue")
    ax.set_xticks(range(1, len(methods) + 1), methods, rotation=30, ha="right")
    allv = np.concatenate(data)
    ax.set_ylim(*value_range(float(allv.min()), float(allv.max()), nonnegative=True))
    ax.set_ylabel(ylabel)
    same = float(allv.max()) - float(allv.min()) <= 1e-9 * max(1.0, abs(float(allv.max())))
    ax.set_title(title + (f" (every value {fmt.percent(allv.max())} %)" if same else ""))
    ax.grid(axis="y", alpha=0.3)
    return Figure(title, stem, _save(fig, out, stem))


def _profile_plots(d: pd.DataFrame, out: Path, notes: Notes) -> list[Figure]:
    figures: list[Figure] = []
    plans = d[d["role"] == "plan"]
    if plans.empty:
        return figures
    plt = fmt.pyplot()
    cost = plans.assign(c=np.where(plans["at_reference"], _floats(plans["wall_time"]), np.inf))
    costs = _matrix(cost, "c")
    profile = stats.performance_profile(costs)
    profile.assign(**{"share %": profile["share"] * 100.0}).drop(columns=["share"]).to_csv(
        out / "performance_profile.csv", index=False
    )
    if not np.isfinite(costs.to_numpy(dtype=float)).any():
        notes.add("Performance profile left out: no plan reached the reference value on any problem.")
    else:
        fig, ax = plt.subplots(figsize=(6.4, 4))
        top = max(2.0, float(profile["ratio"].max()) * 1.5)
        for method in sorted(costs.columns, key=fmt.natural_key):
            p = profile[profile["method"] == method]
            x = np.append(p["ratio"].to_numpy(), top)
            y = np.append(p["share"].to_numpy(), p["share"].iloc[-1]) * 100.0
            ax.step(x, y, where="post", label=method)
            ax.plot(p["ratio"], p["share"] * 100.0, "o", ms=3, color=ax.lines[-1].get_color())
        ax.set_xscale("log", base=2)
        ax.set_xlim(1.0, top)
        ax.set_ylim(-2, 102)
        ax.set_xlabel("tau: time within a factor tau of the fastest (log 2)")
        ax.set_ylabel("problems (%)")
        ax.set_title(f"Performance profile: time to a plan at the reference ({len(costs)} problems)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
        figures.append(
            Figure(
                "Performance profile (Dolan-More): time to a plan at the reference value",
                "performance_profile",
                _save(fig, out, "performance_profile"),
            )
        )
    gaps = _matrix(plans, "pct")
    gprof = stats.gap_profile(gaps)
    gprof.assign(**{"share %": gprof["share"] * 100.0}).rename(columns={"gap": "gap %"}).drop(columns=["share"]).to_csv(
        out / "gap_profile.csv", index=False
    )
    finite = gaps.to_numpy(dtype=float)
    finite = finite[np.isfinite(finite)]
    if not len(finite) or float(finite.max()) <= 0:
        notes.add(
            "Gap profile left out: every plan is at the reference (gap 0 %), so its x axis would be a "
            "single point; see the tables."
            if len(finite)
            else "Gap profile left out: no plan has a gap."
        )
    else:
        fig, ax = plt.subplots(figsize=(6.4, 4))
        top = float(finite.max()) * 1.05
        for method in sorted(gaps.columns, key=fmt.natural_key):
            p = gprof[gprof["method"] == method]
            x = np.append(p["gap"].to_numpy(), top)
            y = np.append(p["share"].to_numpy(), p["share"].iloc[-1]) * 100.0
            ax.step(x, y, where="post", label=method)
        ax.set_xlim(-0.02 * top, top)
        ax.set_ylim(-2, 102)
        ax.set_xlabel("gap to the reference (%) at most")
        ax.set_ylabel("problems (%)")
        ax.set_title("Gap profile: share of problems within a gap (plans)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
        figures.append(Figure("Gap profile (plans)", "gap_profile", _save(fig, out, "gap_profile")))
    return figures


def _solve_curves(d: pd.DataFrame, out: Path, notes: Notes) -> Figure | None:
    exact = d[d["exact"].fillna(False).astype(bool)]
    if exact.empty:
        return None
    curves = []
    for (method,), g in _grouped(exact, ["mkey"]):
        c = stats.solve_curve(_floats(g["wall_time"]), g["proven"].to_numpy(dtype=bool))
        curves.append((method, g, c.assign(method=method)))
    data = pd.concat([c for _, _, c in curves], ignore_index=True) if curves else pd.DataFrame()
    data = data.assign(**{"solved %": data["share"] * 100.0}).rename(columns={"time": "time s"})
    data[["method", "time s", "solved %"]].to_csv(out / "solve_curves.csv", index=False)
    if data.empty:
        notes.add("Solve curves left out: no exact run was proven optimal.")
        return None
    plt = fmt.pyplot()
    times = data["time s"].to_numpy(dtype=float)
    limits = _floats(exact["time_limit"])
    right = max(float(times.max()), float(np.nanmax(limits)) if np.isfinite(limits).any() else 0.0)
    left = max(float(times.min()), stats.MIN_COST)
    log = right / left > 20
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for method, g, c in curves:
        if c.empty:
            ax.plot([left, right], [0, 0], label=f"{method} (none proven)")
            continue
        x = np.concatenate([[left if log else 0.0], c["time"].to_numpy(), [right]])
        y = np.concatenate([[0.0], c["share"].to_numpy(), [c["share"].iloc[-1]]]) * 100.0
        ax.step(x, y, where="post", label=f"{method} ({len(g)} runs)")
        ax.plot(c["time"], c["share"] * 100.0, "o", ms=3, color=ax.lines[-1].get_color())
    if log:
        ax.set_xscale("log")
        ax.set_xlim(left / 1.5, right * 1.5)
    else:
        ax.set_xlim(*value_range(0.0, right, nonnegative=True))
    ax.set_ylim(-2, 102)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("runs proven optimal (%)")
    ax.set_title("Time to solve: runs proven optimal by time t (time-limited runs count)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    return Figure(
        "Time to solve (exact methods; runs not proven optimal keep the curve below 100 %)",
        "solve_curves",
        _save(fig, out, "solve_curves"),
    )


def _tto_plot(tto: pd.DataFrame, out: Path, notes: Notes) -> Figure | None:
    if tto.empty:
        return None
    if tto["N"].nunique() < 2:
        notes.add(
            f"Time to optimality against N left out: every exact run has N = {tto['N'].iloc[0]} "
            "(a single x value); see the table."
        )
        return None
    plt = fmt.pyplot()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.6))
    for method, g in tto.groupby("method", sort=False):
        g = g.sort_values("N")
        a1.plot(g["N"], g["PAR-2 s"], marker="o", label=method)
        a2.plot(g["N"], g["proven optimal %"], marker="o", label=method)
    par = tto["PAR-2 s"].to_numpy(dtype=float)
    a1.set_ylim(*value_range(float(np.nanmin(par)), float(np.nanmax(par)), nonnegative=True))
    a2.set_ylim(-2, 102)
    a1.set_xlabel("N")
    a1.set_ylabel("PAR-2 time (s)")
    a2.set_xlabel("N")
    a2.set_ylabel("runs proven optimal (%)")
    a1.legend(fontsize=8)
    for a in (a1, a2):
        a.grid(alpha=0.3)
    return Figure(
        "Time to optimality against N (PAR-2 counts time-limited runs twice their limit)",
        "time_to_optimality",
        _save(fig, out, "time_to_optimality"),
    )


def _plots(d: pd.DataFrame, tto: pd.DataFrame, out: Path, notes: Notes) -> list[Figure]:
    figures = []
    for role, ylabel, title, stem in (
        ("plan", "gap to the reference (%)", "Gap distribution per plan method", "gap_distribution"),
        (
            "bound",
            "bound beyond the reference (%)",
            "Bound gap distribution per bound method",
            "bound_gap_distribution",
        ),
    ):
        f = _distribution(d, role, ylabel, title, out, stem)
        if f is not None:
            figures.append(f)
    figures += _profile_plots(d, out, notes)
    for make in (lambda: _solve_curves(d, out, notes), lambda: _tto_plot(tto, out, notes)):
        f = make()
        if f is not None:
            figures.append(f)
    return figures


def _panels(df: pd.DataFrame, out: Path) -> tuple[list[Table], list[Figure]]:
    """The registered panels of every kind in the study: their tables (CSV, TeX) and plots."""
    tables, figures = [], []
    for kind in sorted(df["kind"].dropna().unique()) if len(df) else []:
        rows = df[df["kind"] == kind]
        for panel in report_panels(kind):
            data = panel.table(rows)
            data.to_csv(out / f"{panel.name}.csv", index=False)
            if not len(data):
                continue
            tables.append(Table(f"{panel.title} data (means per point)", data, panel.name))
            fig = panel.plot(data) if panel.plot is not None else None
            if fig is not None:
                figures.append(Figure(f"{panel.title} panels", panel.name, _save(fig, out, panel.name)))
    return tables, figures
