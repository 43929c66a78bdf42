"""The files of a simulation: ``mropt simulate --out DIR``.

``DIR`` (created when missing) receives:

* ``jobs.parquet`` -- one row per job (:meth:`mropt.sim.recorder.Recorder.jobs_columns`:
  ``job_id``, ``submit_time``, ``decision``, ``accepted``, ``reason``, ``first_start``,
  ``map_end``, ``finish``, ``deadline``, ``on_time``, ``lateness``, ``benefit`` earned
  under AMB eq. 1, ...);
* ``tasks.parquet`` -- one row per attempt (node, rack, start, end, locality, speculative,
  outcome);
* ``utilisation.parquet`` -- the exact step series of busy slots per slot type and pool;
* ``summary.json`` -- the summary (:mod:`mropt.sim.run`), the object ``--json`` prints,
  with ``"kind": "simulation"`` and the workload's name added, so ``mropt report DIR``
  knows the folder.

Every file carries the run's id (a random hex string): the Parquet files in their schema's
key-value metadata (``mropt.run_id``, with ``mropt.table``, the table's name), ``summary.json``
as ``run_id``. :func:`check_outputs` refuses a folder whose files disagree (files of two runs,
tables under each other's names): ``mropt report DIR`` reads no such folder.

**Kill safety.** The run is written into a new folder beside ``DIR`` and
swapped in whole (:func:`mropt.model.folders.replacing_folder`): a run killed at any moment
leaves ``DIR`` holding the earlier run whole (with its ``report/``) or this one whole; a
kill between the swap's two renames is finished by the next ``mropt simulate --out DIR`` or
``mropt report DIR`` (:func:`settle_outputs`), which also remove what killed runs left
beside ``DIR``. So that no one's files are lost, an existing ``DIR`` is replaced only when
it is empty or an earlier simulation's output (:data:`FILES`, ``report``, the temporaries of
a killed per-file write, nothing else; :func:`prepare_out`); any other folder is refused,
and with ``force`` the run's files are written into it one by one (each atomically,
:mod:`mropt.model.files`, the summary last; the rest of the folder kept), as they are into a
folder that holds the working folder (which a swap would pull from under the shell). A kill
during such a write leaves files of two runs, which :func:`check_outputs` refuses.

The environment variable ``MROPT_SIM_OUT_HOLD=STEP`` makes the writer pause
:data:`HOLD_SECONDS` after STEP (a file's name, ``moved aside`` or ``swapped``), telling
stderr it does: the hook the kill-safety test uses to kill a writer surely at that step.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mropt.model.errors import InputError
from mropt.model.files import make_folder, replacing, write_text
from mropt.model.folders import holds_working_folder, replacing_folder, resolve_folder, settle
from mropt.sim import tasks_table
from mropt.sim.recorder import Recorder
from mropt.sim.run import SimRun
from mropt.sim.state import SLOT_TYPES
from mropt.sim.tasks_table import TasksTable, TextColumn, recut, whole

FILES = ("jobs.parquet", "tasks.parquet", "utilisation.parquet", "summary.json")
SUMMARY = "summary.json"
#: Parquet key-value metadata of every table: the run's id and the table's name
RUN_ID_KEY, TABLE_KEY = b"mropt.run_id", b"mropt.table"
#: the columns each table must have (what ``mropt report`` reads; the rest: mropt.sim.recorder)
REQUIRED = {
    "jobs.parquet": ("job_id", "submit_time", "accepted", "finish", "deadline"),
    "tasks.parquet": ("job_id", "node", "stage_type", "start", "end", "outcome"),
    "utilisation.parquet": ("time", "slot_type", "pool", "busy", "capacity"),
}
#: what an earlier simulation's folder may hold besides FILES: its report, a killed write's temporaries
_EARLIER = re.compile(r"report|\.(?:jobs\.parquet|tasks\.parquet|utilisation\.parquet|summary\.json)\.[0-9a-f]{8}\.tmp")
HOLD_ENV = "MROPT_SIM_OUT_HOLD"
HOLD_SECONDS = 60.0


def _table(columns: dict[str, Any]) -> pa.Table:
    columns = {k: v for k, v in columns.items() if not k.startswith("_")}
    return pa.table({k: pa.array(v) for k, v in columns.items()})


def _write_parquet(path: Path, schema: pa.Schema, pieces: Iterable[pa.Table]) -> None:
    """Write the table of ``pieces`` (each a row group: ``TasksTable.pieces``) to ``path``, atomically
    (:func:`mropt.model.files.replacing`): the file :func:`pyarrow.parquet.write_table` writes of the
    whole table (zstd) with row groups of the pieces' size, without the whole table in memory.

    Only the text columns are dictionary-encoded: a number column's dictionary (pyarrow's default for
    every column) overflows and is dropped in every row group of a long run, which cost the Alibaba
    day's ``--out`` a fifth of its write time for files a fifth larger (benchmarks/RESULTS.md, issue 32)."""
    with replacing(path) as tmp, pq.ParquetWriter(str(tmp), schema, **parquet_options(schema)) as writer:
        empty = True
        for piece in pieces:
            writer.write_table(piece)
            empty = False
            del piece  # (one piece in memory at a time: not this one while the next is built)
        if empty:
            writer.write_table(schema.empty_table())  # (write_table writes an empty table's row group)


def parquet_options(schema: pa.Schema) -> dict[str, Any]:
    """The Parquet writer's options for a table of ``schema`` (:func:`_write_parquet`): zstd, and a
    dictionary for the text columns only."""
    text = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
    return {"compression": "zstd", "use_dictionary": text}


def summary_json(run: SimRun) -> str:
    """The summary as one JSON object (the ``--json`` output), keys in :data:`SUMMARY_KEYS` order."""
    return json.dumps(run.summary, allow_nan=False, default=_nan_free) + "\n"


def _nan_free(value: Any) -> Any:  # pragma: no cover - summaries hold plain values
    return str(value)


def prepare_out(out: str | os.PathLike[str], force: bool = False) -> bool:
    """Check the output folder before a run (module docstring); True: its files are to be written in place.

    Finishes a swap a kill interrupted first (:func:`settle_outputs`). InputError (one line)
    for an empty name, a file, or a folder that is not an earlier simulation's output
    (unless ``force``).
    """
    folder = resolve_folder(out)
    settle(folder)
    if not folder.exists():
        return False
    foreign = _foreign(folder)
    if foreign is None:
        return holds_working_folder(folder)
    if force:
        return True
    raise InputError(
        f"{os.fspath(out)}: {foreign}, not an earlier `mropt simulate --out` folder: give another --out, "
        "or --force to write the run's files into it (the rest is kept)"
    )


def _foreign(folder: Path) -> str | None:
    """Why ``folder`` is not an empty folder or an earlier simulation's output (None: it is one)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        raise InputError(f"{folder}: cannot list the folder ({exc.strerror})") from None
    other = [n for n in names if n not in FILES and not _EARLIER.fullmatch(n)]
    if other:
        return f"it holds {other[0]!r}"
    if names and not is_simulation_folder(folder):
        return "it holds no summary.json of kind simulation"
    return None


def write_outputs(run: SimRun, out: str | os.PathLike[str], force: bool = False) -> list[Path]:
    """Write the four files of ``run`` into ``out``, swapped in whole (module docstring); return their paths."""
    run_id = uuid.uuid4().hex
    if prepare_out(out, force):
        folder = make_folder(out)
        return _write_files(run, folder, run_id)
    with replacing_folder(out, step=_hold) as new:
        _write_files(run, new, run_id)
    return [Path(out) / name for name in FILES]


def run_tables(run: SimRun) -> dict[str, pa.Table]:
    """The run's three tables as they are written, by file name (the recorder's columns, not its ``_`` ones;
    the attempt table from the recorder's typed store, :class:`mropt.sim.tasks_table.TasksTable`)."""
    return {name: whole(*_table_pieces(run, name)) for name in FILES[:3]}


def _utilisation_pieces(rec: Recorder) -> tuple[pa.Schema, Iterator[pa.Table]]:
    """``utilisation.parquet``'s table from the recorder's typed rows (``Recorder.utilisation_blocks``),
    :data:`~mropt.sim.tasks_table.ROW_GROUP` rows a piece: the table of ``utilisation_columns``
    without a Python list per column (the Alibaba day has 1.8 million rows)."""
    names = list(rec.pools)
    used = rec.utilisation_used()  # (the slot types and pools of the rows: one read fewer of long runs')
    slot_type = TextColumn(SLOT_TYPES.__getitem__, used[0])
    pool_name = TextColumn(names.__getitem__, used[1])
    schema = pa.schema(
        [
            ("time", pa.float64()),
            ("slot_type", slot_type.values.type),
            ("pool", pool_name.values.type),
            ("busy", pa.int64()),
            ("capacity", pa.int64()),
        ]
    )

    def piece(rows: tuple[np.ndarray, ...]) -> pa.Table:
        time, stype, pool, busy, cap = rows
        columns = [pa.array(time), slot_type(stype), pool_name(pool), pa.array(busy), pa.array(cap)]
        return pa.Table.from_arrays(columns, schema=schema)

    return schema, map(piece, recut(rec.utilisation_blocks(), tasks_table.ROW_GROUP))


def _table_pieces(run: SimRun, name: str) -> tuple[pa.Schema, Iterator[pa.Table]]:
    """Table ``name`` of :func:`run_tables` as its schema and its pieces: the attempt and utilisation
    tables a row group at a time (:data:`~mropt.sim.tasks_table.ROW_GROUP` rows: a replay of millions
    of attempts never holds them whole), the job table whole."""
    rec = run.recorder
    if name == "tasks.parquet":
        tasks = TasksTable(rec)
        return tasks.schema, tasks.pieces()
    if name == "utilisation.parquet":
        return _utilisation_pieces(rec)
    table = _table(rec.jobs_columns())
    return table.schema, iter([table])


def summary_record(run: SimRun) -> dict[str, Any]:
    """``summary.json`` but its ``run_id``: the summary, ``"kind": "simulation"``, the workload's name, nodes,
    slots, and on a cluster of resources ``resources``, each one's total over every node, by its name in the
    workload (the ``demand_<name>`` columns of ``tasks.parquet``; ``mropt report`` draws use against it)."""
    record = {
        **run.summary,
        "kind": "simulation",
        "workload": run.workload.name,
        "nodes": run.workload.n_nodes,
        "slots": {
            "map": sum((spec.map_slots or 0) * spec.count for spec in run.workload.nodes),
            "reduce": sum((spec.reduce_slots or 0) * spec.count for spec in run.workload.nodes),
        },
    }
    names = sorted({r for spec in run.workload.nodes for r in spec.resources})
    if names:
        record["resources"] = {
            r: sum(spec.resources.get(r, 0.0) * spec.count for spec in run.workload.nodes) for r in names
        }
    return record


_POOL_LOCK = threading.Lock()
_POOL_SAVED: list[pa.MemoryPool] = []  # the default pool while writes hold the system one
_POOL_USERS = [0]  # writes in their ``system_pool`` block


@contextlib.contextmanager
def system_pool() -> Iterator[None]:
    """Arrow allocates from the C library's allocator (``pyarrow.system_memory_pool``) in the block,
    its default pool again after it. The tables are written a piece at a time, each piece's
    buffers freed before the next is built; Arrow's default pool (mimalloc) keeps what was freed for
    later use, and the process's peak grew by the pieces' churn. The system allocator returns the large
    buffers: ``--out`` of the first half hour of the Alibaba day peaked 50 MiB lower
    (benchmarks/RESULTS.md, issue 32). The files are the same bytes.

    Arrow's pool is the process's: writes in several threads share one swap (the first in
    saves the default, the last out restores it), and other threads' Arrow allocations meanwhile
    come from the system allocator too (a buffer is freed by the pool that made it)."""
    with _POOL_LOCK:
        if not _POOL_SAVED:
            _POOL_SAVED.append(pa.default_memory_pool())
            pa.set_memory_pool(pa.system_memory_pool())
        _POOL_USERS[0] += 1
    try:
        yield
    finally:
        with _POOL_LOCK:
            _POOL_USERS[0] -= 1
            if not _POOL_USERS[0]:
                pa.set_memory_pool(_POOL_SAVED.pop())


def _write_files(run: SimRun, folder: Path, run_id: str) -> list[Path]:
    """The tables, then the summary, each atomically, each marked with ``run_id``."""
    paths = []
    with system_pool():
        for name in FILES[:3]:
            path = folder / name
            meta = {RUN_ID_KEY: run_id.encode(), TABLE_KEY: name.removesuffix(".parquet").encode()}
            schema, pieces = _table_pieces(run, name)
            _write_parquet(path, schema.with_metadata(meta), pieces)
            paths.append(path)
            _hold(name)
    record = {**summary_record(run), "run_id": run_id}
    path = folder / SUMMARY
    write_text(path, json.dumps(record, indent=2, allow_nan=False) + "\n")
    paths.append(path)
    _hold(SUMMARY)
    return paths


def _hold(step: str) -> None:
    """The kill-safety test's hook: pause after ``step`` when ``MROPT_SIM_OUT_HOLD`` names it."""
    if os.environ.get(HOLD_ENV) == step:
        print(f"mropt: simulate: holding {HOLD_SECONDS:g} s after {step}", file=sys.stderr, flush=True)
        time.sleep(HOLD_SECONDS)


def settle_outputs(path: str | os.PathLike[str]) -> None:
    """Finish a ``--out`` swap a kill interrupted, remove killed writers' leftovers (:func:`mropt.model.folders.settle`)."""
    settle(path)


def check_outputs(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Refuse (one line) a folder whose files are not one run's; return its summary ({} when it has none).

    Each table must be there, carry the columns :data:`REQUIRED` names and, when it names its
    table (``mropt.table``), be that table; every file must carry the same run id, or none
    (a folder written before run ids).
    """
    import pyarrow.parquet as pq

    folder = Path(path)
    ids: dict[str, str | None] = {}
    for name, columns in REQUIRED.items():
        file = folder / name
        if not file.is_file():
            raise InputError(f"{folder}: not a simulation folder ({name} is missing)")
        try:
            schema = pq.read_schema(file)
        except Exception as exc:  # noqa: BLE001 - a damaged file, in one line
            raise InputError(f"{file}: cannot read ({type(exc).__name__}: {' '.join(str(exc).split())})") from None
        meta = schema.metadata or {}
        table = meta.get(TABLE_KEY)
        if table is not None and table != name.removesuffix(".parquet").encode():
            raise InputError(f"{file}: holds the table {table.decode(errors='replace')!r}, not {name}")
        missing = [c for c in columns if c not in schema.names]
        if missing:
            raise InputError(f"{file}: column {missing[0]!r} is missing (not a simulation's {name})")
        ids[name] = meta[RUN_ID_KEY].decode(errors="replace") if RUN_ID_KEY in meta else None
    summary: dict[str, Any] = {}
    file = folder / SUMMARY
    if file.is_file():
        try:
            summary = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"{file}: cannot read ({' '.join(str(exc).split())})") from None
        if not isinstance(summary, dict):
            raise InputError(f"{file}: not a simulation summary (not a JSON object)")
        ids[SUMMARY] = summary.get("run_id") if isinstance(summary.get("run_id"), str) else None
    elif any(ids.values()):
        ids[SUMMARY] = None
    if len(set(ids.values())) > 1:
        told = ", ".join(f"{name} {'none' if v is None else repr(v[:12])}" for name, v in ids.items())
        raise InputError(
            f"{folder}: its files are of different runs (run ids: {told}): write it again with `mropt simulate --out`"
        )
    return summary


def read_outputs(path: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The summary ({} when the folder has none) and the three tables, pandas DataFrames by file name.

    :func:`check_outputs` first: a folder whose files are of different runs, or whose tables are
    under each other's names, is refused (one line); so is a damaged file.
    """
    folder = Path(path)
    summary = check_outputs(folder)
    tables = {}
    for name in REQUIRED:
        file = folder / name
        try:
            tables[name] = pq.read_table(file).to_pandas()
        except Exception as exc:  # noqa: BLE001 - a damaged file, in one line
            raise InputError(f"{file}: cannot read ({type(exc).__name__}: {' '.join(str(exc).split())})") from None
    return summary, tables


def is_simulation_folder(path: str | Path) -> bool:
    """Whether ``path`` holds a simulation's outputs (``summary.json`` of kind ``simulation`` or ``jobs.parquet``)."""
    folder = Path(path)
    if not folder.is_dir():
        return False
    summary = folder / SUMMARY
    if summary.is_file():
        try:
            return json.loads(summary.read_text(encoding="utf-8")).get("kind") == "simulation"
        except (OSError, ValueError, AttributeError):
            return False
    return (folder / "jobs.parquet").is_file() and (folder / "tasks.parquet").is_file()
