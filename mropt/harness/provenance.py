"""What a study ran and where: the experiment file's text, versions and machine.

:func:`record_study` is called by :func:`mropt.harness.runner.run_study` when a study
starts (and again each time it is resumed). It writes, in the result folder::

    DIR/study/<name>.toml    the experiment file's text, as last run
    DIR/study/<name>.json    {"experiment", "path", "profiles": {name: text of its file},
                              "sessions": [{"started_at", "host", "cpus", "cpus_machine",
                                            "platform", "processor", "versions": {mropt,
                                            numpy, ortools, highspy, pulp, python}}, ...]}

One session is appended per start, so a study resumed on another machine lists both.
``mropt report`` shows them (:func:`read_studies`); result folders written before these
files existed report the hosts and versions their rows carry instead.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mropt.model.files import make_folder, write_text

#: the packages whose versions a study records (beside mropt and Python)
PACKAGES = ("numpy", "ortools", "highspy", "pulp")
FOLDER = "study"


def versions() -> dict[str, str]:
    """mropt, numpy, ortools, highspy, pulp and Python versions of this process ("-" where absent)."""
    from importlib import metadata

    from mropt._version import __version__

    out = {"mropt": __version__}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "-"
    out["python"] = platform.python_version()
    return out


def machine() -> dict[str, Any]:
    """Host name, CPU count (usable by this process, and in the machine) and platform."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "host": socket.gethostname(),
        "cpus": usable,
        "cpus_machine": os.cpu_count(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
    }


def _stem(name: str) -> str:
    """A file name for an experiment name (any string): itself when plain, else cleaned plus a digest."""
    clean = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "experiment"
    if clean == name:
        return name
    return f"{clean[:60]}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"


def record_study(exp: Any, root: str | Path) -> None:
    """Write the experiment's text and append this session (machine, versions) under ``root/study``."""
    from mropt.harness.store import Store

    folder = Path(root) / FOLDER
    make_folder(folder)
    stem = _stem(exp.name)
    try:
        text = Path(exp.path).read_text(encoding="utf-8")
    except OSError as exc:
        text = f"# the experiment file {exp.path} could not be read: {exc.strerror}\n"
    profiles = {}
    for name, prof in sorted(getattr(exp, "profiles", {}).items()):
        path = getattr(prof, "path", None)
        try:
            profiles[name] = Path(path).read_text(encoding="utf-8") if path else repr(prof)
        except OSError:
            profiles[name] = repr(prof)
    session = {"started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), **machine(), "versions": versions()}
    with Store(root).lock(".study.lock"):
        info_path = folder / f"{stem}.json"
        try:
            info = json.loads(info_path.read_text(encoding="utf-8"))
            sessions = list(info.get("sessions", []))
        except (OSError, ValueError, AttributeError):
            sessions = []
        info = {
            "experiment": exp.name,
            "path": str(Path(exp.path).resolve()),
            "profiles": profiles,
            "sessions": [*sessions, session],
        }
        write_text(folder / f"{stem}.toml", text)
        write_text(info_path, json.dumps(info, indent=2, sort_keys=True) + "\n")


@dataclass
class StudyRecord:
    """What :func:`record_study` wrote for one experiment."""

    name: str
    text: str
    path: str = ""
    profiles: dict[str, str] = field(default_factory=dict)
    sessions: list[dict[str, Any]] = field(default_factory=list)


def read_studies(root: str | Path) -> list[StudyRecord]:
    """The recorded experiments of a result folder, by name (none for folders older than the record)."""
    folder = Path(root) / FOLDER
    out = []
    for info_path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            info = json.loads(info_path.read_text(encoding="utf-8"))
            text = info_path.with_suffix(".toml").read_text(encoding="utf-8")
        except (OSError, ValueError):
            continue
        if isinstance(info, dict):
            out.append(
                StudyRecord(
                    str(info.get("experiment", info_path.stem)),
                    text,
                    str(info.get("path", "")),
                    dict(info.get("profiles") or {}),
                    list(info.get("sessions") or []),
                )
            )
    return out
