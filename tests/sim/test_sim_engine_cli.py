"""``mropt simulate --engine`` end to end: the engine's name on the command line, its refusals, and its output.

An unknown engine exits 2; ``--engine compiled`` on a run the compiled core cannot do (heartbeat mode,
``fair``, a cluster of slots) exits 2 saying why, while ``python`` and ``auto`` run it; the default
is ``auto``; without numba, ``--engine compiled`` says numba is not installed and ``auto`` runs the
Python engine; and ``mropt simulate --engine compiled --out DIR`` (whole, and stopped by ``--until``)
writes a folder ``mropt verify`` accepts, with the Python engine's summary (but for ``engine``).

(The engine choice through ``simulate`` and the stops: tests/sim/test_sim_engines.py, whose workloads
and fixture this module imports.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_sim_engines import (
    bare,
    compiled_fixture,  # noqa: F401  (the fixture compiled)
    supported,
    with_slots,
)

from mropt.sim import engines

from cli_capture import assert_input_error, run_cli

# ---------------------------------------------------------------------------------------------
# 1. the engine on the command line


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name, w in (("supported", supported()), ("slots", with_slots())):
        out[name] = tmp_path / f"{name}.json"
        out[name].write_text(json.dumps(w.to_dict()))
    return out


def test_an_unknown_engine_on_the_command_line_exits_2(files: dict[str, Path]) -> None:
    line = assert_input_error(
        run_cli("simulate", files["supported"], "--policy", "drf", "--engine", "bogus"), "--engine", "bogus"
    )
    assert "invalid choice" in line


@pytest.mark.parametrize(
    ("file", "policy", "options", "why"),
    [
        ("supported", "drf", ("--mode", "heartbeat"), "mode heartbeat"),
        ("slots", "fifo", (), "mode heartbeat (only event)"),
        ("slots", "fifo", ("--mode", "event"), "a task with a demand"),
        ("slots", "fair", ("--param", "preemption=true"), "fair with preemption"),
        ("slots", "drf", (), "a cluster of slots"),
    ],
)
def test_engine_compiled_on_a_run_it_cannot_do_exits_2_saying_why(
    compiled: Any, files: dict[str, Path], file: str, policy: str, options: tuple[str, ...], why: str
) -> None:
    argv = ("simulate", files[file], "--policy", policy, *options, "--json")
    assert_input_error(run_cli(*argv, "--engine", "compiled"), "engine 'compiled' cannot run this simulation", why)
    for engine in ("python", "auto"):  # the others run it, with the Python engine
        r = run_cli(*argv, "--engine", engine)
        assert r.code == 0 and not r.err, (engine, r.err)
        summary = json.loads(r.out)
        assert summary["policy"] == policy and summary["finished"] == 3 and "engine" not in summary


def test_the_command_line_default_is_auto(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numba")
    monkeypatch.setattr(engines, "AUTO_TASKS", 1)
    r = run_cli("simulate", files["supported"], "--policy", "drf", "--json")
    assert r.code == 0 and json.loads(r.out).get("engine") == "compiled", r.err


def test_without_numba_the_command_line_says_so(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engines, "compiled_available", lambda: False)
    assert_input_error(
        run_cli("simulate", files["supported"], "--policy", "drf", "--engine", "compiled"), "numba", "not installed"
    )
    r = run_cli("simulate", files["supported"], "--policy", "drf", "--engine", "auto", "--json")
    assert r.code == 0 and not r.err and "engine" not in json.loads(r.out)


# ---------------------------------------------------------------------------------------------
# 2. the command line end to end


@pytest.mark.parametrize("until", [None, "5.5"])
def test_simulate_engine_compiled_out_is_a_folder_verify_accepts(
    compiled: Any, files: dict[str, Path], tmp_path: Path, until: str | None
) -> None:
    stop = ("--until", until) if until else ()
    hashes = {}
    for engine in ("compiled", "python"):
        out = tmp_path / engine
        r = run_cli(
            "simulate", files["supported"], "--policy", "drf", "--engine", engine, *stop, "--out", out, "--json"
        )
        assert r.code == 0 and not r.err, r.err
        printed = json.loads(r.out)
        written = json.loads((out / "summary.json").read_text())
        assert written.get("engine") == printed.get("engine") == ("compiled" if engine == "compiled" else None)
        assert written["stopped"] == ("until" if until else None)
        hashes[engine] = {k: v for k, v in bare(written).items() if k != "run_id"}  # (run_id: new each run)
        v = run_cli("verify", files["supported"], out)
        assert v.code == 0 and v.out.startswith("ok:"), v.out + v.err
        if until:
            assert "stopped early (until, at simulated time 5.5 s)" in v.out, v.out
    assert hashes["compiled"]["event_log_sha256"] == hashes["python"]["event_log_sha256"]
    assert hashes["compiled"] == hashes["python"]
