"""Typed reading of fields from decoded JSON, with one-line errors.

Every reader takes the mapping, the key and a ``where`` prefix (for example
``"job 'j3'"``) and raises :class:`~mropt.model.errors.InputError` naming the
place, the field and the value when the field is missing or not acceptable.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from typing import Any, TypeVar

from mropt.model.errors import InputError


class _Missing(enum.Enum):
    """The "no default given" marker (an enum member, so the readers' types can name it)."""

    MISSING = enum.auto()


_MISSING = _Missing.MISSING

#: The type of a reader's ``default``: a reader returns its own type or the default's.
_D = TypeVar("_D")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _fail(where: str, key: str, problem: str, value: Any = _MISSING) -> InputError:
    shown = "" if value is _MISSING else f", got {_show(value)}"
    return InputError(f"{where}: field '{key}' {problem}{shown}")


def require_mapping(value: Any, where: str) -> Mapping[str, Any]:
    """Return ``value`` if it is a JSON object, else raise naming ``where``."""
    if not isinstance(value, Mapping):
        raise InputError(f"{where}: expected a JSON object, got {_show(value)}")
    return value


def read_number(
    data: Mapping[str, Any],
    key: str,
    where: str,
    *,
    default: _D | _Missing = _MISSING,
    positive: bool = False,
    nonnegative: bool = False,
    low: float | None = None,
    high: float | None = None,
) -> float | _D:
    """A finite real number (JSON int or float, never a boolean or a string)."""
    if key not in data:
        if isinstance(default, _Missing):
            raise _fail(where, key, "is missing")
        return default
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(where, key, "must be a number", value)
    if not math.isfinite(value):
        raise _fail(where, key, "must be a finite number", value)
    if positive and not value > 0:
        raise _fail(where, key, "must be > 0", value)
    if nonnegative and not value >= 0:
        raise _fail(where, key, "must be >= 0", value)
    if low is not None and value < low:
        raise _fail(where, key, f"must be >= {low:g}", value)
    if high is not None and value > high:
        raise _fail(where, key, f"must be <= {high:g}", value)
    return float(value)


def read_int(
    data: Mapping[str, Any],
    key: str,
    where: str,
    *,
    default: _D | _Missing = _MISSING,
    minimum: int | None = None,
) -> int | _D:
    """An integer (a JSON float with an integral value such as ``4.0`` is accepted)."""
    if key not in data:
        if isinstance(default, _Missing):
            raise _fail(where, key, "is missing")
        return default
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(where, key, "must be an integer", value)
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise _fail(where, key, "must be an integer", value)
    value = int(value)
    if minimum is not None and value < minimum:
        raise _fail(where, key, f"must be >= {minimum}", value)
    return value


def read_str(data: Mapping[str, Any], key: str, where: str, *, default: _D | _Missing = _MISSING) -> str | _D:
    """A non-empty string."""
    if key not in data:
        if isinstance(default, _Missing):
            raise _fail(where, key, "is missing")
        return default
    value = data[key]
    if not isinstance(value, str) or not value:
        raise _fail(where, key, "must be a non-empty string", value)
    return value
