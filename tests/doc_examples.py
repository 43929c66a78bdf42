"""The code blocks of README.md and docs/*.md, read once, for ``test_docs_commands.py`` and
``test_golden.py`` (not a test module).

What runs (CONTRIBUTING.md, "Documentation that runs"): fenced ``sh``, ``bash``, ``shell`` and
``console`` blocks (in ``console`` only the lines after ``$ ``), one test per line, ``python``
blocks, ``json`` blocks and ``toml`` experiment files. ``text`` blocks and indented blocks (a
synopsis with placeholders such as ``FILE``, a sample of output) are not run. A block right after
``<!-- docs-test: skip REASON -->`` (blank lines between allowed) is not run either; its tests skip
with REASON, which must be given.

A block's id is its section heading (``#`` or ``##``, up to the first ':' or '(') as a slug plus
its index among the section's code blocks, after the document's name for docs/*.md:
``the-command-line-2`` (README.md), ``testing-the-edit-loop-1`` (docs/testing.md). Documented
commands read and write files relative to one working folder, which starts with an empty
``results/`` (the README's ``mkdir -p results``) and in which nothing may be written outside
``results/`` (the tour leaves nothing else in a checkout): :class:`Workspace` runs, before a
command, the documented commands that write the files it reads (``results/paper.json`` before
``mropt solve results/paper.json ...``), so any block or command runs alone (``pytest -k
gap-studies``).

Commands that name ``../shared`` (the traces beside the clone, absent from the repository) skip with
the reason when that folder is absent, and so does every command that reads a file one of them
writes, directly or through other commands (``history query results/history.duckdb`` after
``history import results/history.duckdb ... ../shared/...``): a fresh clone without ``../shared``
skips them, it does not fail them. It is the repository's parent folder + ``shared``;
``MROPT_SHARED=/path/to/shared`` points elsewhere (a git worktree whose parent has none).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SHARED = Path(os.environ.get("MROPT_SHARED") or ROOT.parent / "shared")
#: the one folder documented commands write into (git-ignored)
RESULTS = "results"
#: fenced block languages whose lines are shell commands
SHELL = ("sh", "bash", "shell", "console")
#: ``<!-- docs-test: skip REASON -->`` before a block: not run, REASON reported
SKIP_MARK = re.compile(r"<!--\s*docs-test:\s*skip\b[\s,:]*(.*?)\s*-->")
#: examples name these repository folders relative to the checkout's root
REPO_FOLDERS = ("benchmarks/", "instances/", "solvers/")
#: options after which a command names a file or folder it writes
OUTPUT_OPTIONS = ("-o", "--out", "--output")
#: commands that write a file named by a positional argument: their first words -> the argument's index after them
POSITIONAL_OUTPUTS = {("history", "import"): 0}  # history import DB FILE...: writes DB
#: the ways a line calls mropt, the Python interpreter
MROPT = re.compile(r"^(?:(?:\.venv/bin/)?mropt|(?:\.venv/bin/)?python3? -m mropt)\s+")
PYTHON = ("python", "python3", ".venv/bin/python", ".venv/bin/python3")
#: ``NAME=VALUE`` words before a command: its environment
ENV_PREFIX = re.compile(r"^((?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)")
TIMEOUT = 600


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def documents() -> list[Path]:
    """README.md, then docs/*.md by name."""
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


@dataclass(frozen=True)
class Command:
    """One ``mropt ...`` line of a documented block."""

    block: str  # the block's id
    line: int  # its line number in the document
    text: str  # as written, without the leading 'mropt' and the trailing comment
    doc: str = "README.md"  # the document, relative to the repository

    @property
    def args(self) -> list[str]:
        return shlex.split(self.text)

    @property
    def needs_shared(self) -> bool:
        return any("../shared" in a for a in self.args)

    @property
    def outputs(self) -> list[str]:
        args = self.args
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a in OUTPUT_OPTIONS]

    @property
    def writes(self) -> list[str]:
        """Every file or folder it writes: its outputs, and the database of ``history import DB ...``."""
        args = self.args
        written = list(self.outputs)
        for words, index in POSITIONAL_OUTPUTS.items():
            positional = [a for a in args[len(words) :] if not a.startswith("-")]
            if tuple(args[: len(words)]) == words and len(positional) > index:
                written.append(positional[index])
        return written

    @property
    def reads(self) -> list[str]:
        """The arguments that may name a file it reads: each one, and the value of a ``name=value`` one
        (``--param history=results/history.duckdb``)."""
        return [part for a in self.args for part in dict.fromkeys((a, a.partition("=")[2])) if part]

    @property
    def where(self) -> str:
        return f"{self.doc} block {self.block} ({self.doc} line {self.line}): mropt {self.text}"

    def argv(self) -> list[str]:
        """The arguments with ``../shared`` and the repository folders made absolute."""
        args = [a.replace("../shared", str(SHARED)) for a in self.args]
        return [str(ROOT / a) if a.startswith(REPO_FOLDERS) else a for a in args]


@dataclass(frozen=True)
class ShellLine:
    """One command line of a shell block: its environment words, its words, what it calls."""

    doc: str
    block: str
    line: int
    text: str  # without the environment words and the trailing comment
    env: tuple[tuple[str, str], ...]

    @property
    def words(self) -> list[str]:
        return shlex.split(self.text)

    @property
    def kind(self) -> str:
        """``mropt``, ``make``, ``pytest`` (``python -m pytest``), ``python-c``, ``mkdir``, ``git`` or ``other``."""
        words = self.words
        if MROPT.match(self.text):
            return "mropt"
        if words[0] in PYTHON and words[1:3] == ["-m", "pytest"]:
            return "pytest"
        if words[0] in PYTHON and words[1:2] == ["-c"]:
            return "python-c"
        return words[0] if words[0] in ("make", "mkdir", "git") else "other"

    @property
    def command(self) -> Command:
        return Command(self.block, self.line, MROPT.sub("", self.text).strip(), self.doc)

    @property
    def where(self) -> str:
        return f"{self.doc} block {self.block} ({self.doc} line {self.line}): {self.text}"

    def __str__(self) -> str:
        return f"{self.block}:{slug(self.text)[:80]}"


@dataclass(frozen=True)
class Block:
    id: str
    section: str
    language: str
    line: int  # line number of the opening fence
    code: str
    doc: str = "README.md"
    skip: str | None = None  # the reason of a ``docs-test: skip`` marker ('' when it gives none)

    @property
    def shell_lines(self) -> list[ShellLine]:
        """The command lines (shell blocks): comments dropped, ``\\`` continuations joined, and in a
        ``console`` block only the lines after ``$ ``."""
        out: list[ShellLine] = []
        pending, start = "", 0
        for offset, raw in enumerate(self.code.splitlines(), start=1):
            if self.language == "console" and not pending:
                if not raw.startswith("$ "):
                    continue
                raw = raw[2:]
            text = re.sub(r"(^|\s)#.*$", "", raw).strip()
            if not pending:
                start = self.line + offset
            if text.endswith("\\"):
                pending += text[:-1].rstrip() + " "
                continue
            text, pending = (pending + text).strip(), ""
            if text:
                prefix = ENV_PREFIX.match(text)
                words = prefix.group(1).split() if prefix else []
                env = tuple((name, value) for name, _, value in (w.partition("=") for w in words))
                out.append(ShellLine(self.doc, self.id, start, ENV_PREFIX.sub("", text), env))
        return out

    @property
    def commands(self) -> list[Command]:
        return [s.command for s in self.shell_lines if s.kind == "mropt"]

    def __str__(self) -> str:
        return self.id


def parse(path: Path) -> tuple[Block, ...]:
    """The fenced code blocks of one Markdown document."""
    doc = path.relative_to(ROOT).as_posix()
    prefix = "" if path == README else f"{path.stem}-"
    blocks: list[Block] = []
    section, count, fence, skip = "", 0, None, None
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if fence is not None:
            if line.startswith("```"):
                language, start, body, reason = fence
                block_id = f"{prefix}{slug(section)}-{count}"
                blocks.append(Block(block_id, section, language, start, "\n".join(body) + "\n", doc, reason))
                fence = None
            else:
                fence[2].append(line)
        elif line.startswith("```"):
            count += 1
            fence = ((line[3:].split() or [""])[0], number, [], skip)
            skip = None
        elif mark := SKIP_MARK.search(line):
            skip = mark.group(1)
        elif re.match(r"#{1,2} ", line):
            section, count, skip = re.split(r"[:(]", line.lstrip("#").strip())[0].strip(), 0, None
        elif line.strip():
            skip = None  # a marker is the next block's only when nothing but blank lines follows it
    assert fence is None, f"{doc} has an unclosed code block"
    return tuple(blocks)


@cache
def doc_blocks() -> tuple[Block, ...]:
    blocks = tuple(b for path in documents() for b in parse(path))
    ids = [b.id for b in blocks]
    assert len(ids) == len(set(ids)), f"documentation block ids are not unique: {ids}"
    return blocks


def blocks(*languages: str, doc: str | None = None) -> list[Block]:
    """The blocks of these languages, of one document (``"README.md"``, ``"docs/testing.md"``) or all."""
    return [b for b in doc_blocks() if b.language in languages and doc in (None, b.doc)]


def shell_lines() -> list[ShellLine]:
    return [s for b in blocks(*SHELL) for s in b.shell_lines]


def commands() -> list[Command]:
    """Every ``mropt`` line of a shell block that is run (no ``docs-test: skip`` marker)."""
    return [c for b in blocks(*SHELL) if b.skip is None for c in b.commands]


def run_mropt(command: Command, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mropt.cli.main", *command.argv()],
        cwd=cwd,
        check=False,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )


def skip_without_shared(command: Command, needed_by: Command | None = None) -> None:
    if command.needs_shared and not SHARED.exists():
        why = f" (it writes a file that `mropt {needed_by.text}` needs)" if needed_by else ""
        pytest.skip(f"{SHARED} is absent: {command.where} needs it{why}")


@dataclass(frozen=True)
class Result:
    """What one documented command did: its exit status, stdout, stderr and the files it wrote."""

    returncode: int
    stdout: str
    stderr: str
    files: dict[str, str]


class Workspace:
    """One working folder for documented commands, each run at most once; writes the inputs a
    command reads on demand. It starts with an empty ``results/``."""

    def __init__(self, path: Path):
        self.path = path
        (path / RESULTS).mkdir(parents=True, exist_ok=True)
        self.producers = {out: c for c in commands() for out in c.writes}
        self.results: dict[Command, Result] = {}

    def missing_producers(self, command: Command) -> list[Command]:
        """The commands that write the files ``command`` reads and this workspace lacks."""
        out: dict[Command, None] = {}
        for arg in command.reads:
            producer = self.producers.get(arg)
            if producer is not None and producer != command and not (self.path / arg).exists():
                out[producer] = None
        return list(out)

    def prepare(self, command: Command) -> None:
        """Skip when the command, or a command that writes a missing input of it (at any depth),
        needs an absent ``../shared``, before running anything; else run the producers of its
        missing inputs."""
        skip_without_shared(command)
        todo, seen = [command], {command}
        while todo:
            for producer in self.missing_producers(todo.pop()):
                if producer not in seen:
                    skip_without_shared(producer, needed_by=command)
                    seen.add(producer)
                    todo.append(producer)
        for producer in self.missing_producers(command):
            self.run(producer)

    def run(self, command: Command) -> Result:
        """The command's result, run now unless it ran before in this workspace; asserts exit 0 and
        that it wrote nothing outside ``results/``."""
        if command not in self.results:
            self.prepare(command)
            for out in command.outputs:
                target = self.path / out
                if target.is_file():
                    target.unlink()
            before = {p.name for p in self.path.iterdir()}
            done = run_mropt(command, self.path)
            files = {out: (self.path / out).read_text() for out in command.outputs if (self.path / out).is_file()}
            self.results[command] = Result(done.returncode, done.stdout, done.stderr, files)
            outside = sorted({p.name for p in self.path.iterdir()} - before - {RESULTS})
            assert not outside, f"{command.where}\nwrote {outside} outside {RESULTS}/ (documented commands write there)"
        result = self.results[command]
        assert result.returncode == 0, f"{command.where}\nexited {result.returncode}\n{result.stderr}"
        return result


_SESSION: list[Workspace] = []


def session_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The session's workspace, shared by ``test_docs_commands`` and ``test_golden`` (one module
    object a session, so one workspace: not a top-level conftest.py, whose module name 'conftest'
    the fairness tests import theirs by)."""
    if not _SESSION:
        _SESSION.append(Workspace(tmp_path_factory.mktemp("docs")))
    return _SESSION[0]
