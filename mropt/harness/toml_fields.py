"""Typed reading of TOML keys: the one vocabulary of the harness's files.

Experiment files (:mod:`mropt.harness.experiment`), instance sets
(:mod:`mropt.harness.instance_sets`) and solver profiles (:mod:`mropt.harness.profiles`)
read their keys through these functions, so that every error has one of three shapes::

    key '<dotted.key>' must be <rule>, got <value>
    key '<dotted.key>' is missing
    unknown key '<dotted.key>' (allowed: a, b, c)

``where`` is the dotted path of the table (``"instances[0].sweep"``, ``""`` at the top);
the caller that knows the file puts ``<file>: `` in front (:func:`in_file`).

Numbers are finite and bounded: TOML has ``nan`` and ``inf``
literals, and ``1e300`` seconds overflows the worker's ``select`` timeout, so a number of
seconds is at most :data:`MAX_SECONDS`. Integers are 64-bit, as the TOML specification
says (Python's ``tomllib`` reads any size) and as the result store keeps them; seeds are
in [0, 2^63 - 1] (numpy's generators take no negative seed), and a ``count`` of seeds or
sweep values is at most :data:`MAX_COUNT`.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, overload

from mropt.model.errors import InputError, read_input_file
from mropt.model.fields import number_problem, show_value

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: the largest number of seconds a time limit or grace may be (about 116 days)
MAX_SECONDS = 10_000_000.0
#: the largest ``count`` of a ``{start, count}`` seed range or a ``{from, step, count}`` sweep
MAX_COUNT = 1_000_000

_KIND_NAMES = {
    "dict": "a table",
    "list": "a list",
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
}


# -- messages -------------------------------------------------------------------------------
def dotted(where: str, key: str) -> str:
    """``where.key`` (``key`` at the top level)."""
    return f"{where}.{key}" if where else key


def show(value: Any) -> str:
    """The offending value as written in messages: its repr, cut at 60 characters."""
    return show_value(value)


def fail(where: str, key: str, rule: str, value: Any) -> InputError:
    """``key '<where.key>' must be <rule>, got <value>``."""
    return InputError(f"key '{dotted(where, key)}' must be {rule}, got {show(value)}")


def missing(where: str, key: str) -> InputError:
    return InputError(f"key '{dotted(where, key)}' is missing")


def in_file(path: str | Path, exc: InputError) -> InputError:
    """``<file>: <message>``: the error of a key, placed in its file."""
    return InputError(f"{path}: {exc}")


def _limit(x: float) -> str:
    """A range limit in words: 2^63 - 1, -2^63, 10000000, 0.5."""
    if x == INT64_MAX:
        return "2^63 - 1"
    if x == INT64_MIN:
        return "-2^63"
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


# -- files and tables -----------------------------------------------------------------------
#: the largest experiment, instance-set or profile file read (they are a few KiB)
MAX_TOML_BYTES = 16 << 20


def read_toml(path: str | Path) -> dict[str, Any]:
    """A TOML file as a dict; a missing, unreadable or malformed file is a one-line InputError.

    Refused in one line: a folder, a device, a file over
    :data:`MAX_TOML_BYTES`, text that is not UTF-8, nesting too deep for the parser,
    an integer literal of more than 4,300 digits. The readers below check every value
    they take (integers are 64-bit, numbers finite); free-form tables (a generator's
    ``params``, a method's) are checked by the generator's or the method's declaration.
    """
    path = Path(path)
    raw = read_input_file(path, MAX_TOML_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not valid TOML (not UTF-8 text)") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:
        raise InputError(f"{path}: not valid TOML (nested too deeply)") from None
    except ValueError:  # int() of a literal over sys.get_int_max_str_digits() digits
        raise InputError(f"{path}: not valid TOML (an integer of more than 4300 digits)") from None
    return data


def check_keys(table: Mapping[str, Any], allowed: set[str] | tuple[str, ...], where: str) -> None:
    """Refuse the first unknown key (sorted), listing the allowed ones."""
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise InputError(f"unknown key '{dotted(where, unknown[0])}' (allowed: {', '.join(sorted(allowed))})")


def need(table: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str, default: Any = ...) -> Any:
    """``table[key]`` checked against ``kind`` (a bool is no int); missing without a default is an error."""
    if key not in table:
        if default is ...:
            raise missing(where, key)
        return default
    value = table[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise fail(where, key, " or ".join(_KIND_NAMES.get(k.__name__, k.__name__) for k in kinds), value)
    return value


# -- typed values ---------------------------------------------------------------------------
def string(table: Mapping[str, Any], key: str, where: str, default: Any = ..., *, non_empty: bool = False) -> Any:
    """A string (``non_empty``: with something besides spaces)."""
    value = need(table, key, str, where, default)
    if non_empty and isinstance(value, str) and not value.strip():
        raise fail(where, key, "a non-empty string", value)
    return value


def integer(
    table: Mapping[str, Any],
    key: str,
    where: str,
    default: Any = ...,
    *,
    minimum: int = INT64_MIN,
    maximum: int = INT64_MAX,
) -> Any:
    """An integer in [minimum, maximum] (by default the 64-bit range)."""
    if key not in table:
        return need(table, key, int, where, default)
    value = table[key]
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise fail(where, key, _int_rule(minimum, maximum, value), value)
    return value


def _int_rule(minimum: int, maximum: int, value: Any) -> str:
    """``an integer >= 1`` when only the lower limit is the user's, else ``an integer in [a, b]``."""
    beyond = isinstance(value, int) and value > INT64_MAX
    if maximum == INT64_MAX and minimum != INT64_MIN and not beyond:
        return f"an integer >= {_limit(minimum)}"
    return f"an integer in [{_limit(minimum)}, {_limit(maximum)}]"


def number(
    table: Mapping[str, Any],
    key: str,
    where: str,
    default: Any = ...,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    above: float | None = None,
    rule: str | None = None,
) -> Any:
    """A finite number (int or float, returned as given) in range.

    ``minimum``/``maximum`` are inclusive, ``above`` an exclusive lower limit; ``rule``
    replaces the generated wording (``a number of seconds in (0, 10000000]``).
    """
    if key not in table:
        return need(table, key, (int, float), where, default)
    value = table[key]
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and number_problem(value) is None
    ok = ok and (minimum is None or value >= minimum) and (maximum is None or value <= maximum)
    ok = ok and (above is None or value > above)
    if not ok:
        raise fail(where, key, rule or _number_rule(minimum, maximum, above), value)
    return value


def _number_rule(minimum: float | None, maximum: float | None, above: float | None) -> str:
    if above is not None:
        low = f"({_limit(above)}"
    elif minimum is not None:
        low = f"[{_limit(minimum)}"
    else:
        return "a finite number" if maximum is None else f"a finite number <= {_limit(maximum)}"
    if maximum is not None:
        return f"a finite number in {low}, {_limit(maximum)}]"
    return f"a finite number {'>' if above is not None else '>='} {low[1:]}"


@overload
def seconds(
    table: Mapping[str, Any], key: str, where: str, default: float = ..., *, zero: bool = ..., also: str = ...
) -> float: ...


@overload
def seconds(
    table: Mapping[str, Any], key: str, where: str, default: None, *, zero: bool = ..., also: str = ...
) -> float | None: ...


def seconds(
    table: Mapping[str, Any], key: str, where: str, default: Any = ..., *, zero: bool = False, also: str = ""
) -> float | None:
    """A number of seconds in (0, MAX_SECONDS] (``zero``: [0, MAX_SECONDS]), as a float.

    ``also`` is appended to the rule, for keys that take another value too (``or "none"``).
    """
    interval = f"{'[' if zero else '('}0, {_limit(MAX_SECONDS)}]"
    value = number(
        table,
        key,
        where,
        default,
        minimum=0.0 if zero else None,
        above=None if zero else 0.0,
        maximum=MAX_SECONDS,
        rule=f"a number of seconds in {interval}{also}",
    )
    return None if value is None else float(value)


def method_params(
    method: Any, params: Mapping[str, Any], where: str, *, reserved: tuple[str, ...] = (), hint: str = ""
) -> dict[str, Any]:
    """A method's ``params`` table checked against its declared parameters (``mropt.registry.Param``).

    An unknown name (or a ``reserved`` one, given elsewhere) is ``key '<where>.<name>' is
    not a parameter of '<method>' (it takes: ...)``; a bad value is the method's own
    message after ``key '<where>.<name>': ``.
    """
    bad = sorted(set(params) - set(method.params) | (set(reserved) & set(params)))
    if bad:
        takes = ", ".join(sorted(set(method.params) - set(reserved))) or "none"
        raise InputError(
            f"key '{dotted(where, bad[0])}' is not a parameter of {method.name!r} (it takes: {takes}{hint})"
        )
    checked = {}
    for name, value in params.items():  # types and ranges, from the method's declaration
        try:
            checked[name] = method.check_params({name: value})[name]
        except InputError as exc:
            raise InputError(f"key '{dotted(where, name)}': {exc}") from None
    return checked


def seed_list(table: Mapping[str, Any], key: str, where: str, default: Any = ...) -> list[int]:
    """Seeds: a non-empty list of integers in [0, 2^63 - 1], or ``{start = a, count = n}`` (a, ..., a+n-1)."""
    value = need(table, key, (list, dict), where, default)
    here = dotted(where, key)
    if isinstance(value, dict):
        check_keys(value, {"start", "count"}, here)
        start = integer(value, "start", here, 0, minimum=0)
        count = integer(value, "count", here, minimum=1, maximum=min(MAX_COUNT, INT64_MAX - start + 1))
        return list(range(start, start + count))
    if not value or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= INT64_MAX for v in value):
        raise fail(where, key, "a non-empty list of integers in [0, 2^63 - 1] (or {start, count})", value)
    return list(value)


def value_list(value: Any, where: str, key: str) -> list[Any]:
    """The values of one swept key: a list, one value, or ``{from = a, step = s, count = n}``."""
    here = dotted(where, key)
    if isinstance(value, dict):  # {from, step, count}
        check_keys(value, {"from", "step", "count"}, here)
        lo = number(value, "from", here)
        step = number(value, "step", here)
        count = integer(value, "count", here, minimum=1, maximum=MAX_COUNT)
        values = [lo + k * step for k in range(count)]
        if not all(math.isfinite(v) for v in values):
            raise fail(here, "count", "small enough that every value stays finite", count)
        return values
    if isinstance(value, list):
        if not value:
            raise fail(where, key, "a non-empty list", value)
        return value
    return [value]


def product(table: Mapping[str, Any], where: str) -> Iterator[dict[str, Any]]:
    """Every combination of the swept keys' values (:func:`value_list`), in file order."""
    import itertools

    keys = list(table)
    lists = [value_list(table[k], where, k) for k in keys]
    for combo in itertools.product(*lists):
        yield dict(zip(keys, combo))
