"""The table of speculation rules by name (``mropt simulate --speculation NAME``, ``mropt policies``).

A rule registers as a policy does (:func:`mropt.sim.policy.register_policy`), with the one
plug-in idiom of :mod:`mropt.registry`: a class decorator names it (a contract: scripts and
summaries use the names), says what it follows and declares every parameter once with a typed
:class:`~mropt.registry.Param`::

    @register_rule(
        "my-rule",
        summary="one line for `mropt policies`",
        source="the paper's section, or the Hadoop class the rule follows",
        params={"lag": Param(float, 60.0, "seconds a task runs before a backup", minimum=0.0)},
    )
    class MyRule(Speculation):
        def __init__(self, *, lag: float) -> None:
            super().__init__(lag=lag)
            self.lag = lag

and is imported from :mod:`mropt.sim.speculation`. :func:`make_speculation` checks the given
parameters against the declarations and hands the rule every one of them, the defaults
filled in, so a rule never restates a default. ``none`` (no backups) has no class: the engine
runs exactly as without this package.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from mropt.registry import Param, Table, check_params
from mropt.sim.speculation.base import Speculation

S = TypeVar("S", bound=type[Speculation])


@dataclass(frozen=True)
class RuleInfo:
    """A registered speculation rule: its class (None for ``none``), summary, source and typed parameters."""

    name: str
    cls: type[Speculation] | None
    summary: str
    source: str
    params: Mapping[str, Param]


#: the rules by name, in registration order
RULES: Table[RuleInfo] = Table("speculation rule")
RULES.add(
    "none",
    RuleInfo("none", None, "no backup attempts (the default): the run is the run without a rule", "-", {}),
)


def register_rule(
    name: str, *, summary: str, source: str, params: Mapping[str, Param] | None = None
) -> Callable[[S], S]:
    """Class decorator: register a speculation rule under ``name`` (module docstring)."""
    for key, decl in (params or {}).items():
        if not isinstance(decl, Param):
            raise TypeError(f"speculation rule {name!r}: parameter {key!r} must be declared with registry.Param")

    def wrap(cls: S) -> S:
        RULES.add(name, RuleInfo(name, cls, summary, source, dict(params or {})))
        cls.name = name
        return cls

    return wrap


def rules() -> dict[str, RuleInfo]:
    """Every registered rule, ``none`` first, in registration order."""
    _load()
    return dict(RULES)


def rule_info(name: str) -> RuleInfo:
    """The rule registered under ``name`` (InputError naming the known ones if none)."""
    _load()
    return RULES.lookup(name)


def make_speculation(name: str | None, params: Mapping[str, Any] | None = None) -> Speculation | None:
    """The rule ``name`` with ``params`` checked and the defaults filled in; None for ``none`` (or None)."""
    info = rule_info("none" if name is None else name)
    checked = check_params("speculation", info.name, info.params, params or {}, defaults=True)
    return None if info.cls is None else info.cls(**checked)


def _load() -> None:
    import mropt.sim.speculation  # noqa: F401  (the rules register on import)
