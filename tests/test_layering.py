"""The one direction of imports (docs/architecture.md): a module imports only its own
package and the layers below it, and no problem package imports another.

    model  <-  backends, registry  <-  admission | fairness | priority, instances  <-  history
           <-  sim | importers  <-  harness  <-  cli

``mropt/__init__.py`` is the facade above all of them. Every ``import`` and
``from ... import`` of every module is read (module level and inside functions), and
so is every string handed to ``importlib.import_module``.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "mropt"

#: package (second component of the module name) -> layer; higher may import lower
LAYERS = {
    "_version": 0,
    "registering": 0,  # the loader the facade gives the registry (imports nothing of mropt)
    "model": 0,
    "backends": 1,
    "registry": 1,
    "admission": 2,
    "fairness": 2,
    "priority": 2,
    "instances": 2,
    "history": 3,
    "sim": 4,
    "importers": 4,
    "harness": 5,
    "cli": 6,
}
#: packages of one layer that must not import each other (problem packages are siblings; so are the
#: simulator and the trace importers)
SIBLINGS_FORBIDDEN = {"admission", "fairness", "priority", "instances", "importers"}


def _package(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "mropt":
        return None
    return parts[1] if len(parts) > 1 else ""


def imported_modules(source: str) -> list[str]:
    """Absolute mropt module names imported by ``source`` (imports and import_module strings)."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
            if node.module == "mropt":
                out += [f"mropt.{a.name}" for a in node.names]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            out.append(node.args[0].value)
    return [m for m in out if m == "mropt" or m.startswith("mropt.")]


def violations(path: pathlib.Path, source: str) -> list[str]:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    own = parts[1] if len(parts) > 1 else ""
    if own == "":  # mropt/__init__.py: the facade may import everything
        return []
    bad = []
    for target in imported_modules(source):
        pkg = _package(target)
        if pkg is None or pkg == own:
            continue
        if pkg == "" or pkg not in LAYERS:
            bad.append(f"{'.'.join(parts)} imports {target} (the facade or an unknown package)")
        elif LAYERS[pkg] > LAYERS[own]:
            bad.append(f"{'.'.join(parts)} imports {target} (layer {LAYERS[pkg]} above its own {LAYERS[own]})")
        elif LAYERS[pkg] == LAYERS[own] and (own in SIBLINGS_FORBIDDEN or pkg in SIBLINGS_FORBIDDEN):
            bad.append(f"{'.'.join(parts)} imports {target} (a sibling package)")
    return bad


def test_every_package_has_a_layer() -> None:
    packages = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    packages |= {p.stem for p in ROOT.glob("*.py") if p.stem != "__init__"}
    assert packages <= set(LAYERS), sorted(packages - set(LAYERS))


def test_imports_go_one_way() -> None:
    bad = [v for path in sorted(ROOT.rglob("*.py")) for v in violations(path, path.read_text(encoding="utf-8"))]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    "source,where",
    [
        ("from mropt.cli import table", "harness/report.py"),
        ("import mropt.cli.table", "harness/report.py"),
        ("from mropt.admission.milp import cbc_path", "fairness/exact.py"),
        ("from mropt import solve", "admission/amb.py"),
        ("importlib.import_module('mropt.admission')", "registry.py"),
        ("def f():\n    from mropt.harness import store\n", "model/io.py"),
    ],
)
def test_the_check_catches_an_upward_or_sibling_import(source: str, where: str) -> None:
    assert violations(ROOT / where, source)
