"""``--params`` listings say each parameter's default once, plainly: never ``default None``.

``mropt importers --params`` printed ``jobs: an integer; default None: ...`` for SWIM and
``map_slots_per_node: an integer; default 2: default 2``: the importers' help texts state their
default for ``import-swim --help`` (argparse shows none), and ``Param.describe`` added it again.
"""

from __future__ import annotations

import re

import pytest

from mropt.importers.table import importers
from mropt.registry import Param

from cli_capture import run_cli

#: the word "default" as a statement of one (not the Fair pool named 'default')
DEFAULT_WORD = re.compile(r"(?<!')\bdefault\b(?!')")


def parameter_lines(*argv: str) -> list[str]:
    r = run_cli(*argv)
    assert r.code == 0, r.err
    lines = [line.strip() for line in r.out.splitlines() if re.match(r"\s{4,}[a-z0-9_]+: ", line)]
    assert lines, r.out
    return lines


@pytest.mark.parametrize("command", ["importers", "methods", "policies"])
def test_each_parameter_states_its_default_once_and_never_as_none(command: str) -> None:
    for line in parameter_lines(command, "--params"):
        assert "None" not in line, line
        assert len(DEFAULT_WORD.findall(line)) <= 1, line


def test_swim_parameters_read_plainly() -> None:
    out = run_cli("importers", "--params").out
    swim = out[out.index("\nswim ") : out.index("\nalibaba ")].splitlines()[2:]
    lines = {line.strip().split(":")[0]: line.strip() for line in swim}
    assert lines["map_slots_per_node"] == "map_slots_per_node: an integer: map slots of each node (default 2)"
    assert "(default: no time limit;" in lines["duration"]
    assert "(default 30 unless --duration is given;" in lines["jobs"]


def test_the_default_a_help_text_states_is_the_declared_one() -> None:
    """Where ``describe`` leaves the default to the help, the help's number is the field's default."""
    checked = 0
    for imp in importers().values():
        for output in (imp.output, imp.workload):
            for name, decl in (output.fields() if output is not None else {}).items():
                stated = re.search(r"\(default (-?[0-9.]+)(?=[:;,) ])(?! [KMG]iB)", decl.help)
                if stated is None or isinstance(decl.default, bool) or decl.default is None:
                    continue
                assert float(stated.group(1)) == decl.default, (imp.name, name, decl.help)
                assert f"; default {decl.default!r}" not in decl.describe()
                checked += 1
    assert checked >= 20


def test_describe_of_a_parameter_without_a_stated_default() -> None:
    assert Param(int, 16, "kept orders", minimum=0).describe() == "an integer >= 0; default 16: kept orders"
    assert Param(int, None, "first N jobs (default: all)").describe() == "an integer: first N jobs (default: all)"
    assert Param(float, 2.0, "rate (default 2)").describe() == "a number: rate (default 2)"
