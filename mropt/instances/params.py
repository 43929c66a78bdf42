"""Type and size checks shared by the generators' and importers' parameter dataclasses.

A parameter dataclass (``AdmissionParams``, ``FairnessParams``, ``PriorityParams``,
``AlibabaParams``) can be built from an experiment file or from Python, where nothing
types the values; :func:`check_types` refuses, in one line naming the parameter, a
value whose type does not match the field's annotation before any range check
compares it (``jobs = "x"`` would otherwise be a ``TypeError`` traceback):

* ``int``: an integer (not a boolean) in the 64-bit range;
* ``float``: an integer or float that is finite (``|x| <= 1.8e308``);
* ``bool``: true or false; ``str``: a string;
* ``tuple[float, ...]``: a list of such numbers;
* ``Mapping[str, float]``: a table of names to such numbers;
* ``Mapping[str, SomeDataclass]``: a table of names to records of that dataclass.

:data:`MAX_ITEMS` caps the counts of generated things (jobs, users, nodes): a
generator asked for more would need memory beyond any instance mropt can solve, and
is refused up front.

A generator writes only what the readers accept: :func:`check_seed` takes
the seeds numpy takes and a file records (integers in [0, 2^63 - 1]), and
:func:`check_written` refuses a parameter whose number in the file (itself, or one made
from it) breaks the instance fields' magnitude rule (:func:`mropt.model.fields.magnitude_problem`:
``--map-task-time 1e-320`` wrote a task time that ``mropt simulate`` refused).
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from typing import Any

import numpy as np

from mropt.model.errors import InputError
from mropt.model.fields import INT64_MAX, magnitude_problem, number_problem, show_value

#: the most jobs, users, nodes or priorities a generator makes (memory: about 1 KiB each in Python)
MAX_ITEMS = 1_000_000


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and number_problem(value) is None


def check_types(params: Any, who: str = "generator") -> None:
    """Raise ``<who>: parameter 'NAME' must be ..., got VALUE`` for the first ill-typed field of ``params``."""
    hints = typing.get_type_hints(type(params))
    for f in dataclasses.fields(params):
        value = getattr(params, f.name)
        kind = hints[f.name]
        rule = _rule(kind, value)
        if rule:
            raise InputError(f"{who}: parameter '{f.name}' must be {rule}, got {show_value(value)}")


def check_counts(params: Any, names: tuple[str, ...], who: str = "generator") -> None:
    """Refuse a count above :data:`MAX_ITEMS` (one line naming the parameter)."""
    for name in names:
        value = getattr(params, name)
        if value > MAX_ITEMS:
            raise InputError(
                f"{who}: parameter '{name}' must be <= {MAX_ITEMS:,} (more would not fit in "
                f"memory as an instance), got {show_value(value)}"
            )


def check_seed(seed: Any, who: str = "generator") -> int:
    """``seed`` as an int, or ``<who>: parameter 'seed' must be an integer in [0, 2^63 - 1], got VALUE``."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed <= INT64_MAX:
        raise InputError(f"{who}: parameter 'seed' must be an integer in [0, 2^63 - 1], got {show_value(seed)}")
    return int(seed)


def check_written(params: Any, name: str, who: str = "generator", *, makes: tuple[str, float] | None = None) -> None:
    """Refuse parameter ``name`` when the number it writes breaks the readers' magnitude rule.

    The number is the parameter's value, or with ``makes = (what, value)`` the ``value`` the
    generator makes from it (``("the reduce task time", work / tasks)``); the rule is every
    instance reader's (0 or of magnitude in [1e-100, 1e100], :func:`mropt.model.fields.magnitude_problem`).
    """
    value = getattr(params, name)
    written = value if makes is None else makes[1]
    problem = magnitude_problem(written) if math.isfinite(written) else "must be a finite number"
    if problem is None:
        return
    if makes is None:
        raise InputError(f"{who}: parameter '{name}' {problem} (the readers' rule), got {show_value(value)}")
    raise InputError(
        f"{who}: parameter '{name}' = {show_value(value)} makes {makes[0]} {written:g}, which the reader "
        f"refuses (it {problem})"
    )


def _rule(kind: Any, value: Any) -> str | None:
    """What ``value`` must be to fit ``kind``, or None when it does."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is typing.Union or origin is types.UnionType:
        if value is None and type(None) in args:
            return None
        rules = [_rule(a, value) for a in args if a is not type(None)]
        return None if any(r is None for r in rules) else rules[0]
    if kind is bool:
        return None if isinstance(value, bool) else "true or false"
    if kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool) and -INT64_MAX - 1 <= value <= INT64_MAX
        return None if ok else "an integer (64-bit)"
    if kind is float:
        return None if _is_number(value) else "a finite number"
    if kind is str:
        return None if isinstance(value, str) else "a string"
    if origin is tuple:
        ok = isinstance(value, (tuple, list)) and all(_is_number(v) for v in value)
        return None if ok else "a list of finite numbers"
    if origin is Mapping and args and args[1] is float:
        ok = isinstance(value, Mapping) and all(isinstance(k, str) and _is_number(v) for k, v in value.items())
        return None if ok else "a table of names to finite numbers"
    if origin is Mapping and args and isinstance(args[1], type) and dataclasses.is_dataclass(args[1]):
        record: type = args[1]
        ok = isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, record) for k, v in value.items())
        if ok:
            for v in value.values():
                for g in dataclasses.fields(v):
                    if not _is_number(getattr(v, g.name)):
                        return f"a table of names to {record.__name__} records of finite numbers"
        return None if ok else f"a table of names to {record.__name__} records"
    return None  # a field of another type: its own check() reads it
