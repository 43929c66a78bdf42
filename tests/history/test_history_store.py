"""The history database's transactions: a SIGKILL mid-import, two importers at once, a held lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from mropt.history.store import HOLD_ENV, import_batches
from mropt.importers.table import read_batches
from mropt.model.errors import InputError

from history_files import write_alibaba, write_jhist, write_rumen, write_swim

ROOT = Path(__file__).resolve().parents[2]


def counts(db: Path) -> dict[str, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {
            t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("jobs", "tasks", "attempts", "jobconf")
        }
    finally:
        con.close()


def start_import(db: Path, *files: Path, hold: float | None = None, wait: float = 60) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(HOLD_ENV, None)
    if hold is not None:
        env[HOLD_ENV] = str(hold)
    return subprocess.Popen(
        [sys.executable, "-m", "mropt.cli.main", "history", "import", str(db), *map(str, files), "--wait", str(wait)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_hold(proc: subprocess.Popen) -> None:
    """Read the importer's stderr until it says it holds before COMMIT (its rows are written)."""
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert "holding" in line, line + proc.stderr.read()


@pytest.mark.slow
def test_a_sigkill_mid_import_leaves_the_database_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    import_batches(db, read_batches([write_rumen(tmp_path / "first.json")]))
    before = counts(db)
    many = [f"{t},{t + 5},j{t % 97},t{t},2,Terminated,50,0.01" for t in range(20000)]
    files = [
        write_alibaba(tmp_path / "big.csv", many),
        write_jhist(tmp_path / "a.jhist"),
        write_swim(tmp_path / "s.tsv"),
    ]
    proc = start_import(db, *files, hold=60)
    wait_for_hold(proc)  # every row of the three files is inserted, the transaction not committed
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert counts(db) == before
    # the database is whole: the same files import afterwards
    import_batches(db, read_batches(files))
    assert counts(db)["tasks"] == before["tasks"] + 20000 + 3


@pytest.mark.slow
def test_a_sigkill_while_creating_a_new_database_leaves_no_rows(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    proc = start_import(db, write_jhist(tmp_path / "a.jhist"), hold=60)
    wait_for_hold(proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert counts(db) == {"jobs": 0, "tasks": 0, "attempts": 0, "jobconf": 0}
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.slow
def test_importers_at_once_both_land_and_the_same_file_lands_once(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    path = write_jhist(tmp_path / "a.jhist")
    first = start_import(db, path, hold=1.0)
    wait_for_hold(first)  # the first holds the database, mid-transaction
    others = [
        start_import(db, write_rumen(tmp_path / "b.json"), write_swim(tmp_path / "c.tsv")),
        start_import(db, path),
    ]
    out1, err1 = first.communicate(timeout=60)
    (out2, err2), (out3, err3) = (p.communicate(timeout=60) for p in others)
    assert first.returncode == 0, err1
    assert others[0].returncode == 0, err2  # another file: waits for the lock, then lands
    assert others[1].returncode == 2, err3  # the same file again: refused in one line, nothing written
    assert err3.strip().count("\n") == 0 and "already in the history database" in err3
    assert counts(db) == {"jobs": 1 + 1 + 3, "tasks": 3 + 3, "attempts": 3 + 3, "jobconf": 2}


@pytest.mark.slow
def test_a_writer_that_waits_too_long_fails_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    holder = start_import(db, write_jhist(tmp_path / "a.jhist"), hold=2)
    wait_for_hold(holder)
    with pytest.raises(InputError, match="in use by another process") as err:
        import_batches(db, read_batches([write_swim(tmp_path / "c.tsv")]), wait=0.3)
    assert "\n" not in str(err.value)
    assert holder.poll() is None  # the holder was still mid-import: the late writer did not wait for it
    holder.communicate(timeout=60)
    assert holder.returncode == 0 and counts(db)["jobs"] == 1
