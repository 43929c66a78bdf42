"""Typed method parameters: declared once, read by solve, the CLI and the harness."""

from __future__ import annotations

import inspect

import pytest

import mropt
from mropt.model.errors import InputError
from mropt.registry import Param, get_method, methods, register

from cli_capture import run_completed


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
