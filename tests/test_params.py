"""Typed method parameters: declared once, read by solve, the CLI and the harness, and listed by
``--params`` (``mropt importers``, ``methods``, ``policies``) with each default said once."""

from __future__ import annotations

import inspect
import re

import pytest

import mropt
from mropt.importers.table import importers
from mropt.model.errors import InputError
from mropt.registry import Param, get_method, methods, register

from cli_capture import run_cli, run_completed

#: the word "default" as a statement of one (not the Fair pool named 'default')
DEFAULT_WORD = re.compile(r"(?<!')\bdefault\b(?!')")


def test_every_declaration_matches_the_function_signature() -> None:
    """Each declared parameter is a keyword of the function, with the declared default."""
    for m in methods():
        sig = inspect.signature(m.func).parameters
        for name, decl in m.params.items():
            assert name in sig, (m.name, name)
            assert sig[name].default == decl.default, (m.name, name, sig[name].default, decl.default)
            assert decl.check(m.name, name, decl.default) == decl.default, (m.name, name)


@pytest.mark.parametrize(
    "value,ok",
    [(8, True), (8.0, True), (0, True), (-1, False), ("8", False), (8.5, False), (True, False), (float("nan"), False)],
)
def test_values_are_checked_against_type_and_range(value: object, ok: bool) -> None:
    inst = mropt.generate_admission(seed=1, jobs=6)
    if ok:
        assert mropt.solve(inst, "amb", beam=value).status == "feasible"
    else:
        with pytest.raises(InputError, match=r"method 'amb': parameter 'beam' must be an integer >= 0, got"):
            mropt.solve(inst, "amb", beam=value)


def test_choices_are_named_in_the_error() -> None:
    decl = get_method("drf").params["mode"]
    with pytest.raises(InputError, match="must be one of text, listing, got 'fast'"):
        decl.check("drf", "mode", "fast")


def test_cli_rejects_a_bad_value_before_running(tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "inst.json"
    mropt.save_instance(mropt.generate_admission(seed=1, jobs=5), path)
    out = run_completed("solve", path, "--method", "amb", "--param", "beam=x")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == "mropt: error: method 'amb': parameter 'beam' must be an integer >= 0, got 'x'"


def test_undeclared_parameters_cannot_be_registered() -> None:
    with pytest.raises(TypeError, match="registry.Param"):
        register("test-undeclared", kind="admission", summary="-", params={"x": "help"})  # type: ignore[dict-item]


def test_describe_names_type_default_and_range() -> None:
    assert Param(int, 16, "kept orders", minimum=0).describe() == "an integer >= 0; default 16: kept orders"


def test_every_method_has_a_docstring_citing_its_paper() -> None:
    """CONTRIBUTING.md's citation rule: a one-line docstring naming the paper's section or equation."""
    for m in methods():
        if not m.func.__module__.startswith("mropt."):
            continue  # test-only methods other tests register in this process
        first = (m.func.__doc__ or "").strip().splitlines()
        assert first, m.name
        assert any(word in first[0] for word in ("sec.", "eq.", "Algorithm", "Table")), (m.name, first[0])


def parameter_lines(*argv: str) -> list[str]:
    r = run_cli(*argv)
    assert r.code == 0, r.err
    lines = [line.strip() for line in r.out.splitlines() if re.match(r"\s{4,}[a-z0-9_]+: ", line)]
    assert lines, r.out
    return lines


@pytest.mark.parametrize("command", ["importers", "methods", "policies"])
def test_each_parameter_states_its_default_once_and_never_as_none(command: str) -> None:
    """``mropt importers --params`` printed ``jobs: an integer; default None: ...`` for SWIM and
    ``map_slots_per_node: an integer; default 2: default 2``: the importers' help texts state their default
    (argparse shows none), and ``Param.describe`` added it again."""
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
