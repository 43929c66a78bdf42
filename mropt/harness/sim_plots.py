"""The figures of one simulation's report (:mod:`mropt.harness.sim_report`), for every kind of cluster.

Each function takes the folder's tables (and the summary) and returns a matplotlib figure, or
None when it has nothing to draw; a figure has no panel without data. Times are in seconds,
drawn in s, min or h by the run's length (:func:`mropt.harness.sim_series.time_scale`); a
series of more than :data:`EXACT_STEPS` steps is resampled to the time average over round bins
(:func:`~mropt.harness.sim_series.readable_bin`, at most :data:`MAX_BINS`), the width in the
title.

* :func:`utilisation_figure` -- slots: busy slots per slot type with the capacity of the nodes
  up (the recorder's exact step series, pool ``*``); resources: the share of the cluster's CPU
  and memory (every resource) held, from the attempts' ``demand_<name>``. Where the workload has
  several pools, a panel per slot type or resource stacks the pools' use
  (:data:`TOP_GROUPS` largest, the rest as ``other``);
* :func:`shares_figure` -- resources only: each user's dominant share over time (the
  :data:`TOP_GROUPS` users of largest mean share) and Jain's index of the dominant shares of the
  users with work in the system (:func:`~mropt.harness.sim_series.dominant_share_bins`);
* :func:`completion_figure` -- CDFs of the finished jobs' completion time (finish - submit), of
  their slowdown (completion time over ``ideal_span``), of lateness (jobs with a deadline), and
  of the completion time per pool, queue or user where the workload has several (one panel per
  grouping that splits the jobs differently); a CDF of values spanning two decades or more is
  drawn on a log axis;
* :func:`locality_figure` -- shares of node-local, rack-local and remote attempts per stage type
  and, with several pools, per pool (attempts with a locality level only);
* :func:`gantt_figure` -- one lane per slot (node x slot type x k: attempts packed on the lowest
  lane free at their start, :func:`slot_lanes`), each attempt a bar coloured by its job, killed
  and failed ones hatched; a run of more than :data:`GANTT_MAX_ATTEMPTS` attempts or
  :data:`GANTT_MAX_LANES` lanes is drawn over a window, named in the title: the time span from the
  first start holding that many attempts, on the first nodes (in name order) whose lanes fit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mropt.harness.formatting import pyplot
from mropt.harness.sim_series import (
    bin_edges,
    bin_means,
    dominant_share_bins,
    held_integrals,
    readable_bin,
    spans_decades,
    time_scale,
    width_text,
)

GANTT_MAX_ATTEMPTS = 2000
GANTT_MAX_LANES = 120
EXACT_STEPS = 500
MAX_BINS = 200
TOP_GROUPS = 8
GROUPINGS = (("pool", "pool"), ("queue", "queue"), ("user", "user"))


def _resource_label(name: str) -> str:
    return {"cpu": "CPU", "mem": "memory"}.get(name, name)


def _steps(times: np.ndarray, values: np.ndarray, horizon: float) -> tuple[np.ndarray, np.ndarray, str]:
    """The series to draw with ``where="post"``: exact steps, or bin means when there are many (title note)."""
    if len(times) <= EXACT_STEPS:
        t = np.append(times, max(horizon, float(times[-1]) if len(times) else 0.0))
        return t, np.append(values, values[-1] if len(values) else 0.0), ""
    width = readable_bin(horizon, MAX_BINS)
    edges = bin_edges(horizon, width)
    means = bin_means(times, values, edges)
    return edges, np.append(means, means[-1]), f" (mean per {width_text(width)})"


def _top(groups: pd.Series, weight: pd.Series | None = None) -> pd.Series:
    """Each row's group, all but the :data:`TOP_GROUPS` - 1 largest (by ``weight``, else rows) as ``other``."""
    sizes = (weight if weight is not None else pd.Series(1.0, index=groups.index)).groupby(groups).sum()
    if len(sizes) <= TOP_GROUPS:
        return groups.astype(str)
    keep = set(sizes.sort_values(ascending=False).index[: TOP_GROUPS - 1])
    return groups.where(groups.isin(keep), "other").astype(str)


# -- utilisation ---------------------------------------------------------------------------------
def utilisation_figure(
    util: pd.DataFrame, tasks: pd.DataFrame, jobs: pd.DataFrame, totals: dict[str, float], horizon: float
) -> Any | None:
    """Slots or resources in use over time (module docstring)."""
    if totals:
        return _resource_utilisation(tasks, jobs, totals, horizon)
    return _slot_utilisation(util, horizon)


def _slot_utilisation(util: pd.DataFrame, horizon: float) -> Any | None:
    rows = util[util["pool"] == "*"]
    types = [t for t in ("map", "reduce") if (rows["slot_type"] == t).any()]
    if not types:
        return None
    pools = util[util["pool"] != "*"]
    stacked = [t for t in types if pools.loc[pools["slot_type"] == t, "pool"].nunique() > 1]
    plt = pyplot()
    n = len(types) + len(stacked)
    fig, axes = plt.subplots(n, 1, figsize=(8, 2.6 * n), sharex=True, squeeze=False)
    scale, xlabel = time_scale(horizon)
    note = ""
    for ax, stype in zip(axes[:, 0], types, strict=False):
        r = rows[rows["slot_type"] == stype].drop_duplicates("time", keep="last")
        times, busy, cap = (r[c].to_numpy(float) for c in ("time", "busy", "capacity"))
        if times[0] > 0:  # before the first row: nothing ran, the first capacity held
            times, busy, cap = np.insert(times, 0, 0.0), np.insert(busy, 0, 0.0), np.insert(cap, 0, cap[0])
        t, busy, note = _steps(times, busy, horizon)
        _, cap, _ = _steps(times, cap, horizon)
        ax.step(t / scale, busy, where="post", label="busy")
        ax.step(t / scale, cap, where="post", linestyle="--", color="grey", label="capacity (nodes up)")
        ax.set_ylabel(f"{stype} slots")
        ax.set_ylim(0, max(1.0, float(cap.max())) * 1.08)
        ax.legend(loc="best", fontsize=8)
    for ax, stype in zip(axes[len(types) :, 0], stacked, strict=True):
        _stack_pools(ax, pools[pools["slot_type"] == stype], horizon, scale)
        ax.set_ylabel(f"{stype} slots by pool")
    axes[-1, 0].set_xlabel(xlabel)
    axes[0, 0].set_title("Slot utilisation over time" + note)
    return fig


def _stack_pools(ax: Any, rows: pd.DataFrame, horizon: float, scale: float) -> None:
    """Stacked busy slots per pool (the pools' own step series), in bins."""
    width = readable_bin(horizon, MAX_BINS)
    edges = bin_edges(horizon, width)
    weight = rows.groupby("pool")["busy"].sum()
    names = list(weight.sort_values(ascending=False).index)
    series: dict[str, np.ndarray] = {}
    for pool in names:
        r = rows[rows["pool"] == pool].drop_duplicates("time", keep="last")
        means = bin_means(r["time"].to_numpy(float), r["busy"].to_numpy(float), edges)
        key = pool if len(series) < TOP_GROUPS - 1 or len(names) <= TOP_GROUPS else "other"
        series[key] = series.get(key, 0.0) + means
    ax.stackplot(edges[:-1] / scale, *series.values(), labels=list(series), step="post")
    ax.legend(loc="upper right", fontsize=7, ncol=2, title=f"pool (mean per {width_text(width)})", title_fontsize=7)


def _resource_utilisation(tasks: pd.DataFrame, jobs: pd.DataFrame, totals: dict[str, float], horizon: float) -> Any:
    names = [r for r, total in totals.items() if total > 0 and f"demand_{r}" in tasks]
    if not names or tasks.empty or horizon <= 0:
        return None
    width = readable_bin(horizon, MAX_BINS)
    edges = bin_edges(horizon, width)
    start, end = tasks["start"].to_numpy(float), tasks["end"].to_numpy(float)
    pool_of = dict(zip(jobs["job_id"].astype(str), jobs["pool"].astype(str), strict=True)) if "pool" in jobs else {}
    pools = tasks["job_id"].astype(str).map(pool_of) if pool_of else None
    several = pools is not None and pools.nunique() > 1
    plt = pyplot()
    n = 1 + (len(names) if several else 0)
    fig, axes = plt.subplots(n, 1, figsize=(8, 2.8 * n), sharex=True, squeeze=False)
    scale, xlabel = time_scale(horizon)
    ax = axes[0, 0]
    for r in names:
        amount = tasks[f"demand_{r}"].to_numpy(float) / totals[r] * 100.0
        held = held_integrals(np.zeros(len(tasks), np.int64), start, end, amount, 1, edges)[0]
        means = np.diff(held) / np.diff(edges)
        ax.step(edges / scale, np.append(means, means[-1]), where="post", label=_resource_label(r))
    ax.set_ylabel("in use (% of cluster)")
    ax.set_ylim(0, 105)
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title(f"CPU and memory utilisation over time (mean per {width_text(width)})")
    if several:
        assert pools is not None
        label = _top(pools, pd.Series(end - start, index=tasks.index))
        groups = sorted(set(label), key=lambda g: (g == "other", g))
        index = {g: k for k, g in enumerate(groups)}
        group = label.map(index).to_numpy(np.int64)
        for ax, r in zip(axes[1:, 0], names, strict=True):
            amount = tasks[f"demand_{r}"].to_numpy(float) / totals[r] * 100.0
            held = held_integrals(group, start, end, amount, len(groups), edges)
            ax.stackplot(edges[:-1] / scale, *(np.diff(held, axis=1) / np.diff(edges)), labels=groups, step="post")
            ax.set_ylabel(f"{_resource_label(r)} by pool (%)")
            ax.set_ylim(0, 105)
            ax.legend(loc="upper right", fontsize=7, ncol=2, title="pool", title_fontsize=7)
    axes[-1, 0].set_xlabel(xlabel)
    return fig


# -- dominant shares -------------------------------------------------------------------------------
def shares_figure(tasks: pd.DataFrame, jobs: pd.DataFrame, totals: dict[str, float], horizon: float) -> Any | None:
    """Dominant shares per user and Jain's index over time (resources only; module docstring)."""
    if not totals or tasks.empty or horizon <= 0 or "user" not in jobs:
        return None
    width = readable_bin(horizon, MAX_BINS)
    edges = bin_edges(horizon, width)
    users, shares, jain = dominant_share_bins(tasks, jobs, totals, edges)
    if not np.isfinite(jain).any():
        return None
    plt = pyplot()
    fig, axes = plt.subplots(2, 1, figsize=(8, 5.6), sharex=True, squeeze=False)
    scale, xlabel = time_scale(horizon)
    ax = axes[0, 0]
    order = np.argsort(-shares.mean(axis=1), kind="stable")[:TOP_GROUPS]
    for u in order:
        if shares[u].any():
            ax.step(edges / scale, np.append(shares[u], shares[u][-1]), where="post", label=users[u])
    ax.set_ylabel("dominant share")
    ax.set_ylim(0, min(1.05, max(0.05, float(shares.max()) * 1.1)))
    shown = f"{len(order)} of {len(users)} users, largest mean share" if len(users) > len(order) else "user"
    ax.legend(loc="upper right", fontsize=7, ncol=2, title=shown, title_fontsize=7)
    ax.set_title(f"Dominant shares over time (mean holding per {width_text(width)})")
    ax = axes[1, 0]
    ax.step(edges / scale, np.append(jain, jain[-1]), where="post", color="black")
    ax.set_ylabel("Jain's index")
    ax.set_ylim(0, 1.05)
    ax.set_title("Jain's index of the dominant shares of users with work (1 = equal)", fontsize=10)
    axes[-1, 0].set_xlabel(xlabel)
    return fig


# -- completion --------------------------------------------------------------------------------------
def _cdf(ax: Any, values: np.ndarray, denominator: int, xlabel: str, title: str, label: str | None = None) -> None:
    v = np.sort(values)
    share = np.arange(1, len(v) + 1) / denominator
    log = spans_decades(v)
    if log:
        v = np.maximum(v, v[v > 0].min())
        ax.set_xscale("log")
    ax.step(v, share, where="post", label=label)
    ax.set_xlabel(xlabel + (" (log)" if log else ""))
    ax.set_ylim(0, 1.02)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)


def _groupings(jobs: pd.DataFrame) -> list[str]:
    """Pool, queue and user where each splits the jobs in several groups, and differently from one before it."""
    out: list[str] = []
    seen: list[pd.Series] = []
    for column, _ in GROUPINGS:
        if column not in jobs or jobs[column].nunique() < 2:
            continue
        codes = pd.Series(pd.factorize(jobs[column])[0])
        if any(codes.equals(s) for s in seen):
            continue
        seen.append(codes)
        out.append(column)
    return out


def completion_figure(jobs: pd.DataFrame) -> Any | None:
    """CDFs of completion time, slowdown, lateness and completion time per group (module docstring)."""
    done = jobs[pd.to_numeric(jobs["finish"], errors="coerce").notna()]
    if done.empty:
        return None
    jct = (done["finish"] - done["submit_time"]).to_numpy(float)
    panels: list[tuple[str, Any]] = [("jct", None)]
    if "ideal_span" in done and done["ideal_span"].notna().any():
        panels.append(("slowdown", None))
    late = done[pd.to_numeric(done["deadline"], errors="coerce").notna()]
    if len(late):
        panels.append(("lateness", None))
    panels += [("group", g) for g in _groupings(done)]
    plt = pyplot()
    cols = min(3, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols + 0.4, 3.4 * rows), squeeze=False)
    for k, (kind, group) in enumerate(panels):
        ax = axes[k // cols, k % cols]
        if kind == "jct":
            _cdf(ax, jct, len(jobs), "completion time: finish - submit (s)", "Job completion time CDF")
            ax.set_ylabel("share of all jobs")
        elif kind == "slowdown":
            sd = done[done["ideal_span"] > 0]
            slow = ((sd["finish"] - sd["submit_time"]) / sd["ideal_span"]).to_numpy(float)
            _cdf(ax, slow, len(jobs), "slowdown: completion time / time alone", "Slowdown CDF")
            ax.set_ylabel("share of all jobs")
        elif kind == "lateness":
            lateness = np.sort((late["finish"] - late["deadline"]).to_numpy(float))
            ax.step(lateness, np.arange(1, len(lateness) + 1) / len(lateness), where="post")
            ax.axvline(0.0, color="grey", linestyle=":")
            ax.set_xlabel("lateness: finish - deadline (s)")
            ax.set_ylabel("share of finished jobs with a deadline")
            ax.set_ylim(0, 1.02)
            ax.set_title("Lateness CDF (<= 0: on time)", fontsize=10)
            ax.grid(alpha=0.3)
        else:
            label = _top(done[group].astype(str))
            for name in sorted(set(label), key=lambda g: (g == "other", g)):
                part = done[label == name]
                _cdf(
                    ax,
                    (part["finish"] - part["submit_time"]).to_numpy(float),
                    len(part),
                    "completion time (s)",
                    f"Completion time CDF per {group}",
                    label=name,
                )
            if spans_decades(jct):
                ax.set_xscale("log")
            ax.set_ylabel(f"share of the {group}'s finished jobs")
            ax.legend(fontsize=7, title=group, title_fontsize=7)
    for k in range(len(panels), rows * cols):
        axes[k // cols, k % cols].set_visible(False)
    return fig


# -- locality ------------------------------------------------------------------------------------------
LEVELS = (("node", "node-local"), ("rack", "rack-local"), ("any", "remote"))


def locality_figure(tasks: pd.DataFrame, jobs: pd.DataFrame) -> Any | None:
    """Shares of attempts per locality level, per stage type and per pool (module docstring)."""
    if tasks.empty or "locality" not in tasks:
        return None
    rows = tasks[tasks["locality"].notna()]
    if rows.empty:
        return None
    bars: list[tuple[str, pd.DataFrame]] = [(t, rows[rows["stage_type"] == t]) for t in ("map", "reduce")]
    bars = [(f"{t} ({len(r)})", r) for t, r in bars if len(r)]
    if "pool" in jobs:
        pool_of = dict(zip(jobs["job_id"].astype(str), jobs["pool"].astype(str), strict=True))
        pools = _top(rows["job_id"].astype(str).map(pool_of))
        if pools.nunique() > 1:
            names = sorted(set(pools), key=lambda g: (g == "other", g))
            bars += [(f"pool {p} ({int((pools == p).sum())})", rows[pools == p]) for p in names]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(bars) + 2.5), 3.6))
    bottom = np.zeros(len(bars))
    for level, name in LEVELS:
        share = np.array([100.0 * float((r["locality"] == level).mean()) for _, r in bars])
        ax.bar(range(len(bars)), share, bottom=bottom, label=name)
        bottom += share
    ax.set_xticks(range(len(bars)))
    ax.set_xticklabels(
        [b for b, _ in bars], rotation=30 if len(bars) > 3 else 0, ha="right" if len(bars) > 3 else "center"
    )
    ax.set_ylabel("share of attempts (%)")
    ax.set_ylim(0, 100)
    ax.set_title("Locality of attempts with input (attempts in brackets)", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


# -- Gantt ----------------------------------------------------------------------------------------------
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


def gantt_window(tasks: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The attempts to draw and the window in words ('' for the whole run; module docstring)."""
    part, words = tasks, ""
    if len(tasks) > GANTT_MAX_ATTEMPTS:
        starts = np.sort(tasks["start"].to_numpy(float))
        t0, t1 = float(starts[0]), float(starts[GANTT_MAX_ATTEMPTS])
        if t1 > t0:
            part = tasks[tasks["start"] < t1]
            words = f"attempts starting in [{t0:g}, {t1:g}) s"
        else:  # more than the cap start at the first instant
            part = tasks.sort_values(["start", "end"], kind="stable").iloc[:GANTT_MAX_ATTEMPTS]
            words = f"the first {GANTT_MAX_ATTEMPTS} attempts starting at {t0:g} s"
    lane_count = slot_lanes(part).groupby(part["node"]).nunique()
    if lane_count.sum() > GANTT_MAX_LANES:
        kept: list[str] = []
        used = 0
        for node in sorted(lane_count.index, key=str):
            if kept and used + int(lane_count[node]) > GANTT_MAX_LANES:
                break
            kept.append(node)
            used += int(lane_count[node])
        part = part[part["node"].isin(kept)]
        nodes = f"nodes {kept[0]}..{kept[-1]} ({len(kept)} of {tasks['node'].nunique()})"
        words = f"{words}, {nodes}" if words else nodes
    return part, words


def gantt_figure(tasks: pd.DataFrame, horizon: float) -> Any | None:
    """Attempts per slot lane, of the whole run or of a window (module docstring)."""
    if tasks.empty:
        return None
    part, window = gantt_window(tasks)
    plt = pyplot()
    lanes = slot_lanes(part)
    order = sorted(
        lanes.unique(),
        key=lambda s: (s.rsplit("/", 2)[0], s.rsplit("/", 2)[1] != "map", int(s.rsplit("/", 2)[2])),
    )
    row = {lane: i for i, lane in enumerate(order)}
    jobs = list(dict.fromkeys(part["job_id"]))
    cmap = plt.get_cmap("tab20")
    colour = {job: cmap(i % 20) for i, job in enumerate(jobs)}
    fig, ax = plt.subplots(figsize=(10, min(14.0, 1.4 + 0.22 * len(order))))
    scale, xlabel = time_scale(float(part["end"].max()) - float(part["start"].min()) if window else horizon)
    for job, g in part.groupby("job_id", sort=False):
        ok = g["outcome"] == "succeeded"
        for piece, hatch in ((g[ok], None), (g[~ok], "//")):
            if piece.empty:
                continue
            ax.barh(
                [row[lanes[i]] for i in piece.index],
                (piece["end"] - piece["start"]).to_numpy(float) / scale,
                left=piece["start"].to_numpy(float) / scale,
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
    ax.set_xlabel(xlabel)
    ax.set_ylabel("node/slot type/lane")
    title = "Attempts per lane: node/slot type/k, the k-th attempt at once (hatched: killed or failed)"
    ax.set_title(title + (f"\nwindow: {window}, {len(part)} of {len(tasks)} attempts" if window else ""), fontsize=10)
    if len(jobs) <= 20:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), title="job")
    return fig
