"""``mropt.sim.compiled.numba_cache``: numba's disk cache keyed on all of a package's sources.

A tiny package in ``tmp_path``: ``core.f`` (``njit(cache=True)``) calls ``callee.g`` (also cached).
Each run is a fresh interpreter. Changing ``callee.py`` only must give ``f``'s new value with the
locator installed; with numba's plain per-file cache it gives the old one (the bug it fixes).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

from mropt.sim.compiled import numba_cache  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

CORE = """from numba import njit
from tinypkg.callee import g


@njit(cache=True)
def f(x):
    return g(x) * 10
"""
CALLEE = """from numba import njit


@njit(cache=True)
def g(x):
    return x + {add}
"""
RUN = """import json, sys
from mropt.sim.compiled import numba_cache
installed = numba_cache.install(package_dir=sys.argv[1]) if sys.argv[2] == "hash" else None
from tinypkg import core
value = core.f(1)
print(json.dumps({"value": value, "installed": installed, "hits": sum(core.f.stats.cache_hits.values()),
                  "path": core.f._cache.cache_path, "locator": type(core.f._cache._impl.locator).__name__}))
"""


def _package(root: Path) -> Path:
    pkg = root / "tinypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "core.py").write_text(CORE)
    (pkg / "callee.py").write_text(CALLEE.format(add=1))
    return pkg


def _run(pkg: Path, mode: str, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(PYTHONPATH=os.pathsep.join([str(pkg.parent), str(ROOT)]), XDG_CACHE_HOME=str(home))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", RUN, str(pkg), mode], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_install_is_idempotent_and_stamps_all_files(tmp_path: Path) -> None:
    assert numba_cache.install() is True  # fails here if a numba upgrade renamed the internals used
    assert numba_cache.install() is True
    from numba.core import caching

    classes = caching.CacheImpl._locator_classes
    assert classes[0] is numba_cache.PackageHashCacheLocator
    assert classes.count(numba_cache.PackageHashCacheLocator) == 1
    pkg = _package(tmp_path)
    before = numba_cache.package_stamp(str(pkg))
    assert numba_cache.package_stamp(str(pkg)) == before
    (pkg / "callee.py").write_text(CALLEE.format(add=2))
    assert numba_cache.package_stamp(str(pkg)) != before


def test_unknown_numba_internals_warn_and_fall_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from numba.core import caching

    monkeypatch.setattr(numba_cache, "PackageHashCacheLocator", None)
    monkeypatch.delattr(caching, "_CacheLocator")
    with pytest.warns(numba_cache.NumbaCacheWarning, match="per-file cache"):
        assert numba_cache.install() is False


def test_callee_change_gives_fresh_code(tmp_path: Path) -> None:
    home = tmp_path / "xdg"
    pkg = _package(tmp_path / "hash")
    first = _run(pkg, "hash", home)
    assert first == {**first, "value": 20, "installed": True, "hits": 0}
    assert first["locator"] == "PackageHashCacheLocator"
    assert Path(first["path"]) == pkg / "__pycache__"
    assert any(p.suffix == ".nbi" and p.name.startswith("core.f-") for p in (pkg / "__pycache__").iterdir())
    assert _run(pkg, "hash", home)["hits"] == 1  # unchanged sources: loaded from the cache
    (pkg / "callee.py").write_text(CALLEE.format(add=2))
    after = _run(pkg, "hash", home)
    assert (after["value"], after["hits"]) == (30, 0)
    assert _run(pkg, "hash", home)["hits"] == 1

    # Control, numba's own cache: core.py unchanged, so the stale f (with the old g) is loaded.
    plain = _package(tmp_path / "plain")
    assert _run(plain, "plain", home)["value"] == 20
    (plain / "callee.py").write_text(CALLEE.format(add=2))
    stale = _run(plain, "plain", home)
    assert (stale["value"], stale["hits"]) == (20, 1), "numba now tracks callees? then numba_cache may go"


def test_read_only_package_falls_back_to_user_wide(tmp_path: Path) -> None:
    home = tmp_path / "xdg"
    pkg = _package(tmp_path / "ro")
    if os.geteuid() == 0:  # root writes anywhere: a file named __pycache__ blocks the folder
        (pkg / "__pycache__").write_text("")
    mode = pkg.stat().st_mode
    pkg.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        first = _run(pkg, "hash", home)
        assert (first["value"], first["locator"]) == (20, "PackageHashCacheLocator")
        assert Path(first["path"]).is_relative_to(home)
        assert _run(pkg, "hash", home)["hits"] == 1
    finally:
        pkg.chmod(mode)
    (pkg / "callee.py").write_text(CALLEE.format(add=2))
    pkg.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        assert _run(pkg, "hash", home)["value"] == 30
    finally:
        pkg.chmod(mode)
        shutil.rmtree(pkg)
