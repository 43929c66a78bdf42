"""Helpers shared by the CLI subcommands: output files and parameter parsing."""

from __future__ import annotations

import json
import sys
from typing import Any

from mropt.model import files
from mropt.model.errors import InputError


def write_text(text: str, out: str | None) -> None:
    """Write to stdout (``out`` None or ``-``) or to the file ``out`` through :mod:`mropt.model.files`.

    A regular file is replaced atomically; a device, pipe or symlink target is written
    through (issues 13 item 8, 14 item 2); a bad path is a one-line InputError.
    """
    if out is None or out == "-":
        sys.stdout.write(text)
        return
    files.write_text(out, text)


def parse_param(text: str) -> tuple[str, Any]:
    """``name=value`` with the value read as JSON when it parses (numbers, true/false), else a string."""
    name, sep, raw = text.partition("=")
    if not sep or not name:
        raise InputError(f"--param expects name=value, got {text!r}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return name.strip().replace("-", "_"), value
