"""Experiment files (TOML): what a gap study runs.

A study is every (instance, method, profile, seed) run of the file. The whole file is
checked before anything runs: an unknown or malformed key is an :class:`InputError`
naming it (``smoke.toml: key 'methods[2].profiles' ...``). Schema::

    name = "smoke"                # the experiment's name in the store (default: the file's stem)
    description = "..."           # free text
    imports = ["mypkg.methods"]   # modules imported, in the parent and in every worker, before
                                  # methods are looked up: plug-in methods register themselves there
    time_limit = 10.0             # seconds per run for runs without a profile (default 60)
    kill_grace = 5.0              # seconds past a run's limit before its worker is killed (default 5)
    method_seeds = [0]            # seeds passed to the methods (default [0]; instance seeds are below)
    profiles = ["cbc", "cpsat"]   # solver profiles (solvers/NAME.toml, or a path relative to this
                                  # file): each runs its backend with its time limit, threads and
                                  # params; a listed method with that backend gets it (default: none)
    methods = [                   # names (`mropt methods`) or tables
      "amb",
      "ideal",
      {name = "milp-highs", profiles = ["highs"]},          # only these profiles for this method
      {name = "cpsat", profiles = ["cpsat"], time_limit = 10},  # overrides the profile's limit
      {name = "amb", label = "amb-beam8", params = {beam = 8}},  # label: the row's method name
    ]

    [[instances]]                 # one or more instance blocks, see mropt.harness.instance_sets
    generator = "admission"
    seeds = {start = 1, count = 10}
    sweep = {size = [100, 150, 200]}
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mropt.harness import instance_sets as sets
from mropt.harness.instance_sets import InstanceEntry, check_keys, dotted, int_list, need
from mropt.model.errors import InputError

_TOP = {"name", "description", "imports", "time_limit", "kill_grace", "method_seeds", "profiles", "methods",
        "instances", "report"}
_METHOD_KEYS = {"name", "label", "params", "profiles", "time_limit"}
NO_PROFILE = "-"


@dataclass(frozen=True)
class MethodSpec:
    name: str
    label: str
    params: dict[str, Any]
    profiles: tuple[str, ...]  # NO_PROFILE: the experiment's time_limit and no solver options
    time_limit: float | None = None  # overrides the profile's and the experiment's


@dataclass(frozen=True)
class RunSpec:
    """One run: what the worker needs (``task``) and the run key that makes resuming exact."""

    key: str
    entry: InstanceEntry
    method: MethodSpec
    profile: str
    seed: int
    time_limit: float | None
    params: dict[str, Any]


@dataclass
class Experiment:
    name: str
    path: Path
    description: str
    imports: list[str]
    time_limit: float
    kill_grace: float
    method_seeds: list[int]
    methods: list[MethodSpec]
    blocks: list[dict[str, Any]]
    profiles: dict[str, Any] = field(default_factory=dict)  # name -> SolverProfile
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def base(self) -> Path:
        return self.path.parent

    def instances(self) -> list[InstanceEntry]:
        """The instances, each kept once (by content hash), in file order."""
        seen: set[str] = set()
        out = []
        for k, block in enumerate(self.blocks):
            for entry in sets.expand_block(block, f"instances[{k}]", self.base):
                digest = entry.instance.content_hash()
                if digest not in seen:
                    seen.add(digest)
                    out.append(entry)
        return out

    def runs(self, entries: list[InstanceEntry] | None = None) -> Iterator[RunSpec]:
        for entry in self.instances() if entries is None else entries:
            digest = entry.instance.content_hash()
            for method in self.methods:
                for profile in method.profiles:
                    limit, params = self.settings(method, profile)
                    for seed in self.method_seeds:
                        key = run_key(self.name, digest, method.label, profile, seed)
                        yield RunSpec(key, entry, method, profile, seed, limit, params)

    def settings(self, method: MethodSpec, profile: str) -> tuple[float | None, dict[str, Any]]:
        """Time limit and method parameters of one (method, profile): the profile's, then the method's own."""
        if profile == NO_PROFILE:
            return method.time_limit or self.time_limit, dict(method.params)
        prof = self.profiles[profile]
        params = {**prof.method_params(), **method.params}
        limit = method.time_limit or prof.time_limit or self.time_limit
        return float(limit), params


def run_key(experiment: str, instance_hash: str, method: str, profile: str, seed: int) -> str:
    """The identity of a run: a study resumes by skipping the keys already stored."""
    return json.dumps([experiment, instance_hash, method, profile, int(seed)], separators=(",", ":"))


def import_modules(names: list[str], paths: list[str] = ()) -> None:
    for p in paths:
        if p not in sys.path:
            sys.path.insert(0, p)
    for name in names:
        importlib.import_module(name)


def load_profile_any(name: str, base: Path) -> Any:
    """A solver profile through :func:`mropt.harness.profiles.load_profile`."""
    try:
        from mropt.harness.profiles import load_profile
    except ImportError:  # pragma: no cover - the profiles module ships separately
        raise InputError(f"solver profiles are not available (mropt.harness.profiles), cannot load {name!r}") from None
    candidate = base / name
    return load_profile(str(candidate) if candidate.suffix == ".toml" and candidate.is_file() else name)


def load_experiment(path: str | Path) -> Experiment:
    """Read and check an experiment file; every error names the file and the key."""
    path = Path(path)
    data = sets.read_toml(path)
    try:
        return _parse(data, path)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None


def _number(data: dict[str, Any], key: str, default: float, minimum_exclusive: float | None = 0.0) -> float:
    value = float(need(data, key, (int, float), "", default))
    if minimum_exclusive is not None and not value > minimum_exclusive:
        raise InputError(f"key '{key}' must be > {minimum_exclusive:g}, got {value:g}")
    return value


def _parse(data: dict[str, Any], path: Path) -> Experiment:
    check_keys(data, _TOP, "")
    name = need(data, "name", str, "", path.stem)
    if not name.strip():
        raise InputError("key 'name' must not be empty")
    imports = need(data, "imports", list, "", [])
    if not all(isinstance(m, str) for m in imports):
        raise InputError(f"key 'imports' must be a list of module names, got {imports!r:.60}")
    try:
        import_modules(imports, [str(Path.cwd()), str(path.parent.resolve())])
    except ImportError as exc:
        raise InputError(f"key 'imports': cannot import ({exc})") from None
    time_limit = _number(data, "time_limit", 60.0)
    kill_grace = _number(data, "kill_grace", 5.0, minimum_exclusive=None)
    if kill_grace < 0:
        raise InputError(f"key 'kill_grace' must be >= 0, got {kill_grace:g}")
    method_seeds = int_list(data, "method_seeds", "", [0])
    default_profiles = need(data, "profiles", list, "", [])
    report = need(data, "report", dict, "", {})

    from mropt.registry import get_method

    raw_methods = need(data, "methods", list, "", [])
    methods: list[MethodSpec] = []
    profiles: dict[str, Any] = {}

    def profile(p: Any, where: str) -> Any:
        if not isinstance(p, str):
            raise InputError(f"key '{where}' must list profile names, got {p!r:.60}")
        if p not in profiles:
            try:
                profiles[p] = load_profile_any(p, path.parent)
            except InputError as exc:
                raise InputError(f"key '{where}': {exc}") from None
        return profiles[p]

    for k, p in enumerate(default_profiles):
        profile(p, f"profiles[{k}]")
    for k, raw in enumerate(raw_methods):
        where = f"methods[{k}]"
        if isinstance(raw, str):
            raw = {"name": raw}
        if not isinstance(raw, dict):
            raise InputError(f"key '{where}' must be a method name or a table, got {raw!r:.60}")
        check_keys(raw, _METHOD_KEYS, where)
        mname = need(raw, "name", str, where)
        try:
            info = get_method(mname)
        except InputError as exc:
            raise InputError(f"key '{dotted(where, 'name')}': {exc}") from None
        label = need(raw, "label", str, where, mname)
        params = need(raw, "params", dict, where, {})
        checked = {}
        for pname, pvalue in params.items():  # names, types and ranges, from the method's declaration
            try:
                checked[pname] = info.check_params({pname: pvalue})[pname]
            except InputError as exc:
                raise InputError(f"key '{dotted(where, 'params')}.{pname}': {exc}") from None
        params = checked
        own = need(raw, "profiles", list, where, None)
        limit = need(raw, "time_limit", (int, float), where, None)
        if limit is not None and not limit > 0:
            raise InputError(f"key '{dotted(where, 'time_limit')}' must be > 0, got {limit!r}")
        if own is None:  # the top-level profiles whose backend is this method
            names = [p for p in default_profiles if profiles[p].backend == mname]
        else:
            names = list(own)
            for j, p in enumerate(own):
                prof = profile(p, f"{dotted(where, 'profiles')}[{j}]")
                if prof.backend != mname:
                    raise InputError(f"key '{dotted(where, 'profiles')}[{j}]': profile {p!r} runs "
                                     f"{prof.backend!r}, not {mname!r}")
        if any(m.label == label for m in methods):
            raise InputError(f"key '{dotted(where, 'label')}': method label {label!r} is used twice")
        methods.append(MethodSpec(mname, label, dict(params), tuple(names) or (NO_PROFILE,),
                                  None if limit is None else float(limit)))
    listed = {m.name for m in methods}
    for p in default_profiles:  # a profile whose backend is not listed runs its backend, as is
        backend = profiles[p].backend
        if backend not in listed:
            at = next((i for i, m in enumerate(methods) if m.label == backend), None)
            if at is None:
                methods.append(MethodSpec(backend, backend, {}, (p,)))
            else:
                m = methods[at]
                methods[at] = MethodSpec(m.name, m.label, m.params, (*m.profiles, p), m.time_limit)
    if not methods:
        raise InputError("key 'methods' must not be empty (or give 'profiles')")

    blocks = data.get("instances")
    if isinstance(blocks, dict):
        blocks = [blocks]
    if not isinstance(blocks, list) or not blocks:
        raise InputError("key 'instances' is missing (give one or more [[instances]] blocks)")
    for k, block in enumerate(blocks):
        sets.check_block(block, f"instances[{k}]", path.parent)
    return Experiment(name, path, need(data, "description", str, "", ""), imports, time_limit, kill_grace,
                     method_seeds, methods, blocks, profiles, report)
