"""The packages that register methods, imported on the registry's first lookup.

``import mropt`` loads no solver, numpy or pandas (``mropt --version`` and ``mropt --help`` start
in a fraction of a second), so it cannot import the problem packages, whose modules register
their methods, verifiers and report panels when imported. The facade (``mropt/__init__.py``)
hands :func:`provide` a function that imports them, and :mod:`mropt.registry` calls
:func:`load` before it answers what is registered (``methods``, ``get_method``, ``solve``,
``verify_solution``, ``kinds``, ``report_panels``). Python imports the package ``mropt``
before any of its modules, so the loader is in place whatever is imported first, and
``from mropt.registry import solve`` finds every method as it did when ``import mropt``
imported them all.

This module imports nothing of mropt (layer 0): the registry reaches the layers above it only
through the function the facade gave (docs/architecture.md, the layering rule).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

_LOADERS: list[Callable[[], object]] = []
_LOCK = threading.RLock()
_state = "new"  # new, loading (this thread is running the loaders), done


def provide(loader: Callable[[], object]) -> None:
    """Run ``loader`` (it imports packages that register) on the first :func:`load`."""
    global _state
    with _LOCK:
        _LOADERS.append(loader)
        if _state == "done":
            _state = "new"


def load() -> None:
    """Run every loader once, in the order given; a lookup during the imports returns at once.

    Another thread asking meanwhile waits until the imports are done. A loader that raises
    leaves the state as it was, so the next lookup tries again and raises the same error.
    """
    global _state
    if _state == "done":
        return
    with _LOCK:
        if _state != "new":  # done, or this thread is inside a loader
            return
        _state = "loading"
        try:
            for loader in list(_LOADERS):
                loader()
        except BaseException:
            _state = "new"
            raise
        _state = "done"
