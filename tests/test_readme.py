"""Every example in README.md really runs: one test per code block, named after its section.

``sh`` blocks: every ``mropt`` line exits 0 (``make`` lines name a Makefile target); the ``python``
block runs; the ``json`` block is a valid instance. Ids are the section heading and the block's index
in it (``gap-studies-1``); run one block with ``pytest tests/test_readme.py -k gap-studies-1``.
Commands that need ``../shared`` skip, saying which, when it is absent (see ``readme_examples``).
"""

from __future__ import annotations

import re

import pytest

import readme_examples
from readme_examples import ROOT, Block, Workspace, blocks, commands, session_workspace


@pytest.fixture(scope="session")
def readme_workspace(tmp_path_factory) -> Workspace:
    return session_workspace(tmp_path_factory)


def test_readme_has_examples():
    assert blocks("python"), "README.md has no python example"
    assert any(b.commands for b in blocks("sh")), "README.md has no mropt example"


def test_without_shared_a_command_that_reads_what_a_shared_command_writes_skips(tmp_path, monkeypatch):
    """``history import history.duckdb ... ../shared/...`` skips without ``../shared``,
    and so do the commands reading ``history.duckdb`` (as an argument or in ``--param history=...``),
    before anything runs; they used to run and fail on the missing database."""
    monkeypatch.setattr(readme_examples, "SHARED", tmp_path / "no-shared")
    (importer,) = [c for c in commands() if c.text.startswith("history import ")]
    assert "history.duckdb" in importer.writes and "history.duckdb" not in importer.outputs  # no golden of it
    readers = [c for c in commands() if c != importer and "history.duckdb" in c.reads]
    assert len(readers) >= 3, [c.text for c in readers]  # query, report, simulate --policy hei
    workspace = Workspace(tmp_path / "work")
    for command in readers:
        with pytest.raises(pytest.skip.Exception, match="history import history.duckdb"):
            workspace.prepare(command)
    assert workspace.results == {}  # nothing ran
    # with the folder present, the reader's missing input is the importer's to write
    monkeypatch.setattr(readme_examples, "SHARED", tmp_path)
    assert importer in workspace.missing_producers(readers[0])


@pytest.mark.slow
@pytest.mark.parametrize("block", blocks("sh"), ids=str)
def test_shell_block(block: Block, readme_workspace: Workspace):
    lines = [line.split("#")[0].strip() for line in block.code.splitlines()]
    lines = [line for line in lines if line]
    makefile = (ROOT / "Makefile").read_text()
    for line in lines:
        if line.startswith("make "):
            for target in line.split()[1:]:
                assert re.search(rf"^{re.escape(target)}:", makefile, re.MULTILINE), (
                    f"README block {block.id}: `{line}` names no Makefile target {target!r}"
                )
        else:
            assert line.startswith("mropt "), f"README block {block.id}: `{line}` is neither mropt nor make"
    for command in block.commands:
        readme_workspace.run(command)


#: python blocks that run a gap study (worker processes, a report): seconds, so marked slow
SLOW_PYTHON = ("gap-studies-",)


@pytest.mark.parametrize(
    "block",
    [pytest.param(b, marks=pytest.mark.slow) if b.id.startswith(SLOW_PYTHON) else b for b in blocks("python")],
    ids=str,
)
def test_python_block(block: Block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = compile("\n" * block.line + block.code, str(ROOT / "README.md"), "exec")
    exec(code, {"__name__": "readme"})


@pytest.mark.parametrize("block", blocks("json"), ids=str)
def test_json_block(block: Block, tmp_path):
    import mropt

    path = tmp_path / "instance.json"
    path.write_text(block.code)
    instance = mropt.load_instance(path)
    assert instance.n == len(re.findall(r'"id":', block.code)), f"README block {block.id}"
