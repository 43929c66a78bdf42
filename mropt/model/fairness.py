"""Fairness instances: users with per-task multi-resource demands on a cluster.

The problem of the DDRF paper (``docs/papers.md``; sec. 3.1 and 4): a cluster
with total amounts of ``m`` resources (``resources``, e.g. ``{"cpu": 9, "mem": 18}``),
and users whose tasks each need a demand vector ``D_i``; allocate tasks so that the
users' (weighted) dominant shares ``s_i = max_j x_i D_ij / r_j`` are fair (DRF).

Optional parts:

* per user ``weight`` (default 1; weighted DRF compares ``s_i / weight``) and
  ``max_tasks`` (the user's number of pending tasks; default unbounded);
* per user ``task_inputs``: one list of node ids per pending task, the nodes that hold
  that task's input (for placement and locality, sec. 3.2 and 4). The i-th task the
  user launches reads ``task_inputs[i]``; tasks beyond the list have no preference.
* ``nodes``: ``{"id", "rack", "capacity": {resource: amount}}``. With nodes, each task
  runs on one node within that node's capacity. ``resources`` may then be left out and
  is the sum of the node capacities; when both are given they must agree (within
  ``CAPACITY_RTOL``, relative; ``docs/tolerances.md``).

A resource missing from a demand or a node capacity is 0. Unknown fields are kept
(``extra`` / ``meta``) and written back, so no data is lost.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from mropt.model.base import KeyedInstance, check_unique_ids, frozen_mapping, plain_number
from mropt.model.errors import InputError
from mropt.model.fields import read_int, read_number, read_str, require_mapping
from mropt.model.sense import MAXIMISE
from mropt.model.tolerance import CAPACITY_RTOL

KIND = "fairness"
SCHEMA_VERSION = 1
DEFAULT_RACK = "rack0"

_USER_FIELDS = ("id", "demand", "weight", "max_tasks", "task_inputs")
_NODE_FIELDS = ("id", "rack", "capacity")
_INSTANCE_FIELDS = ("kind", "schema_version", "name", "resources", "users", "nodes")


def _read_amounts(data: Any, where: str, key: str, *, positive: bool) -> dict[str, float]:
    """A JSON object resource -> amount (numbers >= 0, or > 0 when ``positive``)."""
    if not isinstance(data, Mapping):
        raise InputError(f"{where}: field '{key}' must be an object resource -> amount, got {data!r:.60}")
    out: dict[str, float] = {}
    for name in data:
        if not isinstance(name, str) or not name:
            raise InputError(f"{where}: field '{key}' has a bad resource name {name!r:.40}")
        out[name] = read_number(data, name, f"{where} {key}", positive=positive, nonnegative=True)
    return out


def _list(data: Any, where: str, key: str) -> Sequence[Any]:
    if not isinstance(data, Sequence) or isinstance(data, str):
        raise InputError(f"{where}: field '{key}' must be a list, got {type(data).__name__}")
    return data


@dataclass(frozen=True)
class FairNode:
    """A machine: ``capacity`` per resource, in a ``rack`` (DDRF sec. 2 and 4)."""

    id: str
    capacity: Mapping[str, float]
    rack: str = DEFAULT_RACK
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        read_str({"id": self.id}, "id", "node")
        where = f"node {self.id!r}"
        read_str({"rack": self.rack}, "rack", where)
        object.__setattr__(
            self, "capacity", frozen_mapping(_read_amounts(self.capacity, where, "capacity", positive=False))
        )
        object.__setattr__(self, "extra", frozen_mapping(self.extra))

    @classmethod
    def from_dict(cls, data: Any, index: int) -> FairNode:
        data = require_mapping(data, f"nodes[{index}]")
        node_id = read_str(data, "id", f"nodes[{index}]")
        if "capacity" not in data:
            raise InputError(f"node {node_id!r}: field 'capacity' is missing")
        rack = read_str(data, "rack", f"node {node_id!r}", default=DEFAULT_RACK)
        extra = {k: v for k, v in data.items() if k not in _NODE_FIELDS}
        return cls(node_id, data["capacity"], rack, extra)

    def to_dict(self) -> dict[str, Any]:
        cap = {k: plain_number(v) for k, v in self.capacity.items()}
        return {"id": self.id, "rack": self.rack, "capacity": cap, **self.extra}


@dataclass(frozen=True)
class User:
    """A user (or job) of DRF: per-task ``demand`` vector, ``weight``, ``max_tasks``."""

    id: str
    demand: Mapping[str, float]
    weight: float = 1.0
    max_tasks: int | None = None
    task_inputs: tuple[tuple[str, ...], ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        read_str({"id": self.id}, "id", "user")
        where = f"user {self.id!r}"
        demand = _read_amounts(self.demand, where, "demand", positive=False)
        if not any(v > 0 for v in demand.values()):
            raise InputError(f"{where}: field 'demand' must ask for some resource (> 0), got {dict(demand)!r:.60}")
        object.__setattr__(self, "demand", frozen_mapping(demand))
        object.__setattr__(self, "weight", read_number({"weight": self.weight}, "weight", where, positive=True))
        if self.max_tasks is not None:
            object.__setattr__(
                self, "max_tasks", read_int({"max_tasks": self.max_tasks}, "max_tasks", where, minimum=0)
            )
        if self.task_inputs is not None:
            inputs = []
            for k, nodes in enumerate(_list(self.task_inputs, where, "task_inputs")):
                nodes = _list(nodes, where, f"task_inputs[{k}]")
                for node in nodes:
                    if not isinstance(node, str) or not node:
                        raise InputError(f"{where}: field 'task_inputs[{k}]' must list node ids, got {node!r:.40}")
                inputs.append(tuple(nodes))
            object.__setattr__(self, "task_inputs", tuple(inputs))
        object.__setattr__(self, "extra", frozen_mapping(self.extra))

    @classmethod
    def from_dict(cls, data: Any, index: int) -> User:
        data = require_mapping(data, f"users[{index}]")
        user_id = read_str(data, "id", f"users[{index}]")
        where = f"user {user_id!r}"
        if "demand" not in data:
            raise InputError(f"{where}: field 'demand' is missing")
        max_tasks = (
            read_int(data, "max_tasks", where, default=None, minimum=0) if data.get("max_tasks") is not None else None
        )
        return cls(
            id=user_id,
            demand=data["demand"],
            weight=read_number(data, "weight", where, default=1.0, positive=True),
            max_tasks=max_tasks,
            task_inputs=data.get("task_inputs"),
            extra={k: v for k, v in data.items() if k not in _USER_FIELDS},
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "demand": {k: plain_number(v) for k, v in self.demand.items()}}
        if self.weight != 1.0:
            out["weight"] = plain_number(self.weight)
        if self.max_tasks is not None:
            out["max_tasks"] = self.max_tasks
        if self.task_inputs is not None:
            out["task_inputs"] = [list(t) for t in self.task_inputs]
        out.update(self.extra)
        return out


@dataclass(frozen=True)
class FairnessInstance(KeyedInstance):
    """A DRF instance (DDRF paper sec. 3.1); see the module docstring.

    Numpy views, indexed like ``users`` and ``resource_names``: ``capacity`` (m,),
    ``demands`` (n, m), ``weights`` (n,), ``task_caps`` (n,; ``inf`` when unbounded),
    ``dominant_demand`` (n,: max_j D_ij / r_j, the dominant share of one task) and,
    with nodes, ``node_capacity`` (v, m).
    """

    resources: Mapping[str, float]
    users: tuple[User, ...]
    nodes: tuple[FairNode, ...] | None = None
    name: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    kind = KIND
    SENSE = MAXIMISE  # objective: the minimum weighted dominant share (DDRF sec. 3.1)
    schema_version = SCHEMA_VERSION
    _ITEMS = "users"

    def __post_init__(self) -> None:
        object.__setattr__(self, "users", tuple(self.users))
        nodes = None if self.nodes is None else tuple(self.nodes)
        object.__setattr__(self, "nodes", nodes)
        resources = dict(self.resources or {})
        if nodes is not None:
            if not nodes:
                raise InputError("instance: field 'nodes' must list at least one node when given, got []")
            check_unique_ids(nodes, "node", "nodes")
            totals: dict[str, float] = {}
            for node in nodes:
                for r, amount in node.capacity.items():
                    if resources and r not in resources:
                        raise InputError(
                            f"node {node.id!r}: field 'capacity' names unknown resource {r!r} (known: {', '.join(resources)})"
                        )
                    totals[r] = totals.get(r, 0.0) + amount
            if not resources:
                resources = totals
            else:
                for r, total in resources.items():
                    got = totals.get(r, 0.0)
                    if not math.isclose(got, total, rel_tol=CAPACITY_RTOL):  # relative: the same in any units
                        raise InputError(
                            f"instance: field 'resources' gives {r!r} = {total:g} but the nodes' capacities sum to {got:g}"
                        )
        if not resources:
            raise InputError("instance: field 'resources' must name at least one resource, got {}")
        resources = _read_amounts(resources, "instance", "resources", positive=True)
        object.__setattr__(self, "resources", frozen_mapping(resources))
        if not self.users:
            raise InputError("instance: field 'users' must list at least one user, got []")
        check_unique_ids(self.users, "user", "users")
        node_ids = {n.id for n in nodes} if nodes else set()
        for user in self.users:
            for r in user.demand:
                if r not in resources:
                    raise InputError(
                        f"user {user.id!r}: field 'demand' names unknown resource {r!r} (known: {', '.join(resources)})"
                    )
            if user.task_inputs is not None:
                if nodes is None:
                    raise InputError(f"user {user.id!r}: field 'task_inputs' needs the instance's 'nodes'")
                for k, inputs in enumerate(user.task_inputs):
                    for node_id in inputs:
                        if node_id not in node_ids:
                            raise InputError(
                                f"user {user.id!r}: field 'task_inputs[{k}]' names unknown node {node_id!r}"
                            )
        object.__setattr__(self, "meta", frozen_mapping(self.meta))

    # -- derived data (n, ids, index: KeyedInstance) ----------------------------------------
    @cached_property
    def resource_names(self) -> tuple[str, ...]:
        return tuple(self.resources)

    def _ro(self, arr: np.ndarray) -> np.ndarray:
        arr.setflags(write=False)
        return arr

    @cached_property
    def capacity(self) -> np.ndarray:
        return self._ro(np.array([self.resources[r] for r in self.resource_names], dtype=float))

    @cached_property
    def demands(self) -> np.ndarray:
        return self._ro(
            np.array([[u.demand.get(r, 0.0) for r in self.resource_names] for u in self.users], dtype=float)
        )

    @cached_property
    def weights(self) -> np.ndarray:
        return self._ro(np.array([u.weight for u in self.users], dtype=float))

    @cached_property
    def task_caps(self) -> np.ndarray:
        return self._ro(np.array([math.inf if u.max_tasks is None else u.max_tasks for u in self.users], dtype=float))

    @cached_property
    def dominant_demand(self) -> np.ndarray:
        """Dominant share of one task of each user: max_j D_ij / r_j (sec. 3.1)."""
        return self._ro((self.demands / self.capacity).max(axis=1))

    @cached_property
    def node_ids(self) -> tuple[str, ...]:
        return tuple(n.id for n in self.nodes or ())

    @cached_property
    def node_capacity(self) -> np.ndarray:
        rows = [[n.capacity.get(r, 0.0) for r in self.resource_names] for n in self.nodes or ()]
        return self._ro(np.array(rows, dtype=float).reshape(len(rows), len(self.resource_names)))

    def task_bound(self) -> np.ndarray:
        """Largest number of tasks each user could run alone (its cap, or what fits in the totals)."""
        with np.errstate(divide="ignore"):
            fit = np.floor(
                np.min(
                    np.where(self.demands > 0, self.capacity / np.where(self.demands > 0, self.demands, 1), np.inf),
                    axis=1,
                )
                + 1e-9
            )
        bound: np.ndarray = np.minimum(fit, self.task_caps).astype(int)
        return bound

    # -- JSON ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": KIND, "schema_version": SCHEMA_VERSION}
        if self.name is not None:
            out["name"] = self.name
        out["resources"] = {k: plain_number(v) for k, v in self.resources.items()}
        out["users"] = [u.to_dict() for u in self.users]
        if self.nodes is not None:
            out["nodes"] = [n.to_dict() for n in self.nodes]
        out.update(self.meta)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> FairnessInstance:
        data = require_mapping(data, "instance")
        if "users" not in data:
            raise InputError("instance: field 'users' is missing")
        users = _list(data["users"], "instance", "users")
        nodes = None
        if data.get("nodes") is not None:
            nodes = tuple(FairNode.from_dict(v, i) for i, v in enumerate(_list(data["nodes"], "instance", "nodes")))
        if "resources" not in data and nodes is None:
            raise InputError("instance: field 'resources' is missing")
        resources = data.get("resources")
        if resources is not None:
            resources = _read_amounts(resources, "instance", "resources", positive=True)
        return cls(
            resources=resources or {},
            users=tuple(User.from_dict(u, i) for i, u in enumerate(users)),
            nodes=nodes,
            name=read_str(data, "name", "instance", default=None),
            meta={k: v for k, v in data.items() if k not in _INSTANCE_FIELDS},
        )
