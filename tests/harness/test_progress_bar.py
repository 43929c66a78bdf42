"""A gap study draws its progress bar only when stderr is a terminal (as ``mropt simulate`` does).

``mropt gap`` and ``mropt demo`` (``make demo``) drew tqdm's bar into a redirected stderr, so a
log filled with carriage-return redraws. The bar is still drawn on a terminal (a stream whose
``isatty()`` is true). The commands run in the test process: ``run_cli``'s stderr, like a pipe's,
is no terminal.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from mropt.cli.main import main
from mropt.harness.experiment import load_experiment
from mropt.harness.runner import run_study

from cli_capture import run_cli

TINY = """
name = "tiny"
time_limit = 10
methods = ["edf-greedy"]
[[instances]]
generator = "admission"
seeds = {start = 1, count = 2}
params = {jobs = 5}
"""

#: what any tqdm bar line holds: the desc, the unit rate, the redraw
BAR_TEXT = ("tiny:", "run/s", "\r")


@pytest.fixture
def experiment(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


def test_gap_with_stderr_a_pipe_draws_no_bar(experiment: Path, tmp_path: Path) -> None:
    r = run_cli("gap", experiment, "--out", tmp_path / "out", "-j", "1")
    assert r.code == 0, r.err
    assert "tiny: 2 runs (0 already stored, 2 run now, 0 failed)" in r.out
    assert not any(text in r.err for text in BAR_TEXT), repr(r.err)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_gap_draws_the_bar_on_a_terminal(
    experiment: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command line (not ``run_study``) decides: ``mropt gap`` with a terminal stderr draws."""
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["gap", str(experiment), "--out", str(tmp_path / "out"), "-j", "1"]) == 0
    assert "tiny: 2 runs (0 already stored, 2 run now, 0 failed)" in capsys.readouterr().out
    drawn = terminal.getvalue()
    assert all(text in drawn for text in BAR_TEXT), repr(drawn)


def test_demo_draws_the_bar_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    argv = ["demo", "--jobs", "6", "--seeds", "1", "--time-limit", "5", "-j", "1", "--out", str(tmp_path / "demo")]
    assert main(argv) == 0, capsys.readouterr().out
    drawn = terminal.getvalue()
    assert "run/s" in drawn and "\r" in drawn, repr(drawn)


def test_the_api_draws_the_bar_it_is_asked_for_where_stderr_is_no_terminal(
    experiment: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A notebook's stderr is no terminal: ``run_study(progress=True)`` still draws (the command line
    alone decides by ``isatty()``)."""
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    run_study(load_experiment(experiment), tmp_path / "out", progress=True)
    assert all(text in stream.getvalue() for text in BAR_TEXT), repr(stream.getvalue())


def test_demo_draws_no_bar_into_a_pipe(tmp_path: Path) -> None:
    r = run_cli("demo", "--jobs", "6", "--seeds", "1", "--time-limit", "5", "-j", "1", "--out", tmp_path / "demo")
    assert r.code == 0, r.err
    assert "run/s" not in r.err and "\r" not in r.err, repr(r.err)
