"""Running a study: expand the experiment, skip finished runs, execute, store as runs finish.

:func:`run_study` is what ``mropt gap`` calls. It checks the experiment file first (a bad
key is an error before anything runs), writes the study's instances into the store,
skips the runs whose keys are stored already (so the same command resumes a killed
study), runs the rest on an executor, writes each row as soon as its run finishes, and
at the end updates the reference values (``reference.solu``) and compacts the store.

Resuming is exact: a stored row is reused only when its run key
(:func:`mropt.harness.experiment.run_key`: instance, method, parameters with the
profile's, time limit, seed) is the run's; a run whose settings changed runs again and
its row replaces the old one. Rows of stores written before the key covered the settings
are recognised when the settings they record are the same
(:func:`mropt.harness.experiment.stored_run_key`). Failed runs stay stored (their reason
is printed) and run again with ``retry_failed``. A run that was interrupted (the study
stopped by Ctrl-C or SIGTERM, a worker killed by SIGINT/SIGTERM/SIGHUP, a worker that
could not start) is never stored: the next invocation runs it.
"""

from __future__ import annotations

import datetime as dt
import json
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from mropt._version import __version__
from mropt.harness.executors import DaskExecutor, LocalExecutor, make_executor
from mropt.harness.experiment import POLICY_KIND, Experiment, RunSpec, stored_run_key
from mropt.harness.provenance import record_study
from mropt.harness.reference import Reference
from mropt.harness.store import Store, dumps, key_digest, row_slot
from mropt.harness.worker import _versions, pack_instance
from mropt.model.errors import InputError

#: failure lines listed in full at the end of a study; the rest are counted
MAX_LISTED = 20
#: what resuming reads of every stored row
_RESUME_COLUMNS = [
    "run_key",
    "method_name",
    "method_params",
    "time_limit",
    "status",
    "objective",
    "verified",
    "error",
    "verify_problems",
    "instance_id",
]


@dataclass
class StudySummary:
    total: int
    skipped: int  # runs whose stored row was reused
    ran: int  # runs handed to the executor
    failures: int  # of the runs run now, those that failed (stored)
    seconds: float
    out: Path
    interrupted: int = 0  # of the runs run now, those not stored (interrupted, or no worker could start)
    study_failures: int = 0  # failed runs of the whole study as stored now (earlier invocations' too)
    problems: list[str] = field(default_factory=list)  # one line per failed or unstored run, for people
    refuted: list[str] = field(default_factory=list)  # one line per run whose bound a verified plan refutes


class StudyInterrupted(KeyboardInterrupt):
    """The study was stopped (Ctrl-C, SIGTERM): what finished is stored, the runs in flight are not."""

    def __init__(self, signame: str, stored: int, total: int, out: Path) -> None:
        super().__init__(signame)
        self.signame, self.stored, self.total, self.out = signame, stored, total, out


def make_task(exp: Experiment, run: RunSpec, packed: dict[str, bytes] | None = None) -> dict[str, Any]:
    """What the worker reads of one run (:func:`mropt.harness.worker.execute`). The instance travels
    as its packed JSON (:func:`mropt.harness.worker.pack_instance`), made once per instance when the
    study's runs share ``packed`` (content hash -> bytes): every task of an instance holds the same
    bytes, which a pickle copies whole, rather than the instance's dict, which each pickle walked."""
    limit = run.time_limit
    digest = run.entry.instance.content_hash()
    data = None if packed is None else packed.get(digest)
    if data is None:
        data = pack_instance(run.entry.instance)
        if packed is not None:
            packed[digest] = data
    return {
        "run_digest": key_digest(run.key),
        "instance_hash": digest,
        "instance_data": data,
        "method": run.method.name,
        "time_limit": limit,
        "seed": run.seed,
        "params": run.params,
        "imports": list(exp.imports),
        "paths": [str(Path.cwd()), str(exp.base.resolve())],
        "kill_after": None if limit is None else limit + exp.kill_grace,
        **({"policy": True, "mode": run.method.mode, "options": run.method.options} if run.method.policy else {}),
    }


def make_row(exp: Experiment, run: RunSpec, result: dict[str, Any]) -> dict[str, Any]:
    """The stored row of one finished run (gaps filled in by the caller)."""
    from mropt.registry import get_method

    inst = run.entry.instance
    status = result.get("status", "error")
    policy = run.method.policy  # a simulation (mropt.sim): kind workload, never exact nor a relaxation
    return {
        "experiment": exp.name,
        "run_key": run.key,
        "kind": POLICY_KIND if policy else inst.kind,
        "instance_id": run.entry.id,
        "instance_hash": inst.content_hash(),
        "instance_group": run.entry.group,
        "instance_params": dumps(dict(run.entry.params)),
        "jobs": inst.n,
        "method": run.method.label,
        "method_name": run.method.name,
        "method_params": dumps(run.params),
        "exact": False if policy else get_method(run.method.name).exact,
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
        "relaxation": False if policy else get_method(run.method.name).relaxation,
    }


def _missing(x: Any) -> bool:
    return x is None or type(x).__name__ == "NAType" or (isinstance(x, float) and x != x)


def is_failure(row: Any) -> bool:
    """A run that gave no usable answer: an error, a time limit without a plan, or an answer ``verify`` rejected."""
    status = row.get("status")
    no_answer = status == "error" or (status == "time_limit" and _missing(row.get("objective")))
    verified = row.get("verified")
    return no_answer or (not _missing(verified) and not bool(verified))


def failure_reason(row: Any) -> str:
    """Why a failed run failed, in one line."""
    for key in ("error", "verify_problems"):
        text = row.get(key)
        if isinstance(text, str) and text.strip():
            why = " ".join(text.split())
            return why if key == "error" else f"verify: {why}"
    if row.get("status") == "time_limit":
        return "time limit reached without a plan"
    return "no reason recorded"


def run_line(label: Any, instance: Any, profile: Any, seed: Any, what: str) -> str:
    """``LABEL on INSTANCE (profile P, seed S): WHAT``, at most about 300 characters."""
    where = f"seed {seed}" if profile in (None, "-") else f"profile {profile}, seed {seed}"
    line = " ".join(f"{label} on {instance} ({where}): {what}".split())  # a name with a newline stays one line
    return line if len(line) <= 300 else line[:297] + "..."


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
    retry_failed: bool = False,
    force: bool = False,
) -> StudySummary:
    """Run what is not stored yet (see the module docstring); StudyInterrupted on Ctrl-C or SIGTERM.

    ``retry_failed`` runs the stored failures again; ``force`` lets a folder that holds
    another experiment's results take this one's too (refused otherwise). ``progress`` draws a
    bar on stderr (the command line asks for one only when stderr is a terminal, as ``mropt
    simulate`` does: redirected to a file or a pipe, ``make demo > log``, its redraws would fill
    the log; a notebook, whose stderr is no terminal, gets one when it asks).
    """
    start = time.perf_counter()
    store = _study_store(exp, out, force)
    entries = exp.instances()
    runs = list(exp.runs(entries))
    store.create()
    record_study(exp, store.root)  # the experiment's text, versions and machine, for the report
    for entry in entries:
        store.save_instance(entry.instance, entry.instance.content_hash())
    stored = {row_slot(r): r for r in store.read_table(_RESUME_COLUMNS).to_pylist()} if store.exists() else {}
    todo = [r for r in runs if _to_run(r, stored.get(r.slot), retry_failed)]
    ref = load_reference(exp, store)
    tally = _Tally()
    bar = _progress_bar(exp, len(runs), len(todo)) if progress else None
    stopped = _run_all(exp, todo, ref, store, tally, bar, partial(make_executor, executor, workers, scheduler))
    if stopped is not None:
        raise StudyInterrupted(stopped, len(runs) - len(todo) + tally.written, len(runs), store.root) from None
    ref = update_reference(store, exp)
    if compact:
        store.compact()
    study_failures, problems = _study_problems(store, runs)
    refuted = refuted_bounds(store, ref, runs)
    return StudySummary(
        len(runs),
        len(runs) - len(todo),
        len(todo),
        tally.failures,
        time.perf_counter() - start,
        store.root,
        len(tally.interrupted),
        study_failures,
        [*problems, *tally.interrupted],
        refuted,
    )


@dataclass
class _Tally:
    """What this invocation's runs gave so far: rows written, failures among them, 'not run' lines."""

    written: int = 0
    failures: int = 0
    interrupted: list[str] = field(default_factory=list)


def _study_store(exp: Experiment, out: str | Path, force: bool) -> Store:
    """The store at ``out``; refused when it is not a folder, or holds another experiment's results without ``force``."""
    store = Store(out)
    if store.root.exists() and not store.root.is_dir():
        raise InputError(f"{store.root}: exists and is not a folder")
    others = sorted(store.experiments() - {exp.name})
    if others and not force:
        held = " and ".join(repr(o) for o in others)
        raise InputError(
            f"{store.root}: holds the results of experiment {held}, not {exp.name!r}: give another "
            f"--out, or --force to add {exp.name!r} to that folder"
        )
    return store


def _progress_bar(exp: Experiment, total: int, todo: int) -> Any:
    """A tqdm bar over all ``total`` runs, the stored ones counted done, showing the failures."""
    from tqdm import tqdm

    bar = tqdm(total=total, initial=total - todo, unit="run", desc=exp.name, dynamic_ncols=True)
    bar.set_postfix(failures=0)
    return bar


def _run_all(
    exp: Experiment,
    todo: list[RunSpec],
    ref: Reference,
    store: Store,
    tally: _Tally,
    bar: Any,
    make_pool: Callable[[], LocalExecutor | DaskExecutor],
) -> str | None:
    """Run ``todo`` on the executor ``make_pool`` makes (only if there is something to run), storing
    each row as its run finishes; the signal's name when the study was stopped (Ctrl-C, SIGTERM), else None."""
    try:
        with _signals_interrupt():
            if todo:
                packed: dict[str, bytes] = {}
                tasks = [make_task(exp, r, packed) for r in todo]
                results = make_pool().map(tasks)
                try:
                    for index, result in results:
                        _store_result(exp, todo[index], result, ref, store, tally, bar)
                finally:
                    results.close()  # kills the runs in flight when the loop stopped early
    except _Stop as stop:
        return stop.signame
    except KeyboardInterrupt:
        return "SIGINT"
    finally:
        if bar is not None:
            bar.close()
    return None


def _store_result(
    exp: Experiment, run: RunSpec, result: dict[str, Any], ref: Reference, store: Store, tally: _Tally, bar: Any
) -> None:
    """One finished run: an interrupted one becomes a 'not run' line and is not stored (module
    docstring); any other becomes its row, with its gaps to the reference, written at once."""
    if result.get("interrupted"):
        tally.interrupted.append(
            run_line(run.method.label, run.entry.id, run.profile, run.seed, f"not run: {result['interrupted']}")
        )
        return
    row = make_row(exp, run, result)
    ref.add_row(row)
    row.update(ref.gaps(row))
    store.write_row(row)
    tally.written += 1
    if is_failure(row):
        tally.failures += 1
    if bar is not None:
        bar.update(1)
        bar.set_postfix(failures=tally.failures, **({"not_run": len(tally.interrupted)} if tally.interrupted else {}))


def _to_run(run: RunSpec, row: dict[str, Any] | None, retry_failed: bool) -> bool:
    """Whether ``run`` must run: nothing stored in its slot, a row of other settings, or a failure to retry."""
    if row is None or stored_run_key(row) != run.key:
        return True
    return retry_failed and is_failure(row)


def _study_problems(store: Store, runs: list[RunSpec]) -> tuple[int, list[str]]:
    """The failed runs of the study as stored: their number and one line each."""
    keys = {r.slot: r.key for r in runs}  # a slot's row of other settings (its run not run) is not the study's
    rows = [
        r
        for r in store.read_table(_RESUME_COLUMNS).to_pylist()
        if keys.get(row_slot(r)) == stored_run_key(r) and is_failure(r)
    ]
    rows.sort(
        key=lambda r: (str(r.get("instance_id")), str(r.get("method")), str(r.get("profile")), r.get("seed") or 0)
    )
    lines = [
        run_line(
            r.get("method"),
            r.get("instance_id"),
            r.get("profile"),
            r.get("seed"),
            f"{r.get('status')}: {failure_reason(r)}",
        )
        for r in rows
    ]
    return len(rows), lines


#: what :func:`refuted_bounds` reads of every stored row
_CLAIM_COLUMNS = [*_RESUME_COLUMNS, "kind", "instance_hash", "exact", "relaxation", "bound"]


def refuted_bounds(store: Store, ref: Reference, runs: list[RunSpec] | None = None) -> list[str]:
    """One line per stored run (of ``runs``, when given) claiming a bound, or an optimum, that a
    verified plan of its instance refutes (:meth:`mropt.harness.reference.Reference.refuted`)."""
    keys = None if runs is None else {r.slot: r.key for r in runs}
    lines = []
    for r in store.read_table(_CLAIM_COLUMNS).to_pylist():
        if keys is not None and keys.get(row_slot(r)) != stored_run_key(r):
            continue
        found = ref.refuted(r)
        if found is not None:
            claim, value = found
            lines.append(
                run_line(
                    r.get("method"),
                    r.get("instance_id"),
                    r.get("profile"),
                    r.get("seed"),
                    f"{r.get('status')} with bound {claim:.10g}, refuted by a verified plan worth {value:.10g}: "
                    "used neither as a bound nor as a proof",
                )
            )
    return sorted(lines)


class _Stop(BaseException):
    def __init__(self, signame: str) -> None:
        super().__init__(signame)
        self.signame = signame


@contextmanager
def _signals_interrupt() -> Iterator[None]:
    """SIGTERM (and SIGHUP) stop the study as Ctrl-C does (in the main thread; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise _Stop(signal.Signals(signum).name)

    saved = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


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
    return df.sort_values(["instance_group", "instance_id", "method", "profile", "seed"], kind="stable").reset_index(
        drop=True
    )


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
