"""Hostile input to the job-history database: SQL that reaches past the database,
received files that carry SQL of their own, corrupt files.

Each is refused with exit 2 and one line, and no file is read, written or changed: every
test compares a snapshot of the whole folder (the database, another database, a secret
file, a file a COPY could overwrite, and the ``HOME`` DuckDB would install extensions
under) before and after.
"""

from __future__ import annotations

import hashlib
import random
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mropt.history import store
from mropt.history.guard import reader_connection
from mropt.history.store import import_batches
from mropt.importers.table import read_batches
from mropt.instances.workload_gen import generate_workload
from mropt.model.io import save_instance

from cli_capture import assert_input_error, run_cli
from history_files import write_rumen

SECRET = "s3cr3t-issue-28"

#: SQL that would read, write or change something outside the database (``{d}``: the folder)
HOSTILE = (
    "COPY (SELECT 42) TO '{d}/x.csv'",
    "COPY jobs TO '{d}/victim.csv' (HEADER false)",
    "EXPORT DATABASE '{d}/exported'",
    "ATTACH '{d}/other.db' AS o (READ_WRITE); DELETE FROM o.jobs",
    "ATTACH '{d}/other.db' AS o",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SELECT * FROM read_text('{d}/secret.txt')",
    "SELECT content FROM read_blob('{d}/secret.txt')",
    "SELECT * FROM read_csv('{d}/secret.txt', header = false)",
    "SELECT * FROM glob('{d}/*')",
    "SELECT * FROM read_csv('http://127.0.0.1:9/x.csv')",
    "SELECT * FROM '{d}/victim.csv'",
    "SELECT * FROM enable_logging(storage = 'file', storage_path = '{d}/logs')",
    "SUMMARIZE (SELECT * FROM checkpoint())",
    "SELECT * FROM jobs WHERE EXISTS (FROM query('SELECT 1'))",
    "SET enable_external_access = true",
    "RESET enable_external_access",
    "SET threads = 1",
    "PRAGMA enable_profiling",
    "CREATE TEMP TABLE t AS SELECT 1",
    "CREATE TABLE t (a INTEGER)",
    "INSERT INTO jobs (source, job_id) VALUES ('x', 'y')",
    "DELETE FROM jobs",
    "UPDATE jobs SET name = 'x'",
    "DROP TABLE jobs",
    "CREATE MACRO abs(x) AS 43",
    "BEGIN TRANSACTION",
    "CHECKPOINT",
    "EXPLAIN ANALYZE COPY (SELECT 42) TO '{d}/x.csv'",
    "SELECT 1; COPY (SELECT 42) TO '{d}/x.csv'",
    "SELECT 1; SELECT 2",
)
#: what still runs: one SELECT in its forms, over the tables and the views
ALLOWED = (
    ("WITH a AS (SELECT * FROM jobs) SELECT count(*) AS n FROM a", "n\n1\n"),
    ("FROM jobs SELECT count(*) AS n", "n\n1\n"),
    ("SELECT count(*) AS n FROM task_resource;", "n\n3\n"),
    ("VALUES (1) UNION ALL SELECT 2", "col0\n1\n2\n"),
    ("SELECT count(*) AS n FROM range(3), (DESCRIBE jobs)", "n\n57\n"),
    ("SELECT table_name FROM duckdb_tables() ORDER BY 1 LIMIT 1", "table_name\nattempts\n"),
)


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (relative name -> sha256 of its bytes)."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the history database h.db (one Rumen job), another one, a secret, a COPY victim."""
    d = tmp_path_factory.mktemp("hostile")
    import_batches(d / "h.db", read_batches([write_rumen(d / "b.json")]))
    import_batches(d / "other.db", read_batches([write_rumen(d / "c.json")]))
    (d / "secret.txt").write_text(SECRET + "\n")
    (d / "victim.csv").write_text("keep me\n")
    return d


@pytest.fixture
def home(site: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME inside the watched folder, so an extension install would show in the snapshot."""
    monkeypatch.setenv("HOME", str(site / "home"))
    return site / "home"


def assert_refused(site: Path, sql: str) -> None:
    before = snapshot(site)
    r = run_cli("history", "query", site / "h.db", sql.format(d=site))
    line = assert_input_error(r, "query:")
    assert SECRET not in r.out + r.err and "keep me" not in r.out + r.err
    # refused before it runs (one SELECT of allowed table functions), or by DuckDB's locked configuration
    # (a file name as a table is no table at all)
    assert any(w in line for w in ("history query", "disabled by configuration", "does not exist")), line
    assert snapshot(site) == before, sql


@pytest.mark.parametrize("sql", HOSTILE)
def test_a_query_that_reaches_past_the_database_is_refused(site: Path, home: Path, sql: str) -> None:
    assert_refused(site, sql)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sql=st.sampled_from(HOSTILE),
    before=st.sampled_from(["", "  \n", "/* c */ ", "-- c\n", "SELECT 1;\n", "WITH x AS (SELECT 1) SELECT * FROM x; "]),
    after=st.sampled_from(["", ";", " ; ", "\n-- end", "; SELECT 1", ";\nVALUES (2)"]),
    lower=st.booleans(),
)
def test_any_statement_kind_wrapped_or_chained_is_refused(
    site: Path, home: Path, sql: str, before: str, after: str, lower: bool
) -> None:
    """Comments, case, separators and a harmless statement before or after change nothing."""
    head, _, rest = sql.partition(" ")
    assert_refused(site, before + (head.lower() if lower else head) + " " + rest + after)


@pytest.mark.parametrize(("sql", "out"), ALLOWED)
def test_one_select_still_runs(site: Path, sql: str, out: str) -> None:
    r = run_cli("history", "query", site / "h.db", sql)
    assert r.code == 0, r.err
    assert r.out == out


# -- received databases --------------------------------------------------------------------
def received(site: Path, tmp_path: Path, *sql: str) -> Path:
    """A copy of h.db changed by ``sql`` (run by plain DuckDB, as whoever sent it would)."""
    db = tmp_path / "received.db"
    shutil.copyfile(site / "h.db", db)
    con = duckdb.connect(str(db))
    try:
        for statement in sql:
            con.execute(statement.format(d=site))
    finally:
        con.close()
    return db


JOBS_OVER_A_FILE = (
    "ALTER TABLE jobs RENAME TO jobs_data",
    "CREATE VIEW jobs AS SELECT * REPLACE (content AS source) FROM jobs_data, read_text('{d}/secret.txt')",
)
CONFCOLS = "source VARCHAR NOT NULL, job_id VARCHAR NOT NULL, key VARCHAR NOT NULL"
RECEIVED = {
    "a view over a file": (JOBS_OVER_A_FILE, "view main.jobs"),
    "another view": (("CREATE VIEW leak AS SELECT * FROM read_text('{d}/secret.txt')",), "view main.leak"),
    "a macro shadowing abs": (("CREATE MACRO abs(x) AS 43",), "macro main.abs"),
    "a table macro shadowing range": (("CREATE MACRO range(n) AS TABLE SELECT 7 AS range",), "table_macro main.range"),
    "a macro in another schema": (("CREATE SCHEMA s", "CREATE MACRO s.f(x) AS x"), "macro s.f"),
    "a generated column": (
        ("DROP TABLE jobconf", f"CREATE TABLE jobconf ({CONFCOLS}, value VARCHAR AS (key))"),
        "column 4",
    ),
    "a column of another type": (
        ("DROP TABLE jobconf", f"CREATE TABLE jobconf ({CONFCOLS}, value INTEGER)"),
        "column 4",
    ),
    "an extra column": (("ALTER TABLE jobs ADD COLUMN extra INTEGER",), "column 20"),
    "a check constraint": (
        ("DROP TABLE jobconf", f"CREATE TABLE jobconf ({CONFCOLS}, value VARCHAR CHECK (value <> 'x'))"),
        "constraint CHECK",
    ),
}


@pytest.mark.parametrize("case", list(RECEIVED))
def test_a_received_database_with_sql_of_its_own_is_refused(site: Path, tmp_path: Path, case: str) -> None:
    sql, words = RECEIVED[case]
    db = received(site, tmp_path, *sql)
    before = snapshot(tmp_path)
    for argv in (("history", "report", db), ("history", "query", db, "SELECT count(*) FROM jobs")):
        r = run_cli(*argv)
        assert_input_error(r, str(db), "not a history database", words)
        assert SECRET not in r.out + r.err
    assert snapshot(tmp_path) == before


def test_simulate_and_hei_refuse_a_received_view(site: Path, tmp_path: Path) -> None:
    db = received(site, tmp_path, *JOBS_OVER_A_FILE)
    workload = tmp_path / "w.json"
    save_instance(generate_workload("amb-dynamic", seed=3, jobs=4), workload)
    before = snapshot(tmp_path)
    for argv in (
        ("simulate", workload, "--policy", "fifo", "--history", db),
        ("simulate", workload, "--policy", "hei", "--param", f"history={db}"),
    ):
        r = run_cli(*argv)
        assert_input_error(r, "not a history database", "view main.jobs")
        assert SECRET not in r.out + r.err
    assert snapshot(tmp_path) == before


def test_tables_indexes_and_sequences_of_ones_own_are_kept(site: Path, tmp_path: Path) -> None:
    """Data without SQL of its own is allowed (SECURITY.md): an extra table, an index, a sequence, an ENUM."""
    db = received(
        site,
        tmp_path,
        "CREATE TABLE notes AS SELECT 1 AS n",
        'CREATE INDEX jobs_user ON jobs ("user")',
        "CREATE SEQUENCE seq",
        "CREATE TYPE mood AS ENUM ('a', 'b')",
    )
    r = run_cli("history", "query", db, "SELECT n FROM notes")
    assert (r.code, r.out) == (0, "n\n1\n"), r.err
    assert run_cli("history", "report", db).code == 0


# -- corrupt files and the lock --------------------------------------------------------------
def corrupt(site: Path, tmp_path: Path, how: str) -> Path:
    """h.db with random bytes after its first three 4 KiB blocks (checksums fail), or cut short."""
    data = (site / "h.db").read_bytes()
    rng = random.Random(28)
    data = data[: 3 * 4096] + rng.randbytes(len(data) - 3 * 4096) if how == "random tail" else data[:5000]
    db = tmp_path / f"{how.replace(' ', '-')}.db"
    db.write_bytes(data)
    return db


@pytest.mark.parametrize("how", ["random tail", "truncated"])
def test_a_corrupt_database_is_refused_at_once(
    site: Path, tmp_path: Path, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not "in use by another process" after the 60 s lock wait: DuckDB's checksum error says
    "block", which is not its lock error."""
    db = corrupt(site, tmp_path, how)

    def no_wait(seconds: float) -> None:
        raise AssertionError(f"waited {seconds} s for a lock")

    monkeypatch.setattr(store.time, "sleep", no_wait)  # the lock wait's only pause
    for argv in (("history", "report", db), ("history", "query", db, "SELECT 1")):
        line = assert_input_error(run_cli(*argv), str(db), "cannot open the history database")
        assert "in use" not in line


def test_a_database_another_process_holds_is_waited_for(site: Path, tmp_path: Path) -> None:
    """DuckDB's lock error itself is still recognised: --wait, then "in use by another process"."""
    db = tmp_path / "held.db"
    shutil.copyfile(site / "h.db", db)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, sys, time; c = duckdb.connect({str(db)!r}); print(1, flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "1"
        r = run_cli("history", "query", db, "SELECT 1", "--wait", "0.3")
        assert_input_error(r, "in use by another process", "waited 0.3 s")
    finally:
        holder.communicate("", timeout=30)


def test_an_importer_reads_only_the_files_it_was_given(site: Path) -> None:
    con = reader_connection([site / "b.json"])
    try:
        assert con.execute("SELECT count(*) FROM read_text($p)", {"p": str(site / "b.json")}).fetchone() == (1,)
        for sql in (
            f"SELECT * FROM read_text('{site}/secret.txt')",
            f"COPY (SELECT 1) TO '{site}/x.csv'",
            "SET enable_external_access = true",
        ):
            with pytest.raises(duckdb.Error):
                con.execute(sql)
    finally:
        con.close()
    assert not (site / "x.csv").exists()
