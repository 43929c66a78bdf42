"""Every integer option of ``mropt`` is parsed by :func:`mropt.cli.common.int_type`: bounded, one line.

A plain ``type=int`` accepted ``--workers 0`` (a study with no worker), ``--resamples 0`` (an
empty bootstrap) and ``--seed -1`` (numpy's traceback) and let them fail later, far from the flag.
"""

from __future__ import annotations

import argparse

import pytest

from mropt.cli.main import build_parser

from cli_capture import assert_input_error, run_cli


def _options(parser: argparse.ArgumentParser, where: str = "mropt"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, f"{where} {name}")
        elif action.option_strings:
            yield where, action


def test_no_option_is_a_plain_int():
    plain = [f"{where} {'/'.join(a.option_strings)}" for where, a in _options(build_parser()) if a.type is int]
    assert not plain, f"integer options without bounds (use mropt.cli.common.int_type): {plain}"


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (("solve", "x.json", "--threads", "0"), ("argument --threads", "[1, 2^63 - 1]", "0")),
        (("solve", "x.json", "--seed=-1"), ("argument --seed", "[0, 2^63 - 1]", "-1")),
        (("report", "x", "--resamples", "0"), ("argument --resamples", "[1, 1,000,000]", "0")),
        (("report", "x", "--seed", "1.5"), ("argument --seed", "'1.5'")),
        (("gap", "x.toml", "--workers", "0"), ("argument --workers", "0")),
    ],
)
def test_out_of_range_is_one_line_at_parse_time(argv, words):
    assert_input_error(run_cli(*argv), *words)
