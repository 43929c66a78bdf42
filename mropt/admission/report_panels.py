"""The admission kind's panels for ``mropt report``: the AMB paper's Figures 7-9.

AMB sec. 5 (Figures 7-9) plots total benefit, acceptance rate (accepted jobs / jobs)
and completion rate (jobs on time / accepted jobs) against job size L, job count N
and deadline D, one parameter at a time around Table 2's defaults. The panel puts
every method of a study (AMB, Ideal, the exact optimum...) on those axes: each row of
plots uses the instances whose other two parameters take their most common values.
On-time counts come from the independent ``verify`` (the ``on_time`` metric). The panel is
registered by :mod:`mropt.admission.table`, which imports this module (and pandas) when it draws.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

AXES = (("size", "job size L (splits)"), ("jobs", "job count N"), ("deadline", "deadline D (s)"))
PANELS = (("benefit", "total benefit"), ("acceptance", "acceptance rate"), ("completion", "completion rate"))
COLUMNS = ["axis", "x", "method", "runs", *[p for p, _ in PANELS]]


def _floats(s: pd.Series) -> np.ndarray:
    return pd.to_numeric(s, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def figure_data(df: pd.DataFrame) -> pd.DataFrame:
    """Mean benefit, acceptance and completion rate per method along each axis L, N, D."""
    import json

    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    params = pd.DataFrame([json.loads(p or "{}") for p in df["instance_params"]], index=df.index)
    data = df.join(params.drop(columns=[c for c in params.columns if c in df.columns]), how="left")
    if "jobs" not in params:
        data["jobs"] = df["jobs"]
    ok = data[data["objective"].notna() | data["bound"].notna()].copy()
    ok["benefit"] = ok["objective"].where(ok["status"] != "bound", ok["bound"].fillna(ok["objective"]))
    accepted, jobs, on_time = (_floats(ok[c]) for c in ("accepted", "jobs", "on_time"))
    ok["acceptance"] = np.where(ok["status"] == "bound", np.nan, accepted / jobs)  # a bound accepts no plan
    with np.errstate(divide="ignore", invalid="ignore"):
        ok["completion"] = np.where(accepted > 0, on_time / accepted, np.nan)
    out = []
    for axis, _ in AXES:
        if axis not in ok or ok[axis].nunique(dropna=True) < 2:
            continue
        sub = ok
        for other, _ in AXES:
            if other != axis and other in ok and ok[other].notna().any():
                sub = sub[sub[other] == ok[other].mode().iloc[0]]
        for (method, x), g in sub.groupby(["method", axis], sort=True):
            out.append([axis, x, method, len(g), g["benefit"].mean(), g["acceptance"].mean(), g["completion"].mean()])
    return pd.DataFrame(out, columns=COLUMNS)


def plot_figures(data: pd.DataFrame) -> Any:
    """The 3 x (swept axes) grid of Figures 7-9, or None when nothing is swept."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    axes = [a for a in AXES if a[0] in set(data["axis"])]
    if not axes:
        return None
    fig, grid = plt.subplots(len(PANELS), len(axes), figsize=(3.6 * len(axes), 8.4), squeeze=False)
    for j, (axis, xlabel) in enumerate(axes):
        d = data[data["axis"] == axis]
        for i, (panel, ylabel) in enumerate(PANELS):
            ax = grid[i][j]
            for method, g in d.groupby("method"):
                ax.plot(g["x"], g[panel], marker="o", label=method)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3)
    grid[0][0].legend(fontsize=7)
    swept = ", ".join(label.split(" (")[0].split()[-1] for _, label in axes)  # "L", "N", "D"
    fig.suptitle(f"AMB paper Figs. 7-9 panels: benefit, acceptance and completion against {swept}")
    return fig
