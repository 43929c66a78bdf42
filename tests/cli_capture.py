"""The ``mropt`` command run in this process, its output captured as a terminal would see it.

Shared by the tests of the input-error promise (README, "Input errors"): exit 2 with one
line naming the field, or a valid result; never a traceback, never a warning on stderr.
stdout and stderr are UTF-8 text streams over bytes, as a real terminal's are, so text
that cannot be written (a lone surrogate) fails here as it would there; Python warnings
(numpy's ``overflow encountered``), which the real command prints on stderr, are
recorded and returned.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import warnings
from dataclasses import dataclass, field

from mropt.cli.main import main


@dataclass
class Result:
    code: int
    out: str
    err: str
    warnings: list[str] = field(default_factory=list)
    argv: tuple[str, ...] = ()

    @property
    def err_lines(self) -> list[str]:
        return self.err.strip().splitlines()


def run_cli(*argv: object) -> Result:
    """``mropt ARGV`` in this process; exceptions other than SystemExit propagate (a traceback)."""
    out_bytes, err_bytes = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", errors="strict")
    err = io.TextIOWrapper(err_bytes, encoding="utf-8", errors="strict")
    args = tuple(str(a) for a in argv)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse
                code = exc.code if isinstance(exc.code, int) else 2
            out.flush()
            err.flush()
    return Result(
        code,
        out_bytes.getvalue().decode(),
        err_bytes.getvalue().decode(),
        [f"{w.category.__name__}: {w.message}" for w in caught],
        args,
    )


def run_completed(*argv: object) -> subprocess.CompletedProcess:
    """``mropt ARGV`` in this process, as ``subprocess.run(..., capture_output=True, text=True)``
    would return it: for tests written against the command's exit status, stdout and stderr,
    without starting a Python process (and its imports) per call. A recorded Python warning is
    appended to stderr, where the real command prints it. The command as a real process, its
    entry point and its exit status: tests/test_cli.py and the documented commands
    (tests/test_docs_commands.py, tests/test_golden.py)."""
    r = run_cli(*argv)
    return subprocess.CompletedProcess(list(r.argv), r.code, r.out, r.err + "".join(f"{w}\n" for w in r.warnings))


def assert_promise(result: Result, *, ok_codes: tuple[int, ...] = (0,)) -> None:
    """Exit 2 with one ``mropt: error:`` line, or one of ``ok_codes``; no traceback, no warning."""
    assert "Traceback" not in result.err, (result.argv, result.err)
    assert not result.warnings, (result.argv, result.warnings)
    if result.code == 2:
        assert len(result.err_lines) == 1, (result.argv, result.err)
        assert result.err_lines[0].startswith("mropt: error: "), (result.argv, result.err)
    else:
        assert result.code in ok_codes, (result.argv, result.code, result.err)


def assert_input_error(result: Result, *words: str) -> str:
    """Exit 2 with exactly one ``mropt: error:`` line containing every word; returns the line."""
    assert_promise(result)
    assert result.code == 2, (result.argv, result.code, result.out[:300], result.err)
    line = result.err_lines[0]
    for word in words:
        assert word in line, line
    return line
