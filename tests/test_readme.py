"""Every example in README.md really runs: the Python blocks and the ``mropt`` shell lines."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
ROOT = README.parent
SHARED = ROOT.parent / "shared"
#: README examples name these repository folders relative to the checkout's root
REPO_FOLDERS = ("benchmarks/", "instances/", "solvers/")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), flags=re.S)


def test_python_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = blocks("python")
    assert code, "README.md has no python example"
    for block in code:
        exec(compile(block, "README.md", "exec"), {"__name__": "readme"})


def test_shell_examples_run(tmp_path):
    lines = [
        line.split("#")[0].strip()
        for block in blocks("sh")
        for line in block.splitlines()
        if line.strip().startswith("mropt ")
    ]
    assert lines, "README.md has no mropt example"
    for line in lines:
        args = shlex.split(line)[1:]
        if any("../shared" in a for a in args) and not SHARED.exists():
            pytest.skip(f"{SHARED} is absent: README example '{line}' needs it")
        args = [a.replace("../shared", str(SHARED)) for a in args]
        args = [str(ROOT / a) if a.startswith(REPO_FOLDERS) else a for a in args]
        result = subprocess.run(
            [sys.executable, "-m", "mropt.cli.main", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
        assert result.returncode == 0, f"README example failed: {line}\n{result.stderr}"
