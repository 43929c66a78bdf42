"""Solver profiles: what a comparison names (DESIGN.md, ``solvers/``).

A profile is a TOML file with keys ``backend`` (the registered method it runs, e.g.
``milp-cbc``, ``milp-highs``, ``cpsat``, ``slots-cpsat``), ``time_limit`` (seconds, a
positive number, or absent/"none" for no limit), ``threads`` (an integer >= 1,
default 1) and an optional ``[params]`` table passed to the method as keyword
parameters. ``load_profile("cpsat")`` reads ``solvers/cpsat.toml`` from the project
(or from ``MROPT_SOLVERS_DIR``); a path to a ``.toml`` file is read as given.

    profile = load_profile("cpsat-8threads")
    solution = profile.solve(instance)              # registry.solve with its settings
    solution = profile.solve(instance, threads=2)   # a --threads override
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from mropt.model.errors import InputError

_KEYS = ("name", "backend", "time_limit", "threads", "params", "description")


def solvers_dir() -> Path:
    """Where named profiles live: ``$MROPT_SOLVERS_DIR`` or ``<project>/solvers``."""
    env = os.environ.get("MROPT_SOLVERS_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "solvers"


@dataclass(frozen=True)
class SolverProfile:
    """One solver profile; ``params`` are the method's extra keyword parameters."""

    name: str
    backend: str
    time_limit: float | None = None
    threads: int = 1
    params: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    path: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    def method_params(self, threads: int | None = None) -> dict[str, Any]:
        """Keyword parameters for the method: ``threads`` (if the method takes it) and ``params``."""
        from mropt.registry import get_method

        out = dict(self.params)
        if "threads" in get_method(self.backend).params:
            out["threads"] = self.threads if threads is None else threads
        return out

    def solve(self, instance: Any, *, threads: int | None = None, time_limit: float | None = None, seed: int = 0):  # noqa: ANN201
        """Run the backend on ``instance`` with this profile (``threads``/``time_limit`` override)."""
        from mropt.registry import solve

        limit = self.time_limit if time_limit is None else time_limit
        return solve(instance, self.backend, time_limit=limit, seed=seed, **self.method_params(threads))


def _fail(where: str, key: str, rule: str, value: Any) -> InputError:
    return InputError(f"solver profile {where}: key '{key}' {rule}, got {value!r:.60}")


def parse_profile(data: Mapping[str, Any], *, name: str, where: str, path: str | None = None) -> SolverProfile:
    """Check a profile's keys and build it (errors name the file and the key)."""
    unknown = sorted(set(data) - set(_KEYS))
    if unknown:
        raise InputError(f"solver profile {where}: unknown key '{unknown[0]}' (known: {', '.join(_KEYS)})")
    if "backend" not in data:
        raise InputError(f"solver profile {where}: key 'backend' is missing")
    backend = data["backend"]
    if not isinstance(backend, str) or not backend:
        raise _fail(where, "backend", "must be a method name string", backend)
    from mropt.registry import get_method

    try:
        method = get_method(backend)
    except InputError as exc:
        raise InputError(f"solver profile {where}: key 'backend': {exc}") from None
    limit = data.get("time_limit")
    if isinstance(limit, str) and limit.lower() == "none":
        limit = None
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not math.isfinite(limit) or limit <= 0:
            raise _fail(where, "time_limit", "must be a positive number of seconds (or \"none\")", limit)
        limit = float(limit)
    threads = data.get("threads", 1)
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise _fail(where, "threads", "must be an integer >= 1", threads)
    params = data.get("params", {})
    if not isinstance(params, Mapping):
        raise _fail(where, "params", "must be a table", params)
    bad = sorted(set(params) - set(method.params) | ({"threads"} & set(params)))
    if bad:
        takes = ", ".join(sorted(set(method.params) - {"threads"})) or "none"
        raise InputError(f"solver profile {where}: key 'params.{bad[0]}' is not a parameter of {backend!r} "
                         f"(it takes: {takes}; give threads as the top-level key 'threads')")
    try:  # types and ranges, from the method's declaration
        params = method.check_params(params)
    except InputError as exc:
        raise InputError(f"solver profile {where}: key 'params': {exc}") from None
    description = data.get("description", "")
    if not isinstance(description, str):
        raise _fail(where, "description", "must be a string", description)
    return SolverProfile(name=str(data.get("name", name)), backend=backend, time_limit=limit, threads=threads,
                         params=dict(params), description=description, path=path)


def load_profile(name_or_path: str | os.PathLike) -> SolverProfile:
    """Load ``solvers/<name>.toml`` or a TOML file path; InputError naming the key if malformed."""
    text = str(name_or_path)
    path = Path(text)
    if not (text.endswith(".toml") or os.sep in text or path.is_file()):
        path = solvers_dir() / f"{text}.toml"
        if not path.is_file():
            known = sorted(p.stem for p in solvers_dir().glob("*.toml"))
            raise InputError(f"unknown solver profile {text!r} (known: {', '.join(known) or 'none'})")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"solver profile file {str(path)!r} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"solver profile {str(path)!r}: not valid TOML: {exc}") from None
    return parse_profile(data, name=path.stem, where=repr(str(path)), path=str(path))
