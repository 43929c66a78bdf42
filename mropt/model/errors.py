"""Errors raised for bad input: one line, naming the field and the value.

The CLI prints :class:`InputError` messages on one line on stderr and exits with
status 2; nothing else in mropt catches them.
"""

from __future__ import annotations

from pathlib import Path


class InputError(ValueError):
    """Bad input from the user: a malformed instance, solution, file or parameter.

    The message is one line and names where the problem is (job id, field) and the
    offending value, so that a researcher can fix the file without reading code.
    """

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


def read_input_file(path: str | Path) -> bytes:
    """The bytes of an input file; a missing, unreadable or directory path is an InputError."""
    path = Path(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
