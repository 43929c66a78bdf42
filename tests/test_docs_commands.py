"""Every example in README.md and docs/*.md really runs: one test per command line, python block,
JSON block and experiment file, named after its document and section (``tests/doc_examples.py``).

Shell lines: ``mropt`` runs and exits 0, writing only under ``results/``; ``make`` names a Makefile
target; ``python -m pytest`` names existing paths and declared markers, and with ``-k`` collects at
least one test; ``python -c`` runs; ``mkdir -p`` makes a folder under ``results/``; ``git`` names
existing paths. Python blocks run in an empty folder (with ``results/``) and write only under
``results/``; JSON blocks are valid instances or JSON; TOML experiment files pass ``mropt gap
--check`` where the files and folders they name hold a small workload. Run one block with
``pytest tests/test_docs_commands.py -k gap-studies-1``. Commands that need ``../shared`` skip,
saying which, when it is absent. CONTRIBUTING.md ("Documentation that runs") gives the conventions.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import doc_examples
from doc_examples import RESULTS, ROOT, SHELL, Block, ShellLine, Workspace, blocks, commands, session_workspace

#: the kinds of shell line that start a process (seconds each), so marked slow
SLOW_KINDS = ("mropt", "python-c")
#: python blocks that run a gap study (worker processes, a report): seconds, so marked slow
SLOW_PYTHON = ("gap-studies-",)
PROGRAMS = "mropt, make, python -m pytest, python -c, mkdir -p results/..., git"


@pytest.fixture(scope="session")
def docs_workspace(tmp_path_factory) -> Workspace:
    return session_workspace(tmp_path_factory)


def test_docs_have_examples():
    assert blocks("python", doc="README.md"), "README.md has no python example"
    assert any(b.commands for b in blocks(*SHELL, doc="README.md")), "README.md has no mropt example"
    assert any(b.doc.startswith("docs/") for b in blocks(*SHELL)), "docs/*.md have no shell example"


def test_skip_markers_say_why():
    """A ``<!-- docs-test: skip REASON -->`` marker without a reason is refused."""
    unexplained = [f"{b.doc} line {b.line} ({b.id})" for b in doc_examples.doc_blocks() if b.skip == ""]
    assert not unexplained, f"docs-test skip markers without a reason: {unexplained}"


def test_parse_reads_markers_languages_and_console_prompts(tmp_path, monkeypatch):
    monkeypatch.setattr(doc_examples, "ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# Page\n\n<!-- docs-test: skip, needs a SLURM cluster -->\n\n```sh\nsbatch job.sh\n```\n\n"
        "<!-- docs-test: skip, not this one -->\ntext between\n```bash\nX=1 mropt methods \\\n  --json  # c\n```\n"
        "## Two: x\n```console\n$ mropt policies\nfifo ...\n```\n    mropt simulate FILE --policy NAME\n"
    )
    first, second, third = doc_examples.parse(page)
    assert (first.id, first.skip, first.language) == ("page-page-1", "needs a SLURM cluster", "sh")
    assert (second.id, second.skip, second.language) == ("page-page-2", None, "bash")
    (line,) = second.shell_lines
    assert (line.text, line.env, line.kind, line.line) == ("mropt methods --json", (("X", "1"),), "mropt", 12)
    assert line.command.text == "methods --json" and line.command.doc == "docs/page.md"
    assert third.id == "page-two-1" and [s.text for s in third.shell_lines] == ["mropt policies"]


def test_documented_commands_write_under_results():
    """The tour leaves nothing in the checkout but ``results/`` (git-ignored): every file or folder a
    documented command writes is under it."""
    outside = [c.where for c in commands() for out in c.writes if not out.startswith(f"{RESULTS}/")]
    assert not outside, "documented commands writing outside results/:\n" + "\n".join(outside)
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert f"/{RESULTS}/" in ignored or f"{RESULTS}/" in ignored, ".gitignore does not ignore results/"


def test_without_shared_a_command_that_reads_what_a_shared_command_writes_skips(tmp_path, monkeypatch):
    """``history import results/history.duckdb ... ../shared/...`` skips without ``../shared``,
    and so do the commands reading its database (as an argument or in ``--param history=...``),
    before anything runs; they used to run and fail on the missing database."""
    monkeypatch.setattr(doc_examples, "SHARED", tmp_path / "no-shared")
    (importer,) = [c for c in commands() if c.text.startswith("history import ")]
    database = importer.writes[-1]
    assert database.endswith("history.duckdb") and database not in importer.outputs  # no golden of it
    readers = [c for c in commands() if c != importer and database in c.reads]
    assert len(readers) >= 3, [c.text for c in readers]  # query, report, simulate --policy hei
    workspace = Workspace(tmp_path / "work")
    for command in readers:
        with pytest.raises(pytest.skip.Exception, match=f"history import {database}"):
            workspace.prepare(command)
    assert workspace.results == {}  # nothing ran
    # with the folder present, the reader's missing input is the importer's to write
    monkeypatch.setattr(doc_examples, "SHARED", tmp_path)
    assert importer in workspace.missing_producers(readers[0])


#: an inline code span of prose (not a fence)
INLINE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(actions[0].choices) if actions else {}


def _synopses(text: str) -> list[str]:
    """The synopses of a document: each ``mropt ...`` line of a ```` ```text ```` block or of an
    indented block, joined with its indented continuation lines."""
    bodies = [m.group(1) for m in re.finditer(r"(?ms)^```text\n(.*?)^```", text)]
    bodies += [re.sub(r"(?m)^    ", "", m.group(0)) for m in re.finditer(r"(?m)(?<=\n\n)(?:    .*\n)+", text)]
    return [" ".join(m.group(0).split()) for body in bodies for m in re.finditer(r"(?m)^mropt .*(?:\n\s+.*)*", body)]


def _inline_problems(paths: list[Path]) -> list[str]:
    """The inline `` `mropt ...` `` spans of these documents' prose (fences left out) and their
    synopses (:func:`_synopses`) that name no command of ``mropt`` or an option their command lacks;
    placeholders and values are not checked."""
    from mropt.cli.main import build_parser

    root = build_parser()
    wrong = []
    for path in paths:
        text = path.read_text()
        prose = re.sub(r"(?ms)^```.*?^```", "", text)
        spans = [m.group(1) for m in INLINE_SPAN.finditer(prose) if re.match(r"mropt\s", m.group(1))]
        for span in spans + _synopses(text):
            words, parser = re.sub(r"[\"'\[\]|]", " ", span).split()[1:], root
            while words and words[0] in _subcommands(parser):
                parser = _subcommands(parser)[words.pop(0)]
            if parser is root and words and re.fullmatch(r"[a-z][a-z0-9-]*", words[0]):  # not `mropt ...`, `mropt CMD`
                wrong.append(f"{path.name}: `{span}`: no command {words[0]!r}")
            for option in (w.split("=")[0] for w in words if w.startswith("--") and len(w) > 2):
                if option not in parser._option_string_actions:
                    wrong.append(f"{path.name}: `{span}`: {parser.prog!r} has no option {option}")
    return wrong


def test_inline_commands_name_real_commands_and_options(tmp_path):
    """Every inline `` `mropt ...` `` of README.md and docs/*.md names a real command and options it has."""
    problems = _inline_problems(doc_examples.documents())
    assert not problems, "\n".join(problems)
    page = tmp_path / "page.md"
    page.write_text(
        "Run `mropt simulate W.json --node-wait 3` or `mropt gap FILE --check -j 2`, `mropt histroy report DB`,\n"
        "`mropt --version`, `mropt history report DB --by-sauce`.\n```sh\nmropt solve --nope\n```\n\n"
        "    mropt simulate FILE --policy NAME [--out DIR [--force]]\n                   [--untill T] [--mode a|b]\n\n"
        "```text\nmropt solve FILE --method NAME\n    [--jsn]\n```\n"
    )
    assert _inline_problems([page]) == [
        "page.md: `mropt simulate W.json --node-wait 3`: 'mropt simulate' has no option --node-wait",
        "page.md: `mropt histroy report DB`: no command 'histroy'",
        "page.md: `mropt history report DB --by-sauce`: 'mropt history report' has no option --by-sauce",
        "page.md: `mropt solve FILE --method NAME [--jsn]`: 'mropt solve' has no option --jsn",
        "page.md: `mropt simulate FILE --policy NAME [--out DIR [--force]] [--untill T] [--mode a|b]`: "
        "'mropt simulate' has no option --untill",
    ]


def _skip_marked(block: Block) -> None:
    if block.skip is not None:
        pytest.skip(f"{block.doc} block {block.id} is marked docs-test: skip ({block.skip})")


def _declared_markers() -> set[str]:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    return {m.split(":")[0].strip() for m in options["markers"]}


def _check_pytest(line: ShellLine) -> None:
    """Paths exist, ``-m`` names declared markers, and a ``-k`` selection collects a test."""
    args = line.words[3:]
    values = {args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-m", "-k", "-n", "-p", "--durations")}
    for arg in args:
        if not arg.startswith("-") and arg not in values:
            assert (ROOT / arg.split("::")[0]).exists(), f"{line.where}\nnames no file or folder {arg!r}"
    for expression in (args[i + 1] for i, a in enumerate(args[:-1]) if a == "-m"):
        unknown = set(re.findall(r"\w+", expression)) - {"and", "or", "not"} - _declared_markers()
        assert not unknown, f"{line.where}\nnames undeclared markers {sorted(unknown)} (pyproject.toml)"
    if "-k" in args:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, **dict(line.env)},
        )
        assert done.returncode == 0, f"{line.where}\nselects no test (pytest --collect-only):\n{done.stdout[-2000:]}"


def _shell_params() -> list:
    slow = [pytest.mark.slow]
    return [
        pytest.param(
            b, s, marks=slow if s.kind in SLOW_KINDS or (s.kind == "pytest" and "-k" in s.words) else (), id=str(s)
        )
        for b in blocks(*SHELL)
        for s in b.shell_lines
    ]


@pytest.mark.parametrize(("block", "line"), _shell_params())
def test_shell_line(block: Block, line: ShellLine, docs_workspace: Workspace):
    _skip_marked(block)
    kind, words = line.kind, line.words
    if kind == "mropt":
        docs_workspace.run(line.command)
    elif kind == "make":
        makefile = (ROOT / "Makefile").read_text()
        for target in words[1:]:
            assert re.search(rf"^{re.escape(target)}:", makefile, re.MULTILINE), (
                f"{line.where}\nnames no Makefile target {target!r}"
            )
    elif kind == "pytest":
        _check_pytest(line)
    elif kind == "python-c":
        done = subprocess.run(
            [sys.executable, *words[1:]], cwd=docs_workspace.path, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"{line.where}\nexited {done.returncode}\n{done.stderr}"
    elif kind == "mkdir":
        folders = [w for w in words[1:] if w != "-p"]
        assert folders and all(f == RESULTS or f.startswith(f"{RESULTS}/") for f in folders), (
            f"{line.where}\nmakes a folder outside {RESULTS}/"
        )
        for folder in folders:
            (docs_workspace.path / folder).mkdir(parents=True, exist_ok=True)
    elif kind == "git":
        for path in (w for w in words[2:] if not w.startswith("-")):
            assert (ROOT / path).exists(), f"{line.where}\nnames no file or folder {path!r}"
    else:
        pytest.fail(
            f"{line.where}\nruns none of {PROGRAMS}: show it in a ```text block, or put "
            "<!-- docs-test: skip, REASON --> before its block (CONTRIBUTING.md, 'Documentation that runs')"
        )


@pytest.mark.parametrize(
    "block",
    [pytest.param(b, marks=pytest.mark.slow) if b.id.startswith(SLOW_PYTHON) else b for b in blocks("python")],
    ids=str,
)
def test_python_block(block: Block, tmp_path, monkeypatch):
    _skip_marked(block)
    (tmp_path / RESULTS).mkdir()
    monkeypatch.chdir(tmp_path)
    code = compile("\n" * block.line + block.code, str(ROOT / block.doc), "exec")
    exec(code, {"__name__": "docs"})
    outside = sorted(p.name for p in tmp_path.iterdir() if p.name != RESULTS)
    assert not outside, f"{block.doc} block {block.id} wrote {outside} outside {RESULTS}/"


@pytest.mark.parametrize("block", blocks("json"), ids=str)
def test_json_block(block: Block, tmp_path):
    import mropt

    _skip_marked(block)
    data = json.loads(block.code)
    if isinstance(data, dict) and data.get("kind") in ("admission", "fairness", "priority", "workload"):
        path = tmp_path / "instance.json"
        path.write_text(block.code)
        instance = mropt.load_instance(path)
        if data["kind"] == "admission":
            assert instance.n == len(re.findall(r'"id":', block.code)), f"{block.doc} block {block.id}"


def _write_named_inputs(experiment: dict, folder: Path) -> None:
    """A small generated workload in every file and folder the experiment's instance blocks name."""
    from mropt.instances.workload_gen import generate_amb_static
    from mropt.model.io import instance_to_json

    sample = instance_to_json(generate_amb_static(seed=1, jobs=3))
    for spec in experiment.get("instances", []):
        named = [f"{spec['folder']}/sample.json"] if "folder" in spec else []
        for name in named + list(spec.get("files", [])):
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(sample)


@pytest.mark.parametrize("block", [pytest.param(b, marks=pytest.mark.slow) for b in blocks("toml")], ids=str)
def test_toml_block(block: Block, tmp_path):
    """An experiment file (``[[instances]]``) passes ``mropt gap --check``; any other TOML parses."""
    _skip_marked(block)
    data = tomllib.loads(block.code)
    if "instances" not in data:
        return
    if "../shared" in block.code and not doc_examples.SHARED.exists():
        pytest.skip(f"{doc_examples.SHARED} is absent: {block.doc} block {block.id} needs it")
    _write_named_inputs(data, tmp_path)
    path = tmp_path / "experiment.toml"
    path.write_text(block.code.replace("../shared", str(doc_examples.SHARED)))
    argv = [sys.executable, "-m", "mropt.cli.main", "gap", str(path), "--check"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (
        f"{block.doc} block {block.id} (line {block.line}): {shlex.join(argv[3:])}\n{done.stderr}"
    )
