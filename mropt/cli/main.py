"""Entry point of the ``mropt`` console script."""

from __future__ import annotations

import argparse
import sys
import typing
from collections.abc import Sequence

from mropt._version import __version__
from mropt.cli import demo, fairness, generate, harness, history, importers, simulate, solve
from mropt.model.errors import InputError

#: Modules that add subcommands, in the order ``mropt --help`` lists them.
COMMAND_MODULES = (generate, importers, fairness, solve, simulate, history, harness, demo)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, with its errors on one line as :class:`InputError`'s (README, "Input errors").

    ``mropt: error: generate admission: argument --seed: must be ..., got -1`` and exit 2, rather
    than the usage text and then the error; ``--help`` still shows the usage. Subparsers are of
    this class too (``add_subparsers`` makes its parsers of the parent's class).
    """

    def error(self, message: str) -> typing.NoReturn:
        where = self.prog.partition(" ")[2]
        self.exit(2, f"mropt: error: {where + ': ' if where else ''}{' '.join(message.split())}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mropt",
        description="Optimisation research on cluster (MapReduce) scheduling: paper heuristics, "
        "exact baselines and their gaps.",
    )
    parser.add_argument("--version", action="version", version=f"mropt {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
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
