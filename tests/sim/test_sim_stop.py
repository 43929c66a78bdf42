"""Runs stopped early: ``mropt simulate --until T``, ``--time-limit S``, Ctrl-C, and the progress bar.

The workload (``STOP``): one node with one map slot; FIFO in event mode runs job a (one 10 s
map, submitted at 0) over [0, 10], job b (one 5 s map, submitted at 0) over [10, 15] and job c
(one 5 s map, submitted at 30) over [30, 35]. Stopped at T = 12: a finished at 10, b's attempt
ran [10, 12] and is cut there (``killed``, b unfinished for cause ``stopped``), c was never
submitted (``not_submitted``, neither accepted nor rejected). At T = 10 the events of 10 are
the run's last: a finished, b's attempt launched at 10 is cut at once. At T >= 35 (the last
event) nothing is cut: the run is the whole run, event for event.

Before these flags the simulator ran every run to its last event and could not be stopped
(``--until``/``--time-limit`` were refused, Ctrl-C left nothing), and its summary had no
``stopped``.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest

from mropt.model.errors import InputError
from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.outputs import check_outputs
from mropt.sim.policies.fifo import Fifo
from mropt.sim.policy import make_policy
from mropt.sim.run_result import load_run
from mropt.sim.verify import check_stop, verify_simulation
from mropt.sim.watch import EVERY, Watch

from cli_capture import assert_input_error, run_cli
from sim_helpers import map_job, policy_params

ROOT = Path(__file__).resolve().parents[2]
NODE = {"id": "n0", "map_slots": 1, "reduce_slots": 1}
STOP: dict[str, Any] = {
    "kind": "workload",
    "schema_version": 1,
    "name": "stop",
    "cluster": {"nodes": [NODE]},
    "jobs": [map_job("a", 1, 10.0), map_job("b", 1, 5.0), map_job("c", 1, 5.0, submit=30.0)],
}


def long_workload(tasks: int) -> dict[str, Any]:
    """One job of ``tasks`` 1 s maps on one slot: one completion event a second, ``tasks + 1`` events."""
    return {**STOP, "name": "long", "jobs": [map_job("big", tasks, 1.0)]}


@pytest.fixture
def stop_file(tmp_path: Path) -> Path:
    path = tmp_path / "stop.json"
    path.write_text(json.dumps(STOP))
    return path


def simulate_json(path: Path, *extra: object) -> dict[str, Any]:
    r = run_cli("simulate", path, "--policy", "fifo", "--mode", "event", "--json", *extra)
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_until_keeps_what_happened_by_t(stop_file: Path, tmp_path: Path) -> None:
    s = simulate_json(stop_file, "--until", "12", "--out", tmp_path / "out")
    assert (s["stopped"], s["stopped_at"], s["makespan"]) == ("until", 12.0, 12.0)
    assert (s["jobs"], s["accepted"], s["rejected"], s["not_submitted"]) == (3, 2, 0, 1)
    assert (s["finished"], s["unfinished"], s["dropped"], s["attempts"]) == (1, 1, 0, 2)
    run = load_run(tmp_path / "out")
    jobs = run.jobs.set_index("job_id")
    assert list(jobs["decision"]) == ["accepted", "accepted", "not_submitted"]
    assert list(jobs["unfinished_cause"]) == ["", "stopped", ""]
    assert jobs.loc["a", "finish"] == 10.0
    rows = sorted(zip(run.tasks["job_id"], run.tasks["start"], run.tasks["end"], run.tasks["outcome"], strict=True))
    assert rows == [("a", 0.0, 10.0, "succeeded"), ("b", 10.0, 12.0, "killed")]
    verdict = run.verify(stop_file)  # the independent check, and the stop against the tables
    assert verdict.ok, verdict.problems
    r = run_cli("verify", stop_file, tmp_path / "out")
    assert r.code == 0 and "stopped early (until, at simulated time 12 s)" in r.out, r.out + r.err


def test_until_includes_the_events_of_t(stop_file: Path) -> None:
    s = simulate_json(stop_file, "--until", "10")
    assert (s["stopped"], s["finished"], s["unfinished"], s["not_submitted"]) == ("until", 1, 1, 1)
    assert s["attempts"] == 2  # b's attempt launched at 10, cut at 10


def test_until_at_or_after_the_last_event_is_the_whole_run(stop_file: Path) -> None:
    whole = simulate_json(stop_file)
    assert whole["stopped"] is None and "stopped_at" not in whole and "not_submitted" not in whole
    assert (whole["finished"], whole["makespan"]) == (3, 35.0)
    for until in ("35", "1e6"):
        s = simulate_json(stop_file, "--until", until)
        assert s["stopped"] is None
        assert s["event_log_sha256"] == whole["event_log_sha256"]
    cut = simulate_json(stop_file, "--until", "34.5")
    assert (cut["stopped"], cut["finished"], cut["unfinished"]) == ("until", 2, 1)


@pytest.mark.parametrize(
    ("flag", "value", "words"),
    [
        ("--until", "-1", "--until must be a simulated time in seconds >= 0, got -1.0"),
        ("--until", "nan", "--until must be"),
        ("--time-limit", "0", "--time-limit must be a number of seconds > 0, got 0.0"),
        ("--time-limit", "inf", "--time-limit must be"),
    ],
)
def test_bad_stops_are_one_line_errors(stop_file: Path, flag: str, value: str, words: str) -> None:
    assert_input_error(run_cli("simulate", stop_file, "--policy", "fifo", flag, value), words)


def test_time_limit_stops_at_the_first_look(tmp_path: Path) -> None:
    """The watch is looked at once EVERY events have passed: a limit already spent stops the run
    there, at instant t = EVERY - 1 (events: the arrival, then one completion a second)."""
    path = tmp_path / "long.json"
    path.write_text(json.dumps(long_workload(EVERY + 500)))
    s = simulate_json(path, "--time-limit", "1e-9", "--out", tmp_path / "out")
    at = EVERY - 1
    assert (s["stopped"], s["stopped_at"], s["events"]) == ("time_limit", at, EVERY)
    assert (s["finished"], s["unfinished"], s["attempts"]) == (0, 1, EVERY)
    run = load_run(tmp_path / "out")
    assert (run.tasks["outcome"] == "succeeded").sum() == at  # the maps that ended at 1 .. t
    assert run.verify(path).ok


def fifo_with(hook: Any) -> Fifo:
    """FIFO whose ``on_job_end`` calls ``hook(job)`` first."""

    class Hooked(Fifo):
        def on_job_end(self, job: int) -> None:
            hook(job)
            super().on_job_end(job)

    return Hooked(**policy_params("fifo"))


class Clock:
    """A wall clock that moves 1 s each time it is read."""

    def __init__(self) -> None:
        self.t = -1.0

    def __call__(self) -> float:
        self.t += 1.0
        return self.t


def test_time_limit_with_a_clock_that_ticks_once_a_look() -> None:
    """Looked at after every instant (0, 10, 15, ...), the clock read 1 s later each time: a 3 s
    limit stops the run after the third instant, 15, with a and b finished and c not submitted."""
    w = WorkloadInstance.from_dict(STOP)
    watch = Watch(time_limit=3.0, clock=Clock(), every=1)
    sim = Simulation(w, make_policy("fifo"), mode="event", watch=watch)
    rec = sim.run()
    assert (sim.stopped, sim.now, sim.jobs_finished) == ("time_limit", 15.0, 2)
    jobs = rec.jobs_columns()
    assert jobs["decision"] == ["accepted", "accepted", "not_submitted"]
    assert verify_simulation(w, jobs, rec.tasks_columns()).ok


def test_ctrl_c_stops_at_the_end_of_the_instant_and_restores_the_handler() -> None:
    """A Ctrl-C (SIGINT to this process) while job a ends at 10 stops the run after instant 10."""
    w = WorkloadInstance.from_dict(STOP)
    before = signal.getsignal(signal.SIGINT)
    pressed = fifo_with(lambda job: os.kill(os.getpid(), signal.SIGINT) if job == 0 else None)
    sim = Simulation(w, pressed, mode="event", watch=Watch(stop_on_interrupt=True, every=1))
    rec = sim.run()
    assert signal.getsignal(signal.SIGINT) is before
    assert (sim.stopped, sim.now) == ("interrupted", 10.0)
    jobs, tasks = rec.jobs_columns(), rec.tasks_columns()
    assert list(jobs["unfinished_cause"]) == ["", "stopped", ""]
    summary = {"stopped": sim.stopped, "stopped_at": sim.now}
    assert verify_simulation(w, jobs, tasks).ok and check_stop(summary, jobs, tasks) == []
    assert check_stop({"stopped": None}, jobs, tasks)  # a stopped run's tables claimed as a whole run


def test_a_second_ctrl_c_abandons_the_run() -> None:
    w = WorkloadInstance.from_dict(STOP)
    before = signal.getsignal(signal.SIGINT)

    def twice(job: int) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.01)  # (the handler runs between the two)
        os.kill(os.getpid(), signal.SIGINT)

    sim = Simulation(w, fifo_with(twice), mode="event", watch=Watch(stop_on_interrupt=True, every=1))
    with pytest.raises(KeyboardInterrupt):
        sim.run()
    assert signal.getsignal(signal.SIGINT) is before


def test_ctrl_c_during_a_file_by_file_write_is_held_until_every_file_is_written(
    stop_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--force`` into a folder of the user's writes the files one by one: a Ctrl-C after the
    first must not leave the new jobs beside the earlier run's tasks and summary."""
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("the user's\n")
    assert run_cli("simulate", stop_file, "--policy", "fifo", "--out", out, "--force", "--seed", "1").code == 0
    from mropt.sim import outputs

    def press(step: str) -> None:
        if step == "jobs.parquet":
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(outputs, "_hold", press)
    r = run_cli("simulate", stop_file, "--policy", "fifo", "--out", out, "--force", "--seed", "2", "--until", "12")
    assert r.code == 130 and "interrupted" in r.err, r.err
    summary = check_outputs(out)  # one run's files (refused were they of two)
    assert (summary["seed"], summary["stopped"]) == (2, "until")
    assert (out / "notes.txt").read_text() == "the user's\n"


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def stderr_of(path: Path, *extra: object) -> str:
    from mropt.cli.main import main

    err = FakeTerminal()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main(["simulate", str(path), "--policy", "fifo", "--mode", "event", *map(str, extra)]) == 0
    return err.getvalue()


def test_the_bar_is_drawn_on_a_terminal_only(stop_file: Path) -> None:
    drawn = stderr_of(stop_file)
    assert "simulate:" in drawn and "|" in drawn  # a bar over the simulated time to the last submit (30 s)
    assert "t 35 s, 6 events, 3/3 jobs finished" in drawn  # its last draw: 3 arrivals, 3 completions
    assert stderr_of(stop_file, "--no-progress") == ""
    assert run_cli("simulate", stop_file, "--policy", "fifo").err == ""  # stderr not a terminal


def read_some(fd: int, timeout: float) -> bytes:
    """What the terminal ``fd`` has within ``timeout`` seconds (b"" once its other end is closed)."""
    try:
        return os.read(fd, 4096) if select.select([fd], [], [], timeout)[0] else b""
    except OSError:  # EIO: the process holding the other end ended
        return b""


@pytest.mark.slow
def test_ctrl_c_on_the_command_keeps_the_run_so_far_whole(tmp_path: Path) -> None:
    """``mropt simulate`` on a terminal (a pty), Ctrl-C once its bar shows: exit 130, and DIR,
    which held an earlier run, holds this run's outputs whole (one run id), stopped
    ``interrupted``, and the independent verify accepts them."""
    path = tmp_path / "long.json"
    path.write_text(json.dumps(long_workload(2_000_000)))  # minutes to run whole
    out = tmp_path / "out"
    small = tmp_path / "stop.json"
    small.write_text(json.dumps(STOP))
    assert run_cli("simulate", small, "--policy", "fifo", "--out", out).code == 0  # the earlier run
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal 100 columns wide
    proc = subprocess.Popen(
        [sys.executable, "-m", "mropt.cli.main", "simulate", str(path), "--policy", "fifo", "--mode", "event"]
        + ["--out", str(out), "--json"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    seen = b""
    try:
        deadline = time.monotonic() + 60
        while b"simulate:" not in seen and time.monotonic() < deadline:
            seen += read_some(master, 1.0)
        assert b"simulate:" in seen, "no progress bar on the terminal"
        proc.send_signal(signal.SIGINT)
        stdout, _ = proc.communicate(timeout=60)
        while chunk := read_some(master, 0.2):
            seen += chunk
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert proc.returncode == 130, seen.decode(errors="replace")
    assert b"interrupted at simulated time" in seen
    s = json.loads(stdout)
    assert s["stopped"] == "interrupted" and 0 < s["stopped_at"] < 2_000_000
    summary = check_outputs(out)
    assert (summary["workload"], summary["stopped"], summary["stopped_at"]) == ("long", "interrupted", s["stopped_at"])
    run = load_run(out)
    assert run.verify(path).ok
    assert (run.tasks["outcome"] == "succeeded").sum() == s["stopped_at"]  # one 1 s map ends each second


def test_a_stopped_run_in_the_job_history(stop_file: Path, tmp_path: Path) -> None:
    """Imported into a history, the run stopped at 12 has a SUCCEEDED and b RUNNING; c, never
    submitted, is not a job of the history (it was RUNNING there, a job that never arrived)."""
    assert run_cli("simulate", stop_file, "--policy", "fifo", "--until", "12", "--out", tmp_path / "out").code == 0
    db = tmp_path / "h.duckdb"
    assert run_cli("history", "import", db, tmp_path / "out").code == 0
    r = run_cli("history", "query", db, "select job_id, status from jobs order by job_id")
    assert r.code == 0, r.err
    assert r.out.split() == ["job_id,status", "a,SUCCEEDED", "b,RUNNING"]


def test_the_python_api_stops_too(stop_file: Path) -> None:
    import mropt

    run = mropt.simulate(stop_file, "fifo", mode="event", until=12)
    assert (run.summary["stopped"], run.summary["not_submitted"]) == ("until", 1)
    assert list(run.jobs["decision"]) == ["accepted", "accepted", "not_submitted"]
    assert run.verify().ok
    with pytest.raises(InputError, match="time_limit must be a number of seconds > 0, got -1"):
        mropt.simulate(stop_file, "fifo", time_limit=-1)


def test_a_stopped_run_has_no_ideal(tmp_path: Path) -> None:
    """AMB eq. 4 is over every job of the workload: beside a run stopped before most of them were
    submitted it read as a benefit the run fell short of (the SWIM day stopped at 6 h: 22 %)."""
    valued = {**STOP, "jobs": [{**job, "deadline": 50.0, "benefit": 10.0} for job in STOP["jobs"]]}
    path = tmp_path / "valued.json"
    path.write_text(json.dumps(valued))
    whole = simulate_json(path)
    assert whole["stopped"] is None and whole["ideal"] == pytest.approx(30.0)  # every job fits by 50
    cut = simulate_json(path, "--until", "12")
    assert cut["stopped"] == "until" and cut["ideal"] is None
