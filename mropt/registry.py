"""The method registry (DESIGN.md, "Core interfaces").

Every method, heuristic or exact, is a plain function registered under a stable name::

    solve(instance, *, time_limit: float | None = None, seed: int = 0, **params) -> Solution

:func:`solve` is the one way callers (CLI, harness) run a method: it checks that the
method fits the instance's kind and that the parameters are ones the method declares,
times the call, and turns an unexpected exception inside a method or solver into a
``Solution`` with status ``error`` and a one-line message, never a traceback.

Each method declares its parameters once (:class:`Param`: type, default, range, one
line of help); :func:`solve`, the CLI's ``--param``, the harness's experiment check and
``mropt methods`` all read that declaration, so a bad value is an input error naming the
parameter and the value before anything runs.

Problem packages register their methods and their independent ``verify`` when
imported (:func:`register`, :func:`register_verifier`); the package ``mropt`` imports
them all, and Python imports a package before any of its modules, so the registry
never imports a layer above it (docs/architecture.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from mropt._version import __version__
from mropt.model.errors import InputError
from mropt.model.fields import number_problem
from mropt.model.solution import Solution, Verdict

MethodFunc = Callable[..., Solution]
VerifyFunc = Callable[..., Any]

#: Instance kind -> that problem package's independent ``verify`` (registered on import).
#: Each returns a :class:`mropt.model.solution.Verdict` (``ok``, ``objective``, ``problems``, and its own fields).
_VERIFIERS: dict[str, VerifyFunc] = {}

_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}


@dataclass(frozen=True)
class Param:
    """A method parameter: its type (int, float, str or bool), default, range and help."""

    type: type
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()

    def expects(self) -> str:
        """What a value must be, in words: ``an integer >= 0``, ``one of text, listing``."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        words = _TYPE_NAMES[self.type]
        if self.minimum is not None and self.maximum is not None:
            return f"{words} in [{self.minimum:g}, {self.maximum:g}]"
        if self.minimum is not None:
            return f"{words} >= {self.minimum:g}"
        if self.maximum is not None:
            return f"{words} <= {self.maximum:g}"
        return words

    def describe(self) -> str:
        """One line for ``mropt methods --params``: type and range, default, help."""
        return f"{self.expects()}; default {self.default!r}: {self.help}"

    def check(self, method: str, name: str, value: Any, what: str = "method") -> Any:
        """``value`` as this parameter's type, or InputError naming the method (or policy), parameter and value."""
        got = _coerce(self.type, value)
        if (
            got is None
            or (self.choices and got not in self.choices)
            or (self.minimum is not None and got < self.minimum)
            or (self.maximum is not None and got > self.maximum)
        ):
            raise InputError(f"{what} {method!r}: parameter {name!r} must be {self.expects()}, got {value!r}")
        return got


def _coerce(kind: type, value: Any) -> Any:
    """``value`` as ``kind`` when it is one exactly (an integral float counts as an int), else None."""
    if kind is bool:
        return value if isinstance(value, bool) else None
    if isinstance(value, bool):
        return None
    if kind is int:
        if isinstance(value, int):
            return value if -(2**63) <= value < 2**63 else None
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
            return int(value)
        return None
    if kind is float:
        return float(value) if isinstance(value, (int, float)) and number_problem(value) is None else None
    return value if isinstance(value, kind) else None


#: The ``threads`` parameter of every solver-backed method.
THREADS = Param(int, 1, "solver threads", minimum=1, maximum=1024)


@dataclass(frozen=True)
class Method:
    """A registered method: ``params`` declares each accepted parameter (:class:`Param`).

    ``relaxation``: the problem the method solves (exactly or not) is a relaxation of its
    kind's problem (``drf-lp``: continuous DRF for integer allocations), so its value is a
    bound of the kind's problem, never a value of it: gap studies never take it as the
    reference. Bound methods (``bound=True``) are relaxations too.
    """

    name: str
    kind: str
    summary: str
    func: MethodFunc
    exact: bool = False
    params: Mapping[str, Param] = field(default_factory=dict)
    bound: bool = False  # returns a proven bound (status "bound"), not a plan
    relaxation: bool = False  # solves a relaxation: its objective is a bound (see above)

    def check_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters checked against their declarations (InputError on the first bad one)."""
        unknown = sorted(set(params) - set(self.params))
        if unknown:
            takes = ", ".join(sorted(self.params)) or "none"
            raise InputError(f"method {self.name!r} has no parameter {unknown[0]!r} (it takes: {takes})")
        return {k: self.params[k].check(self.name, k, v) for k, v in params.items()}

    @property
    def role(self) -> str:
        """``exact``, ``bound`` or ``heuristic``."""
        return "exact" if self.exact else "bound" if self.bound else "heuristic"


_METHODS: dict[str, Method] = {}


def register(
    name: str,
    *,
    kind: str,
    summary: str,
    exact: bool = False,
    params: Mapping[str, Param] | None = None,
    bound: bool = False,
    relaxation: bool = False,
) -> Callable[[MethodFunc], MethodFunc]:
    """Decorator: register ``func`` under ``name`` for instances of ``kind``.

    ``exact``: proves its answers optimal (for the problem it solves); ``bound``: returns a
    bound only (status ``bound``); ``relaxation``: the problem it solves is a relaxation of
    the kind's (see :class:`Method`; implied by ``bound``).
    """
    for key, decl in (params or {}).items():
        if not isinstance(decl, Param):
            raise TypeError(f"method {name!r}: parameter {key!r} must be declared with registry.Param")

    def decorate(func: MethodFunc) -> MethodFunc:
        if name in _METHODS and _METHODS[name].func is not func:
            raise RuntimeError(f"method name {name!r} registered twice")
        _METHODS[name] = Method(name, kind, summary, func, exact, dict(params or {}), bound, relaxation or bound)
        return func

    return decorate


@dataclass(frozen=True)
class ReportPanel:
    """A report panel a problem package contributes to ``mropt report`` for its kind.

    ``table(rows)`` gets the study's rows of that kind (a pandas DataFrame with the
    store's columns, gaps filled in, and ``metrics`` parsed into columns) and returns a
    DataFrame (empty: the panel is left out); ``plot(table)`` returns a matplotlib
    figure or None. The report writes ``<name>.csv`` and ``<name>.png/.pdf``.
    """

    name: str
    title: str
    table: Callable[[Any], Any]
    plot: Callable[[Any], Any] | None = None


_PANELS: dict[str, list[ReportPanel]] = {}


def register_report_panel(kind: str, panel: ReportPanel) -> ReportPanel:
    """Register a report panel for studies of ``kind`` (see :class:`ReportPanel`)."""
    _PANELS.setdefault(kind, []).append(panel)
    return panel


def report_panels(kind: str) -> list[ReportPanel]:
    """The report panels registered for ``kind``, in registration order."""
    return list(_PANELS.get(kind, []))


def register_verifier(kind: str, func: VerifyFunc) -> VerifyFunc:
    """Register the independent ``verify`` of the problem package of ``kind``."""
    _VERIFIERS[kind] = func
    return func


def kinds() -> list[str]:
    """Instance kinds that have registered methods, in registration order."""
    return list(dict.fromkeys(m.kind for m in _METHODS.values()))


def methods(kind: str | None = None) -> list[Method]:
    """Registered methods (of one instance kind, if given), in registration order."""
    return [m for m in _METHODS.values() if kind is None or m.kind == kind]


def get_method(name: str) -> Method:
    """The method registered under ``name`` (InputError naming the known ones if none)."""
    try:
        return _METHODS[name]
    except KeyError:
        known = ", ".join(sorted(_METHODS))
        raise InputError(f"unknown method {name!r} (known: {known})") from None


def mropt_solver() -> dict[str, str]:
    """Solver record for methods implemented in mropt itself."""
    return {"name": "mropt", "version": __version__}


def solve(instance: Any, method: str, *, time_limit: float | None = None, seed: int = 0, **params: Any) -> Solution:
    """Run a registered method on an instance, timed and guarded (see the module docstring)."""
    info = get_method(method)
    if info.kind != instance.kind:
        raise InputError(f"method {method!r} solves {info.kind} instances, not {instance.kind}")
    params = info.check_params(params)
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
    return replace(
        solution, method=method, wall_time=wall, seed=seed, params=params, instance_hash=instance.content_hash()
    )


def verify_solution(instance: Any, solution: Solution, **options: Any) -> Any:
    """Check ``solution`` with the independent ``verify`` of the instance's problem package.

    A solution that records another instance's content hash is rejected with that one
    problem, unchecked (its job or user ids would only add noise).
    """
    func = _VERIFIERS.get(instance.kind)
    if func is None:
        raise InputError(f"no verifier for {instance.kind} instances")
    mismatch = solution.instance_mismatch(instance)
    if mismatch is not None:
        return Verdict(problems=[mismatch])
    return func(instance, solution, **options)
