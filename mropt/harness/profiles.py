"""Solver profiles: what a comparison names (DESIGN.md, ``solvers/``).

A profile is a TOML file with keys ``backend`` (the registered method it runs, e.g.
``milp-cbc``, ``milp-highs``, ``cpsat``, ``slots-cpsat``), ``time_limit`` (seconds in
(0, 1e7], or absent/"none" for no limit), ``threads`` (an integer >= 1, default 1) and
an optional ``[params]`` table passed to the method as keyword parameters. Keys are read
by :mod:`mropt.harness.toml_fields`, so errors read as in experiment files
(``solvers/x.toml: key 'threads' must be an integer >= 1, got 0``).
``load_profile("cpsat")`` reads ``solvers/cpsat.toml`` from the project (or from
``MROPT_SOLVERS_DIR``); a path to a ``.toml`` file is read as given.

    profile = load_profile("cpsat-8threads")
    solution = profile.solve(instance)              # registry.solve with its settings
    solution = profile.solve(instance, threads=2)   # a --threads override
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from mropt.harness.toml_fields import check_keys, in_file, integer, method_params, need, read_toml, seconds, string
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


def parse_profile(data: Mapping[str, Any], *, name: str, where: str, path: str | None = None) -> SolverProfile:
    """Check a profile's keys and build it; errors are ``<where>: key '...' must be ...``.

    ``where`` names the file (its path); keys are read by :mod:`mropt.harness.toml_fields`,
    as in experiment files.
    """
    try:
        return _parse(data, name, path)
    except InputError as exc:
        raise in_file(where, exc) from None


def _parse(data: Mapping[str, Any], name: str, path: str | None) -> SolverProfile:
    check_keys(data, _KEYS, "")
    backend = string(data, "backend", "", non_empty=True)
    from mropt.registry import get_method

    try:
        method = get_method(backend)
    except InputError as exc:
        raise InputError(f"key 'backend': {exc}") from None
    limit = data.get("time_limit")
    if isinstance(limit, str) and limit.lower() == "none":
        limit = None
    else:
        limit = seconds(data, "time_limit", "", None, also=' (or "none")')
    threads = integer(data, "threads", "", 1, minimum=1)
    params = need(data, "params", dict, "", {})
    params = method_params(
        method, params, "params", reserved=("threads",), hint="; give threads as the top-level key 'threads'"
    )
    description = string(data, "description", "", "")
    profile_name = string(data, "name", "", name)
    return SolverProfile(
        name=profile_name,
        backend=backend,
        time_limit=limit,
        threads=threads,
        params=dict(params),
        description=description,
        path=path,
    )


def load_profile(name_or_path: str | os.PathLike) -> SolverProfile:
    """Load ``solvers/<name>.toml`` or a TOML file path; InputError naming the key if malformed."""
    text = str(name_or_path)
    path = Path(text)
    if not (text.endswith(".toml") or os.sep in text or path.is_file()):
        path = solvers_dir() / f"{text}.toml"
        if not path.is_file():
            known = sorted(p.stem for p in solvers_dir().glob("*.toml"))
            raise InputError(f"unknown solver profile {text!r} (known: {', '.join(known) or 'none'})")
    data = read_toml(path)
    return parse_profile(data, name=path.stem, where=str(path), path=str(path))
