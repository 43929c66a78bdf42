"""The README's CLI examples print, and write, exactly what they printed before: golden files.

Every ``mropt`` line of the README (see ``GOLDEN_LEFT_OUT`` for the few that are not) runs as a
subprocess; its stdout, and every file it writes with ``-o``, are compared byte for byte with
``tests/golden/<command slug>.stdout`` and ``tests/golden/<command slug>.<file name>`` (the name
without its folder: ``-o results/paper.json`` gives ``<command slug>.paper.json``). Only
run-dependent fields are masked first (:func:`mask`): the value of ``"wall_time"`` in JSON, the
``wall time (s)`` row of ``solve``'s table, and version strings (``"version"`` in JSON, the version
numbers of the ``solver`` row). A command whose golden changes changes the command-line contract.

Regenerate with ``MROPT_UPDATE_GOLDENS=1 pytest tests/test_golden.py`` (writes instead of comparing,
then review ``git diff tests/golden``). That is for deliberate contract changes only, each recorded
in CHANGELOG.md; a golden that changes by accident is a regression to fix, not to re-record.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

import pytest

from doc_examples import Command, Workspace, commands, session_workspace, slug

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("MROPT_UPDATE_GOLDENS") == "1"

#: README commands without a golden, and why (matched on the command's first words)
GOLDEN_LEFT_OUT = {
    "gap ": "a gap study: long, and its tables report measured times",
    "results ": "a gap study's runs: wall times, host, finish times",
    "report ": "a gap study's report: measured times",
    "simulate results/amb-static.json --policy fair --seed 1 --out ": "a folder of Parquet tables (tests/sim/test_sim_outputs.py)",
    "simulate results/late.json --policy fair --seed 1 --out ": "a folder of Parquet tables (tests/sim/test_sim_outputs.py)",
}

WALL_TIME = "<wall_time>"
VERSION = "<version>"


def mask(text: str) -> str:
    """Mask run-dependent fields: wall times and versions (JSON and ``solve``'s field/value table)."""
    text = re.sub(r'("wall_time": )-?[0-9][0-9.eE+-]*', rf'\1"{WALL_TIME}"', text)
    text = re.sub(r'("version": )"[^"]*"', rf'\1"{VERSION}"', text)
    lines = text.split("\n")
    if len(lines) > 2 and re.fullmatch(r"field +value", lines[0]) and re.fullmatch(r"-+  -+", lines[1]):
        start = lines[1].index("  ") + 2  # the value column
        for i, line in enumerate(lines[2:], start=2):
            if line.startswith("wall time (s) "):
                lines[i] = line[:start] + WALL_TIME
            elif line.startswith("solver "):
                lines[i] = line[:start] + re.sub(r"\d+(?:\.\d+)+", VERSION, line[start:])
        # the separator is as wide as the widest value: recompute it from the masked values
        width = max([len("value")] + [len(line[start:]) for line in lines[2:] if len(line) > start])
        lines[1] = lines[1][:start] + "-" * width
    return "\n".join(lines)


def golden_commands() -> list[Command]:
    """The README's commands (docs/*.md's run in test_docs_commands.py, with no golden)."""
    return [c for c in commands() if c.doc == "README.md" and not c.text.startswith(tuple(GOLDEN_LEFT_OUT))]


@pytest.fixture(scope="session")
def readme_workspace(tmp_path_factory) -> Workspace:
    return session_workspace(tmp_path_factory)


def compare(command: Command, name: str, actual: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(actual)
        return
    assert path.exists(), (
        f"{command.where}\nhas no golden file {path.name}: record it with MROPT_UPDATE_GOLDENS=1 (see this module)"
    )
    expected = path.read_text()
    if actual != expected:
        diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(), f"golden/{name}", "now", lineterm="")
        pytest.fail(f"{command.where}\n{name} differs from tests/golden/{name}:\n" + "\n".join(list(diff)[:60]))


def test_masking():
    from mropt.harness.table import render

    def table(wall: object, solver: str) -> str:
        return render(["field", "value"], [["method", "milp-cbc"], ["wall time (s)", wall], ["solver", solver]])

    assert mask(table(12.3456, "CBC (PuLP COIN_CMD) 3.3.2")) == table(WALL_TIME, f"CBC (PuLP COIN_CMD) {VERSION}")
    assert mask(table(0.1, "mropt 10.20.30")) == table(WALL_TIME, f"mropt {VERSION}")
    assert mask('{"wall_time": 1.5e-05,\n "solver": {"version": "9.15"}, "model_version": 1}') == (
        f'{{"wall_time": "{WALL_TIME}",\n "solver": {{"version": "{VERSION}"}}, "model_version": 1}}'
    )


def test_goldens_belong_to_readme_commands():
    """Every golden file is a current README command's, so a removed example leaves none behind."""
    names = {slug(c.text) for c in golden_commands()}
    stale = sorted(p.name for p in GOLDEN.iterdir() if p.name.split(".")[0] not in names)
    assert not stale, f"golden files of no README command (delete them): {stale}"


@pytest.mark.slow
@pytest.mark.parametrize("command", golden_commands(), ids=lambda c: f"{c.block}:{slug(c.text)}")
def test_golden(command: Command, readme_workspace: Workspace):
    result = readme_workspace.run(command)
    name = slug(command.text)
    compare(command, f"{name}.stdout", mask(result.stdout))
    for out in command.outputs:
        assert out in result.files, f"{command.where}\nwrote no {out}"
        compare(command, f"{name}.{Path(out).name}", mask(result.files[out]))
