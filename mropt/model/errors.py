"""Errors raised for bad input: one line, naming the field and the value.

The CLI prints :class:`InputError` messages on one line on stderr and exits with
status 2; nothing else in mropt catches them.
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad input from the user: a malformed instance, solution, file or parameter.

    The message is one line and names where the problem is (job id, field) and the
    offending value, so that a researcher can fix the file without reading code.
    """

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))
