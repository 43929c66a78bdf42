"""Numbers and tables for reading: rounding rules, natural order, Markdown, HTML and LaTeX.

A column's format follows from its name (:func:`column_format`), so every table of a
report is rounded the same way, whatever writes it:

* ``... %`` -- percentages, 2 decimals (``5.56``);
* ``... s`` -- seconds, 3 significant digits, never in exponent form (``0.000835``, ``12.3``, ``1230``);
* ``objective``, ``bound``, ``reference``, ``benefit`` -- objective values, an integer when
  integral (``10070``, not ``1.007e+04``), else 6 significant digits;
* integers as integers; other numbers 4 significant digits; a missing value ``-``.

CSV files keep every digit; only what people read is rounded. Groups and instance names
sort in natural order (:func:`natural_key`: ``N = 8`` before ``N = 40``).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

VALUE_COLUMNS = ("objective", "bound", "reference", "benefit")
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")


# -- natural order --------------------------------------------------------------------------
def natural_key(text: Any) -> tuple[Any, ...]:
    """A sort key that orders the numbers inside a label by value: ``jobs=8 < jobs=40``, ``n9 < n10``."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return ((2, ""),)
    if isinstance(text, (int, float, np.integer, np.floating)) and not isinstance(text, bool):
        return ((0, float(text)),)
    parts = _NUMBER.split(str(text))
    return tuple((0, float(p)) if i % 2 else (1, p) for i, p in enumerate(parts) if p != "")


def sort_natural(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """``frame`` sorted by ``columns`` in natural order (stable)."""
    if frame.empty:
        return frame
    keys = [frame[c].map(natural_key) for c in columns]
    order = sorted(range(len(frame)), key=lambda i: tuple(k.iloc[i] for k in keys))
    return frame.iloc[order].reset_index(drop=True)


# -- numbers --------------------------------------------------------------------------------
def _missing(v: Any) -> bool:
    return v is None or v is pd.NA or v is pd.NaT or (isinstance(v, (float, np.floating)) and math.isnan(v))


def _positional(v: float, digits: int) -> str:
    text = np.format_float_positional(float(v), precision=digits, fractional=False, unique=True, trim="-")
    return "0" if text in ("-0", "0") else text


def percent(v: Any) -> str:
    """A percentage with 2 decimals (``-0.00`` is ``0.00``)."""
    if _missing(v):
        return "-"
    if not math.isfinite(float(v)):
        return "inf" if float(v) > 0 else "-inf"
    text = f"{float(v):.2f}"
    return "0.00" if text == "-0.00" else text


def seconds(v: Any) -> str:
    """Seconds with 3 significant digits, positional."""
    if _missing(v):
        return "-"
    return _positional(v, 3) if math.isfinite(float(v)) else "inf"


def value(v: Any) -> str:
    """An objective value: an integer when integral, else 6 significant digits, positional."""
    if _missing(v):
        return "-"
    x = float(v)
    if not math.isfinite(x):
        return "inf" if x > 0 else "-inf"
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return _positional(x, 6)


def number(v: Any) -> str:
    """Any other number: integers as such, floats with 4 significant digits, positional."""
    if _missing(v):
        return "-"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return _positional(float(v), 4) if math.isfinite(float(v)) else ("inf" if v > 0 else "-inf")
    return str(v)


def column_format(name: str) -> Any:
    """The formatter of a column, from its name (see the module docstring)."""
    low = str(name).lower()
    if low.endswith("%"):
        return percent
    if low.endswith(" s"):
        return seconds
    if low in VALUE_COLUMNS:
        return value
    return number


def _numeric(column: pd.Series) -> bool:
    """True when every present value is a number (not a bool, not text)."""
    present = [v for v in column if not _missing(v)]
    return bool(present) and all(
        isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)) for v in present
    )


def formatted(frame: pd.DataFrame) -> tuple[list[str], list[list[str]], list[bool]]:
    """Headers, cells as text, and which columns are numeric (right-aligned)."""
    headers = [str(c) for c in frame.columns]
    numeric = [_numeric(frame[c]) for c in frame.columns]
    fmts = [column_format(c) for c in frame.columns]
    rows = [
        [f(v) if num or not isinstance(v, str) else v for f, v, num in zip(fmts, row, numeric)]
        for row in frame.itertuples(index=False)
    ]
    return headers, rows, numeric


# -- writers --------------------------------------------------------------------------------
def markdown(frame: pd.DataFrame) -> str:
    """A pipe table (numbers right-aligned)."""
    headers, rows, numeric = formatted(frame)
    esc = [h.replace("|", "\\|") for h in headers]
    head = "| " + " | ".join(esc) + " |"
    sep = "|" + "|".join("---:" if n else "---" for n in numeric) + "|"
    body = ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join([head, sep, *body])


def html_table(frame: pd.DataFrame) -> str:
    """An HTML table, numbers right-aligned (class ``num``)."""
    headers, rows, numeric = formatted(frame)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "\n".join(
        "<tr>"
        + "".join(f'<td class="{"num" if n else "txt"}">{html.escape(c)}</td>' for c, n in zip(r, numeric))
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def latex_table(frame: pd.DataFrame, title: str = "") -> str:
    """A booktabs ``tabular`` (``\\usepackage{booktabs}``), numbers right-aligned, ``--`` for missing."""
    headers, rows, numeric = formatted(frame)
    spec = "".join("r" if n else "l" for n in numeric) or "l"
    lines = []
    if title:
        lines.append(f"% {title} (mropt report; needs \\usepackage{{booktabs}})")
    lines += [
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        " & ".join(latex_escape(h) for h in headers) + r" \\",
        "\\midrule",
    ]
    for r in rows:
        lines.append(" & ".join("--" if c == "-" else latex_escape(c) for c in r) + r" \\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def pyplot() -> Any:
    """matplotlib's pyplot on the non-interactive Agg back end (reports draw to files only)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def fit_titles(fig: Any) -> None:
    """Wrap the figure's suptitle and its axes' titles where they would stick out of the canvas.

    A title wider than the figure (the suptitle, 96 % of it) or than its axes (an axes title,
    115 % of the axes' width, at most the figure's) is broken into lines at word boundaries, so
    that ``tight_layout`` can then keep every title inside the canvas; call before it.
    """
    import textwrap

    renderer = fig.canvas.get_renderer()
    full = fig.bbox.width * 0.96
    titles = [(getattr(fig, "_suptitle", None), full)]
    titles += [(ax.title, min(full, ax.bbox.width * 1.15)) for ax in fig.axes if ax.get_visible()]
    for text, room in titles:
        if text is None or not text.get_text():
            continue
        width = text.get_window_extent(renderer).width
        if width <= room:
            continue
        lines = text.get_text().split("\n")
        chars = max(12, int(max(len(line) for line in lines) * room / width * 0.95))
        text.set_text("\n".join(textwrap.fill(line, chars) for line in lines))
