"""The result store: a folder of Parquet files, safe against SIGKILL and concurrent writers.

Layout of a study folder ``DIR``::

    DIR/runs/<sha1 of run slot>.parquet   one file per finished run (one row)
    DIR/compacted/<ns>-<uuid>.parquet     merged files written by compact() (named in time order)
    DIR/instances/<sha256>.json           the instances of the study (as solved)
    DIR/reference.solu                    best known values per instance (mropt.harness.reference)

A Parquet file is unreadable until its footer is written, so every file is written under a
temporary name (``.*.tmp``, ignored by readers) and renamed into place with ``os.replace``
(:mod:`mropt.model.files`, the one writer of mropt), which is atomic: a reader sees the
whole file or none. Killing a study at any moment loses at most the runs in flight.

A row fills a *slot*: (experiment, instance hash, method label, profile, seed), the JSON
list :func:`row_slot` (:func:`mropt.harness.experiment.run_slot`). A run's file is named by
its slot, so a new result for the slot (the run again with other settings, whose
``run_key`` differs) replaces the old row atomically, and writing the same run twice
leaves one file; readers keep one row per slot, the newest (a run file beats a
compacted copy).
:meth:`Store.compact` merges everything into one new file, and deletes the files it merged
only after the merged file is in place; a lock file serialises compactions.

A writer of the store (:meth:`Store.create`, :meth:`Store.write_row`) holds a shared lock on
``DIR/.writers.lock`` while its Store lives. The first writer of a folder no live process
writes (it gets the lock exclusively) removes the temporaries killed writers left in
``runs/`` and ``instances/`` -- only names of the store's own pattern, ``.<digest>.parquet.
<8 hex>.tmp`` and ``.<sha256>.json.<8 hex>.tmp`` -- so a study resumed after a SIGKILL leaves
none behind; compaction removes those of ``compacted/``, which only a
compaction, under its lock, writes.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from mropt.model.errors import InputError
from mropt.model.files import make_folder, replacing, write_text

#: Columns of a row, in order (DESIGN: one row per run).
SCHEMA = pa.schema(
    [
        ("experiment", pa.string()),
        ("run_key", pa.string()),
        ("kind", pa.string()),  # the instance kind (admission, fairness, priority, ...)
        ("instance_id", pa.string()),
        ("instance_hash", pa.string()),
        ("instance_group", pa.string()),
        ("instance_params", pa.string()),  # JSON: generator/importer parameters and instance seed
        ("jobs", pa.int64()),
        ("method", pa.string()),  # the label in the experiment (the registry name unless relabelled)
        ("method_name", pa.string()),
        ("method_params", pa.string()),  # JSON
        ("exact", pa.bool_()),
        ("profile", pa.string()),
        ("seed", pa.int64()),
        ("status", pa.string()),
        ("objective", pa.float64()),
        ("bound", pa.float64()),
        ("reference", pa.float64()),
        ("reference_tag", pa.string()),
        ("gap", pa.float64()),
        ("gap_to_bound", pa.float64()),
        ("bound_refuted", pa.bool_()),  # a verified plan refutes a bound the run claims (mropt.harness.reference)
        ("time_limit", pa.float64()),
        ("wall_time", pa.float64()),
        ("run_time", pa.float64()),
        ("verified", pa.bool_()),
        ("verify_problems", pa.string()),
        ("error", pa.string()),
        ("accepted", pa.int64()),
        ("on_time", pa.int64()),
        ("metrics", pa.string()),  # JSON: the kind's own measures (decision and verify summaries)
        ("solver", pa.string()),
        ("solver_version", pa.string()),
        ("mropt_version", pa.string()),
        ("packages", pa.string()),  # JSON: numpy, ortools, highspy, pulp versions in the worker
        ("host", pa.string()),
        ("finished_at", pa.string()),  # ISO 8601, UTC
        ("relaxation", pa.bool_()),  # the method solves a relaxation: its value is a bound (mropt.registry.Method)
    ]
)
COLUMNS = SCHEMA.names
#: what a file written before a column existed reads in it (null where not named here)
DEFAULTS = {"bound_refuted": False}


#: the columns naming a row's slot, in the order of :func:`row_slot`
SLOT_COLUMNS = ("experiment", "instance_hash", "method", "profile", "seed")
#: the temporary names mropt.model.files gives the store's files (``.NAME.<8 hex>.tmp``), per folder
_TEMPORARIES = {
    "runs": re.compile(r"\.[0-9a-f]{40}\.parquet\.[0-9a-f]{8}\.tmp"),
    "instances": re.compile(r"\.[0-9a-f]{64}\.json\.[0-9a-f]{8}\.tmp"),
    "compacted": re.compile(r"\.[0-9]{20}-[0-9a-f]{32}\.parquet\.[0-9a-f]{8}\.tmp"),
}


def key_digest(run_key: str) -> str:
    return hashlib.sha1(run_key.encode()).hexdigest()


def row_slot(row: Any) -> str:
    """The slot of a row (see the module docstring): ``[experiment, instance_hash, method, profile, seed]``."""
    seed = row.get("seed")
    seed = None if seed is None or type(seed).__name__ == "NAType" else int(seed)
    return json.dumps(
        [row.get("experiment"), row.get("instance_hash"), row.get("method"), row.get("profile"), seed],
        separators=(",", ":"),
    )


def _slots(table: pa.Table) -> list[str]:
    cols = {
        c: table.column(c).to_pylist() if c in table.column_names else [None] * table.num_rows for c in SLOT_COLUMNS
    }
    return [row_slot({c: cols[c][i] for c in SLOT_COLUMNS}) for i in range(table.num_rows)]


def _newest_per_slot(table: pa.Table) -> pa.Table:
    """One row per slot: the last one (files are read compacted first, then run files)."""
    last = {slot: i for i, slot in enumerate(_slots(table))}
    return table.take(sorted(last.values()))


class Store:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.runs = self.root / "runs"
        self.compacted = self.root / "compacted"
        self.instances = self.root / "instances"
        self._writer_lock: Any = None  # the open .writers.lock while this Store writes

    @property
    def reference_path(self) -> Path:
        return self.root / "reference.solu"

    def create(self) -> None:
        for d in (self.runs, self.compacted, self.instances):
            make_folder(d)
        self._register_writer()

    def _register_writer(self) -> None:
        """Take the shared writers' lock (module docstring), removing dead writers' temporaries when alone."""
        if self._writer_lock is not None or not self.root.is_dir():
            return
        try:
            lock = open(self.root / ".writers.lock", "a+")  # noqa: SIM115 - held while this Store lives
        except OSError:
            return  # a folder it cannot lock: its writes fail (or not) on their own
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pass  # another writer is live: the temporaries may be its own
        else:
            for folder in (self.runs, self.instances):
                pattern = _TEMPORARIES[folder.name]
                for stale in folder.glob(".*.tmp"):
                    if pattern.fullmatch(stale.name):
                        stale.unlink(missing_ok=True)
        fcntl.flock(lock, fcntl.LOCK_SH)
        self._writer_lock = lock

    def exists(self) -> bool:
        return self.runs.is_dir() or self.compacted.is_dir()

    # -- writing ----------------------------------------------------------------------------
    def write_row(self, row: dict[str, Any]) -> None:
        """One finished run, atomically (temporary file, then rename), replacing its slot's row."""
        table = pa.Table.from_pylist([{c: row.get(c) for c in COLUMNS}], schema=SCHEMA)
        self._register_writer()
        target = self.runs / f"{key_digest(row_slot(row))}.parquet"
        self._write_atomic(table, target)

    @staticmethod
    def _write_atomic(table: pa.Table, target: Path) -> None:
        """Parquet under a temporary name, fsync-ed and renamed into place (:func:`mropt.model.files.replacing`)."""
        with replacing(target) as tmp:
            pq.write_table(table, tmp, compression="zstd")

    def save_instance(self, instance: Any, digest: str) -> None:
        target = self.instances / f"{digest}.json"
        if not target.exists():
            from mropt.model.io import instance_to_json

            write_text(target, instance_to_json(instance))

    def load_instance(self, digest: str) -> Any:
        from mropt.model.io import load_instance

        return load_instance(self.instances / f"{digest}.json")

    # -- reading ----------------------------------------------------------------------------
    def _files(self) -> tuple[list[Path], list[Path]]:
        def visible(d: Path) -> list[Path]:
            return sorted(p for p in d.glob("*.parquet") if not p.name.startswith(".")) if d.is_dir() else []

        return visible(self.compacted), visible(self.runs)

    def read_table(self, columns: list[str] | None = None) -> pa.Table:
        """Every row once: per slot the newest (a run file beats a compacted copy).

        ``columns``: only these (and the slot's), for a quick look at a large store.
        """
        wanted = None if columns is None else list(dict.fromkeys([*columns, *SLOT_COLUMNS]))
        for _ in range(10):  # a compaction may remove files between listing and reading: list again
            merged, parts = self._files()
            read = [_read(p, wanted) for p in [*merged, *parts]]
            if all(t is not None for t in read):
                break
        tables = [t for t in read if t is not None]
        if not tables:
            empty = SCHEMA.empty_table()
            return empty if wanted is None else empty.select(wanted)
        table = pa.concat_tables([_conform(t, wanted) for t in tables])
        return _newest_per_slot(table)

    def experiments(self) -> set[str]:
        """Names of the experiments with rows in this folder."""
        if not self.exists():
            return set()
        return {e for e in self.read_table(["experiment"]).column("experiment").to_pylist() if e is not None}

    def read(self) -> Any:
        """The rows as a pandas DataFrame (gaps as stored; see mropt.harness.results for fresh ones)."""
        if not self.exists():
            raise InputError(f"{self.root}: not a result folder (no runs/ or compacted/ inside)")
        import pandas as pd

        mapping = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
        return self.read_table().to_pandas(types_mapper=mapping.get)

    # -- compaction -------------------------------------------------------------------------
    @contextmanager
    def lock(self, name: str = ".compact.lock") -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / name, "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def compact(self) -> int:
        """Merge all files into one; remove the merged ones only once it is in place. Returns rows."""
        with self.lock():
            self._remove_stale()
            merged, parts = self._files()
            if len(merged) + len(parts) <= 1:
                return sum(t.num_rows for t in (_read(p, ["run_key"]) for p in [*merged, *parts]) if t is not None)
            tables = [t for t in (_read(p) for p in [*merged, *parts]) if t is not None]
            table = _newest_per_slot(pa.concat_tables([_conform(t) for t in tables]))
            self.compacted.mkdir(parents=True, exist_ok=True)
            # named in time order, so a reader that lists two compacted files reads the newer last
            self._write_atomic(table, self.compacted / f"{time.time_ns():020d}-{uuid.uuid4().hex}.parquet")
            for p in [*merged, *parts]:
                p.unlink(missing_ok=True)
            return table.num_rows

    def _remove_stale(self, age: float = 3600.0) -> None:
        """Temporary files left by killed writers: compacted/'s (compactions hold the lock we hold), others an hour old."""
        now = time.time()
        for stale in [*self.runs.glob(".*.tmp"), *self.compacted.glob(".*.tmp")]:
            try:
                ours = stale.parent == self.compacted and _TEMPORARIES["compacted"].fullmatch(stale.name)
                if ours or now - stale.stat().st_mtime > age:
                    stale.unlink()
            except FileNotFoundError:
                pass


def _read(path: Path, columns: list[str] | None = None) -> pa.Table | None:
    """A file's rows (``columns`` that it has, of those asked for); None when it vanished."""
    try:
        if columns is not None:
            have = set(pq.read_schema(path).names)
            columns = [c for c in columns if c in have]
        return pq.read_table(path, columns=columns)
    except FileNotFoundError:  # removed by a concurrent compaction after we listed it
        return None


def _conform(table: pa.Table, columns: list[str] | None = None) -> pa.Table:
    """Files of an older schema: missing columns as nulls (or their :data:`DEFAULTS`), in SCHEMA's order (or ``columns``')."""
    schema = SCHEMA if columns is None else pa.schema([SCHEMA.field(c) for c in columns])
    cols = []
    for f in schema:
        if f.name in table.column_names:
            cols.append(table.column(f.name).cast(f.type))
        elif f.name in DEFAULTS:
            cols.append(pa.array([DEFAULTS[f.name]] * table.num_rows, f.type))
        else:
            cols.append(pa.nulls(table.num_rows, f.type))
    return pa.Table.from_arrays(cols, schema=schema)


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
