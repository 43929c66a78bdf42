"""The method registry (DESIGN.md, "Core interfaces").

Every method, heuristic or exact, is a plain function registered under a stable name::

    solve(instance, *, time_limit: float | None = None, seed: int = 0, **params) -> Solution

:func:`solve` is the one way callers (CLI, harness) run a method: it checks that the
method fits the instance's kind and that the parameters are ones the method declares,
times the call, and turns an unexpected exception inside a method or solver into a
``Solution`` with status ``error`` and a one-line message, never a traceback.
Problem packages register their methods when imported; the registry imports them
the first time it is asked (see ``_PROVIDERS``), so ``model`` never imports them.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from mropt._version import __version__
from mropt.model.errors import InputError
from mropt.model.solution import Solution

#: Modules whose import registers methods.
_PROVIDERS = ("mropt.admission", "mropt.fairness", "mropt.priority")

#: Instance kind -> "module:function" of that problem package's independent ``verify``.
#: Each returns a :class:`mropt.model.solution.Verdict` (``ok``, ``objective``, ``problems``, and its own fields).
_VERIFIERS = {
    "admission": "mropt.admission.verify:verify",
    "fairness": "mropt.fairness.verify:verify",
    "priority": "mropt.priority.verify:verify",
}

MethodFunc = Callable[..., Solution]


@dataclass(frozen=True)
class Method:
    """A registered method: ``params`` maps each accepted parameter to a one-line description."""

    name: str
    kind: str
    summary: str
    func: MethodFunc
    exact: bool = False
    params: Mapping[str, str] = field(default_factory=dict)
    bound: bool = False  # returns a proven bound (status "bound"), not a plan

    @property
    def role(self) -> str:
        """``exact``, ``bound`` or ``heuristic``."""
        return "exact" if self.exact else "bound" if self.bound else "heuristic"


_METHODS: dict[str, Method] = {}
_loaded = False


def register(
    name: str,
    *,
    kind: str,
    summary: str,
    exact: bool = False,
    params: Mapping[str, str] | None = None,
    bound: bool = False,
) -> Callable[[MethodFunc], MethodFunc]:
    """Decorator: register ``func`` under ``name`` for instances of ``kind``."""

    def decorate(func: MethodFunc) -> MethodFunc:
        if name in _METHODS and _METHODS[name].func is not func:
            raise RuntimeError(f"method name {name!r} registered twice")
        _METHODS[name] = Method(name, kind, summary, func, exact, dict(params or {}), bound)
        return func

    return decorate


def _load() -> None:
    global _loaded
    if not _loaded:
        for module in _PROVIDERS:
            importlib.import_module(module)
        _loaded = True


def methods(kind: str | None = None) -> list[Method]:
    """Registered methods (of one instance kind, if given), in registration order."""
    _load()
    return [m for m in _METHODS.values() if kind is None or m.kind == kind]


def get_method(name: str) -> Method:
    _load()
    try:
        return _METHODS[name]
    except KeyError:
        known = ", ".join(sorted(_METHODS))
        raise InputError(f"unknown method {name!r} (known: {known})") from None


def mropt_solver() -> dict[str, str]:
    """Solver record for methods implemented in mropt itself."""
    return {"name": "mropt", "version": __version__}


def solve(
    instance: Any, method: str, *, time_limit: float | None = None, seed: int = 0, **params: Any
) -> Solution:
    """Run a registered method on an instance, timed and guarded (see the module docstring)."""
    info = get_method(method)
    if info.kind != instance.kind:
        raise InputError(f"method {method!r} solves {info.kind} instances, not {instance.kind}")
    unknown = sorted(set(params) - set(info.params))
    if unknown:
        takes = ", ".join(sorted(info.params)) or "none"
        raise InputError(f"method {method!r} has no parameter {unknown[0]!r} (it takes: {takes})")
    if time_limit is not None and not time_limit > 0:
        raise InputError(f"time limit must be > 0 seconds, got {time_limit!r}")
    start = time.perf_counter()
    try:
        solution = info.func(instance, time_limit=time_limit, seed=seed, **params)
    except InputError:
        raise
    except Exception as exc:  # a bug or a solver failure: recorded, never a traceback
        message = " ".join(str(exc).split()) or type(exc).__name__
        solution = Solution(
            method=method,
            status="error",
            objective=None,
            solver=mropt_solver(),
            details={"error": f"{type(exc).__name__}: {message}"},
        )
    wall = time.perf_counter() - start
    return replace(solution, method=method, wall_time=wall, seed=seed, params=params)


def verify_solution(instance: Any, solution: Solution, **options: Any) -> Any:
    """Check ``solution`` with the independent ``verify`` of the instance's problem package."""
    target = _VERIFIERS.get(instance.kind)
    if target is None:
        raise InputError(f"no verifier for {instance.kind} instances")
    module, _, func = target.partition(":")
    return getattr(importlib.import_module(module), func)(instance, solution, **options)
