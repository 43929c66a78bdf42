"""Helpers shared by the CLI subcommands: output files, parameter parsing, generator options."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import typing
from collections.abc import Callable, Mapping
from typing import Any

from mropt.model import files
from mropt.model.errors import InputError
from mropt.model.fields import INT64_MAX, show_value
from mropt.model.io import parse_json


def write_text(text: str, out: str | None) -> None:
    """Write to stdout (``out`` None or ``-``) or to the file ``out`` through :mod:`mropt.model.files`.

    A regular file is replaced atomically; a device, pipe or symlink target is written
    through (:mod:`mropt.model.files`); a bad path is a one-line InputError.
    """
    if out is None or out == "-":
        sys.stdout.write(text)
        return
    files.write_text(out, text)


def parse_param(text: str) -> tuple[str, Any]:
    """``name=value`` with the value read as JSON when it parses (numbers, true/false), else a string."""
    name, sep, raw = text.partition("=")
    if not sep or not name:
        raise InputError(f"--param expects name=value, got {text!r}")
    try:
        json.loads(raw, parse_constant=float, parse_int=str, parse_float=str)  # is it JSON at all?
    except (json.JSONDecodeError, RecursionError):
        return name.strip().replace("-", "_"), raw
    try:
        value = parse_json(raw, f"--param {name}")  # the number rules of every JSON mropt reads
    except InputError as exc:
        raise InputError(str(exc).replace(": field '' ", ": ")) from None
    return name.strip().replace("-", "_"), value


# -- integer options: bounded at parse time ----------------------------------------------
def _show_bound(bound: int) -> str:
    return {INT64_MAX: "2^63 - 1", -INT64_MAX - 1: "-2^63"}.get(bound, f"{bound:,}")


def int_type(minimum: int = -INT64_MAX - 1, maximum: int = INT64_MAX) -> Callable[[str], int]:
    """The argparse ``type`` of an integer option in [minimum, maximum] (default: the 64-bit range of
    integer fields, :data:`mropt.model.fields.INT64_MAX`).

    Every integer option of ``mropt`` goes through one: a value out of range is the one-line
    ``argument --NAME: must be an integer in [LOW, HIGH], got VALUE`` (exit 2) when the command
    line is parsed, before a seed reaches numpy or a count a loop (``--seed -1``, ``--monte-carlo
    2**70`` were tracebacks).
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {show_value(text)}") from None
        if not minimum <= value <= maximum:
            rule = f"must be an integer in [{_show_bound(minimum)}, {_show_bound(maximum)}]"
            raise argparse.ArgumentTypeError(f"{rule}, got {show_value(value)}")
        return value

    return parse


#: a seed: numpy's are non-negative, and the files that record one hold 64-bit integers
SEED = int_type(0)


# -- options built from a parameter dataclass -------------------------------------------
def param_fields(cls: type) -> list[dataclasses.Field]:
    """The fields of ``cls`` that are command-line options (all but ``metadata["cli"] = False``)."""
    return [f for f in dataclasses.fields(cls) if f.metadata.get("cli", True)]


def add_param_options(parser: argparse.ArgumentParser, cls: type, *, first: tuple[str, ...] = ("seed",)) -> None:
    """One option per field of the generator's parameter dataclass ``cls``, so a new field is a new option.

    The option is ``--name-with-dashes`` (or ``metadata["flag"]``, plus ``metadata["short"]``);
    its default is the field's; its help is ``metadata["help"]`` with ``{default}`` replaced
    by the default (numbers as ``:g``, tuples comma-separated, tables by their keys), or
    ``default {default}``. The field's type picks the parsing: ``int``, ``float``, ``bool``
    (a switch), ``tuple[float, ...]`` (``600,1200``), ``Mapping[str, float]`` (``a=1,b=2``;
    unset: the field's default) and ``Mapping[str, SomeDataclass]`` (repeated
    ``NAME=v1,v2,...`` added to the default table). Options come in field order, after
    the names in ``first`` (``"seed"`` there is the generator's ``--seed``, in [0, 2^63 - 1]).
    An integer option is one of the 64-bit range (:func:`int_type`, as the generators' ``check_types``
    and the readers' integer fields); the generator's ``check`` holds the finer rules (counts at most
    :data:`mropt.instances.params.MAX_ITEMS`).
    """
    fields = {f.name: f for f in param_fields(cls)}
    hints = typing.get_type_hints(cls)
    order = [*first, *(name for name in fields if name not in first)]
    for name in order:
        if name == "seed":
            parser.add_argument("--seed", type=SEED, default=0, help="random seed (default 0)")
            continue
        f = fields[name]
        default = _field_default(f)
        flags = [f.metadata.get("flag", "--" + name.replace("_", "-"))]
        flags += [f.metadata["short"]] if "short" in f.metadata else []
        text = f.metadata.get("help", "default {default}").replace("{default}", _show_default(default))
        kind = hints[name]
        extra: dict[str, Any] = {"metavar": f.metadata["metavar"]} if "metavar" in f.metadata else {}
        if kind is bool and default is False:
            parser.add_argument(*flags, dest=name, action="store_true", help=text)
        elif kind is int:
            parser.add_argument(*flags, dest=name, type=int_type(), default=default, help=text, **extra)
        elif kind is float:
            parser.add_argument(*flags, dest=name, type=float, default=default, help=text, **extra)
        elif typing.get_origin(kind) is tuple:
            parser.add_argument(*flags, dest=name, type=_floats, default=default, help=text, **extra)
        elif typing.get_origin(kind) is Mapping and typing.get_args(kind)[1] is float:
            parser.add_argument(*flags, dest=name, type=_mix, default=None, help=text, **extra)
        elif typing.get_origin(kind) is Mapping and dataclasses.is_dataclass(typing.get_args(kind)[1]):
            parse = _named_record(typing.get_args(kind)[1])
            parser.add_argument(*flags, dest=name, type=parse, action="append", default=[], help=text, **extra)
        else:  # pragma: no cover - a new kind of field needs its parser here
            raise TypeError(f"{cls.__name__}.{name}: no command-line option for type {kind!r}")


def params_from_args(cls: type, args: argparse.Namespace) -> Any:
    """The ``cls`` instance of the parsed options (see :func:`add_param_options`)."""
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in param_fields(cls):
        value = getattr(args, f.name)
        if typing.get_origin(hints[f.name]) is Mapping:
            if isinstance(value, list):  # repeated NAME=... records over the default table
                value = {**_field_default(f), **dict(value)}
            elif value is None:
                continue
        values[f.name] = value
    return cls(**values)


def _field_default(f: dataclasses.Field) -> Any:
    return f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[operator]


def _show_default(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return ",".join(_show_default(v) for v in value)
    if isinstance(value, Mapping):
        return ", ".join(value)
    return str(value)


def _floats(text: str) -> tuple[float, ...]:
    """``600,1200,2400`` -> (600.0, 1200.0, 2400.0)."""
    try:
        return tuple(float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def _mix(text: str) -> dict[str, float]:
    """``a=1,b=2`` -> {"a": 1.0, "b": 2.0} (a bare name weighs 1)."""
    out: dict[str, float] = {}
    for part in text.split(","):
        name, sep, weight = part.partition("=")
        try:
            out[name.strip()] = float(weight) if sep else 1.0
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected name=weight,..., got {text!r}") from None
    return out


def _named_record(record: type) -> Callable[[str], tuple[str, Any]]:
    """A parser of ``NAME=v1,v2,...`` into (NAME, record(v1, v2, ...)), the record's fields as floats."""
    names = [f.name for f in dataclasses.fields(record)]
    usage = f"name={','.join(names)}"

    def parse(text: str) -> tuple[str, Any]:
        name, sep, values = text.partition("=")
        try:
            numbers = [float(v) for v in values.split(",")]
        except ValueError:
            numbers = []
        if not sep or not name.strip() or len(numbers) != len(names):
            raise argparse.ArgumentTypeError(f"expected {usage}, got {text!r}")
        return name.strip(), record(*numbers)

    return parse
