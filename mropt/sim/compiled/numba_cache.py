"""numba's on-disk cache keyed on every source file of this package, not only the defining one.

The problem: ``@njit(cache=True)`` saves a function's machine code with a *source stamp* of the one
file that defines it (https://numba.readthedocs.io/en/stable/developer/caching.html; in numba
0.68 the stamp is a hash of that file, earlier an mtime and size). A compiled function embeds the
code of the compiled functions it calls, so when ``rounding.py`` changes and ``drf_core.py`` does
not, numba loads a ``drf_core`` function still running the old ``sig12`` (after an edit, an upgrade).

The fix: a cache locator (numba's ``_CacheLocator`` protocol) for the functions defined in this
package's own ``*.py`` files whose source stamp is a SHA-256 of the numba version and of ALL those
files (names and bytes). Any change to any of them makes every function's index stale, so it is
compiled again and the old entries are overwritten, never loaded. Where the cache goes: the folder
``NUMBA_CACHE_DIR`` names, if set (as numba does); else ``<package>/__pycache__`` where writable;
else numba's user-wide folder (a read-only site-packages install). :func:`install` puts the
locator first in ``numba.core.caching.CacheImpl._locator_classes``; it must run before the
package's ``@njit(cache=True)`` functions are decorated (numba picks a function's locator then):
``mropt/sim/compiled/__init__.py`` calls it.

Without numba, :func:`install` does nothing and returns False (this module imports without it). If a
future numba lacks the internals used here (``_CacheLocator``, ``CacheImpl._locator_classes``,
``UserWideCacheLocator``), :func:`install` warns (:class:`NumbaCacheWarning`) and returns False:
numba's own per-file caching stays in use (``tests/sim/test_compiled_cache.py`` fails loudly then).
``NUMBA_CACHE_LOCATOR_CLASSES``, if set, replaces numba's locator list; name
``mropt.sim.compiled.numba_cache.PackageHashCacheLocator`` in it to keep this one.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["NumbaCacheWarning", "first_call", "install", "package_stamp"]

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_package_dirs: set[str] = set()  # the folders (real paths) whose functions the locator takes
PackageHashCacheLocator: Any = None  # the locator class, made by install() (its base is numba's)


class NumbaCacheWarning(RuntimeWarning):
    """This numba's caching internals are not those :func:`install` knows: per-file caching stays."""


def _norm(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


@functools.cache
def _hash_files(version: str, files: tuple[tuple[str, int, int], ...]) -> str:
    # Keyed on (path, mtime_ns, size) of every file, so a file edited in this process is read again.
    h = hashlib.sha256(version.encode())
    for path, _, _ in files:
        with open(path, "rb") as f:
            data = f.read()
        h.update(b"\0%s\0%d\0" % (os.path.basename(path).encode(), len(data)) + data)
    return h.hexdigest()


def package_stamp(package_dir: str = PACKAGE_DIR) -> str:
    """SHA-256 (hex) of numba's version and every ``*.py`` file directly in ``package_dir``."""
    import numba

    files = []
    for name in sorted(os.listdir(package_dir)):
        if name.endswith(".py"):
            st = os.stat(path := os.path.join(package_dir, name))
            files.append((path, st.st_mtime_ns, st.st_size))
    return _hash_files(numba.__version__, tuple(files))


def _make_locator(caching: Any) -> Any:
    base, user_wide = caching._CacheLocator, caching.UserWideCacheLocator
    config = caching.config

    class _Locator(base):  # type: ignore[misc, valid-type]
        """Functions defined in a folder given to :func:`install`, stamped by :func:`package_stamp`."""

        def __init__(self, py_func: Any, py_file: str, package_dir: str, cache_path: str) -> None:
            self._py_file = py_file  # numba's CacheImpl reads it for its warnings
            self._lineno = py_func.__code__.co_firstlineno
            self._package_dir = package_dir
            self._cache_path = cache_path

        def get_cache_path(self) -> str:
            return self._cache_path

        def get_source_stamp(self) -> str:
            return package_stamp(self._package_dir)

        def get_disambiguator(self) -> str:
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            if not os.path.isfile(py_file):
                return None
            package_dir = os.path.dirname(_norm(py_file))
            if package_dir not in _package_dirs:
                return None
            paths = [os.path.join(package_dir, "__pycache__")]
            if config.CACHE_DIR:
                paths = [os.path.join(config.CACHE_DIR, cls.get_suitable_cache_subpath(py_file))]
            paths.append(user_wide(py_func, py_file).get_cache_path())
            for path in paths:
                self = cls(py_func, py_file, package_dir, path)
                try:
                    self.ensure_cache_path()
                except OSError:
                    continue  # not writable: the next folder
                return self
            return None

    _Locator.__name__ = _Locator.__qualname__ = "PackageHashCacheLocator"
    _Locator.__module__ = __name__
    if getattr(_Locator, "__abstractmethods__", None):
        raise TypeError(f"abstract methods left: {sorted(_Locator.__abstractmethods__)}")
    return _Locator


def install(package_dir: str = PACKAGE_DIR) -> bool:
    """Cache the numba functions defined in ``package_dir`` (default: this package) keyed on
    :func:`package_stamp`. Idempotent; call before those functions are decorated. True if in use;
    False without numba, or (with a :class:`NumbaCacheWarning`) if numba's internals differ."""
    global PackageHashCacheLocator
    try:
        import numba
        from numba.core import caching
    except ImportError:
        return False

    try:
        if PackageHashCacheLocator is None:
            PackageHashCacheLocator = _make_locator(caching)
        classes = caching.CacheImpl._locator_classes
        if PackageHashCacheLocator not in classes:
            classes.insert(0, PackageHashCacheLocator)
    except (AttributeError, TypeError) as exc:
        warnings.warn(
            f"mropt: numba {numba.__version__}'s caching internals are not those expected "
            f"({exc!r}); numba's per-file cache is used, which can keep a compiled caller of a "
            f"changed function stale (clear {package_dir}/__pycache__ after changes)",
            NumbaCacheWarning,
            stacklevel=2,
        )
        return False
    _package_dirs.add(_norm(package_dir))
    return True


_CALLED: list[bool] = []  # (whether this process made its first call of the package's code: compiled or loaded)


@contextmanager
def first_call() -> Iterator[None]:
    """The first call of the package's compiled code in this process, under a lock shared by the
    machine's processes: numba compiles it then, or loads it from the cache, and writes the cache's
    index without a lock of its own, so two processes saving at once (two pytest-xdist workers, two
    Dask workers) could leave it pointing at the other's code. Later calls take no lock; without
    ``fcntl`` (not POSIX) none is taken."""
    if _CALLED:
        yield
        return
    try:
        import fcntl
    except ImportError:
        yield
        _CALLED.append(True)
        return
    user = os.getuid() if hasattr(os, "getuid") else 0
    with open(os.path.join(tempfile.gettempdir(), f"mropt-numba-{user}.lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
    _CALLED.append(True)
