"""Reports of a result folder: the tables and plots a researcher would publish (issue 13).

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
  (:class:`mropt.registry.ReportPanel`), e.g. the AMB paper's Figures 7-9 (``amb_figures``).

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

import base64
import contextlib
import html
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mropt.harness import formatting as fmt
from mropt.harness import sim_report as _sim_report  # noqa: F401  (registers the policy studies' panel)
from mropt.harness import stats
from mropt.harness.table import render
from mropt.model.files import make_folder, write_bytes, write_text
from mropt.model.tolerance import OBJECTIVE_RTOL, same_value
from mropt.registry import report_panels

PROBLEM = ["instance_hash", "seed"]  # a problem of the paired comparisons: an instance and a method seed
PAR_K = (2, 10)


@dataclass
class Table:
    """A report table: ``name`` is its file stem (``<name>.csv``, ``<name>.tex``)."""

    title: str
    frame: pd.DataFrame
    name: str = ""
    note: str = ""

    def to_markdown_text(self) -> str:
        """Plain text for the terminal, rounded (:mod:`mropt.harness.formatting`)."""
        headers, rows, numeric = fmt.formatted(self.frame)
        return f"{self.title}\n\n{render(headers, rows, numeric=numeric)}"

    def markdown(self) -> str:
        note = f"\n\n{self.note}" if self.note else ""
        return f"### {self.title}{note}\n\n{fmt.markdown(self.frame)}"

    def html(self) -> str:
        note = f'<p class="note">{html.escape(self.note)}</p>' if self.note else ""
        return f"<h2>{html.escape(self.title)}</h2>{note}{fmt.html_table(self.frame)}"

    def latex(self) -> str:
        return fmt.latex_table(self.frame, self.title)


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


# -- the rows -------------------------------------------------------------------------------
def prepare(df: pd.DataFrame) -> pd.DataFrame:
    """The results frame with the columns the tables use: ``mkey`` (the method as tables name it:
    its label, plus ``[profile]`` where a label ran under several profiles), ``role``
    (``plan`` or ``bound``), ``pct`` (the gap in %), ``at_reference``, ``at_optimum``,
    ``refuted`` (``bound_refuted``, False where missing) and ``proven`` (status ``optimal``
    and not refuted: a proof a verified plan contradicts proves nothing)."""
    d = df.copy()
    if d.empty:
        for col in ("mkey", "role", "pct", "at_reference", "at_optimum", "refuted", "proven"):
            d[col] = pd.Series(dtype=object)
        return d
    refuted = d["bound_refuted"] if "bound_refuted" in d else pd.Series(False, index=d.index)
    d["refuted"] = refuted.fillna(False).astype(bool)
    d["proven"] = (d["status"] == "optimal") & ~d["refuted"]
    profile = d["profile"].fillna("-").astype(str)
    several = d.groupby("method")["profile"].transform("nunique") > 1
    d["mkey"] = np.where(several, d["method"].astype(str) + " [" + profile + "]", d["method"].astype(str))
    bound_keys = {k for k, g in d.groupby("mkey") if _is_bound_method(g)}
    d["role"] = np.where(d["mkey"].isin(bound_keys), "bound", "plan")
    d["pct"] = pd.to_numeric(d["gap"], errors="coerce").astype(float) * 100.0
    verified = d["verified"].fillna(False).astype(bool)
    close = [
        not (math.isnan(o) or math.isnan(r)) and same_value(o, r)
        for o, r in zip(_floats(d["objective"]), _floats(d["reference"]))
    ]
    d["at_reference"] = (d["role"] == "plan") & verified & pd.Series(close, index=d.index) & d["gap"].notna()
    d["at_optimum"] = d["at_reference"] & (d["reference_tag"] == "optimal")
    return d


def _floats(s: pd.Series) -> np.ndarray:
    return pd.to_numeric(s, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _is_bound_method(rows: pd.DataFrame) -> bool:
    """A method whose values are bounds: a bound method or a relaxation (the rows' ``relaxation``
    column or the registry says so, or a run of it has status ``bound``)."""
    from mropt.model.errors import InputError
    from mropt.registry import get_method

    if (rows["status"] == "bound").any():
        return True
    if "relaxation" in rows and rows["relaxation"].fillna(False).astype(bool).any():
        return True
    try:
        return bool(get_method(str(rows["method_name"].iloc[0])).relaxation)
    except (InputError, KeyError, TypeError):
        return False


def _failed(g: pd.DataFrame) -> int:
    """Failed runs (:func:`mropt.harness.runner.is_failure`: errors, time limits without a
    plan, answers ``verify`` rejected)."""
    from mropt.harness.runner import is_failure

    return 0 if g.empty else int(g.apply(is_failure, axis=1).astype(bool).sum())


def _ci(values: pd.Series, seed: int, key: str, resamples: int) -> tuple[float | None, float | None]:
    ci = stats.bootstrap_mean_ci(values.to_numpy(dtype=float), seed=seed, key=key, resamples=resamples)
    return (None, None) if ci is None else ci


def _mean(s: pd.Series) -> float | None:
    return float(s.mean()) if len(s) else None


# -- tables ---------------------------------------------------------------------------------
PLAN_COLUMNS = [
    "method",
    "group",
    "runs",
    "gap runs",
    "mean gap %",
    "std gap %",
    "mean gap CI low %",
    "mean gap CI high %",
    "median gap %",
    "max gap %",
    "proven optimal %",
    "at optimum %",
    "verified %",
    "failed",
    "refuted",
    "mean time s",
    "max time s",
]
BOUND_COLUMNS = [
    "method",
    "group",
    "runs",
    "gap runs",
    "mean bound gap %",
    "std bound gap %",
    "mean bound gap CI low %",
    "mean bound gap CI high %",
    "median bound gap %",
    "max bound gap %",
    "failed",
    "refuted",
    "mean time s",
    "max time s",
]


def _grouped(d: pd.DataFrame, by: list[str]) -> list[tuple[tuple[Any, ...], pd.DataFrame]]:
    if d.empty:
        return []
    groups = [(k if isinstance(k, tuple) else (k,), g) for k, g in d.groupby(by, sort=False, dropna=False)]
    return sorted(groups, key=lambda kg: tuple(fmt.natural_key(x) for x in kg[0]))


def _gap_stats(gap: pd.Series, seed: int, key: str, resamples: int) -> list[Any]:
    """Gap runs, mean, std, bootstrap CI (low, high), median and max of the gaps (%)."""
    lo, hi = _ci(gap, seed, key, resamples)
    return [
        len(gap),
        _mean(gap),
        stats.std(gap),
        lo,
        hi,
        gap.median() if len(gap) else None,
        gap.max() if len(gap) else None,
    ]


def _plan_rows(d: pd.DataFrame, seed: int, resamples: int) -> list[list[Any]]:
    rows = []
    for (method, group), g in _grouped(d[d["role"] == "plan"], ["mkey", "instance_group"]):
        rows.append(
            [
                method,
                group,
                len(g),
                *_gap_stats(g["pct"].dropna(), seed, f"gap|{method}|{group}", resamples),
                100.0 * g["proven"].mean(),
                100.0 * g["at_optimum"].mean(),
                100.0 * g["verified"].fillna(False).astype(bool).mean(),
                _failed(g),
                int(g["refuted"].sum()),
                g["wall_time"].mean(),
                g["wall_time"].max(),
            ]
        )
    return rows


def gap_table(df: pd.DataFrame, *, seed: int = 0, resamples: int = stats.RESAMPLES) -> Table:
    """Plan methods per instance group: gap % statistics with spread and a bootstrap interval."""
    d = df if "role" in df else prepare(df)
    frame = pd.DataFrame(_plan_rows(d, seed, resamples), columns=PLAN_COLUMNS)
    return Table("Gap to the reference per method and instance group (plans)", frame, "gaps")


def method_table(df: pd.DataFrame, *, seed: int = 0, resamples: int = stats.RESAMPLES) -> Table:
    """One line per plan method over all instances (the headline table)."""
    d = df if "role" in df else prepare(df)
    t = gap_table(d.assign(instance_group="all"), seed=seed, resamples=resamples).frame.drop(columns=["group"])
    return Table("Gap to the reference per method (plans, all instances)", t, "methods")


def bound_table(df: pd.DataFrame, *, seed: int = 0, resamples: int = stats.RESAMPLES) -> Table:
    """Bound methods per instance group: how far each bound lies beyond the reference (bound gap %)."""
    d = df if "role" in df else prepare(df)
    rows = []
    for (method, group), g in _grouped(d[d["role"] == "bound"], ["mkey", "instance_group"]):
        rows.append(
            [
                method,
                group,
                len(g),
                *_gap_stats(g["pct"].dropna(), seed, f"bound|{method}|{group}", resamples),
                _failed(g),
                int(g["refuted"].sum()),
                g["wall_time"].mean(),
                g["wall_time"].max(),
            ]
        )
    return Table("Bound gap per bound method and instance group", pd.DataFrame(rows, columns=BOUND_COLUMNS), "bounds")


def kind_sense(kind: str, rows: pd.DataFrame) -> tuple[str, bool]:
    """The optimisation sense of ``kind`` (``max`` or ``min``) and whether a source gave it.

    Read from the rows' ``sense`` column, else declared by the instance class
    (:func:`mropt.model.io.objective_sense`); an unknown kind reads as ``max``, the
    sense :mod:`mropt.harness.reference` gives rows without a kind.
    """
    from mropt.model.errors import InputError
    from mropt.model.io import objective_sense

    if "sense" in rows and rows["sense"].notna().any():
        return str(rows["sense"].dropna().mode().iloc[0]), True
    try:
        return objective_sense(kind), True
    except InputError:
        return "max", False


KIND_COLUMNS = [
    "kind",
    "sense",
    "instances",
    "proven",
    "best known",
    "infeasible",
    "no reference",
    "unproven min gap to bound %",
    "unproven max gap to bound %",
    "unproven without bound",
]


def kinds_table(df: pd.DataFrame) -> Table:
    """Per instance kind: the sense, references proven and best known, gap to bound of the unproven."""
    d = df if "role" in df else prepare(df)
    rows, assumed = [], False
    for (kind,), g in _grouped(d, ["kind"]):
        sense, given = kind_sense(str(kind), g)
        assumed = assumed or not given
        per = g.groupby("instance_hash")
        tags = per["reference_tag"].agg(lambda s: s.dropna().iloc[0] if s.notna().any() else None)
        unproven = tags[tags == "best_known"].index
        plans = g[(g["role"] == "plan") & g["instance_hash"].isin(unproven)]
        to_bound = plans.groupby("instance_hash")["gap_to_bound"].min().dropna() * 100.0
        rows.append(
            [
                kind,
                sense if given else f"{sense} (assumed)",
                len(tags),
                int((tags == "optimal").sum()),
                len(unproven),
                int((tags == "infeasible").sum()),
                int(tags.isna().sum()),
                to_bound.min() if len(to_bound) else None,
                to_bound.max() if len(to_bound) else None,
                len(unproven) - len(to_bound),
            ]
        )
    note = "'(assumed)': the kind declares no sense, and the gaps follow maximisation. " if assumed else ""
    note += (
        "Gap to bound of an unproven instance: its best plan's distance to the best known bound, "
        "worse-than-bound and >= 0; the range is over the kind's unproven instances."
    )
    return Table("References per instance kind", pd.DataFrame(rows, columns=KIND_COLUMNS), "kinds", note)


INSTANCE_COLUMNS = [
    "instance",
    "group",
    "N",
    "method",
    "seed",
    "status",
    "objective",
    "bound",
    "reference",
    "reference tag",
    "gap %",
    "gap to bound %",
    "bound gap %",
    "bound refuted",
    "time s",
]


def instance_names(d: pd.DataFrame) -> pd.Series:
    """Instance names for people: the instance's name (its file's for unnamed files), disambiguated
    with a hash prefix where one name stands for several instances."""
    import json

    def name(row: Any) -> str:
        ident = str(row.instance_id) if pd.notna(row.instance_id) else str(row.instance_hash)[:12]
        if ident == str(row.instance_hash)[:12]:
            with contextlib.suppress(ValueError):
                ident = json.loads(row.instance_params or "{}").get("file") or ident
        return ident

    names = pd.Series(
        [name(r) for r in d[["instance_id", "instance_hash", "instance_params"]].itertuples()],
        index=d.index,
        dtype=object,
    )
    hashes = pd.DataFrame({"n": names, "h": d["instance_hash"]}).drop_duplicates()
    shared = set(hashes["n"][hashes["n"].duplicated(keep=False)])
    return pd.Series(
        [f"{n} [{str(h)[:8]}]" if n in shared else n for n, h in zip(names, d["instance_hash"])],
        index=d.index,
        dtype=object,
    )


def instance_table(df: pd.DataFrame) -> Table:
    """Instance x method: every run with its instance's name, status, objective and gaps."""
    d = df if "role" in df else prepare(df)
    if d.empty:
        return Table("Instances x methods", pd.DataFrame(columns=INSTANCE_COLUMNS), "instances")
    plan = d["role"] == "plan"
    frame = pd.DataFrame(
        {
            "instance": instance_names(d),
            "group": d["instance_group"],
            "N": d["jobs"],
            "method": d["mkey"],
            "seed": d["seed"],
            "status": d["status"],
            "objective": d["objective"],
            "bound": d["bound"],
            "reference": d["reference"],
            "reference tag": d["reference_tag"],
            "gap %": d["pct"].where(plan),
            "gap to bound %": (d["gap_to_bound"].astype(float) * 100.0).where(plan),
            "bound gap %": d["pct"].where(~plan),
            "bound refuted": d["refuted"],
            "time s": d["wall_time"],
        }
    )
    frame = fmt.sort_natural(frame, ["group", "instance", "method", "seed"])
    return Table(
        "Instances x methods (every run)",
        frame,
        "instances",
        "gap %: plans; bound gap %: bounds; gap to bound %: the plan against the best known bound; "
        "bound refuted: a verified plan of the instance beats the bound (or optimum) the run claims.",
    )


def _matrix(d: pd.DataFrame, column: str) -> pd.DataFrame:
    return stats.paired(d, PROBLEM, "mkey", column)


def win_tie_loss_table(df: pd.DataFrame) -> Table:
    """Every pair of plan methods over the (instance, seed) problems both ran."""
    d = df if "role" in df else prepare(df)
    plans = d[d["role"] == "plan"]
    cols = ["method", "versus", "wins", "ties", "losses", "compared"]
    if plans["mkey"].nunique() < 2:
        return Table("Wins, ties and losses between plan methods", pd.DataFrame(columns=cols), "win_tie_loss")
    gaps = _matrix(plans.assign(g=plans["gap"].astype(float)), "g")
    objectives = _matrix(plans.assign(o=plans["objective"].astype(float)), "o")
    ran = _matrix(plans.assign(r=True), "r")
    order = sorted(gaps.columns, key=fmt.natural_key)
    frame = stats.win_tie_loss(gaps[order], objectives, ran)
    return Table(
        "Wins, ties and losses between plan methods",
        frame,
        "win_tie_loss",
        "Per (instance, method seed): wins = method's plan better than versus's; ties: objectives "
        f"equal within the relative tolerance {OBJECTIVE_RTOL:g} (mropt.model.tolerance); a plan beats no "
        "plan; "
        "problems where neither has a plan are not compared.",
    )


TTO_COLUMNS = [
    "method",
    "N",
    "runs",
    "proven optimal %",
    "failed",
    "median time to optimality s",
    *[f"PAR-{k} s" for k in PAR_K],
    "max time s",
    "time limit s",
]


def time_to_optimality(df: pd.DataFrame) -> Table:
    """Exact methods per N: share proven optimal, the median time of those, PAR-k over all runs."""
    d = df if "role" in df else prepare(df)
    exact = d[d["exact"].fillna(False).astype(bool)]
    rows = []
    for (method, n), g in _grouped(exact.dropna(subset=["jobs"]), ["mkey", "jobs"]):
        solved = g["proven"].to_numpy(dtype=bool)
        opt = g[solved]
        times, limits = _floats(g["wall_time"]), _floats(g["time_limit"])
        rows.append(
            [
                method,
                int(n),
                len(g),
                100.0 * len(opt) / len(g),
                _failed(g),
                opt["wall_time"].median() if len(opt) else None,
                *[stats.par_k(times, solved, limits, k) for k in PAR_K],
                g["wall_time"].max(),
                float(np.nanmax(limits)) if np.isfinite(limits).any() else None,
            ]
        )
    return Table(
        "Time to optimality against N (exact methods)",
        pd.DataFrame(rows, columns=TTO_COLUMNS),
        "time_to_optimality",
        "PAR-k: mean time over every run, a run not proven optimal counting k times its time limit; "
        "the median is over the proven runs only.",
    )


PROVENANCE_COLUMNS = [
    "experiment",
    "started (UTC)",
    "host",
    "CPUs",
    "platform",
    "python",
    "mropt",
    "numpy",
    "ortools",
    "highspy",
    "pulp",
]


def provenance_table(records: list[Any], df: pd.DataFrame) -> Table:
    """Where and with what the study ran: its recorded sessions, else what its rows carry."""
    import json

    rows = []
    for rec in records:
        for s in rec.sessions:
            v = s.get("versions", {})
            cpus = s.get("cpus")
            if s.get("cpus_machine") not in (None, cpus):
                cpus = f"{cpus} of {s.get('cpus_machine')}"
            rows.append(
                [
                    rec.name,
                    s.get("started_at"),
                    s.get("host"),
                    str(cpus),
                    s.get("platform"),
                    *[v.get(k, "-") for k in ("python", "mropt", "numpy", "ortools", "highspy", "pulp")],
                ]
            )
    note = ""
    if not rows and len(df):
        seen = df[["experiment", "host", "mropt_version", "packages"]].drop_duplicates()
        for r in seen.itertuples(index=False):
            try:
                pk = json.loads(r.packages) if isinstance(r.packages, str) else {}
            except ValueError:
                pk = {}
            rows.append(
                [
                    r.experiment,
                    "-",
                    r.host,
                    "-",
                    "-",
                    "-",
                    r.mropt_version,
                    *[pk.get(k, "-") for k in ("numpy", "ortools", "highspy", "pulp")],
                ]
            )
        note = (
            "This result folder predates the study record (study/): hosts and versions are those its rows "
            "carry; CPUs, platform and Python were not recorded."
        )
    frame = pd.DataFrame([[_text(v) for v in r] for r in rows], columns=PROVENANCE_COLUMNS)
    return Table("Machine and versions", frame, "provenance", note)


def _text(v: Any) -> str:
    return "-" if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) else str(v)


# -- plots ----------------------------------------------------------------------------------
def _save(fig: Any, out: Path, stem: str) -> str:
    """Write PNG and PDF; return the PNG as base64 for the HTML page."""
    plt = fmt.pyplot()
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


# -- the report -----------------------------------------------------------------------------
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


def _section(title: str, body: str) -> str:
    return f"<h2>{html.escape(title)}</h2>{body}"


def write_report(result_dir: str | Path, out: str | Path, *, seed: int = 0, resamples: int = stats.RESAMPLES) -> str:
    """Write every table and plot of the study in ``result_dir`` into ``out``; return the main
    tables as plain text. ``seed`` and ``resamples`` set the bootstrap (same seed, same intervals)."""
    from mropt.harness.provenance import read_studies
    from mropt.harness.runner import results_frame

    df = results_frame(result_dir)
    out = Path(out)
    make_folder(out)
    d = prepare(df)
    notes = Notes()
    headline, by_group = method_table(d, seed=seed, resamples=resamples), gap_table(d, seed=seed, resamples=resamples)
    bounds, kinds, tto = bound_table(d, seed=seed, resamples=resamples), kinds_table(d), time_to_optimality(d)
    wtl, instances = win_tie_loss_table(d), instance_table(d)
    records = read_studies(result_dir)
    provenance = provenance_table(records, df)
    figures = _plots(d, tto.frame, out, notes)
    panel_tables, panel_figures = _panels(df, out)
    figures += panel_figures
    tables = [kinds, headline, bounds, by_group, wtl, tto, *panel_tables, instances, provenance]
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
    intro = INTRO.format(resamples=resamples, seed=seed, rtol=OBJECTIVE_RTOL)
    shown = [t for t in tables if len(t.frame)]
    _write_markdown(out, head, intro, shown, figures, notes, records)
    _write_html(out, head, intro, shown, figures, notes, records)
    text = "\n\n".join(t.to_markdown_text() for t in (kinds, headline, bounds, by_group, tto) if len(t.frame))
    return f"{warning}\n\n{text}" if warning else text


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


TAIL = ("instances", "provenance")  # after the plots: the long table, and the machine beside the configuration


def _write_markdown(
    out: Path, head: str, intro: str, tables: list[Table], figures: list[Figure], notes: Notes, records: list[Any]
) -> None:
    parts = [f"# Gap report\n\n{head}\n\n{intro}"]
    parts += [t.markdown() for t in tables if t.name not in TAIL]
    parts += [f"### {f.title}\n\n![{f.title}]({f.name}.png)" for f in figures]
    if notes.items:
        parts.append("### Plots left out\n\n" + "\n".join(f"* {n}" for n in notes.items))
    parts += [t.markdown() for t in tables if t.name == "instances"]
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
    out: Path, head: str, intro: str, tables: list[Table], figures: list[Figure], notes: Notes, records: list[Any]
) -> None:
    parts = [f'<h1>Gap report</h1><p>{html.escape(head)}</p><p class="note">{html.escape(intro)}</p>']
    parts += [t.html() for t in tables if t.name not in TAIL]
    for f in figures:
        parts.append(_section(f.title, f'<img alt="{html.escape(f.title)}" src="data:image/png;base64,{f.png}">'))
    if notes.items:
        parts.append(
            _section("Plots left out", "<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes.items) + "</ul>")
        )
    for t in tables:
        if t.name == "instances" and len(t.frame) > 200:
            parts.append(
                f"<details><summary>{html.escape(t.title)}: {len(t.frame)} rows "
                f"(also instances.csv)</summary>{t.html()}</details>"
            )
        elif t.name == "instances":
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
    "Table",
    "bound_table",
    "gap_table",
    "instance_table",
    "kinds_table",
    "method_table",
    "prepare",
    "time_to_optimality",
    "win_tie_loss_table",
    "write_report",
]
