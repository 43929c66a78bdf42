"""Plain-text tables for reports and the CLI (the harness layer, so both can use them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mropt.model.decisions import text_scalar


def fmt(value: Any) -> str:
    """Numbers with up to 6 significant digits; None as '-' (the same rule as ``mropt solve``'s rows)."""
    return text_scalar(value)


def render(headers: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[bool] | None = None) -> str:
    """Columns padded to their widest cell; numbers right-aligned (``numeric`` says which columns
    are, for rows already formatted as text)."""
    cells = [[fmt(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    if numeric is None:
        numeric = [all(isinstance(row[i], (int, float)) or row[i] is None for row in rows) for i in range(len(headers))]

    def line(items: Sequence[str]) -> str:
        parts = [s.rjust(w) if num else s.ljust(w) for s, w, num in zip(items, widths, numeric)]
        return "  ".join(parts).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(r) for r in cells]
    return "\n".join(out)
