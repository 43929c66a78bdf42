"""Code run from an experiment's folder: only the named ``imports`` run,
and a harness failure is never stored as a finished run.

Before: the experiment's folder and the working folder went first on ``sys.path`` and on
the workers' ``PYTHONPATH``, ahead of the standard library, so a ``select.py`` or
``tqdm.py`` beside an experiment file ran inside ``mropt gap`` with no ``imports`` key,
and the ``imports`` modules ran during ``gap --check``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from mropt.harness import worker
from mropt.harness.experiment import import_modules, load_experiment
from mropt.harness.runner import run_study
from mropt.harness.store import Store
from mropt.model import InputError

from .conftest import ROOT

#: a module that leaves a marker (one line per process that ran it) beside itself
MARKER = "import os\nwith open(__file__ + '.ran', 'a') as _f:\n    _f.write(str(os.getpid()) + '\\n')\n"
#: modules of the standard library and of mropt's dependencies that mropt imports
SHADOWS = ("select", "tqdm", "json", "pickle", "struct")


def plugin(name: str) -> str:
    return MARKER + textwrap.dedent(f"""
        from mropt.model.solution import Solution
        from mropt.registry import mropt_solver, register

        @register("{name}-empty", kind="admission", summary="test plug-in: accepts nothing")
        def solve(instance, *, time_limit=None, seed=0):
            return Solution(method="{name}-empty", status="feasible", objective=0.0, accepted=(), sequence=(),
                            solver=mropt_solver())
        """)


def experiment(folder: Path, name: str, imports: bool) -> Path:
    """An experiment in ``folder`` with shadowing modules beside it, and a plug-in ``name``.py."""
    folder.mkdir(parents=True, exist_ok=True)
    for shadow in SHADOWS:
        (folder / f"{shadow}.py").write_text(MARKER)
    (folder / f"{name}.py").write_text(plugin(name))
    head = (
        f'imports = ["{name}"]\nmethods = ["edf-greedy", "{name}-empty"]\n' if imports else 'methods = ["edf-greedy"]\n'
    )
    path = folder / "exp.toml"
    path.write_text(
        f'name = "{name}"\ntime_limit = 20\n{head}'
        '[[instances]]\ngenerator = "admission"\nseeds = [1]\nparams = {jobs = 4}\n'
    )
    return path


def ran(folder: Path, module: str) -> list[str]:
    marker = folder / f"{module}.py.ran"
    return marker.read_text().split() if marker.exists() else []


def test_check_runs_no_code_of_the_experiment(tmp_path, monkeypatch):
    name = f"plug{uuid.uuid4().hex[:8]}"
    exp = experiment(tmp_path / "exp", name, imports=True)
    monkeypatch.chdir(exp.parent)  # the working folder holds the shadows too
    loaded = load_experiment(exp, run_imports=False)
    assert loaded.unchecked == [f"{name}-empty"]
    from cli_capture import run_cli

    result = run_cli("gap", exp, "--check")
    assert result.code == 0, result.err
    assert f"'imports' not run: {name}; methods not checked: {name}-empty" in result.out
    for module in (name, *SHADOWS):
        assert ran(exp.parent, module) == [], module
    assert name not in sys.modules


def test_a_named_import_runs_never_ahead_of_the_standard_library(tmp_path):
    name = f"plug{uuid.uuid4().hex[:8]}"
    folder = tmp_path / "exp"
    experiment(folder, name, imports=True)
    (folder / f"{name}.py").write_text(plugin(name) + "\nimport select, json\nFOUND = select.__file__, json.__file__\n")
    before = list(sys.path)
    import_modules([name], [str(folder)])
    assert sys.path == before  # the folder was on the path only while importing
    module = sys.modules[name]
    assert all(not f.startswith(str(folder)) for f in module.FOUND if f)  # the real select and json
    for shadow in SHADOWS:
        assert ran(folder, shadow) == [], shadow
    assert len(ran(folder, name)) == 1
    import_modules([name], [str(folder)])  # imported once
    assert len(ran(folder, name)) == 1


def test_a_module_that_fails_to_import_is_one_line(tmp_path, monkeypatch):
    name = f"plug{uuid.uuid4().hex[:8]}"
    folder = tmp_path / "exp"
    exp = experiment(folder, name, imports=True)
    (folder / f"{name}.py").write_text("raise RuntimeError('broken\\nplug-in')\n")
    with pytest.raises(InputError, match=r"key 'imports': importing failed \(RuntimeError: broken plug-in\)"):
        load_experiment(exp)
    exp.write_text(exp.read_text().replace(f'"{name}"]', f'"{name}x"]'))
    with pytest.raises(InputError, match="key 'imports': cannot import"):
        load_experiment(exp)


@pytest.mark.slow
@pytest.mark.parametrize("imports", [False, True])
def test_gap_runs_only_the_named_imports(tmp_path, imports):
    """The real command, from the experiment's folder, with a progress bar (tqdm is imported).

    ``python -P`` starts it as the ``mropt`` script does: ``python -m`` alone would put
    the working folder first on the path itself, before mropt runs.
    """
    name = f"plug{uuid.uuid4().hex[:8]}"
    exp = experiment(tmp_path / "exp", name, imports=imports)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-P", "-m", "mropt.cli.main", "gap", str(exp), "--out", str(tmp_path / "out"), "-j", "1"],
        cwd=exp.parent,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    for shadow in SHADOWS:
        assert ran(exp.parent, shadow) == [], shadow
    if imports:
        assert len(set(ran(exp.parent, name))) == 2  # the parent (to check the methods) and the worker
        assert f"{name}-empty" in done.stdout
    else:
        assert ran(exp.parent, name) == []


def test_a_worker_that_cannot_start_is_not_stored(tmp_path, monkeypatch):
    """Before: the run was stored as finished with status error ("harness: ...")."""
    exp_path = tmp_path / "exp.toml"
    exp_path.write_text(
        'name = "nostart"\nmethods = ["edf-greedy", "ideal"]\n'
        '[[instances]]\ngenerator = "admission"\nseeds = [1, 2]\nparams = {jobs = 4}\n'
    )
    exp = load_experiment(exp_path)
    monkeypatch.setattr(worker, "_BOOT", "import sys; sys.exit(7)")
    summary = run_study(exp, tmp_path / "out", workers=2, progress=False)
    assert (summary.ran, summary.interrupted, summary.failures) == (4, 4, 0)
    assert summary.problems and all("\n" not in p for p in summary.problems)
    assert any("exit status 7" in p for p in summary.problems), summary.problems
    assert len(Store(tmp_path / "out").read()) == 0
