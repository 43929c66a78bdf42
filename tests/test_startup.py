"""Start-up is cheap (issue 31, item 5): structurally, not by the clock.

``mropt --version`` and ``mropt --help`` import no solver, numpy, pandas, pyarrow or DuckDB;
``import mropt`` neither, while ``dir(mropt)`` lists the API and the registry still finds every
method on its first lookup (``mropt.registering``); a command imports its own module only.
``mropt --help`` lists the commands from ``mropt.cli.main.COMMANDS``, which must say what the
command modules' parsers say. The times: ``benchmarks/bench_startup.py``.
"""

from __future__ import annotations

import argparse
import importlib

from fresh_interpreter import loaded_after

from mropt.cli import main

#: what start-up must not import (each takes tens to hundreds of milliseconds)
HEAVY = ("ortools", "pulp", "highspy", "pandas", "numpy", "pyarrow", "duckdb", "scipy", "matplotlib")


def _loaded_after(code: str) -> dict[str, object]:
    """Run ``code`` in a fresh interpreter; the heavy modules it left in ``sys.modules``, and ``result``."""
    heavy, result = loaded_after(code, HEAVY)  # (a package is in sys.modules when any of its modules is)
    return {"heavy": heavy, "result": result}


def test_version_help_and_import_load_nothing_heavy() -> None:
    for argv in (["--version"], ["--help"]):
        code = (
            "import mropt.cli.main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            "    try:\n"
            f"        mropt.cli.main.main({argv!r})\n"
            "    except SystemExit:\n"
            "        pass\n"
            "result = out.getvalue()\n"
        )
        found = _loaded_after(code)
        assert found["heavy"] == [], (argv, found["heavy"])
        assert "mropt 0.1" in found["result"] or "COMMAND" in found["result"]
    found = _loaded_after("import mropt\nresult = dir(mropt)\n")
    assert found["heavy"] == [], found["heavy"]
    api = set(found["result"])
    study = {"load_experiment", "run_study", "results_frame", "write_report"}
    simulation = {"simulate", "load_run", "to_workload"}
    assert study | simulation | {"solve", "verify", "methods", "generate_admission", "__version__"} <= api


def test_a_command_imports_its_own_module_only() -> None:
    code = (
        "import mropt.cli.main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        mropt.cli.main.main(['methods', '--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "result = sorted(m for m in sys.modules if m.startswith('mropt.cli.'))\n"
    )
    commands = {f"mropt.cli.{module}" for module in main.COMMANDS}
    assert commands & set(_loaded_after(code)["result"]) == {"mropt.cli.solve"}


def test_the_registry_loads_the_problem_packages_on_its_first_lookup() -> None:
    """``from mropt.registry import methods`` finds every method, in the order of the kinds,
    whichever problem package was imported first."""
    code = (
        "import mropt.priority\n"
        "import mropt.fairness\n"
        "from mropt.registry import kinds, methods\n"
        "result = [kinds(), [m.name for m in methods()]]\n"
    )
    kinds, names = _loaded_after(code)["result"]
    assert kinds == ["admission", "fairness", "priority"]
    # the list a fresh process gets with no package imported first (not this test process's
    # registry: other tests register methods of their own in it)
    plain = "from mropt.registry import methods\nresult = [m.name for m in methods()]\n"
    assert names == _loaded_after(plain)["result"]
    assert {"amb", "milp-highs", "drf", "drf-cpsat", "mpsa"} <= set(names)


def _declared(parser: argparse.ArgumentParser) -> list[tuple[str, str | None]]:
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [(a.dest, a.help) for a in sub._choices_actions]


def test_the_command_list_is_what_the_modules_declare() -> None:
    """``COMMANDS`` (what ``mropt --help`` lists without importing the modules) is each module's own
    parser's commands and help, in order; the lazy ``--help`` is the full parser's, character for character."""
    for module, commands in main.COMMANDS.items():
        parser = argparse.ArgumentParser()
        importlib.import_module(f"mropt.cli.{module}").add_parsers(parser.add_subparsers())
        assert _declared(parser) == list(commands), module
    full = main.build_parser()
    lazy = main.build_parser([])
    assert lazy.format_help() == full.format_help()
    assert _declared(lazy) == _declared(full)
    for command in ("gap", "simulate", "import-swim"):
        modules = main.command_modules([command, "--help"])
        assert modules is not None and len(modules) == 1
        (sub,) = [a for a in main.build_parser(modules)._actions if isinstance(a, argparse._SubParsersAction)]
        assert sub.choices[command].format_help() == _subcommand_help(full, command)
    assert main.command_modules(["--version"]) == [] and main.command_modules(["import-toy"]) is None


def _subcommand_help(parser: argparse.ArgumentParser, command: str) -> str:
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sub.choices[command].format_help()
