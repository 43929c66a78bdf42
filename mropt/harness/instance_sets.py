"""Instance sets of an experiment: a generator sweep, importer windows, a folder, or a named set.

An experiment's ``[[instances]]`` blocks (or the blocks of ``instances/NAME.toml``, which
``set = "NAME"`` names) each take one of four forms; every key is checked before anything
runs (through :mod:`mropt.harness.toml_fields`), and a bad one is an :class:`InputError`
naming it (``instances[1].sweep.size``)::

    [[instances]]                 # 1. generator: paper defaults, overridden and swept
    generator = "admission"       #    mropt.instances.admission_gen.generate_admission
    seeds = [1, 2, 3]             #    in [0, 2^63 - 1]; or {start = 1, count = 10} (count <= 1000000)
    params = {jobs = 30}          #    fixed generator parameters
    sweep = {size = [100, 150, 200]}   # lists; their product (every combination)
    group = "L"                   #    optional label of the block (default: the swept keys)

    [[instances]]                 # 2. importer windows (SWIM traces)
    importer = "swim"
    trace = "../../shared/traces/swim/FB-2009_samples_24_times_1hr_0.tsv"  # relative to the file
    seeds = [0]
    windows = {start = {from = 0, step = 3600, count = 24}, jobs = [30]}
    params = {nodes = 40}         #    SwimParams overrides

    [[instances]]                 # 3. a folder of instance files (*.json)
    folder = "instances/small"    #    pattern = "*.json" (default): a glob inside the folder

    [[instances]]                 # 4. a reusable set: instances/NAME.toml holds [[instances]] blocks
    set = "paper-defaults"        #    and may ship instances/NAME.solu, its reference values

Relative paths are relative to the file that names them. Instances equal in content (the
same SHA-256) are kept once.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
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

FORMS = ("generator", "importer", "folder", "set")
_KEYS = {
    "generator": {"generator", "seeds", "params", "sweep", "group"},
    "importer": {"importer", "trace", "seeds", "windows", "params", "group"},
    "folder": {"folder", "pattern", "group"},
    "set": {"set", "group"},
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
        if gen != "admission":
            raise fail(where, "generator", "a known generator (admission)", gen)
        seed_list(block, "seeds", where)
        params = need(block, "params", dict, where, {})
        sweep = need(block, "sweep", dict, where, {})
        from mropt.instances.admission_gen import AdmissionParams

        known = set(AdmissionParams.__dataclass_fields__)
        for table, keys in (("params", params), ("sweep", sweep)):
            for key in keys:
                if key not in known:
                    raise InputError(f"key '{dotted(where, table)}.{key}' is not a generator parameter "
                                     f"(known: {', '.join(sorted(known))})")
        for key, value in sweep.items():
            value_list(value, dotted(where, "sweep"), key)
    elif form == "importer":
        imp = need(block, "importer", str, where)
        if imp != "swim":
            raise fail(where, "importer", "a known importer (swim)", imp)
        trace = need(block, "trace", str, where)
        if not (base / trace).is_file():
            raise InputError(f"key '{dotted(where, 'trace')}': no such file {str(base / trace)!r}")
        seed_list(block, "seeds", where, [0])
        windows = need(block, "windows", dict, where, {})
        check_keys(windows, {"start", "jobs", "duration"}, dotted(where, "windows"))
        for key, value in windows.items():
            value_list(value, dotted(where, "windows"), key)
        need(block, "params", dict, where, {})
    elif form == "folder":
        folder = base / need(block, "folder", str, where)
        if not folder.is_dir():
            raise InputError(f"key '{dotted(where, 'folder')}': no such folder {str(folder)!r}")
        pattern = string(block, "pattern", where, "*.json")
        if not pattern or Path(pattern).is_absolute() or ".." in Path(pattern).parts:
            raise fail(where, "pattern", "a non-empty glob pattern inside the folder (not absolute, no '..')", pattern)
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
        from mropt.instances.admission_gen import AdmissionParams, generate_admission

        defaults = AdmissionParams()

        def typed(key: str, value: Any) -> Any:  # 1000 and 1000.0 must give the same instance
            if isinstance(getattr(defaults, key, None), float) and isinstance(value, int) and not isinstance(value, bool):
                return float(value)
            return value

        fixed = {k: typed(k, v) for k, v in block.get("params", {}).items()}
        sweep = dict(block.get("sweep", {}))
        for point in product(sweep, dotted(where, "sweep")):
            point = {k: typed(k, v) for k, v in point.items()}
            kwargs = {**fixed, **point}
            group = group_label or (" ".join(f"{k}={v:g}" if isinstance(v, (int, float)) else f"{k}={v}"
                                             for k, v in point.items()) or "default")
            for seed in seed_list(block, "seeds", where):
                inst = generate_admission(seed, **kwargs)
                params = {**_generator_axes(inst), **{k: v for k, v in kwargs.items() if _scalar(v)}, "seed": seed}
                yield InstanceEntry(inst, group, params)
    elif "importer" in block:
        from mropt.instances.swim import import_swim

        trace = base / block["trace"]
        for window in product(dict(block.get("windows", {})), dotted(where, "windows")):
            for seed in seed_list(block, "seeds", where, [0]):
                inst = import_swim(trace, seed=seed, **{**block.get("params", {}), **window})
                group = group_label or f"swim {Path(block['trace']).stem}"
                params = {**{k: v for k, v in window.items() if _scalar(v)}, "seed": seed, "jobs": inst.n}
                yield InstanceEntry(inst, group, params)
    elif "folder" in block:
        folder = base / block["folder"]
        for path in sorted(folder.glob(block.get("pattern", "*.json"))):
            inst = load_instance(path)
            yield InstanceEntry(inst, group_label or folder.name, {"file": path.name, "jobs": inst.n})
    else:
        path = resolve_set(block["set"], base, where)
        for k, sub in enumerate(set_blocks(path)):
            for entry in expand_block(sub, f"instances[{k}]", path.parent):
                yield entry if group_label is None else InstanceEntry(entry.instance, group_label, entry.params)


def _scalar(v: Any) -> bool:
    return isinstance(v, (int, float, str, bool))


def _generator_axes(inst: Any) -> dict[str, Any]:
    """N, L and D of a generated instance (the AMB paper's axes), from the recorded parameters."""
    p = inst.meta.get("generator", {}).get("params", {})
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
