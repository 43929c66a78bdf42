"""Generator of fairness (DRF) instances, documented model ``drf-mix`` version 1.

The DDRF paper's examples use two resources, CPU (ECUs) and memory, and users whose
tasks are CPU-heavy or memory-heavy (sec. 3: A <1 CPU, 4 GB>, B <3 CPU, 1 GB>). The
generator draws, for user k from ``numpy.random.default_rng([seed, k])``:

* a type, CPU-heavy or memory-heavy with equal chance; the heavy resource's demand is
  an integer uniform in [``heavy_min``, ``heavy_max``] = [2, 4] units, the light one's
  in [``light_min``, ``light_max``] = [1, 2] units (CPU units are cores, memory units
  are ``mem_unit`` = 2 GB);
* ``max_tasks`` uniform in [``tasks_min``, ``tasks_max``] (``tasks_max`` = 0: unbounded);
* a weight uniform in {1, ..., ``weight_max``} (default 1: plain DRF).

The cluster has ``nodes`` machines of ``node_cpu`` cores and ``node_mem`` GB, in racks
of ``rack_size``. With ``with_nodes`` the file lists them (placement instances) and,
with ``replicas`` > 0, each task's input on that many distinct random nodes
(``task_inputs``, needs ``tasks_max`` > 0); otherwise only the totals. So user k is
the same whatever the number of users, for the same seed and parameters. The file
records model, parameters and seed under ``generator``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from mropt.instances.params import check_counts, check_seed, check_types
from mropt.model.errors import InputError
from mropt.model.fairness import FairnessInstance, FairNode, User

MODEL_NAME = "drf-mix"
MODEL_VERSION = 1


@dataclass(frozen=True)
class FairnessParams:
    """Every parameter of the generator (model ``drf-mix``, see the module docstring).

    Each field is an option of ``mropt generate fairness``, built from its type, default
    and ``metadata`` (:func:`mropt.cli.common.add_param_options`); ``"cli": False`` keeps
    a field off the command line.
    """

    users: int = field(default=10, metadata={"help": "users (default {default})", "short": "-n"})
    nodes: int = field(default=10, metadata={"help": "machines (default {default})"})
    node_cpu: float = field(default=16, metadata={"help": "cores per machine (default {default})"})
    node_mem: float = field(default=64, metadata={"help": "GB per machine (default {default})"})
    rack_size: int = field(default=5, metadata={"help": "machines per rack (default {default})"})
    heavy_min: int = field(default=2, metadata={"cli": False})
    heavy_max: int = field(default=4, metadata={"cli": False})
    light_min: int = field(default=1, metadata={"cli": False})
    light_max: int = field(default=2, metadata={"cli": False})
    mem_unit: float = field(default=2.0, metadata={"cli": False})
    tasks_min: int = 5
    tasks_max: int = field(default=50, metadata={"help": "default {default}; 0 = unbounded"})
    weight_max: int = field(default=1, metadata={"help": "weights uniform in 1..this (default {default})"})
    with_nodes: bool = field(default=False, metadata={"help": "list the machines (placement instances)"})
    replicas: int = field(default=0, metadata={"help": "input replicas per task on random nodes (needs --with-nodes)"})

    def check(self) -> None:
        def bad(name: str, rule: str) -> InputError:
            return InputError(f"generator: parameter '{name}' {rule}, got {getattr(self, name)!r}")

        check_types(self)
        for name in ("users", "nodes", "rack_size", "weight_max"):
            if getattr(self, name) < 1:
                raise bad(name, "must be >= 1")
        check_counts(self, ("users", "nodes", *(("tasks_max",) if self.replicas else ())))
        for name in ("node_cpu", "node_mem", "mem_unit"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) > 0):
                raise bad(name, "must be > 0")
        if not 1 <= self.light_min <= self.light_max:
            raise bad("light_min", f"must be in [1, light_max = {self.light_max}]")
        if not 1 <= self.heavy_min <= self.heavy_max:
            raise bad("heavy_min", f"must be in [1, heavy_max = {self.heavy_max}]")
        if self.tasks_max < 0 or (self.tasks_max > 0 and not 0 <= self.tasks_min <= self.tasks_max):
            raise bad("tasks_min", f"must be in [0, tasks_max = {self.tasks_max}]")
        if self.replicas < 0 or self.replicas > self.nodes:
            raise bad("replicas", f"must be in [0, nodes = {self.nodes}]")
        if self.replicas and not (self.with_nodes and self.tasks_max > 0):
            raise bad("replicas", "needs with_nodes and tasks_max > 0")


def generate_fairness(seed: int = 0, params: FairnessParams | None = None, **overrides: Any) -> FairnessInstance:
    """A seeded fairness instance; keyword overrides set fields of :class:`FairnessParams`."""
    seed = check_seed(seed)
    params = params or FairnessParams()
    if overrides:
        unknown = sorted(set(overrides) - set(FairnessParams.__dataclass_fields__))
        if unknown:
            raise InputError(f"generator: unknown parameter {unknown[0]!r}")
        params = FairnessParams(**{**asdict(params), **overrides})
    params.check()
    node_ids = [f"n{v + 1}" for v in range(params.nodes)]
    users = []
    for k in range(1, params.users + 1):
        rng = np.random.default_rng([seed, k])
        cpu_heavy = bool(rng.integers(0, 2))
        heavy = int(rng.integers(params.heavy_min, params.heavy_max + 1))
        light = int(rng.integers(params.light_min, params.light_max + 1))
        cpu, mem_units = (heavy, light) if cpu_heavy else (light, heavy)
        tasks = int(rng.integers(params.tasks_min, params.tasks_max + 1)) if params.tasks_max > 0 else None
        weight = int(rng.integers(1, params.weight_max + 1))
        inputs = None
        if params.replicas:
            assert tasks is not None  # check(): replicas need tasks_max > 0
            inputs = tuple(
                tuple(node_ids[v] for v in sorted(rng.choice(params.nodes, params.replicas, replace=False)))
                for _ in range(tasks)
            )
        users.append(
            User(
                id=f"u{k}",
                demand={"cpu": cpu, "mem": mem_units * params.mem_unit},
                weight=weight,
                max_tasks=tasks,
                task_inputs=inputs,
                extra={"type": "cpu-heavy" if cpu_heavy else "mem-heavy"},
            )
        )
    nodes = None
    if params.with_nodes:
        nodes = tuple(
            FairNode(
                node_ids[v], {"cpu": params.node_cpu, "mem": params.node_mem}, rack=f"r{v // params.rack_size + 1}"
            )
            for v in range(params.nodes)
        )
    return FairnessInstance(
        resources={"cpu": params.node_cpu * params.nodes, "mem": params.node_mem * params.nodes},
        users=tuple(users),
        nodes=nodes,
        name=f"drf-u{params.users}-n{params.nodes}-s{seed}",
        meta={
            "generator": {"model": MODEL_NAME, "model_version": MODEL_VERSION, "seed": seed, "params": asdict(params)}
        },
    )
