"""``mropt history report`` prints any imported time, however far: a date only where one exists.

A ``.jhist`` of a hostile (or broken) hand may hold a submit time past the year 9999: the import
takes it, and the report once raised (``datetime`` has no such year). Times from 2001-09-09 to the
year 9999 are epoch seconds, printed as UTC dates; others print as numbers.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_capture import run_cli
from history_files import write_jhist

#: write_jhist's times are epoch milliseconds from 1e12 (2001-09-09T01:46:40Z)
T0_MS = 1_000_000_000_000


def _shifted_jhist(path: Path, t0_ms: int) -> Path:
    """write_jhist's file with every epoch time moved so that the job is submitted at ``t0_ms``."""
    write_jhist(path)
    text = re.sub(r"\b1\d{12}\b", lambda m: str(int(m.group(0)) - T0_MS + t0_ms), path.read_text())
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("t0_ms", "first"),
    [
        (1_400_000_000_000, "2014-05-13T16:53:20Z"),  # a Hadoop 2 history's day
        (10**15, "1e+12"),  # the year 33658: no date, a number (raised ValueError before)
        (253_402_300_800_000, "2.534023008e+11"),  # the first second past 9999-12-31T23:59:59Z
    ],
)
def test_report_prints_a_date_only_where_one_exists(tmp_path: Path, t0_ms: int, first: str) -> None:
    db = tmp_path / "h.duckdb"
    assert run_cli("history", "import", db, _shifted_jhist(tmp_path / "a.jhist", t0_ms)).code == 0
    r = run_cli("history", "report", db)
    assert r.code == 0 and "Traceback" not in r.err, r.err
    row = next(line.split() for line in r.out.splitlines() if line.split()[:1] == ["a.jhist"])
    assert row[-2] == first, r.out
