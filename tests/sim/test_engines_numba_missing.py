"""The engine choice when numba is installed but fails to import (a NumPy too new for it, say): ``auto``
runs the Python engine, ``compiled`` is one line saying why, never a traceback (review of issue 32).

A fake ``numba`` package that raises on import is put first on ``sys.path`` of a child process (the
parent's numba may be imported already), which runs ``mropt simulate``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sim_helpers import workload


def _workload(path: Path) -> Path:
    nodes = [{"id": f"n{i}", "rack": "r0", "resources": {"cpu": 4, "mem": 4}} for i in range(2)]
    jobs = [
        {
            "id": f"j{k}",
            "submit_time": float(k),
            "stages": [{"type": "map", "tasks": [{"duration": 2.0, "count": 3, "demand": {"cpu": 1, "mem": 1}}]}],
        }
        for k in range(3)
    ]
    w = workload(nodes, jobs)
    path.write_text(json.dumps(w.to_dict()))
    return path


def _mropt(tmp_path: Path, *args: str, auto_tasks: int = 1) -> subprocess.CompletedProcess[str]:
    fake = tmp_path / "fake" / "numba"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("Numba needs NumPy 2.5 or less. Got NumPy 9.9.")\n')
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import mropt.sim.engines as e; "
        f"e.AUTO_TASKS = {auto_tasks}; from mropt.cli.main import main; sys.exit(main(sys.argv[2:]))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    return subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "fake"), *args], capture_output=True, text=True, env=env
    )


def test_auto_runs_python_when_numba_fails_to_import(tmp_path: Path) -> None:
    w = _workload(tmp_path / "w.json")
    r = _mropt(tmp_path, "simulate", str(w), "--policy", "drf", "--json", "--no-progress")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert "engine" not in summary and summary["finished"] == 3


def test_compiled_says_numba_fails_to_import_in_one_line(tmp_path: Path) -> None:
    w = _workload(tmp_path / "w.json")
    r = _mropt(tmp_path, "simulate", str(w), "--policy", "drf", "--engine", "compiled")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert "numba" in lines[0] and "fails to import" in lines[0] and "NumPy 9.9" in lines[0]
