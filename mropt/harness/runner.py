"""Running a study: expand the experiment, skip finished runs, execute, store as runs finish.

:func:`run_study` is what ``mropt gap`` calls. It checks the experiment file first (a bad
key is an error before anything runs), writes the study's instances into the store,
skips the runs whose keys are stored already (so the same command resumes a killed
study), runs the rest on an executor, writes each row as soon as its run finishes, and
at the end updates the reference values (``reference.solu``) and compacts the store.
"""

from __future__ import annotations

import datetime as dt
import json
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mropt._version import __version__
from mropt.harness.executors import make_executor
from mropt.harness.experiment import Experiment, RunSpec
from mropt.harness.provenance import record_study
from mropt.harness.reference import Reference
from mropt.harness.store import Store, dumps, key_digest
from mropt.harness.worker import _versions
from mropt.model.errors import InputError


@dataclass
class StudySummary:
    total: int
    skipped: int
    ran: int
    failures: int
    seconds: float
    out: Path


def make_task(exp: Experiment, run: RunSpec) -> dict[str, Any]:
    limit = run.time_limit
    return {
        "run_digest": key_digest(run.key),
        "instance_hash": run.entry.instance.content_hash(),
        "instance": run.entry.instance.to_dict(),
        "method": run.method.name,
        "time_limit": limit,
        "seed": run.seed,
        "params": run.params,
        "imports": list(exp.imports),
        "paths": [str(Path.cwd()), str(exp.base.resolve())],
        "deadline": None if limit is None else limit + exp.kill_grace,
    }


def make_row(exp: Experiment, run: RunSpec, result: dict[str, Any]) -> dict[str, Any]:
    """The stored row of one finished run (gaps filled in by the caller)."""
    from mropt.registry import get_method

    inst = run.entry.instance
    status = result.get("status", "error")
    return {
        "experiment": exp.name,
        "run_key": run.key,
        "kind": inst.kind,
        "instance_id": run.entry.id,
        "instance_hash": inst.content_hash(),
        "instance_group": run.entry.group,
        "instance_params": dumps(dict(run.entry.params)),
        "jobs": inst.n,
        "method": run.method.label,
        "method_name": run.method.name,
        "method_params": dumps(run.params),
        "exact": get_method(run.method.name).exact,
        "profile": run.profile,
        "seed": run.seed,
        "status": status,
        "objective": result.get("objective"),
        "bound": result.get("bound"),
        "time_limit": run.time_limit,
        "wall_time": result.get("wall_time", result.get("run_time")),
        "run_time": result.get("run_time"),
        "verified": result.get("verified"),
        "verify_problems": result.get("verify_problems"),
        "error": result.get("error"),
        "accepted": result.get("accepted"),
        "on_time": result.get("on_time"),
        "metrics": result.get("metrics"),
        "solver": result.get("solver"),
        "solver_version": result.get("solver_version"),
        "mropt_version": __version__,
        "packages": dumps(result.get("packages") or _versions()),
        "host": socket.gethostname(),
        "finished_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def is_failure(row: dict[str, Any]) -> bool:
    no_answer = row["status"] in ("error", "time_limit") and row.get("objective") is None
    return no_answer or row.get("verified") is False


def load_reference(exp: Experiment | None, store: Store) -> Reference:
    """Shipped values of the named instance sets, then the study folder's own file."""
    from mropt.harness.instance_sets import shipped_references

    ref = Reference()
    if exp is not None:
        for path in shipped_references(exp.blocks, exp.base):
            ref.merge(Reference.load(path))
    ref.merge(Reference.load(store.reference_path))
    return ref


def update_reference(store: Store, exp: Experiment | None = None) -> Reference:
    """Merge every stored row into ``reference.solu`` (under the store's lock) and return it."""
    with store.lock(".reference.lock"):
        ref = load_reference(exp, store)
        table = store.read_table()
        for row in table.to_pylist():
            ref.add_row(row)
        ref.save(store.reference_path)
    return ref


def run_study(
    exp: Experiment,
    out: str | Path,
    *,
    executor: str = "local",
    workers: int = 1,
    scheduler: str | None = None,
    progress: bool = True,
    compact: bool = True,
) -> StudySummary:
    start = time.perf_counter()
    store = Store(out)
    if store.root.exists() and not store.root.is_dir():
        raise InputError(f"{store.root}: exists and is not a folder")
    store.create()
    record_study(exp, store.root)  # the experiment's text, versions and machine, for the report
    entries = exp.instances()
    runs = list(exp.runs(entries))
    for entry in entries:
        store.save_instance(entry.instance, entry.instance.content_hash())
    done = store.finished_digests()
    todo = [r for r in runs if key_digest(r.key) not in done]
    ref = load_reference(exp, store)
    failures = 0
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(runs), initial=len(runs) - len(todo), unit="run", desc=exp.name, dynamic_ncols=True)
        bar.set_postfix(failures=0)
    try:
        if todo:
            tasks = [make_task(exp, r) for r in todo]
            for index, result in make_executor(executor, workers, scheduler).map(tasks):
                row = make_row(exp, todo[index], result)
                ref.add_row(row)
                row.update(ref.gaps(row))
                store.write_row(row)
                if is_failure(row):
                    failures += 1
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(failures=failures)
    finally:
        if bar is not None:
            bar.close()
    update_reference(store, exp)
    if compact:
        store.compact()
    return StudySummary(len(runs), len(runs) - len(todo), len(todo), failures, time.perf_counter() - start, store.root)


def results_frame(out: str | Path) -> Any:
    """Every stored row, with gaps recomputed against the folder's current reference."""
    import pandas as pd

    store = Store(out)
    df = store.read()
    missing = df["kind"].isna() if len(df) else None
    if missing is not None and missing.any():  # rows of stores written before the kind column
        kinds = {h: _instance_kind(store, h) for h in df.loc[missing, "instance_hash"].unique()}
        df.loc[missing, "kind"] = df.loc[missing, "instance_hash"].map(kinds)
    ref = load_reference(None, store)
    for row in df.to_dict("records"):
        ref.add_row(row)
    if len(df):
        fresh = pd.DataFrame([ref.gaps(r) for r in df.to_dict("records")], index=df.index)
        for col in fresh.columns:
            df[col] = fresh[col]
    return df.sort_values(["instance_group", "instance_id", "method", "profile", "seed"], kind="stable").reset_index(drop=True)


def _instance_kind(store: Store, digest: str) -> str | None:
    try:
        return str(json.loads((store.instances / f"{digest}.json").read_text(encoding="utf-8")).get("kind"))
    except (OSError, ValueError, AttributeError):
        return None


def params_frame(df: Any) -> Any:
    """The ``instance_params`` JSON column as columns (jobs, size, deadline, seed, ...)."""
    import pandas as pd

    parsed = pd.DataFrame([json.loads(p or "{}") for p in df["instance_params"]], index=df.index)
    return parsed
