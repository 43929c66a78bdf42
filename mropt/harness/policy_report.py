"""The tables of a policy study: what ``mropt gap`` prints and ``mropt report`` writes for simulations.

A study's rows of kind ``workload`` (:data:`mropt.harness.experiment.POLICY_KIND`) are
simulations: their objective is the benefit *earned* (AMB eq. 1, negative when late jobs cost
more than the on-time ones earn), measured and not optimised, so they get no gap, no reference
and no "proven optimal %"; they get these tables instead (the rows of methods keep the gap
tables of :mod:`mropt.harness.report_tables`):

* ``policies`` -- per instance group and policy (the row's label), over the runs of the group
  (its workloads x seeds): runs, failed runs, then for each measure the mean and the seeded
  percentile bootstrap 95 % interval of the mean (:func:`mropt.harness.stats.bootstrap_mean_ci`,
  over the runs that have the measure): ``benefit`` (AMB eq. 1), ``on-time %`` (jobs on time
  over jobs with a deadline), ``JCT mean s`` and ``JCT p95 s`` (finish - submit of the finished
  jobs), ``slowdown`` (JCT over the job's ideal span), ``utilisation <type> %`` (busy over
  capacity per slot type or resource, the summary's ``utilisation``), ``node-local %`` and
  ``rack-local %`` (attempts with a locality level), ``acceptance %``. The per-run measures are
  those of :mod:`mropt.harness.policy_metrics`. A measure that does not apply to a run (no
  deadline, no replica, no slot of a type) is missing for it, never 0, and a column no run has
  is left out of the printed table (the CSV keeps the fixed measures). The CSV has every digit
  (``<measure>``, ``<measure> CI low``, ``<measure> CI high``); the printed table shows
  ``mean [low, high]``, rounded as :mod:`mropt.harness.formatting` rounds the column;
* ``policy_runs`` -- one row per simulation: instance, group, policy, seed, status and each
  measure, the numbers the ``policies`` table is computed from.

``policy_plot`` draws the means with their intervals (benefit, on-time %, JCT mean, slowdown),
one group of bars per instance group.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from mropt.harness import formatting as fmt
from mropt.harness import stats
from mropt.harness.experiment import POLICY_KIND
from mropt.harness.report_tables import Table

#: (metrics key, column, scale): the fixed measures of the tables, in order (utilisation follows benefit... slowdown)
MEASURES = (
    ("benefit", "benefit", 1.0),
    ("on_time_share", "on-time %", 100.0),
    ("jct_mean", "JCT mean s", 1.0),
    ("jct_p95", "JCT p95 s", 1.0),
    ("slowdown_mean", "slowdown", 1.0),
)
LOCALITY = (
    ("locality_node", "node-local %", 100.0),
    ("locality_rack", "rack-local %", 100.0),
    ("acceptance", "acceptance %", 100.0),
)
#: the measures the plot draws
PLOTTED = ("benefit", "on-time %", "JCT mean s", "slowdown")


def policy_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of simulations (kind ``workload``)."""
    return df[df["kind"] == POLICY_KIND] if len(df) and "kind" in df else df.iloc[0:0]


def method_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of methods (every kind but ``workload``)."""
    return df[df["kind"] != POLICY_KIND] if len(df) and "kind" in df else df


@dataclass
class PolicyTable(Table):
    """A table whose CSV (``frame``) has every digit and whose printed form (``display``) has
    ``mean [low, high]`` cells."""

    display: pd.DataFrame = field(default_factory=pd.DataFrame)

    def _shown(self) -> Table:
        return Table(self.title, self.display, self.name, self.note)

    def to_markdown_text(self) -> str:
        return self._shown().to_markdown_text()

    def markdown(self) -> str:
        return self._shown().markdown()

    def html(self) -> str:
        return self._shown().html()

    def latex(self) -> str:
        return self._shown().latex()


def _measures(rows: pd.DataFrame) -> tuple[list[tuple[str, float]], pd.DataFrame]:
    """The (column, scale) of every measure, and one row per run with each measure's value
    (NaN where it does not apply or the run failed); utilisation types in order of appearance."""
    from mropt.harness.runner import is_failure

    metrics = [json.loads(m) if isinstance(m, str) else {} for m in rows["metrics"]]
    failed = rows.apply(is_failure, axis=1).astype(bool).to_numpy() if len(rows) else np.zeros(0, bool)
    types: list[str] = []
    for m in metrics:
        for t, v in (m.get("utilisation") or {}).items():
            if v is not None and t not in types:
                types.append(t)
    utilisation = [(f"utilisation:{t}", f"utilisation {t} %", 100.0) for t in types]
    spec = [*MEASURES, *utilisation, *LOCALITY]
    values: dict[str, list[float]] = {column: [] for _, column, _ in spec}
    for m, objective, bad in zip(metrics, rows["objective"], failed):
        for key, column, scale in spec:
            if key == "benefit":
                v = objective
            elif key.startswith("utilisation:"):
                v = (m.get("utilisation") or {}).get(key.split(":", 1)[1])
            else:
                v = m.get(key)
            ok = not bad and isinstance(v, (int, float)) and not isinstance(v, bool)
            values[column].append(float(v) * scale if ok else float("nan"))
    return [(column, scale) for _, column, scale in spec], pd.DataFrame(values, index=rows.index)


def runs_table(df: pd.DataFrame) -> Table:
    """``policy_runs``: one row per simulation with its measures (module docstring)."""
    rows = policy_rows(df)
    columns, values = _measures(rows)
    frame = pd.DataFrame(
        {
            "instance": rows["instance_id"],
            "group": rows["instance_group"],
            "policy": rows["method"],
            "seed": rows["seed"],
            "status": rows["status"],
        }
    )
    frame = pd.concat([frame, values], axis=1) if len(rows) else pd.DataFrame(columns=[*frame, *values])
    frame = fmt.sort_natural(frame, ["group", "instance", "policy", "seed"])
    return Table("Simulations, one row per run", frame, "policy_runs")


def policy_table(df: pd.DataFrame, *, seed: int = 0, resamples: int = stats.RESAMPLES) -> PolicyTable:
    """``policies``: per instance group and policy, means and bootstrap intervals (module docstring)."""
    from mropt.harness.runner import is_failure

    rows = policy_rows(df)
    columns, values = _measures(rows)
    csv: list[dict[str, Any]] = []
    shown: list[dict[str, Any]] = []
    for (group, label), g in rows.groupby(["instance_group", "method"], sort=False):
        failed = int(g.apply(is_failure, axis=1).astype(bool).sum())
        line: dict[str, Any] = {"group": group, "policy": label, "runs": len(g), "failed": failed}
        cells = dict(line)
        for column, _ in columns:
            v = values.loc[g.index, column].dropna()
            mean = float(v.mean()) if len(v) else None
            ci = stats.bootstrap_mean_ci(
                v.to_numpy(float), seed=seed, key=f"{group}|{label}|{column}", resamples=resamples
            )
            lo, hi = ci if ci is not None else (None, None)
            line.update({column: mean, f"{column} CI low": lo, f"{column} CI high": hi})
            cells[column] = _cell(column, mean, lo, hi)
        csv.append(line)
        shown.append(cells)
    frame = pd.DataFrame(csv, columns=["group", "policy", "runs", "failed"] + _ci_columns(columns))
    display = pd.DataFrame(shown, columns=["group", "policy", "runs", "failed"] + [c for c, _ in columns])
    frame = fmt.sort_natural(frame, ["group", "policy"])
    display = fmt.sort_natural(display, ["group", "policy"])
    empty = [c for c, _ in columns if (display[c] == "-").all()]
    display = display.drop(columns=empty)
    note = (
        "Simulations: means over each group's runs (workloads x seeds) with the percentile bootstrap 95 % "
        f"interval of the mean [low, high] ({resamples} resamples, seed {seed}); failed runs count only in "
        "'failed'. on-time %: jobs on time over jobs with a deadline; JCT: finish - submit of finished jobs; "
        "slowdown: JCT over the job's time alone on an idle cluster; a measure a run does not have (no "
        "deadline, no replica, no slot of a type) is left out of its mean, never counted 0."
    )
    return PolicyTable("Policies compared (simulations)", frame, "policies", note, display=display)


def _ci_columns(columns: list[tuple[str, float]]) -> list[str]:
    return [name for column, _ in columns for name in (column, f"{column} CI low", f"{column} CI high")]


def _cell(column: str, mean: float | None, lo: float | None, hi: float | None) -> str:
    """``mean [low, high]`` rounded as the column's numbers are; ``-`` without a mean."""
    if mean is None:
        return "-"
    f = fmt.column_format(column)
    return f(mean) if lo is None or hi is None else f"{f(mean)} [{f(lo)}, {f(hi)}]"


def policy_plot(frame: pd.DataFrame) -> Any | None:
    """Bars of the means of :data:`PLOTTED` with their intervals, per instance group and policy;
    a measure no policy has is left out (None when none is left)."""
    panels = [c for c in PLOTTED if c in frame and frame[c].notna().any()]
    if frame.empty or not panels:
        return None
    plt = fmt.pyplot()
    groups = list(dict.fromkeys(frame["group"]))
    policies = list(dict.fromkeys(frame["policy"]))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.0 * len(panels) + 0.4, 3.6), squeeze=False)
    width = 0.8 / max(1, len(policies))
    for ax, column in zip(axes[0], panels):
        for k, policy in enumerate(policies):
            d = frame[frame["policy"] == policy].set_index("group").reindex(groups)
            mean = pd.to_numeric(d[column], errors="coerce").to_numpy(float)
            lo = pd.to_numeric(d[f"{column} CI low"], errors="coerce").to_numpy(float)
            hi = pd.to_numeric(d[f"{column} CI high"], errors="coerce").to_numpy(float)
            err = np.vstack([np.nan_to_num(mean - lo), np.nan_to_num(hi - mean)])
            x = np.arange(len(groups)) + k * width
            ax.bar(x, np.nan_to_num(mean), width, yerr=err, capsize=2, label=str(policy))
        ax.set_xticks(np.arange(len(groups)) + width * (len(policies) - 1) / 2)
        ax.set_xticklabels([str(g) for g in groups], fontsize=8)
        ax.set_xlabel("instance group")
        ax.set_ylabel(_axis_label(column))
        ax.set_title(f"{column.removesuffix(' %').removesuffix(' s')} (mean, 95 % CI)", fontsize=10)
    axes[0][0].legend(fontsize=7, title="policy", title_fontsize=7)
    return fig


def _axis_label(column: str) -> str:
    if column.endswith(" %"):
        return f"{column[:-2]} (%)"
    if column.endswith(" s"):
        return f"{column[:-2]} (s)"
    if column == "benefit":
        return "benefit earned (AMB eq. 1)"
    return f"{column} (ratio)"
