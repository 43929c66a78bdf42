"""The table of trace importers by name, and which importer reads a path (``mropt history import``).

An importer registers once per trace format, with the one plug-in idiom of :mod:`mropt.registry`
(:func:`register_importer`: a stable name, a summary, where the format is documented); what it
makes of a file is declared, never hand-wired:

* ``detect(path, head)``: does the file look like this format (``head``: its first 64 KiB as
  text; None for a folder)? ``mropt history import DB FILE...`` asks every importer in
  registration order and reads the file with the first that says yes (:func:`detect_kind`);
* ``history(path, source)``: the file's rows as a job-history batch (:mod:`mropt.history`);
* ``output`` (an :class:`Output`): the instance (or workload) it makes of a file, from parameter
  dataclasses whose fields are its typed parameters (:func:`mropt.registry.dataclass_params`);
  ``workload``, when it makes a workload besides another kind, the output of ``--workload``. With
  a ``command``, ``mropt COMMAND TRACE`` is built from those fields (one option per field, as
  ``mropt generate`` builds its options: :mod:`mropt.cli.importers`); with ``windows`` (fields of
  ``output``), an experiment's ``[[instances]]`` block may name it (``importer = NAME``, windows
  over those fields: :mod:`mropt.harness.instance_sets`).

The formats register in detection order, the order of ``mropt importers``: ``jhist`` (first
line ``Avro-Json``), ``rumen`` (first non-blank character ``{`` or ``[``), ``swim`` (six
tab-separated fields), ``alibaba`` (eight comma-separated fields), ``simulation`` (a folder with
``jobs.parquet`` and ``tasks.parquet``). Anything else is a one-line InputError.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mropt.history.batch import Batch
from mropt.model.errors import InputError
from mropt.registry import Param, Table, dataclass_params


@dataclass(frozen=True)
class Output:
    """What an importer makes of a trace file: an instance of ``kind`` (admission, fairness, workload).

    ``params``: the parameter dataclasses whose fields are its parameters (every field a keyword
    of ``make``); ``make(path, **given)`` builds the instance from the fields given, the others
    at their defaults.
    """

    kind: str
    params: tuple[type, ...]
    make: Callable[..., Any]

    def fields(self) -> dict[str, Param]:
        """Every parameter of the output, typed (:func:`mropt.registry.dataclass_params`), in field order."""
        out: dict[str, Param] = {}
        for cls in self.params:
            out.update(dataclass_params(cls))
        return out

    def check(self, given: Mapping[str, Any]) -> None:
        """Run each parameter dataclass's own ``check`` on the values ``given`` (InputError on a bad one)."""
        for cls in self.params:
            names = {f.name for f in dataclasses.fields(cls)}
            check = getattr(cls(**{k: v for k, v in given.items() if k in names}), "check", None)
            if check is not None:
                check()


@dataclass(frozen=True)
class Importer:
    """A registered trace format (module docstring)."""

    name: str
    summary: str
    source: str
    title: str  # how detect_kind's error names the format ("SWIM TSV")
    detect: Callable[[Path, str | None], bool] | None = None
    history: Callable[[Path, str | None], Batch] | None = None
    command: str = ""  # the CLI command that writes its instance ("import-swim"), if any
    description: str = ""  # the command's --help text
    trace_metavar: str = "TRACE"
    output: Output | None = None  # what it makes of a file (without --workload)
    workload: Output | None = None  # what --workload makes instead, if anything
    windows: tuple[str, ...] = ()  # parameters an experiment's windows may sweep

    def outputs(self) -> list[Output]:
        """Its output, then its --workload output, those it has."""
        return [o for o in (self.output, self.workload) if o is not None]


#: the importers by name (the kind of their history batches), in registration (detection) order
IMPORTERS: Table[Importer] = Table("importer")


def register_importer(importer: Importer) -> Importer:
    """Register a trace format (module docstring); its name must be new."""
    if importer.windows and importer.output is None:
        raise ValueError(f"importer {importer.name!r}: windows need an output")
    unknown = [w for w in importer.windows if importer.output is not None and w not in importer.output.fields()]
    if unknown:
        raise ValueError(f"importer {importer.name!r}: window {unknown[0]!r} is not a parameter of its output")
    if importer.workload is not None and importer.output is None:
        raise ValueError(f"importer {importer.name!r}: a --workload output needs an output besides")
    return IMPORTERS.add(importer.name, importer)


def importers() -> dict[str, Importer]:
    """Every registered importer, in registration order."""
    _load()
    return dict(IMPORTERS)


def importer_info(name: str) -> Importer:
    """The importer registered under ``name`` (InputError naming the known ones if none)."""
    _load()
    return IMPORTERS.lookup(name)


def detect_kind(path: str | Path) -> str:
    """The name of the importer that reads ``path`` (module docstring)."""
    path = Path(path)
    found = [(imp, imp.detect) for imp in importers().values() if imp.detect is not None and imp.history is not None]
    if path.is_dir():
        for imp, detect in found:
            if detect(path, None):
                return imp.name
        raise InputError(f"{path}: a folder, but not a simulation output folder (no jobs.parquet and tasks.parquet)")
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        with open(path, "rb") as f:
            head = f.read(65536)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    text = head.decode("utf-8", errors="replace")
    for imp, detect in found:
        if detect(path, text):
            return imp.name
    titles = [imp.title for imp, _ in found]
    expected = ", ".join(titles[:-1]) + f" or {titles[-1]}" if len(titles) > 1 else "".join(titles)
    raise InputError(f"{path}: cannot tell the kind of history file (expected {expected})")


def read_batches(paths: Sequence[str | Path], source: str | None = None) -> list[Batch]:
    """One batch per path, each read by the importer of its kind; ``source`` names a single path's batch."""
    if source is not None and len(paths) != 1:
        raise InputError(f"--source names one import: give exactly one FILE, got {len(paths)}")
    batches = []
    for p in paths:
        reader = importer_info(detect_kind(p)).history
        assert reader is not None  # detect_kind names importers with a history reader only
        batches.append(reader(Path(p), source))
    return batches


def _load() -> None:
    import mropt.importers  # noqa: F401  (the formats register on import)
