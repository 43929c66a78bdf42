"""Typed reading of fields from decoded JSON, with one-line errors.

Every reader takes the mapping, the key and a ``where`` prefix (for example
``"job 'j3'"``) and raises :class:`~mropt.model.errors.InputError` naming the
place, the field and the value when the field is missing or not acceptable.

The number rules live here once, for every field, known or not:

* a number is finite and within the float range (``|x| <= 1.8e308``, :data:`FLOAT_MAX`):
  ``1e309`` and a 400-digit integer are refused, whether the field is known or kept
  as an unknown one (:func:`number_problem`, applied to every number of a file by
  :func:`mropt.model.io.parse_json`);
* a real-valued field of an instance (:func:`read_number`) is 0 or of magnitude in
  [1e-100, 1e100] (:data:`MIN_MAGNITUDE`, :data:`MAX_MAGNITUDE`): no time, amount,
  rate or benefit of any unit comes near these, and within them the sums, products and
  ratios the methods and ``verify`` form from a few such numbers (a benefit over a
  time, 2^63 tasks times a demand) stay finite; ``1e200`` or ``5e-324`` in a job
  overflowed the heuristics' arithmetic or ``verify``'s;
* an integer field (:func:`read_int`) is in the 64-bit range (``|x| <= 2^63 - 1``),
  as TOML's integers and the result store's columns are;
* a string is valid Unicode: a lone surrogate (``"\\ud800"``, which JSON can escape
  but no UTF-8 file or terminal can hold) is refused (:func:`string_problem`).
"""

from __future__ import annotations

import enum
import math
import sys
from collections.abc import Mapping
from typing import Any, TypeVar

from mropt.model.errors import InputError


class _Missing(enum.Enum):
    """The "no default given" marker (an enum member, so the readers' types can name it)."""

    MISSING = enum.auto()


_MISSING = _Missing.MISSING

#: The type of a reader's ``default``: a reader returns its own type or the default's.
_D = TypeVar("_D")

#: the largest finite float; a number beyond it (in either sign) is refused
FLOAT_MAX = sys.float_info.max
#: the 64-bit range of integer fields
INT64_MAX = 2**63 - 1
#: the magnitudes a real-valued instance field may have (besides 0)
MIN_MAGNITUDE, MAX_MAGNITUDE = 1e-100, 1e100


def number_problem(value: Any) -> str | None:
    """Why ``value`` (an int or float) breaks the number rules, or None when it keeps them."""
    if isinstance(value, int):
        return None if -FLOAT_MAX <= value <= FLOAT_MAX else "must be a finite number (|x| <= 1.8e308)"
    if not math.isfinite(value):
        return "must be a finite number"
    return None


def magnitude_problem(value: float) -> str | None:
    """Why a finite ``value`` is outside an instance field's magnitudes, or None."""
    if value == 0 or MIN_MAGNITUDE <= abs(value) <= MAX_MAGNITUDE:
        return None
    return "must be 0 or of magnitude in [1e-100, 1e100]"


def string_problem(value: str) -> str | None:
    """Why ``value`` is not a valid Unicode string (a lone surrogate), or None."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "must be valid Unicode text (it holds a lone surrogate)"
    return None


def show_value(value: Any) -> str:
    """A value as messages show it: its repr cut at 60 characters (an integer too long to print by its digit count)."""
    if isinstance(value, int) and not isinstance(value, bool) and not -(10**60) < value < 10**60:
        sign = "-" if value < 0 else ""
        return f"{sign}an integer of about {int(abs(value).bit_length() * 0.30103) + 1} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_show = show_value


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
    bounded: bool = True,
) -> float | _D:
    """A finite real number (JSON int or float, never a boolean or a string).

    ``bounded`` (instance fields): 0 or of magnitude in [1e-100, 1e100]
    (:func:`magnitude_problem`); solution files read their numbers with ``bounded=False``.
    """
    if key not in data:
        if isinstance(default, _Missing):
            raise _fail(where, key, "is missing")
        return default
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(where, key, "must be a number", value)
    problem = number_problem(value) or (magnitude_problem(value) if bounded else None)
    if problem:
        raise _fail(where, key, problem, value)
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
    maximum: int = INT64_MAX,
) -> int | _D:
    """An integer in [minimum, maximum] (default: at most 2^63 - 1; an integral float such as ``4.0`` is accepted)."""
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
    if value > maximum or value < -INT64_MAX - 1:
        low = "-2^63" if minimum is None else str(minimum)
        high = "2^63 - 1" if maximum == INT64_MAX else str(maximum)
        raise _fail(where, key, f"must be an integer in [{low}, {high}]", value)
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
    problem = string_problem(value)
    if problem:
        raise _fail(where, key, problem, value)
    return value
