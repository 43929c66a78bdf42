"""Which source tree a benchmark script measures: ``--tree DIR`` (default: the script's own tree).

A script beside this file that compares trees (``callgrind_run.py``, ``bench_memory.py``) imports
``mropt`` from the tree it is given, before anything else of mropt: once the package is imported,
every ``mropt`` module comes from the package's own folder, whatever is put first on ``sys.path``
after it (``bench_sim`` puts its own tree there). ``PYTHONPATH=TREE`` alone does not select a
tree, since a script's own tree is put before it. The script prints the folder it imported.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

#: the tree these scripts are in (the default ``--tree``)
HOME = Path(__file__).resolve().parent.parent


def add_tree_option(parser: argparse.ArgumentParser) -> None:
    """The ``--tree DIR`` option (default: :data:`HOME`)."""
    parser.add_argument("--tree", type=Path, default=HOME, help="folder holding mropt/ (default: this script's tree)")


def select_tree(tree: Path, script: str) -> Path:
    """Import ``mropt`` from ``tree`` (first on ``sys.path``) and return the package's folder; a
    folder without ``mropt/`` is a one-line error naming ``script`` (exit 2)."""
    tree = tree.resolve()
    if not (tree / "mropt" / "__init__.py").is_file():
        print(f"{script}: --tree must be a folder holding mropt/, got {str(tree)!r}", file=sys.stderr)
        raise SystemExit(2)
    sys.path.insert(0, str(tree))
    import mropt

    got = Path(mropt.__file__).resolve().parent
    if got != tree / "mropt":  # (mropt imported before, from another tree)
        print(f"{script}: mropt was already imported from {str(got)!r}, not from --tree {str(tree)!r}", file=sys.stderr)
        raise SystemExit(2)
    return got
