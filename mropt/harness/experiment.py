"""Experiment files (TOML): what a gap study runs.

A study is every (instance, method, profile, seed) run of the file. The whole file is
checked before anything runs: an unknown or malformed key is an :class:`InputError`
naming it (``smoke.toml: key 'methods[2].profiles' ...``). Schema::

    name = "smoke"                # the experiment's name in the store (default: the file's stem); without
                                  # --out, results go to results/NAME, so NAME must then be a folder name
                                  # (letters, digits, '.', '_', '-'; see Experiment.results_folder)
    description = "..."           # free text
    imports = ["mypkg.methods"]   # modules imported, in the parent and in every worker, before
                                  # methods are looked up: plug-in methods register themselves there.
                                  # This RUNS CODE: the named modules, found on sys.path first and
                                  # then in the working folder and the experiment's folder (never
                                  # ahead of the standard library; see import_modules). Nothing
                                  # else in those folders runs, and `mropt gap --check` runs none.
    time_limit = 10.0             # seconds per run for runs without a profile (default 60), in (0, 1e7]
    kill_grace = 5.0              # seconds past a run's limit before its worker is killed (default 5), in [0, 1e7]
    method_seeds = [0]            # seeds passed to the methods (default [0]; instance seeds are below),
                                  # integers in [0, 2^63 - 1] or {start, count}
    profiles = ["cbc", "cpsat"]   # solver profiles (solvers/NAME.toml, or a path relative to this
                                  # file): each runs its backend with its time limit, threads and
                                  # params; a listed method with that backend gets it (default: none)
    methods = [                   # names (`mropt methods`) or tables; every method must solve the
                                  # instances' kind (checked with the instances, before anything runs)
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

**Policies**: a study may list simulator policies (``mropt policies``) beside or
instead of methods; each (instance, policy, seed of ``method_seeds``) is a simulation
(:func:`mropt.sim.run.simulate`) whose row has kind ``workload``, objective the benefit
earned (AMB eq. 1) and the simulation's summary in ``metrics``. The instances must be
workloads or admission instances (converted to the SEQ model's idealised cluster)::

    policies = [
      "fifo",
      {name = "fair", label = "fair-nodelay", params = {node_delay = 0}},
      {name = "fifo", label = "fifo-event", mode = "event"},   # assignment mode override
      {name = "fair", label = "fair-late", speculation = "late",  # a speculation rule (mropt policies)
       speculation_params = {slow_task_threshold = 0.5}, straggler_draws = "task"},
    ]

``speculation`` names a rule of :mod:`mropt.sim.speculation.table` (default ``none``),
``speculation_params`` its parameters (checked against the rule's declarations),
``straggler_draws`` ``stream`` or ``task`` (``task`` by default with a rule: give it to the
``none`` entry to compare the rules on the same stragglers, as ``benchmarks/bench_sim_late.py``
does); all three go to :func:`mropt.sim.run.simulate` and into the run key. When a study
holds policies, ``mropt gap`` and ``mropt report`` print the policy tables
(:mod:`mropt.harness.policy_report`) for those rows, not gap columns.

Labels (the row's ``method``) must differ across methods and policies. A policy that
executes a plan (``seq``) cannot be listed (studies give no plans). Every policy must be able
to run on every instance (what it declared it needs: slots, deadlines, the admission model;
``hei``'s history file, read then): checked with the instances, before anything runs. A simulation's time
limit is the experiment's ``time_limit`` (or the policy's own ``time_limit``).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mropt.harness import instance_sets as sets
from mropt.harness.instance_sets import InstanceEntry
from mropt.harness.method_specs import NO_PROFILE, MethodSpec, method_specs
from mropt.harness.toml_fields import (
    check_keys,
    fail,
    in_file,
    need,
    read_toml,
    seconds,
    seed_list,
    string,
)
from mropt.model.errors import InputError

_TOP = {
    "name",
    "description",
    "imports",
    "time_limit",
    "kill_grace",
    "method_seeds",
    "profiles",
    "methods",
    "policies",
    "instances",
    "report",
}
#: the row's kind of a simulation (``mropt.model.workload.KIND``)
POLICY_KIND = "workload"
#: the instance kinds a policy runs on (admission instances are converted)
POLICY_INPUT_KINDS = ("workload", "admission")
#: what an experiment name must look like to name its results folder (Experiment.results_folder)
_FOLDER_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class RunSpec:
    """One run: what the worker needs (``task``), its key and its slot.

    ``key`` (:func:`run_key`) covers everything that changes the run's result: a stored
    row is reused only when its key is this one. ``slot`` (:func:`run_slot`) names the
    row of the table the run fills (experiment, instance, method label, profile, seed): a
    new result replaces the slot's row.
    """

    key: str
    entry: InstanceEntry
    method: MethodSpec
    profile: str
    seed: int
    time_limit: float | None
    params: dict[str, Any]
    slot: str = ""


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
    #: method names not checked because their module was not imported (load_experiment(run_imports=False))
    unchecked: list[str] = field(default_factory=list)

    @property
    def base(self) -> Path:
        return self.path.parent

    def results_folder(self, root: str | Path = "results") -> Path:
        """``root/NAME``, the folder of a study run without ``--out``.

        The name becomes a folder, so it must be a plain folder name: letters, digits,
        ``.``, ``_`` and ``-``, not starting with ``.`` and without ``..``. An absolute
        name, a path separator or ``..`` would put the results outside ``root``; such a
        name is refused (one line naming the file and the key), not rewritten.
        """
        if not _FOLDER_NAME.fullmatch(self.name) or ".." in self.name:
            raise in_file(
                self.path,
                fail(
                    "",
                    "name",
                    "a folder name of letters, digits, '.', '_' and '-' (not "
                    "starting with '.', no '..') to name the results folder (or give --out)",
                    self.name,
                ),
            )
        return Path(root) / self.name

    def instances(self) -> list[InstanceEntry]:
        """The instances, each kept once (by content hash), in file order.

        Every method must solve the kind of every instance: a method of another kind
        (``mpsa`` on admission instances) is an InputError naming the file, the method and
        the instance block, before anything runs (``mropt gap --check`` says so too).
        """
        seen: set[str] = set()
        out = []
        made: dict[str, Any] = {}  # policy label -> its policy, made once (hei reads its history once)
        for k, block in enumerate(self.blocks):
            for entry in sets.expand_block(block, f"instances[{k}]", self.base):
                digest = entry.instance.content_hash()
                self._check_kind(entry, f"instances[{k}]")
                if digest not in seen:
                    seen.add(digest)
                    self._check_policy_input(entry, f"instances[{k}]", made)
                    out.append(entry)
        return out

    def _check_policy_input(self, entry: InstanceEntry, where: str, made: dict[str, Any]) -> None:
        """Every policy can run on the instance (``Policy.check_input``: its declared needs, ``hei``'s
        history), else an InputError naming the file, the policy, what is missing and the instance
        block, before anything runs (``mropt gap --check`` says so too)."""
        policies = [m for m in self.methods if m.policy]
        if not policies:
            return
        from mropt.sim.policy import make_policy
        from mropt.sim.run import as_workload

        workload = as_workload(entry.instance)
        for method in policies:
            label = "" if method.label == method.name else f" (label {method.label!r})"
            try:
                if method.label not in made:
                    made[method.label] = make_policy(method.name, method.params)
                made[method.label].check_input(workload)
            except InputError as exc:
                raise in_file(
                    self.path, InputError(f"key 'policies'{label}: {exc} ({where}, instance {entry.id!r})")
                ) from None

    def _check_kind(self, entry: InstanceEntry, where: str) -> None:
        from mropt.registry import get_method

        kind = entry.instance.kind
        for method in self.methods:
            if method.policy:
                if kind not in POLICY_INPUT_KINDS:
                    raise in_file(
                        self.path,
                        InputError(
                            f"key 'policies': policy {method.name!r} runs on workload or admission instances, "
                            f"but {where} gives {kind} instances (first: {entry.id!r})"
                        ),
                    )
                continue
            if method.name in self.unchecked:  # a plug-in method not imported (gap --check): unknown here
                continue
            solves = get_method(method.name).kind
            if solves != kind:
                label = "" if method.label == method.name else f" (label {method.label!r})"
                raise in_file(
                    self.path,
                    InputError(
                        f"key 'methods': method {method.name!r}{label} solves {solves} instances, but {where} "
                        f"gives {kind} instances (first: {entry.id!r}); list methods of one kind per study"
                    ),
                )

    def worst_case_seconds(self, runs: list[RunSpec], workers: int) -> float | None:
        """Wall time if every run used its whole limit plus ``kill_grace``: their sum over ``workers``
        (at least the longest one); None when a run has no limit."""
        each = []
        for r in runs:
            if r.time_limit is None:
                return None
            each.append(r.time_limit + self.kill_grace)
        return max(sum(each) / max(1, workers), max(each, default=0.0))

    def runs(self, entries: list[InstanceEntry] | None = None) -> Iterator[RunSpec]:
        for entry in self.instances() if entries is None else entries:
            digest = entry.instance.content_hash()
            for method in self.methods:
                for profile in method.profiles:
                    limit, params = self.settings(method, profile)
                    for seed in self.method_seeds:
                        key = run_key(
                            self.name,
                            digest,
                            method.label,
                            profile,
                            seed,
                            method=method.name,
                            params=params,
                            time_limit=limit,
                            policy=method.policy,
                            mode=method.mode,
                            options=method.options,
                        )
                        slot = run_slot(self.name, digest, method.label, profile, seed)
                        yield RunSpec(key, entry, method, profile, seed, limit, params, slot)

    def settings(self, method: MethodSpec, profile: str) -> tuple[float | None, dict[str, Any]]:
        """Time limit and method parameters of one (method, profile): the profile's, then the method's own."""
        if profile == NO_PROFILE:
            return method.time_limit or self.time_limit, dict(method.params)
        prof = self.profiles[profile]
        params = {**prof.method_params(), **method.params}
        limit = method.time_limit or prof.time_limit or self.time_limit
        return float(limit), params


def run_key(
    experiment: str,
    instance_hash: str,
    label: str,
    profile: str,
    seed: int,
    *,
    method: str,
    params: dict[str, Any],
    time_limit: float | None,
    policy: bool = False,
    mode: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> str:
    """The identity of a run's result: a study resumes by skipping runs whose key is stored.

    It covers everything that changes a run's result: the instance (content hash), the
    method and its checked parameters (the profile's ``params`` and ``threads`` merged in),
    the time limit in force (the method's, else the profile's, else the experiment's) and
    the seed; and the slot the row fills (experiment, label, profile name). Not the mropt
    version, and not ``kill_grace`` (it only decides when an overrunning run is killed).
    A simulation's key also has ``"policy": true`` and its ``mode`` (a method's key is
    unchanged, so stores of method studies resume as before), and the simulation options its
    entry gives (``speculation``, ``speculation_params``, ``straggler_draws``; none given: the
    key of a policy study written before they existed). A canonical JSON object, keys sorted.
    """
    fields: dict[str, Any] = {
        "experiment": experiment,
        "instance": instance_hash,
        "label": label,
        "method": method,
        "params": dict(params),
        "profile": profile,
        "seed": int(seed),
        "time_limit": None if time_limit is None else float(time_limit),
    }
    if policy:
        fields["policy"] = True
        fields["mode"] = mode
        fields.update(options or {})
    return json.dumps(fields, sort_keys=True, separators=(",", ":"))


def run_slot(experiment: str, instance_hash: str, label: str, profile: str, seed: int) -> str:
    """The row a run fills: one per (experiment, instance, method label, profile, seed).

    This is the run key of stores written before the key covered the settings, so their
    rows keep their slots (see :func:`stored_run_key`).
    """
    return json.dumps([experiment, instance_hash, label, profile, int(seed)], separators=(",", ":"))


def stored_run_key(row: Mapping[str, Any]) -> str | None:
    """The run key of a stored row, for resuming.

    Rows of this format carry it (``run_key`` a JSON object). Rows of stores written
    before the key covered the settings (``run_key`` a JSON list: experiment, instance,
    label, profile, seed) get theirs rebuilt from the settings the row records (method,
    its parameters as run, with the profile's merged in, and the time limit in force):
    they match a run exactly when those settings are provably the same; a row that
    lacks them gets None (never matches: it is run again).
    """
    key = row.get("run_key")
    if isinstance(key, str) and key.startswith("{"):
        return key
    try:
        method, params = row["method_name"], json.loads(row["method_params"])
        limit = row.get("time_limit")
        limit = None if limit is None or limit != limit else float(limit)  # NaN: pandas' missing
        if not isinstance(method, str) or not isinstance(params, dict):
            return None
        return run_key(
            row["experiment"],
            row["instance_hash"],
            row["method"],
            row["profile"],
            int(row["seed"]),
            method=method,
            params=params,
            time_limit=limit,
        )
    except (KeyError, TypeError, ValueError):
        return None


def import_modules(names: Sequence[str], paths: Sequence[str] = ()) -> None:
    """Import the modules an experiment names in ``imports``.

    Only the named modules run, and never ahead of the standard library or the
    installed packages: the folders in ``paths`` (the working folder and the
    experiment's) are appended at the *end* of ``sys.path`` while the named modules
    are imported, and removed afterwards, so a ``select.py`` or ``tqdm.py`` beside an
    experiment file never shadows the real module, and nothing from those folders is
    imported by a later import. A plug-in found only there is imported from there,
    and so are the modules it imports from its folder while it is being imported.
    """
    todo = [name for name in names if name not in sys.modules]
    if not todo:
        return
    added = [p for p in dict.fromkeys(paths) if p and p not in sys.path]
    sys.path.extend(added)
    try:
        for name in todo:
            importlib.import_module(name)
    finally:
        for p in added:
            with contextlib.suppress(ValueError):  # the plug-in may have removed it itself
                sys.path.remove(p)


def import_paths(path: Path) -> list[str]:
    """Where ``imports`` are looked for after ``sys.path``: the working folder, then the experiment's."""
    return [str(Path.cwd()), str(Path(path).parent.resolve())]


def load_experiment(path: str | Path, *, run_imports: bool = True) -> Experiment:
    """Read and check an experiment file; every error names the file and the key.

    ``run_imports=False`` (``mropt gap --check``) imports none of the ``imports``
    modules: a method those modules would register is then taken on trust (its name
    and params are not checked; :attr:`Experiment.unchecked` lists it).
    """
    path = Path(path)
    data = read_toml(path)
    try:
        return _parse(data, path, run_imports)
    except InputError as exc:
        raise in_file(path, exc) from None


_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _parse(data: dict[str, Any], path: Path, run_imports: bool = True) -> Experiment:
    """Check every key of the file's ``data`` (module docstring), in the file's order, into an Experiment."""
    check_keys(data, _TOP, "")
    name = string(data, "name", "", path.stem, non_empty=True)
    imports = _imports(data, path, run_imports)
    time_limit = seconds(data, "time_limit", "", 60.0)
    kill_grace = seconds(data, "kill_grace", "", 5.0, zero=True)
    method_seeds = seed_list(data, "method_seeds", "", [0])
    default_profiles = need(data, "profiles", list, "", [])
    report = need(data, "report", dict, "", {})
    methods, profiles, unchecked = method_specs(
        data, default_profiles, path.parent, trust_unknown=not run_imports and bool(imports)
    )
    blocks = _instance_blocks(data, path)
    return Experiment(
        name,
        path,
        string(data, "description", "", ""),
        imports,
        time_limit,
        kill_grace,
        method_seeds,
        methods,
        blocks,
        profiles,
        report,
        unchecked,
    )


def _imports(data: dict[str, Any], path: Path, run_imports: bool) -> list[Any]:
    """The ``imports`` list, checked as module names and, unless ``run_imports`` is False, imported
    (:func:`import_modules`); a failing import is a one-line InputError."""
    imports = need(data, "imports", list, "", [])
    for k, module in enumerate(imports):
        if not isinstance(module, str) or not _MODULE_NAME.fullmatch(module):
            raise fail("", f"imports[{k}]", 'a module name (dotted identifiers, e.g. "mypkg.methods")', module)
    if run_imports:
        try:
            import_modules(imports, import_paths(path))
        except ImportError as exc:
            raise InputError(f"key 'imports': cannot import ({exc})") from None
        except Exception as exc:  # noqa: BLE001 - the plug-in's own code failed
            raise InputError(
                f"key 'imports': importing failed ({type(exc).__name__}: {' '.join(str(exc).split())})"
            ) from None
    return imports


def _instance_blocks(data: dict[str, Any], path: Path) -> list[Any]:
    """The ``[[instances]]`` blocks (one or more), each checked by :func:`mropt.harness.instance_sets.check_block`."""
    blocks = data.get("instances")
    if isinstance(blocks, dict):
        blocks = [blocks]
    if not isinstance(blocks, list) or not blocks:
        raise InputError("key 'instances' is missing (give one or more [[instances]] blocks)")
    for k, block in enumerate(blocks):
        sets.check_block(block, f"instances[{k}]", path.parent)
    return blocks
