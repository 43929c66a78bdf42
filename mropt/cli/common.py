"""Helpers shared by the CLI subcommands: output files, parameter parsing, generator options."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import types
import typing
from collections.abc import Callable, Iterable, Mapping
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


def add_param_options(
    parser: argparse.ArgumentParser, cls: type, *, first: tuple[str, ...] = ("seed",), unset: bool = False
) -> None:
    """One option per field of the parameter dataclass ``cls`` (a generator's, an importer's), so a new
    field is a new option.

    The option is ``--name-with-dashes`` (or ``metadata["flag"]``, plus ``metadata["short"]``), in the
    argument group ``metadata["group"]`` when set; its default is the field's; its help is
    ``metadata["help"]`` with ``{default}`` replaced by the default (numbers as ``:g``, tuples
    comma-separated, tables by their keys), or ``default {default}``. The field's type picks the
    parsing: ``int``, ``float``, ``str`` (``metadata["choices"]``), ``bool`` (a switch), ``X | None``
    (as ``X``), ``tuple[float, ...]`` (``600,1200``), ``Mapping[str, float]`` (``a=1,b=2``; unset:
    the field's default) and ``Mapping[str, SomeDataclass]`` (repeated ``NAME=v1,v2,...`` added to
    the default table). Options come in field order, after the names in ``first`` (``"seed"`` there
    is the generator's ``--seed``, in [0, 2^63 - 1]; so is a field named ``seed``). An option already
    on the parser is not added again (an importer's parameter classes may share fields: the first
    declares it). ``unset``: an option not given is left out of the parsed namespace
    (:func:`given_params`), so the callee applies its own defaults.
    An integer option is one of the 64-bit range (:func:`int_type`, as the generators' ``check_types``
    and the readers' integer fields); the generator's ``check`` holds the finer rules (counts at most
    :data:`mropt.instances.params.MAX_ITEMS`).
    """
    fields = {f.name: f for f in param_fields(cls)}
    hints = typing.get_type_hints(cls)
    order = [*first, *(name for name in fields if name not in first)]
    taken = {a.dest for a in parser._actions}
    for name in order:
        if name in taken:
            continue
        f = fields.get(name)
        target = _group(parser, f.metadata.get("group")) if f is not None else parser
        if name == "seed":
            text = f.metadata.get("help", "random seed (default 0)") if f is not None else "random seed (default 0)"
            default: Any = argparse.SUPPRESS if unset else 0
            target.add_argument("--seed", type=SEED, default=default, help=text)
            continue
        assert f is not None, name
        default = _field_default(f)
        flags = [f.metadata.get("flag", "--" + name.replace("_", "-"))]
        flags += [f.metadata["short"]] if "short" in f.metadata else []
        text = f.metadata.get("help", "default {default}").replace("{default}", _show_default(default))
        kind = _without_none(hints[name])
        extra: dict[str, Any] = {"metavar": f.metadata["metavar"]} if "metavar" in f.metadata else {}
        if unset:
            default = argparse.SUPPRESS
        if kind is bool and _field_default(f) is False:
            target.add_argument(*flags, dest=name, action="store_true", default=default, help=text)
        elif kind is int:
            target.add_argument(*flags, dest=name, type=int_type(), default=default, help=text, **extra)
        elif kind is float:
            target.add_argument(*flags, dest=name, type=float, default=default, help=text, **extra)
        elif kind is str:
            choices = tuple(f.metadata.get("choices", ())) or None
            target.add_argument(*flags, dest=name, default=default, choices=choices, help=text, **extra)
        elif typing.get_origin(kind) is tuple:
            target.add_argument(*flags, dest=name, type=_floats, default=default, help=text, **extra)
        elif typing.get_origin(kind) is Mapping and typing.get_args(kind)[1] is float:
            target.add_argument(*flags, dest=name, type=_mix, default=None, help=text, **extra)
        elif typing.get_origin(kind) is Mapping and dataclasses.is_dataclass(typing.get_args(kind)[1]):
            parse = _named_record(typing.get_args(kind)[1])
            target.add_argument(*flags, dest=name, type=parse, action="append", default=[], help=text, **extra)
        else:  # pragma: no cover - a new kind of field needs its parser here
            raise TypeError(f"{cls.__name__}.{name}: no command-line option for type {kind!r}")


def given_params(parser: argparse.ArgumentParser, args: argparse.Namespace, names: Iterable[str]) -> dict[str, Any]:
    """The options among ``names`` given on the command line (added with ``unset=True``), in parser order."""
    wanted = set(names)
    return {a.dest: getattr(args, a.dest) for a in parser._actions if a.dest in wanted and hasattr(args, a.dest)}


def option_flag(parser: argparse.ArgumentParser, name: str) -> str:
    """The long flag of the option that sets ``name`` (``--partition-size`` for ``partition_bytes``)."""
    action = next(a for a in parser._actions if a.dest == name)
    return next((s for s in action.option_strings if s.startswith("--")), action.option_strings[0])


def _group(parser: argparse.ArgumentParser, title: str | None) -> Any:
    """The argument group ``title`` of ``parser`` (made on first use); the parser itself for None."""
    if title is None:
        return parser
    for group in parser._action_groups:
        if group.title == title:
            return group
    return parser.add_argument_group(title)


def _without_none(kind: Any) -> Any:
    """``X`` for ``X | None`` (an optional field is parsed as its type), else ``kind``."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        args = [k for k in typing.get_args(kind) if k is not type(None)]
        return args[0] if len(args) == 1 else kind
    return kind


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


def load_input(path: str, *, workload: bool) -> Any:
    """The instance (or workload) in ``path``; a trace given instead is told its import command.

    A newcomer's first try is often ``mropt simulate TRACE`` or ``mropt solve TRACE``; the error
    then says, on its one line, which importer turns the file into what the command reads (the
    kinds of ``mropt importers``): a workload for ``simulate`` (``workload``), an instance for
    ``solve``.
    """
    from mropt.model.io import load_instance

    try:
        return load_instance(path)
    except InputError as exc:
        hint = _import_hint(path, workload)
        if hint is None:
            raise
        raise InputError(f"{exc}; {hint}") from None


def _import_hint(path: str, workload: bool) -> str | None:
    """``it reads as a trace (SWIM TSV), not a workload: make one first with ...``, or None."""
    import shlex

    from mropt.importers.table import detect_kind, importer_info

    try:
        kind = detect_kind(path)
        with open(path, "rb") as f:
            head = f.read(65536)
    except (InputError, OSError):  # not a file any importer reads (a folder, a device, unreadable)
        return None
    imp, json_like, quoted = importer_info(kind), head.lstrip()[:1] in (b"{", b"["), shlex.quote(path)
    rumen = kind == "jhist" or (kind == "rumen" and b'"jobID"' in head)  # any JSON is Rumen to detect_kind
    if json_like and not rumen:  # a JSON file with 7 commas on its first line is no Alibaba CSV
        return None
    if rumen:
        command = f"mropt import-rumen {quoted} -o W.json" if workload else None
    elif imp.command and (imp.workload if workload else imp.output) is not None:
        command = f"mropt {imp.command} {quoted}{' --workload' if workload else ''} -o {'W' if workload else 'I'}.json"
    else:
        command = None
    if command is None:
        return None
    what = "a workload" if workload else "an instance"
    return f"it reads as a trace ({imp.title}), not {what}: make one first with `{command}`"
