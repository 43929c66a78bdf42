"""One import batch: the rows one source file adds to each table, as Arrow tables.

Every importer parses its whole file into a :class:`Batch` before the database is
touched (:mod:`mropt.history.store` then writes all batches of one command in one
transaction), so a malformed row stops the import before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from mropt.history.schema import COLUMNS, TABLES
from mropt.model.errors import InputError, read_input_file

_ARROW = {"VARCHAR": pa.string(), "DOUBLE": pa.float64(), "BIGINT": pa.int64(), "BOOLEAN": pa.bool_()}


def arrow_schema(table: str) -> pa.Schema:
    """The Arrow schema of ``table`` (its columns in order, nullable)."""
    return pa.schema([(name, _ARROW[kind.split()[0]]) for name, kind in COLUMNS[table].items()])


@dataclass
class Batch:
    """The rows of one source (``kind``: jhist, rumen, alibaba, swim, simulation)."""

    source: str
    kind: str
    tables: dict[str, pa.Table] = field(default_factory=dict)

    def count(self, table: str) -> int:
        t = self.tables.get(table)
        return 0 if t is None else t.num_rows


def rows_table(table: str, rows: list[dict[str, Any]], source: str) -> pa.Table:
    """An Arrow table of ``rows`` (dicts of column -> value; missing columns are null), ``source`` filled in."""
    schema = arrow_schema(table)
    columns = {name: [r.get(name) for r in rows] for name in schema.names}
    columns["source"] = [source] * len(rows)
    if table == "tasks":
        columns["slots"] = [1 if v is None else v for v in columns["slots"]]
    return pa.table(columns, schema=schema)


def batch_from_rows(source: str, kind: str, rows: dict[str, list[dict[str, Any]]]) -> Batch:
    """A batch of Python rows per table (the Python-parsed sources: jhist, Rumen, SWIM)."""
    return Batch(source, kind, {t: rows_table(t, rows.get(t, []), source) for t in TABLES})


def read_text(path: Path) -> str:
    """A source file's text (UTF-8); InputError naming the file and the line of a bad byte."""
    raw = read_input_file(path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"{path.name} line {line}: not UTF-8 text") from None


def conform_table(table: str, data: pa.Table, source: str) -> pa.Table:
    """``data`` (an Arrow table with some of ``table``'s columns) with all of them in order, ``source`` filled in."""
    schema = arrow_schema(table)
    n = data.num_rows
    arrays = []
    for fld in schema:
        if fld.name == "source":
            arrays.append(pa.array([source] * n, type=pa.string()))
        elif fld.name in data.column_names:
            arrays.append(data.column(fld.name).cast(fld.type))
        elif table == "tasks" and fld.name == "slots":
            arrays.append(pa.array([1] * n, type=fld.type))
        else:
            arrays.append(pa.nulls(n, type=fld.type))
    return pa.Table.from_arrays(arrays, schema=schema)
