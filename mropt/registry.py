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
imported (:func:`register`, :func:`register_verifier`; :func:`register_lazy` names a method's
function by module, imported when the method runs, as ``mropt.admission.table`` does); the package ``mropt`` hands
:mod:`mropt.registering` a function that imports them all, which every lookup here runs
first (once), so the registry never imports a layer above it (docs/architecture.md) and
``import mropt`` stays cheap.

**One idiom for every plug-in.** Methods, simulator policies (:mod:`mropt.sim.policy`),
speculation rules (:mod:`mropt.sim.speculation.table`) and trace importers
(:mod:`mropt.importers.table`) are each kept in a :class:`Table` (registered once under a
stable name, listed in registration order, an unknown name a one-line error) and declare
their parameters with :class:`Param` (an importer through its parameter dataclass,
:func:`dataclass_params`), checked by :func:`check_params`.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
import time
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from mropt._version import __version__
from mropt.model.errors import InputError
from mropt.model.fields import number_problem
from mropt.model.solution import Solution, Verdict
from mropt.registering import load as _load_packages

MethodFunc = Callable[..., Solution]
VerifyFunc = Callable[..., Any]

#: Instance kind -> that problem package's independent ``verify`` (registered on import).
#: Each returns a :class:`mropt.model.solution.Verdict` (``ok``, ``objective``, ``problems``, and its own fields).
_VERIFIERS: dict[str, VerifyFunc] = {}

_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
#: a help text that states its parameter's default (``(default 30)``, ``0, the default: ...``)
_STATES_DEFAULT = re.compile(r"\bdefault\b")


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
        """One line for ``mropt methods --params``: type and range, default, help.

        The default is said once: by the help where it states it (``... (default 30)``, as the
        command-line help of a parameter dataclass's field must, argparse showing no default), else
        here; a default of None (unset) is never shown as ``None``: the help says what unset means.
        """
        if self.default is None or _STATES_DEFAULT.search(self.help):
            return f"{self.expects()}: {self.help}"
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


def check_params(
    what: str, name: str, declared: Mapping[str, Param], given: Mapping[str, Any], *, defaults: bool = False
) -> dict[str, Any]:
    """``given`` checked against the declarations of the plug-in ``name`` (a ``what``: method, policy...).

    An undeclared name or a bad value is a one-line InputError naming the plug-in, the
    parameter and the value. ``defaults``: every declared parameter is in the result, the
    default where none is given (in declaration order), so the plug-in never restates one.
    """
    unknown = sorted(set(given) - set(declared))
    if unknown:
        known = ", ".join(declared) or "none"
        raise InputError(f"{what} {name!r}: unknown parameter {unknown[0]!r} (known: {known})")
    out = {key: decl.default for key, decl in declared.items()} if defaults else {}
    for key, value in given.items():
        out[key] = declared[key].check(name, key, value, what)
    return out


def dataclass_params(cls: type) -> dict[str, Param]:
    """The :class:`Param` of each field of the parameter dataclass ``cls`` (an importer's, a generator's).

    Type from the annotation (``int | None``: an int whose default None means "unset"), default
    from the field, help from ``metadata["help"]`` (``{default}`` filled in), range and choices
    from ``metadata["minimum"]``, ``["maximum"]``, ``["choices"]``. A field of another type
    (tuples, tables) is left out: it is no parameter a file or a command line sets one value of.
    """
    hints = typing.get_type_hints(cls)
    out: dict[str, Param] = {}
    for f in dataclasses.fields(cls):
        kind = hints[f.name]
        if typing.get_origin(kind) in (typing.Union, types.UnionType):
            kind = next((k for k in typing.get_args(kind) if k is not type(None)), kind)
        if kind not in _TYPE_NAMES:
            continue
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[operator]
        shown = f"{default:g}" if isinstance(default, float) else str(default)
        help_text = str(f.metadata.get("help", "")).replace("{default}", shown)
        out[f.name] = Param(
            kind,
            default,
            help_text,
            minimum=f.metadata.get("minimum"),
            maximum=f.metadata.get("maximum"),
            choices=tuple(f.metadata.get("choices", ())),
        )
    return out


T = TypeVar("T")


class Table(dict[str, T]):
    """Plug-ins of one kind by name: methods, simulator policies, speculation rules, trace importers.

    Every kind registers the same way (module docstring): an entry is added once, at import,
    under a stable name (a contract: scripts, experiment files and command lines use the
    names); a second entry under a taken name is a programming error; a lookup of an unknown
    name is a one-line InputError listing the known ones. Entries keep registration order,
    the order of every listing (``mropt methods``, ``mropt policies``, ``mropt importers``).
    """

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def add(self, name: str, entry: T) -> T:
        """Register ``entry`` under ``name`` (ValueError when the name is taken)."""
        if name in self:
            raise ValueError(f"{self.what} {name!r} is registered twice")
        self[name] = entry
        return entry

    def lookup(self, name: str) -> T:
        """The entry registered under ``name`` (InputError naming the known ones if none)."""
        try:
            return self[name]
        except KeyError:
            raise InputError(f"unknown {self.what} {name!r} (known: {', '.join(self)})") from None


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
    #: the function, or where it is (``"package.module:function"``), imported when first used
    #: (:func:`register_lazy`): listing methods and checking parameters import no solver
    implementation: MethodFunc | str
    exact: bool = False
    params: Mapping[str, Param] = field(default_factory=dict)
    bound: bool = False  # returns a proven bound (status "bound"), not a plan
    relaxation: bool = False  # solves a relaxation: its objective is a bound (see above)

    @property
    def func(self) -> MethodFunc:
        """The method's function (its module imported here if it was registered by name)."""
        if isinstance(self.implementation, str):
            module, _, name = self.implementation.partition(":")
            func: MethodFunc = getattr(importlib.import_module(module), name)
            return func
        return self.implementation

    def check_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters checked against their declarations (InputError on the first bad one)."""
        return check_params("method", self.name, self.params, params)

    @property
    def role(self) -> str:
        """``exact``, ``bound`` or ``heuristic``."""
        return "exact" if self.exact else "bound" if self.bound else "heuristic"


_METHODS: Table[Method] = Table("method")


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
        if name in _METHODS and _METHODS[name].implementation is func:
            return func  # the same function again (its module imported twice)
        _METHODS.add(name, Method(name, kind, summary, func, exact, dict(params or {}), bound, relaxation or bound))
        return func

    return decorate


def register_lazy(
    name: str,
    *,
    implementation: str,
    kind: str,
    summary: str,
    exact: bool = False,
    params: Mapping[str, Param] | None = None,
    bound: bool = False,
    relaxation: bool = False,
) -> Method:
    """Register the function at ``implementation`` (``"package.module:function"``) under ``name``
    without importing it: as :func:`register`, but its module (and the solvers it imports) is
    imported only when the method runs or its ``func`` is read (``mropt.admission.table``)."""
    module, colon, func = implementation.partition(":")
    if not (module and colon and func):
        raise ValueError(f"method {name!r}: implementation must be 'package.module:function', got {implementation!r}")
    for key, decl in (params or {}).items():
        if not isinstance(decl, Param):
            raise TypeError(f"method {name!r}: parameter {key!r} must be declared with registry.Param")
    return _METHODS.add(
        name, Method(name, kind, summary, implementation, exact, dict(params or {}), bound, relaxation or bound)
    )


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
    """Register a report panel for studies of ``kind`` (see :class:`ReportPanel`); a panel of the same
    name registered before is replaced in its place (a module imported twice adds no second panel)."""
    panels = _PANELS.setdefault(kind, [])
    names = [p.name for p in panels]
    if panel.name in names:
        panels[names.index(panel.name)] = panel
    else:
        panels.append(panel)
    return panel


def report_panels(kind: str) -> list[ReportPanel]:
    """The report panels registered for ``kind``, in registration order."""
    _load_packages()
    return list(_PANELS.get(kind, []))


def register_verifier(kind: str, func: VerifyFunc) -> VerifyFunc:
    """Register the independent ``verify`` of the problem package of ``kind``."""
    _VERIFIERS[kind] = func
    return func


def kinds() -> list[str]:
    """Instance kinds that have registered methods, in the order of :func:`methods`."""
    return list(dict.fromkeys(m.kind for m in methods()))


def methods(kind: str | None = None) -> list[Method]:
    """Registered methods (of one instance kind, if given): by kind in the order
    :data:`mropt.model.io.INSTANCE_KINDS` lists the kinds (other kinds after them), each kind's
    in registration order, whichever problem package was imported first."""
    from mropt.model.io import INSTANCE_KINDS

    _load_packages()
    order = {k: i for i, k in enumerate(INSTANCE_KINDS)}
    found = [m for m in _METHODS.values() if kind is None or m.kind == kind]
    return sorted(found, key=lambda m: order.get(m.kind, len(order)))


def get_method(name: str) -> Method:
    """The method registered under ``name`` (InputError naming the known ones if none)."""
    _load_packages()
    return _METHODS.lookup(name)


def mropt_solver() -> dict[str, str]:
    """Solver record for methods implemented in mropt itself."""
    return {"name": "mropt", "version": __version__}


def _raising(exc: Exception) -> MethodFunc:
    """A method function that raises ``exc`` (a lazily registered module that failed to import)."""

    def fail(*args: Any, **kwargs: Any) -> Solution:
        raise exc

    return fail


def solve(instance: Any, method: str, *, time_limit: float | None = None, seed: int = 0, **params: Any) -> Solution:
    """Run a registered method on an instance, timed and guarded (see the module docstring)."""
    info = get_method(method)
    if info.kind != instance.kind:
        raise InputError(f"method {method!r} solves {info.kind} instances, not {instance.kind}")
    params = info.check_params(params)
    if time_limit is not None and not time_limit > 0:
        raise InputError(f"time limit must be > 0 seconds, got {time_limit!r}")
    try:  # its module imported first (register_lazy): not part of the method's time
        func = info.func
    except ImportError as exc:  # a solver package not installed: the method's error, as below
        func = _raising(exc)
    start = time.perf_counter()
    try:
        solution = func(instance, time_limit=time_limit, seed=seed, **params)
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
    _load_packages()
    func = _VERIFIERS.get(instance.kind)
    if func is None:
        raise InputError(f"no verifier for {instance.kind} instances")
    mismatch = solution.instance_mismatch(instance)
    if mismatch is not None:
        return Verdict(problems=[mismatch])
    return func(instance, solution, **options)
