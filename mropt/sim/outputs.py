"""The files of a simulation: ``mropt simulate --out DIR`` (issue 15, item 5).

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

Every file is written to a temporary name in ``DIR`` and renamed into place
(:func:`mropt.model.files.write_bytes`): a reader sees a whole file or none, and a run
killed midway leaves no partial file under a final name. The summary is written last, so
a folder with ``summary.json`` holds all four files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from mropt.model.files import make_folder, write_bytes, write_text
from mropt.sim.run import SimRun

FILES = ("jobs.parquet", "tasks.parquet", "utilisation.parquet", "summary.json")
SUMMARY = "summary.json"


def _table(columns: dict[str, Any]) -> pa.Table:
    columns = {k: v for k, v in columns.items() if not k.startswith("_")}
    return pa.table({k: pa.array(v) for k, v in columns.items()})


def _parquet_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return bytes(sink.getvalue().to_pybytes())


def summary_json(run: SimRun) -> str:
    """The summary as one JSON object (the ``--json`` output), keys in :data:`SUMMARY_KEYS` order."""
    return json.dumps(run.summary, allow_nan=False, default=_nan_free) + "\n"


def _nan_free(value: Any) -> Any:  # pragma: no cover - summaries hold plain values
    return str(value)


def write_outputs(run: SimRun, out: str | Path) -> list[Path]:
    """Write the four files of ``run`` into ``out`` (module docstring); return their paths."""
    folder = Path(out)
    make_folder(folder)
    rec = run.recorder
    paths = []
    for name, columns in (
        ("jobs.parquet", rec.jobs_columns()),
        ("tasks.parquet", rec.tasks_columns()),
        ("utilisation.parquet", rec.utilisation_columns()),
    ):
        path = folder / name
        write_bytes(path, _parquet_bytes(_table(columns)))
        paths.append(path)
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
    path = folder / SUMMARY
    write_text(path, json.dumps(record, indent=2, allow_nan=False) + "\n")
    paths.append(path)
    return paths


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
