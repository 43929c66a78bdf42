"""The methods, solver profiles and simulator policies an experiment file lists, as specs.

The ``profiles``, ``methods`` and ``policies`` keys of an experiment file (schema in
:mod:`mropt.harness.experiment`), checked in the file's order: every top-level profile
loads, every method is registered (or, under ``mropt gap --check``, taken on trust when
an ``imports`` module may register it) with its typed parameters, a method's own
profiles run that method, a top-level profile whose backend is not listed runs its
backend as is, and labels differ across methods and policies. A policy entry may name a
speculation rule (``speculation``, ``speculation_params``: checked against the rule's typed
``Param`` declarations in :mod:`mropt.sim.speculation.table`) and ``straggler_draws``; they
are handed to :func:`mropt.sim.run.simulate` as its keyword options (``MethodSpec.options``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mropt.harness.toml_fields import check_keys, dotted, fail, method_params, need, seconds, show
from mropt.model.errors import InputError

#: a policy entry's keys: the spec's, then the simulation options (MethodSpec.options)
_POLICY_KEYS = {"name", "label", "params", "mode", "time_limit"} | {
    "speculation",
    "speculation_params",
    "straggler_draws",
}
_METHOD_KEYS = {"name", "label", "params", "profiles", "time_limit"}
NO_PROFILE = "-"


@dataclass(frozen=True)
class MethodSpec:
    name: str
    label: str
    params: dict[str, Any]
    profiles: tuple[str, ...]  # NO_PROFILE: the experiment's time_limit and no solver options
    time_limit: float | None = None  # overrides the profile's and the experiment's
    policy: bool = False  # a simulator policy (mropt.sim), not a registered method
    mode: str | None = None  # a policy's assignment mode override (event, heartbeat)
    #: a policy's other options of mropt.sim.run.simulate, as given: speculation, speculation_params, straggler_draws
    options: dict[str, Any] = field(default_factory=dict)


def load_profile_any(name: str, base: Path) -> Any:
    """A solver profile through :func:`mropt.harness.profiles.load_profile`."""
    try:
        from mropt.harness.profiles import load_profile
    except ImportError:  # pragma: no cover - the profiles module ships separately
        raise InputError(f"solver profiles are not available (mropt.harness.profiles), cannot load {name!r}") from None
    candidate = base / name
    is_path = name.endswith(".toml") or "/" in name or os.sep in name
    # a path is relative to the experiment's folder when something is there (a folder or a
    # device there is then refused by name, not looked up elsewhere)
    return load_profile(str(candidate) if is_path and (candidate.exists() or candidate.is_symlink()) else name)


def method_specs(
    data: dict[str, Any], default_profiles: list[Any], base: Path, trust_unknown: bool
) -> tuple[list[MethodSpec], dict[str, Any], list[str]]:
    """The ``methods`` and ``policies`` lists with the top-level ``profiles`` as specs (module
    docstring), the profiles loaded (name -> SolverProfile) and the method names taken on trust."""
    raw_methods = need(data, "methods", list, "", [])
    unchecked: list[str] = []
    methods: list[MethodSpec] = []
    profiles: dict[str, Any] = {}
    for k, p in enumerate(default_profiles):
        _profile(profiles, p, f"profiles[{k}]", base)
    for k, raw in enumerate(raw_methods):
        where = f"methods[{k}]"
        spec = _method(raw, where, default_profiles, profiles, base, unchecked if trust_unknown else None)
        if any(m.label == spec.label for m in methods):
            raise InputError(f"key '{dotted(where, 'label')}': method label {spec.label!r} is used twice")
        methods.append(spec)
    _add_profile_backends(default_profiles, profiles, methods)
    methods += _policies(need(data, "policies", list, "", []), methods)
    if not methods:
        raise InputError("key 'methods' must not be empty (or give 'profiles' or 'policies')")
    return methods, profiles, unchecked


def _profile(profiles: dict[str, Any], p: Any, where: str, base: Path) -> Any:
    """The solver profile named ``p`` at key ``where``, loaded once into ``profiles``."""
    if not isinstance(p, str):
        raise InputError(f"key '{where}' must be a profile name, got {show(p)}")
    if p not in profiles:
        try:
            profiles[p] = load_profile_any(p, base)
        except InputError as exc:
            raise InputError(f"key '{where}': {exc}") from None
    return profiles[p]


def _method(
    raw: Any,
    where: str,
    default_profiles: list[Any],
    profiles: dict[str, Any],
    base: Path,
    unchecked: list[str] | None,
) -> MethodSpec:
    """One entry of ``methods`` (a name or a table): a registered method with its checked params,
    label, profiles and time limit; an unknown name is appended to ``unchecked`` when given, else refused."""
    from mropt.registry import get_method

    if isinstance(raw, str):
        raw = {"name": raw}
    if not isinstance(raw, dict):
        raise InputError(f"key '{where}' must be a method name or a table, got {show(raw)}")
    check_keys(raw, _METHOD_KEYS, where)
    mname = need(raw, "name", str, where)
    try:
        info = get_method(mname)
    except InputError as exc:
        if unchecked is None:
            raise InputError(f"key '{dotted(where, 'name')}': {exc}") from None
        info = None  # perhaps registered by an 'imports' module, which --check does not run
        unchecked.append(mname)
    label = need(raw, "label", str, where, mname)
    raw_params = need(raw, "params", dict, where, {})
    params = raw_params if info is None else method_params(info, raw_params, dotted(where, "params"))
    own = need(raw, "profiles", list, where, None)
    limit = seconds(raw, "time_limit", where, None)
    if own is None:  # the top-level profiles whose backend is this method
        names = [p for p in default_profiles if profiles[p].backend == mname]
    else:
        names = list(own)
        for j, p in enumerate(own):
            prof = _profile(profiles, p, f"{dotted(where, 'profiles')}[{j}]", base)
            if prof.backend != mname:
                raise InputError(
                    f"key '{dotted(where, 'profiles')}[{j}]': profile {p!r} runs {prof.backend!r}, not {mname!r}"
                )
    return MethodSpec(mname, label, dict(params), tuple(names) or (NO_PROFILE,), limit)


def _add_profile_backends(default_profiles: list[Any], profiles: dict[str, Any], methods: list[MethodSpec]) -> None:
    """A top-level profile whose backend is not listed runs its backend, as is: a new spec, or one
    more profile of the spec labelled with the backend's name."""
    listed = {m.name for m in methods}
    for p in default_profiles:
        backend = profiles[p].backend
        if backend not in listed:
            at = next((i for i, m in enumerate(methods) if m.label == backend), None)
            if at is None:
                methods.append(MethodSpec(backend, backend, {}, (p,)))
            else:
                m = methods[at]
                methods[at] = MethodSpec(m.name, m.label, m.params, (*m.profiles, p), m.time_limit)


def _policies(raw_list: list[Any], methods: list[MethodSpec]) -> list[MethodSpec]:
    """The ``policies`` list as specs (checked: names, parameters, mode, labels; module docstring)."""
    from mropt.sim.policy import MODES, policy_info

    out: list[MethodSpec] = []
    for k, raw in enumerate(raw_list):
        where = f"policies[{k}]"
        if isinstance(raw, str):
            raw = {"name": raw}
        if not isinstance(raw, dict):
            raise InputError(f"key '{where}' must be a policy name or a table, got {show(raw)}")
        check_keys(raw, _POLICY_KEYS, where)
        pname = need(raw, "name", str, where)
        try:
            info = policy_info(pname)
        except InputError as exc:
            raise InputError(f"key '{dotted(where, 'name')}': {exc}") from None
        if info.needs_plan:
            raise InputError(
                f"key '{dotted(where, 'name')}': policy {pname!r} executes a plan, which a study cannot give "
                "(run it with `mropt simulate --plan`)"
            )
        label = need(raw, "label", str, where, pname)
        raw_params = need(raw, "params", dict, where, {})
        checked: dict[str, Any] = {}
        for key, value in raw_params.items():
            if key not in info.params:
                takes = ", ".join(sorted(info.params)) or "none"
                raise InputError(
                    f"key '{dotted(where, 'params')}.{key}' is not a parameter of {pname!r} (it takes: {takes})"
                )
            try:
                checked[key] = info.params[key].check(pname, key, value, what="policy")
            except InputError as exc:
                raise InputError(f"key '{dotted(where, 'params')}.{key}': {exc}") from None
        mode = need(raw, "mode", str, where, None)
        if mode is not None and mode not in MODES:
            raise fail(where, "mode", f"one of {', '.join(MODES)}", mode)
        limit = seconds(raw, "time_limit", where, None)
        if any(m.label == label for m in [*methods, *out]):
            raise InputError(
                f"key '{dotted(where, 'label')}': label {label!r} is used twice (give the policy a label of its own)"
            )
        options = _simulation_options(raw, where)
        out.append(MethodSpec(pname, label, checked, (NO_PROFILE,), limit, policy=True, mode=mode, options=options))
    return out


def _simulation_options(raw: dict[str, Any], where: str) -> dict[str, Any]:
    """A policy entry's ``speculation`` (a rule of :mod:`mropt.sim.speculation.table`), its
    ``speculation_params`` (checked against the rule's ``Param`` declarations, as given: no
    defaults filled in, so a run key names only what the file says) and ``straggler_draws``;
    only the keys the entry gives. One-line errors name the key and the value."""
    from mropt.sim.engine import STRAGGLER_DRAWS
    from mropt.sim.speculation.table import rule_info

    out: dict[str, Any] = {}
    rule = need(raw, "speculation", str, where, None)
    info = None
    if rule is not None:
        try:
            info = rule_info(rule)
        except InputError as exc:
            raise InputError(f"key '{dotted(where, 'speculation')}': {exc}") from None
        out["speculation"] = rule
    raw_params = need(raw, "speculation_params", dict, where, None)
    if raw_params is not None:
        name, declared = ("none", {}) if info is None else (info.name, info.params)
        checked: dict[str, Any] = {}
        for key, value in raw_params.items():
            at = f"{dotted(where, 'speculation_params')}.{key}"
            if key not in declared:
                takes = ", ".join(declared) or "none"
                of = "no speculation rule (give 'speculation')" if info is None else f"rule {info.name!r}"
                raise InputError(f"key '{at}' is not a parameter of {of} (it takes: {takes})")
            try:
                checked[key] = declared[key].check(name, key, value, what="speculation rule")
            except InputError as exc:
                raise InputError(f"key '{at}': {exc}") from None
        out["speculation_params"] = checked
    draws = need(raw, "straggler_draws", str, where, None)
    if draws is not None:
        if draws not in STRAGGLER_DRAWS:
            raise fail(where, "straggler_draws", f"one of {', '.join(STRAGGLER_DRAWS)}", draws)
        out["straggler_draws"] = draws
    return out
