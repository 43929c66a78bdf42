"""Run code in a fresh Python interpreter and say which modules it left imported.

The start-up tests (``tests/test_startup.py``) and the lazy method registration tests
(``tests/admission/test_lazy_methods.py``) check structurally, not by the clock, that a command
or an import loads no solver: the interpreter of the test session has them all loaded already.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from typing import Any


def loaded_after(code: str, modules: Iterable[str]) -> tuple[list[str], Any]:
    """Run ``code`` (which may set ``result``, JSON-serialisable; ``contextlib``, ``io``, ``json``
    and ``sys`` are imported) in a fresh interpreter: which of ``modules`` it left in
    ``sys.modules`` (sorted), and ``result``."""
    script = (
        "import contextlib, io, json, sys\n"
        "result = None\n"
        f"{code}\n"
        f"loaded = sorted(m for m in {tuple(modules)!r} if m in sys.modules)\n"
        "print(json.dumps({'loaded': loaded, 'result': result}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return out["loaded"], out["result"]
