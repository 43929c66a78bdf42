"""The tables of a gap report (:func:`mropt.harness.report.write_report`): the rows the tables
read (:func:`prepare`: method key, role, gap %, at reference/optimum, proven, refuted), and one
function per published table -- ``kinds``, ``methods``, ``gaps``, ``bounds``, ``instances``,
``win_tie_loss``, ``time_to_optimality`` and ``provenance`` -- each returning a :class:`Table`
(a titled frame that renders as terminal text, Markdown, HTML and booktabs TeX through
:mod:`mropt.harness.formatting`). Statistics (bootstrap intervals, paired win/tie/loss, PAR-k)
come from :mod:`mropt.harness.stats`; ties and optimum matches use
:data:`mropt.model.tolerance.OBJECTIVE_RTOL`. :mod:`mropt.harness.report` lists every column.
"""

from __future__ import annotations

import contextlib
import html
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from mropt.harness import formatting as fmt
from mropt.harness import stats
from mropt.harness.table import render
from mropt.model.tolerance import OBJECTIVE_RTOL, same_value

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
