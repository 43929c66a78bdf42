"""What SQL may do on a history database, and what a history database may hold (SECURITY.md).

A history database is often a file someone else made; ``mropt history query`` runs SQL a
user typed. Neither may reach past the database itself.

**Locked connections.** Every DuckDB connection mropt opens is made with :data:`LOCKED`:
``enable_external_access`` off (no ``COPY ... TO``, ``EXPORT``/``IMPORT DATABASE``,
``ATTACH``, ``read_text``/``read_csv``/``glob`` of a file or URL, ``INSTALL``/``LOAD``),
extensions neither installed nor loaded on their own, no Python variable read as a table
by its name (``python_enable_replacements``), and ``lock_configuration`` on, so no
``SET``/``RESET``/``PRAGMA`` turns any of it back on. Arrow tables registered from Python
(``con.register``, the import path) stay readable. An importer that reads a file with
DuckDB gets an in-memory connection allowed exactly the files it was given
(:func:`reader_connection`: DuckDB's ``allowed_paths``, set before the lock).

**Queries.** :func:`one_select` admits one statement that DuckDB parses as a plain
``SELECT`` (``WITH``, ``FROM``-first, ``VALUES``, ``UNION``, subqueries, ``DESCRIBE``,
``SHOW``, ``SUMMARIZE``, ``PIVOT ... IN (...)``, and the ``PRAGMA``s DuckDB rewrites into
such a ``SELECT``, like ``PRAGMA table_info('jobs')``) whose table functions are all in
:data:`TABLE_FUNCTIONS` (generators and the read-only catalog): DuckDB's
``json_serialize_sql`` gives the statement's syntax tree, every table function in it is
checked. Anything else is refused before it runs: another statement kind (``EXPLAIN``,
``CALL``, other ``PRAGMA``s, ``SET``/``RESET``, DDL, DML, ``COPY``, ``EXPORT``, ``ATTACH``,
``INSTALL``/``LOAD``, transactions), two statements, and table functions with effects
(``checkpoint``, ``enable_logging``, ``enable_profiling``, ``query``, ``arrow_scan``, the
file readers ...). Scalar functions are DuckDB's built-ins (a file holds no macro); none
of them reaches a file, the network or a setting.

**Received files.** :func:`check_database` runs before any other SQL on a newly opened
database: the four tables of :mod:`mropt.history.schema` must be base tables of the
``main`` schema with exactly the columns (names, order, types, nullability, defaults) and
constraints that :func:`~mropt.history.schema.create_tables` gives them, so no generated
column computes anything on a read; and the file may hold no view and no macro anywhere
(a view runs its own SQL; a DuckDB macro, even one named ``abs``, ``range`` or ``+``,
shadows the built-in function that mropt's analyses call). Other tables, indexes,
sequences and ENUM types hold data only and are allowed. The check reads the catalog
only through ``system.main`` table functions with no operator or function call, so a
macro cannot fake its answer.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from mropt.history.schema import TABLES, create_tables
from mropt.model.errors import InputError

#: DuckDB settings of every connection mropt opens (module docstring)
LOCKED: dict[str, Any] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "python_enable_replacements": False,
    "lock_configuration": True,
}
#: the table functions a query may call: generators and the read-only catalog (module docstring)
TABLE_FUNCTIONS = frozenset(
    {
        "range",
        "generate_series",
        "unnest",
        "repeat",
        "repeat_row",
        "json_each",
        "json_tree",
        "duckdb_columns",
        "duckdb_constraints",
        "duckdb_databases",
        "duckdb_dependencies",
        "duckdb_functions",
        "duckdb_indexes",
        "duckdb_keywords",
        "duckdb_schemas",
        "duckdb_sequences",
        "duckdb_settings",
        "duckdb_tables",
        "duckdb_types",
        "duckdb_views",
        "pragma_table_info",
        "pragma_storage_info",
        "pragma_database_size",
        "pragma_version",
    }
)
#: DuckDB's own catalogs (built-in functions and views; this connection's temporary objects)
_OWN_CATALOGS = ("system", "temp")
#: the catalog facts compared with a fresh database's (column and constraint rows)
_COLUMN_FIELDS = "table_name, column_index, column_name, data_type, is_nullable, column_default"
_CONSTRAINT_FIELDS = "table_name, constraint_type, constraint_text, constraint_column_names"


def reader_connection(paths: Sequence[str | Path]) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection that may read ``paths`` and no other file (module docstring)."""
    late = ("enable_external_access", "lock_configuration")  # set once allowed_paths is
    con = duckdb.connect(config={k: v for k, v in LOCKED.items() if k not in late})
    try:
        con.execute("SET allowed_paths = $p", {"p": [os.path.abspath(p) for p in paths]})
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except BaseException:
        con.close()
        raise
    return con


def _catalog(con: duckdb.DuckDBPyConnection, fields: str, function: str) -> list[tuple[Any, ...]]:
    """Rows of ``system.main.FUNCTION()`` outside DuckDB's own catalogs, filtered in Python."""
    rows = con.execute(f"SELECT database_name, schema_name, {fields} FROM system.main.{function}()").fetchall()
    return [row for row in rows if row[0] not in _OWN_CATALOGS]


@functools.cache
def _expected() -> tuple[tuple[tuple[Any, ...], ...], tuple[tuple[Any, ...], ...]]:
    """The column and constraint rows of the four tables as :func:`create_tables` makes them."""
    con = duckdb.connect(config=LOCKED)
    try:
        create_tables(con)
        columns = sorted(r[2:] for r in _catalog(con, _COLUMN_FIELDS, "duckdb_columns"))
        constraints = sorted(r[2:] for r in _catalog(con, _CONSTRAINT_FIELDS, "duckdb_constraints"))
    finally:
        con.close()
    return tuple(columns), tuple(constraints)


def check_database(con: duckdb.DuckDBPyConnection, path: str | Path) -> None:
    """Refuse, in one line, a database that is not a history database as mropt makes them (module docstring)."""
    where = f"{path}: not a history database"
    code = [(f"a {r[3]}", r) for r in _catalog(con, "function_name, function_type", "duckdb_functions")]
    code += [("a view", r) for r in _catalog(con, "view_name", "duckdb_views")]
    if code:
        what, row = code[0]
        raise InputError(f"{where} (it holds {what} {row[1]}.{row[2]}: SQL of its own, which mropt never runs)")
    tables = {r[2] for r in _catalog(con, "table_name", "duckdb_tables") if r[1] == "main"}
    missing = [t for t in TABLES if t not in tables]
    if missing:
        raise InputError(f"{where} (no table {missing[0]!r})")
    want_columns, want_constraints = _expected()
    columns = [r[2:] for r in _catalog(con, _COLUMN_FIELDS, "duckdb_columns") if r[1] == "main" and r[2] in TABLES]
    for table in TABLES:
        got_rows = sorted(r for r in columns if r[0] == table)
        want_rows = [r for r in want_columns if r[0] == table]
        for index, (got, want) in enumerate(zip([*got_rows, None], [*want_rows, None]), start=1):
            if got != want:
                raise InputError(
                    f"{where} (table {table!r}, column {index}: "
                    f"{_column_text(got) if got else 'missing'}; mropt makes {_column_text(want) if want else 'none'})"
                )
    constraints = sorted(
        r[2:] for r in _catalog(con, _CONSTRAINT_FIELDS, "duckdb_constraints") if r[1] == "main" and r[2] in TABLES
    )
    for got in constraints:
        if got not in want_constraints:
            raise InputError(f"{where} (table {got[0]!r} has the constraint {got[2]}, which mropt never makes)")


def _column_text(row: tuple[Any, ...]) -> str:
    """A column row as ``name TYPE [NOT NULL] [DEFAULT expr]`` (a generated column shows its expression)."""
    _, _, column, dtype, nullable, default = row
    text = f"{column!r} {dtype}" + ("" if nullable else " NOT NULL")
    return text if default is None else f"{text} DEFAULT {str(default)[:80]}"


def one_select(con: duckdb.DuckDBPyConnection, sql: str) -> Any:
    """The one ``SELECT`` statement of ``sql``, parsed on ``con`` (module docstring); else a one-line InputError."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise InputError(f"query: {str(exc).splitlines()[0]}") from None
    if len(statements) != 1:
        raise InputError(f"query: history query runs one read-only SELECT statement, got {len(statements)}")
    statement = statements[0]
    if statement.type != duckdb.StatementType.SELECT:
        raise InputError(f"query: history query runs one read-only SELECT statement, got {statement.type.name}")
    row = con.execute("SELECT json_serialize_sql($q)", {"q": statement.query}).fetchone()
    tree = json.loads(row[0]) if row else {"error": True}
    if tree.get("error"):
        reason = (str(tree.get("error_message") or "").splitlines() or ["not a plain SELECT"])[0]
        raise InputError(f"query: history query runs one plain SELECT statement ({reason})")
    called = sorted(_table_functions(tree) - TABLE_FUNCTIONS)
    if called:
        raise InputError(
            f"query: table function {called[0]}() is not allowed in history query "
            "(only generators such as range() and the read-only duckdb_*() catalog; SECURITY.md)"
        )
    return statement


def _table_functions(node: Any) -> set[str]:
    """The names of every table function in a ``json_serialize_sql`` tree."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("type") == "TABLE_FUNCTION":
                found.add(str((item.get("function") or {}).get("function_name", "")).lower())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found
