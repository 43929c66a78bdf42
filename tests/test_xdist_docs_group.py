"""``make test``'s ``-n 2 --dist loadgroup`` runs the documented commands' tests in one worker.

tests/conftest.py's scheduler groups ``tests/test_docs_commands.py`` and ``tests/test_golden.py`` by
path (an ``xdist_group`` mark does not group under pytest 9.2). Checked on a stand-in suite: a copy
of that conftest beside test files of those names, run with pytest-xdist in a fresh process, reading
which worker ran each test from ``-v``'s ``[gwN] PASSED node id`` lines.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("xdist")

CONFTEST = Path(__file__).resolve().parent / "conftest.py"
#: tests of each stand-in file; the other files' tests are listed first, as tests/ collects them
FILES = {"test_admission_like.py": 6, "test_docs_commands.py": 4, "test_golden.py": 4, "test_z_rest.py": 6}


def workers(tmp_path: Path, *args: str) -> dict[str, set[str]]:
    """Which workers (``gw0``, ``gw1``) ran each stand-in file's tests under ``-n 2 ARGS``."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    shutil.copy(CONFTEST, tmp_path / "tests" / "conftest.py")
    for name, count in FILES.items():
        body = "".join(f"def test_{i}():\n    pass\n\n\n" for i in range(count))
        (tmp_path / "tests" / name).write_text(body)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-n", "2", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ran: dict[str, set[str]] = {name: set() for name in FILES}
    for worker, name in re.findall(r"^\[(gw\d)\] .*PASSED tests/(\w+\.py)::", proc.stdout, re.M):
        ran[name].add(worker)
    assert sum(len(w) > 0 for w in ran.values()) == len(FILES), proc.stdout
    return ran


def test_loadgroup_runs_the_documented_commands_tests_in_one_worker(tmp_path: Path) -> None:
    ran = workers(tmp_path, "--dist", "loadgroup")
    assert len(ran["test_docs_commands.py"] | ran["test_golden.py"]) == 1, ran
    others = ran["test_admission_like.py"] | ran["test_z_rest.py"]
    assert others - (ran["test_docs_commands.py"] | ran["test_golden.py"]), ran  # the other worker has work
