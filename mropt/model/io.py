"""Reading and writing instance files (JSON), dispatching on ``kind``.

JSON is parsed strictly: ``NaN`` and ``Infinity`` literals, which Python's ``json``
would otherwise accept, are rejected, and so are numbers too large for a float.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mropt.model.admission import AdmissionInstance
from mropt.model.errors import InputError, read_input_file
from mropt.model.fairness import FairnessInstance
from mropt.model.files import write_text
from mropt.model.priority import PriorityInstance
from mropt.model.sense import MAXIMISE

#: kind -> instance class; each class carries the newest ``schema_version`` it reads
INSTANCE_KINDS: dict[str, type[AdmissionInstance] | type[FairnessInstance] | type[PriorityInstance]] = {
    "admission": AdmissionInstance,
    "fairness": FairnessInstance,
    "priority": PriorityInstance,
}

#: any instance kind mropt reads
Instance = AdmissionInstance | FairnessInstance | PriorityInstance


def objective_sense(kind: str | None) -> str:
    """The objective sense (``"max"`` or ``"min"``, :mod:`mropt.model.sense`) of instances of ``kind``.

    Declared by each instance class (``SENSE``). ``None`` (rows of result stores written
    before the kind was recorded, all admission) reads as maximisation; an unknown kind
    is an InputError naming the known ones.
    """
    if kind is None:
        return MAXIMISE
    cls = INSTANCE_KINDS.get(kind)
    if cls is None:
        known = ", ".join(sorted(INSTANCE_KINDS))
        raise InputError(f"unknown instance kind {kind!r} (known: {known})")
    return cls.SENSE


def _reject_constant(name: str) -> None:
    raise InputError(f"non-finite number {name} is not allowed (JSON has no NaN or Infinity)")


def parse_json(text: str, source: str = "<input>") -> Any:
    """Strict JSON: one-line errors naming the source, line and column."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except InputError as exc:
        raise InputError(f"{source}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{source}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise InputError(f"{source}: not valid JSON (nested too deeply)") from None


def read_json(path: str | Path) -> Any:
    """Read and strictly parse a JSON file; a missing or unreadable file is an InputError."""
    data = read_input_file(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not valid JSON (not UTF-8 text)") from None
    return parse_json(text, str(path))


def instance_from_dict(data: Any) -> Instance:
    """Build the instance of the right kind, validating ``kind`` and ``schema_version`` first."""
    if not isinstance(data, dict):
        raise InputError(f"instance: expected a JSON object, got {type(data).__name__}")
    kind = data.get("kind")
    if kind is None:
        raise InputError("instance: field 'kind' is missing")
    if kind not in INSTANCE_KINDS:
        known = ", ".join(sorted(INSTANCE_KINDS))
        raise InputError(f"instance: field 'kind' is {kind!r}, an unknown kind (known: {known})")
    cls = INSTANCE_KINDS[kind]
    version = data.get("schema_version")
    if version is None:
        raise InputError("instance: field 'schema_version' is missing")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise InputError(f"instance: field 'schema_version' must be a positive integer, got {version!r}")
    if version > cls.schema_version:
        raise InputError(
            f"instance: field 'schema_version' is {version}, newer than this mropt reads "
            f"({cls.schema_version}); upgrade mropt"
        )
    return cls.from_dict(data)


def load_instance(path: str | Path) -> Instance:
    """Load and validate an instance file."""
    data = read_json(path)
    try:
        return instance_from_dict(data)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None


def instance_to_json(instance: Instance) -> str:
    """The file text: two-space indented JSON with a final newline, stable byte for byte."""
    return json.dumps(instance.to_dict(), indent=2, allow_nan=False) + "\n"


def save_instance(instance: Instance, path: str | Path) -> None:
    """Write the instance file through :func:`mropt.model.files.write_text` (atomic for a regular file)."""
    write_text(path, instance_to_json(instance))
