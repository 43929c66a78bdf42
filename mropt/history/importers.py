"""Which importer reads a path: ``mropt history import DB FILE...`` detects each file's kind.

* a folder with ``jobs.parquet`` and ``tasks.parquet``: a simulation's output
  (:mod:`mropt.history.simulation`);
* a file whose first line is ``Avro-Json``: a Hadoop job history file (:mod:`mropt.history.jhist`);
* a file whose first non-blank character is ``{`` or ``[``: a Rumen trace (:mod:`mropt.history.rumen`);
* a file whose first non-blank line has six tab-separated fields: SWIM (:mod:`mropt.history.swim_tsv`);
* a file whose first non-blank line has eight comma-separated fields: Alibaba 2017
  ``batch_task.csv`` (:mod:`mropt.history.alibaba_csv`).

Anything else is a one-line InputError.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from mropt.history.alibaba_csv import alibaba_batch
from mropt.history.batch import Batch
from mropt.history.jhist import MAGIC, jhist_batch
from mropt.history.rumen import rumen_batch
from mropt.history.simulation import is_simulation_folder, simulation_batch
from mropt.history.swim_tsv import swim_batch
from mropt.model.errors import InputError

KINDS: dict[str, Callable[[Path, str | None], Batch]] = {
    "jhist": jhist_batch,
    "rumen": rumen_batch,
    "alibaba": alibaba_batch,
    "swim": swim_batch,
    "simulation": simulation_batch,
}


def detect_kind(path: str | Path) -> str:
    """The kind of source at ``path`` (module docstring)."""
    path = Path(path)
    if path.is_dir():
        if is_simulation_folder(path):
            return "simulation"
        raise InputError(f"{path}: a folder, but not a simulation output folder (no jobs.parquet and tasks.parquet)")
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        with open(path, "rb") as f:
            head = f.read(65536)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    text = head.decode("utf-8", errors="replace")
    if text.startswith(MAGIC):
        return "jhist"
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        return "rumen"
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    if first.count("\t") == 5:
        return "swim"
    if first.count(",") == 7:
        return "alibaba"
    raise InputError(
        f"{path}: cannot tell the kind of history file (expected a .jhist, Rumen JSON, SWIM TSV, "
        "Alibaba 2017 batch_task.csv or a simulation output folder)"
    )


def read_batches(paths: Sequence[str | Path], source: str | None = None) -> list[Batch]:
    """One batch per path, each read by the importer of its kind; ``source`` names a single path's batch."""
    if source is not None and len(paths) != 1:
        raise InputError(f"--source names one import: give exactly one FILE, got {len(paths)}")
    return [KINDS[detect_kind(p)](Path(p), source) for p in paths]
