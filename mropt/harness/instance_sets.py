"""Instance sets of an experiment: a generator sweep, importer windows, a folder, files, or a named set.

An experiment's ``[[instances]]`` blocks (or the blocks of ``instances/NAME.toml``, which
``set = "NAME"`` names) each take one of five forms; every key is checked before anything
runs (through :mod:`mropt.harness.toml_fields`), and a bad one is an :class:`InputError`
naming it (``instances[1].sweep.size``)::

    [[instances]]                 # 1. generator: paper defaults, overridden and swept
    generator = "admission"       #    admission, fairness or priority (GENERATORS): generate_admission,
                                  #    generate_fairness, generate_priority of mropt.instances
    seeds = [1, 2, 3]             #    in [0, 2^63 - 1]; or {start = 1, count = 10} (count <= 1000000)
    params = {jobs = 30}          #    fixed generator parameters: fields of AdmissionParams,
                                  #    FairnessParams or PriorityParams
    sweep = {size = [100, 150, 200]}   # lists; their product (every combination)
    group = "L"                   #    optional label of the block (default: the swept keys)

    [[instances]]                 #    e.g. fairness: 4 and 8 users on listed machines
    generator = "fairness"
    seeds = [1, 2]
    params = {with_nodes = true, tasks_max = 6}
    sweep = {users = [4, 8]}

    [[instances]]                 #    e.g. simulator workloads: the AMB paper's sets
    generator = "workload"        #    (mropt.instances.workload_gen.generate_workload, WorkloadParams)
    preset = "amb-dynamic"        #    its preset (default amb-static); only this generator has presets
    seeds = [1, 2]
    sweep = {mean_splits = [100, 200]}

    [[instances]]                 # 2. importer windows: an importer that declares windows (mropt
    importer = "swim"             #    importers --params marks them: swim, alibaba)
    trace = "traces/FB-2009_samples_24_times_1hr_0.tsv"  # SWIM's Facebook 2009 day; relative to the file
    seeds = [0]                   #    for an importer that takes a seed
    windows = {start = {from = 0, step = 3600, count = 24}, jobs = [30]}
    params = {nodes = 40}         #    its other parameters (SwimParams), typed and checked
    workload = false              #    true: each window as a simulator workload (--workload: policy
                                  #    studies on the trace's own cluster), with the workload's
                                  #    parameters (mropt importers --params)

    [[instances]]                 # 3. a folder of instance files (*.json; workload files too)
    folder = "instances/small"    #    pattern = "*.json" (default): a glob inside the folder

    [[instances]]                 # 4. a reusable set: instances/NAME.toml holds [[instances]] blocks
    set = "paper-defaults"        #    and may ship instances/NAME.solu, its reference values

    [[instances]]                 # 5. instance files named one by one (workload files too); each
    files = ["w/day1.json", "w/day2.json"]  # is its own group (its file's stem) unless 'group' is given

Relative paths are relative to the file that names them. Instances equal in content (the
same SHA-256) are kept once. A generator's parameters are checked before anything runs: the
key must be a field of its parameter dataclass, the value of the field's type (an integer,
a number, true or false, a list of numbers, a table of numbers), and every combination
must pass the dataclass's own ``check`` (``key 'instances[0]' (users=0): generator:
parameter 'users' must be >= 1, got 0``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from mropt.harness.toml_fields import (
    check_keys,
    dotted,
    fail,
    need,
    product,
    read_toml,
    seed_list,
    show,
    string,
    value_list,
)
from mropt.model.errors import InputError
from mropt.model.io import load_instance

FORMS = ("generator", "importer", "folder", "set", "files")


@dataclass(frozen=True)
class Generator:
    """A generator an experiment file may name (``generator = "NAME"``): where its parameter
    dataclass and its function ``generate(seed, **params) -> instance`` live."""

    name: str
    module: str
    params_class: str
    function: str
    presets: str = ""  # the module's table of presets (name -> parameter overrides), if it has one

    def load(self) -> tuple[type, Callable[..., Any]]:
        import importlib

        try:
            mod = importlib.import_module(self.module)
        except ImportError:
            raise InputError(f"generator {self.name!r} is not available in this mropt ({self.module})") from None
        return getattr(mod, self.params_class), getattr(mod, self.function)

    def preset_names(self) -> tuple[str, ...]:
        if not self.presets:
            return ()
        import importlib

        return tuple(getattr(importlib.import_module(self.module), self.presets))


#: the generators of ``generator = "NAME"`` blocks (mropt.instances)
GENERATORS: dict[str, Generator] = {
    "admission": Generator("admission", "mropt.instances.admission_gen", "AdmissionParams", "generate_admission"),
    "fairness": Generator("fairness", "mropt.instances.fairness_gen", "FairnessParams", "generate_fairness"),
    "priority": Generator("priority", "mropt.instances.priority_gen", "PriorityParams", "generate_priority"),
    # simulator workloads for policy studies (mropt.sim); generate_workload(preset=..., seed=..., **params)
    "workload": Generator(
        "workload", "mropt.instances.workload_gen", "WorkloadParams", "generate_workload", presets="PRESETS"
    ),
}
_KEYS = {
    "generator": {"generator", "seeds", "params", "sweep", "group", "preset"},
    "importer": {"importer", "trace", "seeds", "windows", "params", "group", "workload"},
    "folder": {"folder", "pattern", "group"},
    "set": {"set", "group"},
    "files": {"files", "group"},
}


@dataclass(frozen=True)
class InstanceEntry:
    """One instance of a study with what the tables group it by."""

    instance: Any
    group: str
    params: Mapping[str, Any] = field(default_factory=dict)  # generator/importer parameters and seed

    @property
    def id(self) -> str:
        return self.instance.name or self.instance.content_hash()[:12]


# -- parsing (checks only) and expansion --------------------------------------------------
def resolve_set(name: str, base: Path, where: str) -> Path:
    """``instances/NAME.toml``, looked up beside the naming file, in its parents and in the cwd."""
    candidates = [base / name] if name.endswith(".toml") else []
    candidates += [p / "instances" / f"{name}.toml" for p in (base, *base.resolve().parents, Path.cwd())]
    for path in candidates:
        if path.is_file():
            return path
    raise InputError(f"key '{dotted(where, 'set')}': no instance set {name!r} (looked for instances/{name}.toml)")


def set_blocks(path: Path) -> list[dict[str, Any]]:
    """The ``[[instances]]`` blocks of an instance-set file."""
    data = read_toml(path)
    try:
        check_keys(data, {"instances", "description"}, "")
        blocks = data.get("instances")
        if isinstance(blocks, dict):
            blocks = [blocks]
        if not isinstance(blocks, list) or not blocks:
            raise InputError("key 'instances' is missing or empty")
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    return blocks


def check_block(block: Any, where: str, base: Path, depth: int = 0) -> None:
    """Check one ``[[instances]]`` block without generating anything."""
    if not isinstance(block, dict):
        raise InputError(f"key '{where}' must be a table, got {show(block)}")
    forms = [f for f in FORMS if f in block]
    if len(forms) != 1:
        raise InputError(f"key '{where}' needs exactly one of {', '.join(FORMS)} (got {', '.join(forms) or 'none'})")
    form = forms[0]
    check_keys(block, _KEYS[form], where)
    need(block, "group", str, where, None)
    if form == "generator":
        gen = need(block, "generator", str, where)
        if gen not in GENERATORS:
            raise fail(where, "generator", f"a known generator ({', '.join(GENERATORS)})", gen)
        seed_list(block, "seeds", where)
        params = need(block, "params", dict, where, {})
        sweep = need(block, "sweep", dict, where, {})
        params_class, _ = GENERATORS[gen].load()
        defaults = _preset_defaults(GENERATORS[gen], params_class, block, where)
        known = {f.name for f in fields(params_class)}
        for table, keys in (("params", params), ("sweep", sweep)):
            for key in keys:
                if key not in known:
                    raise InputError(
                        f"key '{dotted(where, table)}.{key}' is not a generator parameter "
                        f"(known: {', '.join(sorted(known))})"
                    )
        for key, value in params.items():
            _check_value(defaults, key, value, dotted(where, "params"))
        for key, value in sweep.items():
            for item in value_list(value, dotted(where, "sweep"), key):
                _check_value(defaults, key, item, dotted(where, "sweep"))
        for point in product(sweep, dotted(where, "sweep")):
            kwargs = {**params, **point}
            try:
                _params_of(defaults, kwargs).check()
            except InputError as exc:
                label = " ".join(f"{k}={v}" for k, v in point.items())
                raise InputError(f"key '{where}'{f' ({label})' if label else ''}: {exc}") from None
    elif form == "importer":
        _check_importer(block, where, base)
    elif form == "folder":
        folder = base / need(block, "folder", str, where)
        if not folder.is_dir():
            raise InputError(f"key '{dotted(where, 'folder')}': no such folder {str(folder)!r}")
        pattern = string(block, "pattern", where, "*.json")
        if not pattern or Path(pattern).is_absolute() or ".." in Path(pattern).parts:
            raise fail(where, "pattern", "a non-empty glob pattern inside the folder (not absolute, no '..')", pattern)
    elif form == "files":
        _check_files(block, where, base)
    else:
        if depth > 4:
            raise InputError(f"key '{where}': instance sets nest too deeply")
        path = resolve_set(need(block, "set", str, where), base, where)
        for k, sub in enumerate(set_blocks(path)):
            try:
                check_block(sub, f"instances[{k}]", path.parent, depth + 1)
            except InputError as exc:
                raise InputError(f"key '{dotted(where, 'set')}': {path}: {exc}") from None


def expand_block(block: dict[str, Any], where: str, base: Path) -> Iterator[InstanceEntry]:
    """The instances of one (checked) block, in a deterministic order."""
    group_label = block.get("group")
    if "generator" in block:
        gen = GENERATORS[block["generator"]]
        params_class, generate = gen.load()
        defaults = _preset_defaults(gen, params_class, block, where)
        preset = {"preset": block["preset"]} if "preset" in block else {}
        fixed = {k: _typed(defaults, k, v) for k, v in block.get("params", {}).items()}
        sweep = dict(block.get("sweep", {}))
        for point in product(sweep, dotted(where, "sweep")):
            point = {k: _typed(defaults, k, v) for k, v in point.items()}
            kwargs = {**fixed, **point}
            group = group_label or (
                " ".join(f"{k}={v:g}" if _number(v) else f"{k}={v}" for k, v in point.items()) or "default"
            )
            for seed in seed_list(block, "seeds", where):
                inst = generate(seed=seed, **preset, **kwargs)
                params = {
                    **preset,
                    **_generator_axes(gen.name, inst),
                    **{k: v for k, v in kwargs.items() if _scalar(v)},
                    "seed": seed,
                }
                yield InstanceEntry(inst, group, params)
    elif "importer" in block:
        output = _windowed(block["importer"], where, block.get("workload", False))
        trace = base / block["trace"]
        seeded_runs: list[dict[str, int]] = [{}]  # an importer without a seed: one run per window
        if "seed" in output.fields():
            seeded_runs = [{"seed": k} for k in seed_list(block, "seeds", where, [0])]
        for window in product(dict(block.get("windows", {})), dotted(where, "windows")):
            for seeded in seeded_runs:
                inst = output.make(trace, **seeded, **{**block.get("params", {}), **window})
                group = group_label or f"{block['importer']} {Path(block['trace']).stem}"
                params = {**{k: v for k, v in window.items() if _scalar(v)}, **seeded, "jobs": inst.n}
                yield InstanceEntry(inst, group, params)
    elif "folder" in block:
        folder = base / block["folder"]
        for path in sorted(folder.glob(block.get("pattern", "*.json"))):
            inst = load_instance(path)
            yield InstanceEntry(inst, group_label or folder.name, {"file": path.name, "jobs": inst.n})
    elif "files" in block:
        for name in block["files"]:
            inst = load_instance(base / name)
            yield InstanceEntry(inst, group_label or Path(name).stem, {"file": Path(name).name, "jobs": inst.n})
    else:
        path = resolve_set(block["set"], base, where)
        for k, sub in enumerate(set_blocks(path)):
            for entry in expand_block(sub, f"instances[{k}]", path.parent):
                yield entry if group_label is None else InstanceEntry(entry.instance, group_label, entry.params)


def _check_files(block: dict[str, Any], where: str, base: Path) -> None:
    """``files``: a non-empty list of paths (relative to the naming file) of files that exist."""
    files = need(block, "files", list, where)
    if not files:
        raise fail(where, "files", "a non-empty list of instance files", files)
    for k, name in enumerate(files):
        at = f"{dotted(where, 'files')}[{k}]"
        if not isinstance(name, str) or not name:
            raise InputError(f"key '{at}' must be a file name, got {show(name)}")
        if not (base / name).is_file():
            raise InputError(f"key '{at}': no such file {str(base / name)!r}")


def _windowed(name: str, where: str, workload: bool = False) -> Any:
    """The output of the importer ``name``, which must declare windows (what an experiment sweeps):
    its instance, or with ``workload`` its simulator workload (``mropt import-NAME --workload``)."""
    from mropt.importers.table import importers

    known = {n: imp for n, imp in importers().items() if imp.windows and imp.output is not None}
    if name not in known:
        raise fail(where, "importer", f"a known importer ({', '.join(known)})", name)
    output = known[name].workload if workload else known[name].output
    if output is None:
        raise InputError(f"key '{dotted(where, 'workload')}': importer {name!r} makes no workload")
    return output


def _check_importer(block: dict[str, Any], where: str, base: Path) -> None:
    """An importer block (module docstring), checked against the importer's registration.

    Window keys are the importer's ``windows``; ``params`` keys the other parameters of its
    instance (typed, :func:`mropt.registry.check_params`); ``seeds`` only for an importer that takes
    a seed. Every window combination must pass the parameter dataclasses' own ``check``.
    """
    from mropt.importers.table import importer_info
    from mropt.registry import check_params

    output = _windowed(need(block, "importer", str, where), where, need(block, "workload", bool, where, False))
    imp = importer_info(block["importer"])
    trace = need(block, "trace", str, where)
    if not (base / trace).is_file():
        raise InputError(f"key '{dotted(where, 'trace')}': no such file {str(base / trace)!r}")
    declared = output.fields()
    if "seed" in declared:
        seed_list(block, "seeds", where, [0])
    elif "seeds" in block:
        raise InputError(f"key '{dotted(where, 'seeds')}': importer {imp.name!r} takes no seed")
    windows = need(block, "windows", dict, where, {})
    check_keys(windows, set(imp.windows), dotted(where, "windows"))
    for key, value in windows.items():
        value_list(value, dotted(where, "windows"), key)
    params = need(block, "params", dict, where, {})
    fixed = {k: v for k, v in declared.items() if k not in imp.windows and k != "seed"}
    try:
        params = check_params("importer", imp.name, fixed, params)
        for window in product(windows, dotted(where, "windows")):
            output.check({**params, **window})
    except InputError as exc:
        raise InputError(f"key '{dotted(where, 'params')}': {exc}") from None


def _preset_defaults(gen: Generator, params_class: type, block: dict[str, Any], where: str) -> Any:
    """The generator's parameters before the block's: its class defaults, or the block's ``preset``'s."""
    from dataclasses import replace

    if "preset" not in block:
        return params_class()
    names = gen.preset_names()
    if not names:
        raise InputError(f"key '{dotted(where, 'preset')}': generator {gen.name!r} has no presets")
    preset = need(block, "preset", str, where)
    if preset not in names:
        raise fail(where, "preset", f"one of {', '.join(names)}", preset)
    import importlib

    overrides = getattr(importlib.import_module(gen.module), gen.presets)[preset]
    return replace(params_class(), **overrides)


def _scalar(v: Any) -> bool:
    return isinstance(v, (int, float, str, bool))


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@functools.cache
def _field_types(params_class: type) -> dict[str, Any]:
    """The generator fields' annotated types (``float``, ``tuple[float, ...]``, ``Mapping[str, float]``...)."""
    import typing

    return typing.get_type_hints(params_class)


def _typed(defaults: Any, key: str, value: Any) -> Any:
    """A value as the generator gets it from its command line: an integer given for a float field
    as a float (1000 and 1000.0 must give the same instance), a list for a tuple field as a tuple."""
    import typing

    params_class: type = type(defaults)  # typed: mypy does not take type(Any) as Hashable (the cache key)
    hint = _field_types(params_class).get(key)
    if hint is float and _number(value):
        return float(value)
    if typing.get_origin(hint) is tuple and isinstance(value, list):
        floats = typing.get_args(hint)[:1] == (float,)
        return tuple(float(v) if floats and _number(v) else v for v in value)
    return value


def _check_value(defaults: Any, key: str, value: Any, where: str) -> None:
    """``value`` of the generator field ``key``'s annotated type, or InputError naming the key."""
    import typing

    params_class: type = type(defaults)  # typed: mypy does not take type(Any) as Hashable (the cache key)
    hint = _field_types(params_class)[key]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is bool:
        ok, rule = isinstance(value, bool), "true or false"
    elif hint is int:
        ok, rule = isinstance(value, int) and not isinstance(value, bool), "an integer"
    elif hint is float:
        ok, rule = _number(value) and math.isfinite(value), "a finite number"
    elif hint is str:
        ok, rule = isinstance(value, str), "a string"
    elif origin is tuple and args[:1] in ((float,), (int,)):
        ok = isinstance(value, list) and all(_number(v) and math.isfinite(v) for v in value)
        rule = "a list of numbers"
    elif origin in (Mapping, dict, typing.Mapping) and args[1:] in ((float,), (int,)):
        ok = isinstance(value, dict) and all(_number(v) and math.isfinite(v) for v in value.values())
        rule = "a table of numbers (name = weight)"
    else:
        raise InputError(
            f"key '{dotted(where, key)}': generator parameter {key!r} cannot be set from an "
            "experiment file (use a folder of generated files)"
        )
    if not ok:
        raise fail(where, key, rule, value)


def _params_of(defaults: Any, kwargs: Mapping[str, Any]) -> Any:
    """The generator's parameter dataclass with ``kwargs`` set (typed as the generator gets them)."""
    from dataclasses import replace

    return replace(defaults, **{k: _typed(defaults, k, v) for k, v in kwargs.items()})


def _generator_axes(generator: str, inst: Any) -> dict[str, Any]:
    """The columns a report groups by: ``jobs`` (the instance's size: jobs, users, priorities)
    and, for admission, the AMB paper's L and D, from the recorded parameters."""
    p = inst.meta.get("generator", {}).get("params", {})
    if generator != "admission":
        return {"jobs": inst.n}
    return {"jobs": p.get("jobs", inst.n), "size": p.get("size"), "deadline": p.get("deadline")}


def shipped_references(blocks: list[dict[str, Any]], base: Path) -> list[Path]:
    """``instances/NAME.solu`` files shipped beside the named sets (reference values)."""
    out = []
    for block in blocks:
        if "set" in block:
            path = resolve_set(block["set"], base, "instances").with_suffix(".solu")
            if path.is_file():
                out.append(path)
    return out
