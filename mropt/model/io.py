"""Reading and writing instance files (JSON), dispatching on ``kind``.

JSON is parsed strictly (:func:`parse_json`, the one reader of every JSON file mropt
reads: instances, solutions, ``--param`` values): ``NaN`` and ``Infinity`` literals,
which Python's ``json`` would otherwise accept, are rejected, and so is every number
that breaks the rules of :mod:`mropt.model.fields` -- ``1e309`` (a float literal that
overflows), an integer beyond the float range or of more than 4,300 digits -- and
every string holding a lone surrogate, in known and unknown fields alike. The error
names the field by its path (``field 'jobs[0].x'``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mropt.model.admission import AdmissionInstance
from mropt.model.errors import InputError, read_input_file
from mropt.model.fairness import FairnessInstance
from mropt.model.fields import number_problem, show_value, string_problem
from mropt.model.files import write_text
from mropt.model.priority import PriorityInstance
from mropt.model.sense import MAXIMISE
from mropt.model.workload import WorkloadInstance

#: kind -> instance class; each class carries the newest ``schema_version`` it reads
INSTANCE_KINDS: dict[
    str, type[AdmissionInstance] | type[FairnessInstance] | type[PriorityInstance] | type[WorkloadInstance]
] = {
    "admission": AdmissionInstance,
    "fairness": FairnessInstance,
    "priority": PriorityInstance,
    "workload": WorkloadInstance,
}

#: any instance kind mropt reads
Instance = AdmissionInstance | FairnessInstance | PriorityInstance | WorkloadInstance


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


class _BadNumber:
    """A number literal that breaks the number rules, kept as text until its field is known."""

    __slots__ = ("text", "problem")

    def __init__(self, text: str, problem: str) -> None:
        self.text, self.problem = text, problem


#: more digits than any integer within the float range has (FLOAT_MAX has 309)
_MAX_DIGITS = 310
#: a JSON escape that may denote a surrogate code point (checked once decoded)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def parse_json(text: str, source: str = "<input>") -> Any:
    """Strict JSON: one-line errors naming the source and the line and column, or the field.

    Numbers and strings obey :mod:`mropt.model.fields`' rules everywhere in the document
    (see the module docstring).
    """
    bad: list[_BadNumber] = []

    def parse_int(literal: str) -> Any:
        digits = len(literal) - literal.startswith("-")
        if digits > _MAX_DIGITS:
            bad.append(_BadNumber(f"an integer of {digits} digits", "must be a finite number (|x| <= 1.8e308)"))
            return bad[-1]
        value = int(literal)
        problem = number_problem(value)
        if problem:
            bad.append(_BadNumber(show_value(value), problem))
            return bad[-1]
        return value

    def parse_float(literal: str) -> Any:
        value = float(literal)
        problem = number_problem(value)
        if problem:
            shown = literal if len(literal) <= 40 else literal[:37] + "..."
            bad.append(_BadNumber(shown, problem + " (|x| <= 1.8e308)"))
            return bad[-1]
        return value

    try:
        data = json.loads(text, parse_constant=_reject_constant, parse_int=parse_int, parse_float=parse_float)
    except InputError as exc:
        raise InputError(f"{source}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{source}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise InputError(f"{source}: not valid JSON (nested too deeply)") from None
    if bad or _SURROGATE_ESCAPE.search(text):
        _check_values(data, source)
    return data


def _check_values(data: Any, source: str) -> None:
    """Raise for the first bad number or string of ``data``, naming its field (iterative: no recursion).

    The field is named by its path; inside a list item that has an ``id`` the path
    starts at the item, which is named with its id: ``jobs[0] (id 'j1'): field 'deadline'``.
    """
    # (item: the list item holding the value, or ""; path: from the item, or from the top)
    stack: list[tuple[str, str, Any]] = [("", "", data)]
    while stack:
        item, path, value = stack.pop()
        here = f"{item}: " if item else ""
        if isinstance(value, _BadNumber):
            raise InputError(f"{source}: {here}field '{path}' {value.problem}, got {value.text}")
        if isinstance(value, str):
            problem = string_problem(value)
            if problem:
                what = f"field '{path}'" if path else "a value"
                raise InputError(f"{source}: {here}{what} {problem}, got {value!r:.60}")
        elif isinstance(value, dict):
            children = []
            for key, child in value.items():
                problem = string_problem(key)
                if problem:
                    raise InputError(
                        f"{source}: {here}a field name in '{path or ('the item' if item else '(top level)')}' {problem}, "
                        f"got {key!r:.60}"
                    )
                children.append((item, f"{path}.{key}" if path else key, child))
            stack.extend(reversed(children))
        elif isinstance(value, list):
            children = []
            for i, child in enumerate(value):
                ident = child.get("id") if isinstance(child, dict) else None
                if isinstance(ident, str) and string_problem(ident) is None:
                    children.append((f"{item + ' ' if item else ''}{path}[{i}] (id {ident!r:.40})", "", child))
                else:
                    children.append((item, f"{path}[{i}]", child))
            stack.extend(reversed(children))


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
    if not isinstance(kind, str) or kind not in INSTANCE_KINDS:
        known = ", ".join(sorted(INSTANCE_KINDS))
        raise InputError(f"instance: field 'kind' is {show_value(kind)}, an unknown kind (known: {known})")
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
