"""Errors raised for bad input: one line, naming the field and the value.

The CLI prints :class:`InputError` messages on one line on stderr and exits with
status 2; nothing else in mropt catches them.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class InputError(ValueError):
    """Bad input from the user: a malformed instance, solution, file or parameter.

    The message is one line and names where the problem is (job id, field) and the
    offending value, so that a researcher can fix the file without reading code.
    """

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


#: the largest input file mropt reads (instances, solutions, traces): 1 GiB. A file beyond
#: it would take many times its size in memory once parsed; it is refused up front.
MAX_INPUT_BYTES = 1 << 30


def read_input_file(path: str | Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of an input file; a missing, unreadable, directory or device path is an InputError.

    A regular file, a pipe (``/dev/stdin``) or a link to one is read; a folder or a
    device (``/dev/zero``, ``/dev/urandom``, a terminal) is refused, and so is a file of
    more than ``limit`` bytes (:data:`MAX_INPUT_BYTES`), without reading it all.
    """
    path = Path(path)
    try:
        with open(path, "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                raise InputError(f"{path}: is a device, not a file")
            data = f.read(limit + 1)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or type(exc).__name__})") from None
    if len(data) > limit:
        raise InputError(f"{path}: larger than {_size(limit)}, the most mropt reads from one input file")
    return data


def _size(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"
