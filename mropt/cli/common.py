"""Helpers shared by the CLI subcommands: output files and parameter parsing."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mropt.model.errors import InputError


def write_text(text: str, out: str | None) -> None:
    """Write to ``out`` atomically (temporary file renamed into place), or to stdout."""
    if out is None or out == "-":
        sys.stdout.write(text)
        return
    path = Path(out)
    if path.is_dir():
        raise InputError(f"{path}: is a directory; give a file name for -o")
    if not path.parent.exists():
        raise InputError(f"{path}: folder {path.parent} does not exist")
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


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
