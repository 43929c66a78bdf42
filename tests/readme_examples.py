"""The README's code blocks, read once, for ``test_readme.py`` and ``test_golden.py`` (not a test module).

A block's id is its section heading (up to the first ':' or '(') as a slug plus its index among the
section's code blocks: ``the-command-line-2``, ``gap-studies-1``. README commands read and write
files relative to one working folder: :class:`Workspace` runs, before a command, the README commands
that write the files it reads (``paper.json`` before ``mropt solve paper.json ...``), so any block or
command runs alone (``pytest -k gap-studies``).

Commands that name ``../shared`` (the traces beside the clone, absent from the repository) skip with
the reason when that folder is absent, and so does every command that reads a file one of them
writes, directly or through other commands (``history query history.duckdb`` after ``history
import history.duckdb ... ../shared/...``): a fresh clone without ``../shared`` skips them, it does
not fail them. It is the repository's parent folder + ``shared``; ``MROPT_SHARED=/path/to/shared``
points elsewhere (a git worktree whose parent has none).
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
#: README examples name these repository folders relative to the checkout's root
REPO_FOLDERS = ("benchmarks/", "instances/", "solvers/")
#: options after which a README command names a file or folder it writes
OUTPUT_OPTIONS = ("-o", "--out", "--output")
#: commands that write a file named by a positional argument: their first words -> the argument's index after them
POSITIONAL_OUTPUTS = {("history", "import"): 0}  # history import DB FILE...: writes DB
TIMEOUT = 600


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


@dataclass(frozen=True)
class Command:
    """One ``mropt ...`` line of a README block."""

    block: str  # the block's id
    line: int  # its line number in README.md
    text: str  # as written, without the leading 'mropt' and the trailing comment

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
        (``--param history=history.duckdb``)."""
        return [part for a in self.args for part in dict.fromkeys((a, a.partition("=")[2])) if part]

    @property
    def where(self) -> str:
        return f"README block {self.block} (README.md line {self.line}): mropt {self.text}"

    def argv(self) -> list[str]:
        """The arguments with ``../shared`` and the repository folders made absolute."""
        args = [a.replace("../shared", str(SHARED)) for a in self.args]
        return [str(ROOT / a) if a.startswith(REPO_FOLDERS) else a for a in args]


@dataclass(frozen=True)
class Block:
    id: str
    section: str
    language: str
    line: int  # line number of the opening fence
    code: str

    @property
    def commands(self) -> list[Command]:
        out = []
        for offset, raw in enumerate(self.code.splitlines(), start=1):
            text = raw.split("#")[0].strip()
            if text.startswith("mropt "):
                out.append(Command(self.id, self.line + offset, text.removeprefix("mropt ").strip()))
        return out

    def __str__(self) -> str:
        return self.id


@cache
def readme_blocks() -> tuple[Block, ...]:
    blocks: list[Block] = []
    section, count, fence = "", 0, None
    lines = README.read_text().splitlines()
    for number, line in enumerate(lines, start=1):
        if fence is not None:
            if line.startswith("```"):
                language, start, body = fence
                blocks.append(Block(f"{slug(section)}-{count}", section, language, start, "\n".join(body) + "\n"))
                fence = None
            else:
                fence[2].append(line)
        elif line.startswith("```"):
            count += 1
            fence = (line[3:].strip(), number, [])
        elif re.match(r"#{1,2} ", line):
            section, count = re.split(r"[:(]", line.lstrip("#").strip())[0].strip(), 0
    assert fence is None, "README.md has an unclosed code block"
    ids = [b.id for b in blocks]
    assert len(ids) == len(set(ids)), f"README block ids are not unique: {ids}"
    return tuple(blocks)


def blocks(*languages: str) -> list[Block]:
    return [b for b in readme_blocks() if b.language in languages]


def commands() -> list[Command]:
    return [c for b in blocks("sh") for c in b.commands]


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
    """What one README command did: its exit status, stdout, stderr and the files it wrote."""

    returncode: int
    stdout: str
    stderr: str
    files: dict[str, str]


class Workspace:
    """One working folder for README commands, each run at most once; writes the inputs a command
    reads on demand."""

    def __init__(self, path: Path):
        self.path = path
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
        """The command's result, run now unless it ran before in this workspace; asserts exit 0."""
        if command not in self.results:
            self.prepare(command)
            for out in command.outputs:
                target = self.path / out
                if target.is_file():
                    target.unlink()
            done = run_mropt(command, self.path)
            files = {out: (self.path / out).read_text() for out in command.outputs if (self.path / out).is_file()}
            self.results[command] = Result(done.returncode, done.stdout, done.stderr, files)
        result = self.results[command]
        assert result.returncode == 0, f"{command.where}\nexited {result.returncode}\n{result.stderr}"
        return result


_SESSION: list[Workspace] = []


def session_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The session's workspace, shared by ``test_readme`` and ``test_golden`` (one module object a
    session, so one workspace: not a top-level conftest.py, whose module name 'conftest' the
    fairness tests import theirs by)."""
    if not _SESSION:
        _SESSION.append(Workspace(tmp_path_factory.mktemp("readme")))
    return _SESSION[0]
