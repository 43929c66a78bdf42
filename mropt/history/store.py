"""Opening the history database and writing import batches as one transaction.

DuckDB (an embedded SQL engine: one file, no server; it also reads the Parquet that
mropt writes) holds the four tables of :mod:`mropt.history.schema`.

**All or nothing.** ``import_batches`` writes every batch of one command inside one
``BEGIN ... COMMIT``: a malformed row, an error, or the process being killed (SIGKILL)
before ``COMMIT`` leaves the tables as they were before the command (DuckDB writes a
transaction's changes to its write-ahead log only at commit, and replays only committed
ones on the next open). A database file that does not exist yet is first created empty
(the four tables, no rows) under a temporary name and hard-linked into place, so it
appears whole or not at all, and two processes creating it at once both use the one
that won (``os.link`` never replaces a file).

**Two writers.** DuckDB lets one process at a time hold a database file for writing
(a file lock). :func:`connect` retries while another process holds it, up to ``wait``
seconds, so two importers started together both land, one after the other; past the
wait it is a one-line :class:`~mropt.model.errors.InputError`. Only DuckDB's lock error
itself is waited on: a corrupt or truncated file is refused at once, in one line. A
source already in the database (by its ``source`` name) is refused, so the same file
imported twice, even at once, lands once.

**No SQL reaches past the file.** Every connection is opened with
:data:`mropt.history.guard.LOCKED` and every database checked by
:func:`mropt.history.guard.check_database` before use (SECURITY.md).

The environment variable ``MROPT_HISTORY_HOLD_BEFORE_COMMIT`` (seconds) makes an import
pause after writing its rows and before ``COMMIT``, telling stderr it does: the hook the
kill-safety test uses to kill a process that is surely mid-import.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import duckdb

from mropt.history.batch import Batch
from mropt.history.guard import LOCKED, check_database
from mropt.history.schema import TABLES, create_tables
from mropt.model.errors import InputError

#: seconds a command waits for another process to release the database file
DEFAULT_WAIT = 60.0
HOLD_ENV = "MROPT_HISTORY_HOLD_BEFORE_COMMIT"
#: bytes 8-11 of every DuckDB database file
DUCKDB_MAGIC = b"DUCK"
#: the start of DuckDB's error when another process holds the file's lock
LOCK_ERROR = "Could not set lock on file"


def _is_lock_error(exc: Exception) -> bool:
    """DuckDB's error for a file another process holds (``Could not set lock on file ...: Conflicting
    lock is held in ...``); a corrupt file's (``Corrupt database file: ... in block at ...``) is not."""
    return isinstance(exc, duckdb.IOException) and LOCK_ERROR in str(exc)


def _open(path: Path, read_only: bool, wait: float) -> duckdb.DuckDBPyConnection:
    deadline = time.monotonic() + wait
    pause = 0.02
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only, config=LOCKED)
        except duckdb.Error as exc:
            if not _is_lock_error(exc):
                reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise InputError(f"{path}: cannot open the history database ({reason})") from None
            if time.monotonic() >= deadline:
                raise InputError(
                    f"{path}: the history database is in use by another process (waited {wait:g} s)"
                ) from None
        time.sleep(pause)
        pause = min(pause * 2, 0.25)


def create_database(path: str | Path) -> Path:
    """Create an empty history database at ``path`` if none is there (atomically; module docstring)."""
    path = Path(path)
    if path.exists():
        if path.is_dir():
            raise InputError(f"{path}: is a folder, not a history database file")
        return path
    if not path.parent.is_dir():
        raise InputError(f"{path}: cannot create the history database: no folder {path.parent}")
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        con = duckdb.connect(str(tmp), config=LOCKED)
        try:
            create_tables(con)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        with contextlib.suppress(FileExistsError):  # another process created it first: use theirs
            os.link(tmp, path)
    except OSError as exc:
        raise InputError(f"{path}: cannot create the history database ({exc.strerror or exc})") from None
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)
    return path


@contextmanager
def connect(
    path: str | Path, *, read_only: bool = True, wait: float = DEFAULT_WAIT
) -> Iterator[duckdb.DuckDBPyConnection]:
    """An open connection to an existing history database, closed at the end of the block.

    Opened with :data:`~mropt.history.guard.LOCKED` (no file, network or extension access from
    SQL; configuration locked) and refused in one line unless
    :func:`~mropt.history.guard.check_database` finds the four tables and no SQL of the file's own.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such history database (create one with `mropt history import`)")
    with open(path, "rb") as f:
        head = f.read(12)
    if head[8:12] != DUCKDB_MAGIC:
        raise InputError(f"{path}: not a history database (not a DuckDB file)")
    con = _open(path, read_only, wait)
    try:
        check_database(con, path)
        yield con
    finally:
        con.close()


def sources_present(con: duckdb.DuckDBPyConnection, sources: Sequence[str]) -> dict[str, int]:
    """Of ``sources``, those already in the database, with their number of jobs plus tasks."""
    found: dict[str, int] = {}
    for source in sources:
        row = con.execute(
            "SELECT (SELECT count(*) FROM jobs WHERE source = $s) + (SELECT count(*) FROM tasks WHERE source = $s)",
            {"s": source},
        ).fetchone()
        if row and row[0]:
            found[source] = int(row[0])
    return found


#: how a caller of :func:`import_batches` gives a source another name (its refusal's advice)
RENAME_ADVICE = (
    "nothing imported: to import it again, give it another source name (mropt history import --source NAME "
    "with that one FILE; mropt simulate --history-source NAME; a batch's source from Python)"
)


def refuse_present(
    con: duckdb.DuckDBPyConnection, path: str | Path, sources: Sequence[str], advice: str = RENAME_ADVICE
) -> None:
    """An InputError naming the first of ``sources`` already in the database at ``path``, then
    ``advice``; :func:`import_batches` calls it in its transaction, ``mropt simulate --history``
    before its run (with its own option as the advice)."""
    present = sources_present(con, sources)
    if present:
        source, rows = next(iter(present.items()))
        raise InputError(
            f"{path}: source {source!r} is already in the history database ({rows} job and task rows); {advice}"
        )


def import_batches(
    path: str | Path, batches: Sequence[Batch], *, wait: float = DEFAULT_WAIT
) -> dict[str, dict[str, int]]:
    """Write ``batches`` into the database at ``path`` (created if missing) in one transaction.

    Returns rows written per source and table. A source already present, or a name given
    twice, is an InputError and nothing is written.
    """
    names = [b.source for b in batches]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(f"source {twice[0]!r} is given twice in one import")
    path = create_database(path)
    with connect(path, read_only=False, wait=wait) as con:
        con.execute("BEGIN TRANSACTION")
        try:
            refuse_present(con, path, names)
            counts: dict[str, dict[str, int]] = {}
            for batch in batches:
                for table in TABLES:
                    data = batch.tables.get(table)
                    if data is None or data.num_rows == 0:
                        continue
                    con.register("incoming_rows", data)
                    try:
                        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming_rows")
                    finally:
                        con.unregister("incoming_rows")
                counts[batch.source] = {t: batch.count(t) for t in TABLES}
            hold = os.environ.get(HOLD_ENV)
            if hold:
                print(f"mropt: history: holding {hold} s before commit", file=sys.stderr, flush=True)
                time.sleep(float(hold))
            con.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(duckdb.Error):  # a connection already gone has committed nothing
                con.execute("ROLLBACK")
            raise
    return counts
