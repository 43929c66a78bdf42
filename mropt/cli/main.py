"""Entry point of the ``mropt`` console script.

Start-up is cheap (``mropt --version`` and ``mropt --help`` import no solver, numpy or pandas:
``tests/test_startup.py``, ``benchmarks/bench_startup.py``): a command's module is imported only
when that command runs (:func:`build_parser`); ``mropt --help`` lists every command from
:data:`COMMANDS`, each with its one line of help.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import typing
from collections.abc import Sequence

from mropt._version import __version__

#: Each module of ``mropt.cli`` that adds commands (``add_parsers``), in the order ``mropt --help``
#: lists them, with the commands it adds and their one line of help, as its parser declares them:
#: enough to list and pick a command without importing any module. A new command goes into its
#: module and here; ``tests/test_startup.py`` checks the two agree.
COMMANDS: dict[str, tuple[tuple[str, str], ...]] = {
    "generate": (("generate", "generate a seeded instance (paper defaults)"),),
    "importers": (
        (
            "import-swim",
            "SWIM traces (Facebook 2009, six tab-separated columns): admission instances, workloads, job rows",
        ),
        (
            "import-alibaba",
            "Alibaba cluster trace v2017 batch_task.csv: fairness instances (DRF), workloads, task rows",
        ),
        ("importers", "list the trace importers: formats, what they make, their parameters"),
    ),
    "fairness": (("locality", "locality analysis of delay scheduling and DDRF (DDRF paper sec. 3.2, 4.2)"),),
    "solve": (
        ("methods", "list the registered methods"),
        ("solve", "solve an instance file with a registered method"),
        ("verify", "check a solution against its instance with independent code"),
    ),
    "simulate": (
        ("policies", "list the simulator's scheduling policies and speculation rules"),
        ("simulate", "run a scheduling policy on a workload (or an admission instance) in the cluster simulator"),
    ),
    "history": (
        ("history", "the job-history database: import traces and simulations, query it in SQL, report"),
        ("import-rumen", "turn Rumen JSON / Hadoop .jhist files into a simulator workload"),
    ),
    "harness": (
        ("gap", "run a gap study (an experiment file): every instance x method x profile x seed"),
        ("results", "print every row of a result folder"),
        (
            "report",
            "tables and plots of a `mropt gap` or `mropt simulate --out` folder (Markdown, HTML, CSV, LaTeX, PNG, PDF)",
        ),
    ),
    "demo": (("demo", "a small gap study: AMB against the exact optimum and Ideal (paper defaults)"),),
}
#: Modules that add subcommands, in the order ``mropt --help`` lists them.
COMMAND_MODULES = tuple(COMMANDS)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, with its errors on one line as :class:`InputError`'s (README, "Input errors").

    ``mropt: error: generate admission: argument --seed: must be ..., got -1`` and exit 2, rather
    than the usage text and then the error; ``--help`` still shows the usage. Subparsers are of
    this class too (``add_subparsers`` makes its parsers of the parent's class).
    """

    def error(self, message: str) -> typing.NoReturn:
        where = self.prog.partition(" ")[2]
        self.exit(2, f"mropt: error: {where + ': ' if where else ''}{' '.join(message.split())}\n")


def build_parser(modules: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``mropt`` parser: the commands of ``modules`` (names in :data:`COMMANDS`; all if None)
    with their options, every other command by name and help only (enough for ``--help``)."""
    parser = _Parser(
        prog="mropt",
        description="Optimisation research on cluster (MapReduce) scheduling: paper heuristics, "
        "exact baselines and their gaps.",
    )
    parser.add_argument("--version", action="version", version=f"mropt {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module, commands in COMMANDS.items():
        if modules is None or module in modules:
            importlib.import_module(f"mropt.cli.{module}").add_parsers(sub)
        else:
            for name, line in commands:
                sub.add_parser(name, help=line, add_help=False)
    return parser


def command_modules(argv: Sequence[str]) -> list[str] | None:
    """The module of the command ``argv`` names (none for ``--help`` or ``--version`` alone);
    None, every module, for a command :data:`COMMANDS` does not list (a plug-in importer's)."""
    command = next((a for a in argv if not a.startswith("-")), None)
    if command is None:
        return []
    found = [module for module, commands in COMMANDS.items() if command in (name for name, _ in commands)]
    return found or None


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(command_modules(argv)).parse_args(argv)
    from mropt.model.errors import InputError

    try:
        return args.handler(args)
    except InputError as exc:
        print(f"mropt: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mropt: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
