"""``mropt import-swim``, ``mropt import-alibaba`` (every registered importer with a command) and ``mropt importers``.

Each command is built from the importer's registration (:mod:`mropt.importers.table`): its trace
file, one option per field of its parameter dataclasses (:func:`mropt.cli.common.add_param_options`,
as ``mropt generate`` builds its options), ``--workload`` when it makes a workload too, and
``-o/--output`` (default stdout). An option is passed on only when given, so the importer's own
defaults apply (``import-swim --workload`` takes the source cluster's 600 nodes where the admission
path takes 40). An option of the workload path only, given without ``--workload``, is the one-line
error ``COMMAND: option '--x' needs --workload``; one of the instance path only, given with it,
``COMMAND: option '--x' is not for --workload``. The written file is the same, byte for byte, for
the same arguments (the commands and their options are a contract).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from mropt.cli.common import add_param_options, given_params, option_flag, write_text
from mropt.model.errors import InputError
from mropt.model.io import instance_to_json


def add_parsers(sub: argparse._SubParsersAction) -> None:
    from mropt.importers.table import importers

    for imp in importers().values():
        if not imp.command or imp.output is None:
            continue
        p = sub.add_parser(imp.command, help=imp.summary, description=imp.description or imp.summary)
        p.add_argument("trace", metavar=imp.trace_metavar, help=f"{imp.title} file")
        for output in imp.outputs():
            for cls in output.params:
                add_param_options(p, cls, first=(), unset=True)
        if imp.workload is not None:
            group = next((g for g in p._action_groups if g.title and "workload" in g.title), p)
            group.add_argument(
                "--workload",
                action="store_true",
                help=f"write a simulator workload (kind 'workload') instead of a {imp.output.kind} instance",
            )
        p.add_argument("-o", "--output", help="output file (default stdout)")
        p.set_defaults(handler=run_import, importer_name=imp.name, parser=p)

    p = sub.add_parser("importers", help="list the trace importers: formats, what they make, their parameters")
    p.add_argument("--params", action="store_true", help="list each parameter: type, range, default, meaning")
    p.set_defaults(handler=run_importers)


def run_import(args: argparse.Namespace) -> int:
    """Write the instance (or, with ``--workload``, the workload) of ``args.trace`` (module docstring)."""
    from mropt.importers.table import importer_info

    imp = importer_info(args.importer_name)
    parser: argparse.ArgumentParser = args.parser
    workload = bool(getattr(args, "workload", False))
    output, other = (imp.workload, imp.output) if workload else (imp.output, imp.workload)
    assert output is not None
    names = set(output.fields()) | (set(other.fields()) if other is not None else set())
    given = given_params(parser, args, names)
    for name in given:
        if name not in output.fields():
            rule = "is not for --workload" if workload else "needs --workload"
            raise InputError(f"{imp.command}: option '{option_flag(parser, name)}' {rule}")
    instance = output.make(args.trace, **given)
    write_text(instance_to_json(instance), args.output)
    if args.output not in (None, "-"):  # what the trace became, on stderr (stdout stays the file's, or empty)
        print(f"mropt: wrote {args.output}: {describe(instance)}", file=sys.stderr)
    return 0


def describe(instance: Any) -> str:
    """``5,894 jobs, 755,983 tasks on 600 nodes``: the size of an imported instance, in one phrase."""
    if instance.kind == "workload":
        return f"a workload of {len(instance.jobs):,} jobs, {instance.n_tasks:,} tasks on {instance.n_nodes:,} nodes"
    items = "users" if instance.kind == "fairness" else "jobs"
    article = "an" if instance.kind[0] in "aeiou" else "a"
    return f"{article} {instance.kind} instance of {instance.n:,} {items}"


def run_importers(args: argparse.Namespace) -> int:
    """One line per importer: name, what it makes, its command, summary; ``--params``: every parameter."""
    from mropt.importers.table import importers

    found = list(importers().values())
    width = max((len(i.name) for i in found), default=0)
    for imp in found:
        makes = ", ".join([o.kind for o in imp.outputs()] + (["history"] if imp.history is not None else []))
        command = f" (mropt {imp.command})" if imp.command else ""
        print(f"{imp.name.ljust(width)}  {makes:<28}  {imp.summary}{command}")
        if args.params:
            main = imp.output.fields() if imp.output is not None else {}
            extra = imp.workload.fields() if imp.workload is not None else {}
            merged = {**main, **{k: v for k, v in extra.items() if k not in main}}  # the first declaration
            for name, decl in merged.items():
                notes = ["window"] if name in imp.windows else []
                if extra and name not in extra:
                    notes.append("not with --workload")
                elif name not in main:
                    notes.append("--workload only")
                note = f" [{', '.join(notes)}]" if notes else ""
                print(f"{'':{width}}    {name}: {decl.describe()}{note}")
    return 0
