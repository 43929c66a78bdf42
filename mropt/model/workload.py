"""Workload instances: jobs of task stages on a cluster of nodes in racks, for the simulator.

The input of ``mropt simulate`` (``mropt/sim``). A workload is a cluster and a stream of
jobs, in one JSON file (``kind`` ``workload``, ``schema_version`` 1)::

    {"kind": "workload", "schema_version": 1,
     "cluster": {"nodes": [{"id": "n", "count": 40, "rack": "r0", "map_slots": 2, "reduce_slots": 2}]},
     "jobs": [{"id": "j1", "submit_time": 0, "deadline": 900, "benefit": 500,
               "stages": [{"type": "map", "tasks": [{"duration": 20, "count": 150}]},
                          {"type": "reduce", "tasks": [{"duration": 30, "count": 20}]}]}]}

**Cluster.** Each node has an ``id``, a ``rack`` (default ``rack0``), a ``speed`` factor
(default 1: a task's time is divided by it), and a capacity: ``map_slots`` and
``reduce_slots`` (Hadoop 1.x slots), or ``resources`` (``{"cpu": 64, "mem": 128}``, for
the multi-resource policies), or both. Either every node gives slots or none does. A node
entry with ``count`` k > 1 stands for k identical nodes named ``id-0`` ... ``id-(k-1)``.

**Jobs.** ``submit_time`` (default 0, seconds), ``user`` (default ``default``), ``pool``
(the Fair Scheduler's, default the user), ``queue`` (the Capacity Scheduler's, default
``default``), ``priority`` (an integer class, larger is more urgent, default 0: Hadoop's
VERY_LOW..VERY_HIGH are -2..2), optional absolute ``deadline`` (later than submit) and
``benefit`` (>= 0; AMB eq. 1). ``stages`` is a chain: a stage's tasks become runnable when
every task of the stage before it has finished (reduce slow-start, a simulation option,
lets a reduce stage start earlier). A stage has a ``type``, ``map`` or ``reduce`` (the
slot it occupies), and ``tasks``: groups of identical tasks, each with a base
``duration`` (> 0 s, on a node of speed 1, node-local), a ``count`` (default 1), a
``demand`` over the cluster's resources (required when nodes give resources), and
``replicas``: the nodes holding the input, one list for every task of the group or one
list per task (``count`` lists), and an optional ``input_mb`` (> 0): the MB each task of
the group reads (unset: one HDFS block, :data:`DEFAULT_INPUT_MB`, for a map task; HEI's
"unread input", ``mropt.sim.policies.hei``). Iterative and chain jobs are longer stage lists.

**Timing** (``timing``, all optional): ``rack_factor`` 1.5 and ``remote_factor`` 3.0 scale
the time of a task run rack-local or off-rack (Mumak's ``mumak.scale.racklocal`` and
``mumak.scale.rackremote``; a task without replicas has no locality and factor 1);
``straggler_rate`` (default 0) is the probability that an attempt is a straggler, whose
time is multiplied by ``straggler_slowdown`` (default 3); ``reduce_slowstart`` (default
off, ``null``; Hadoop's is 0.05) is the fraction of a job's maps that must finish before
its reduces may launch.

**Placement** (``placement``, optional): ``{"replicas": 3, "seed": 0}`` gives every task
of a job's first stage that lists no replicas a seeded HDFS-default placement (first
replica on a random node, the second and third on one other rack), generated when the
simulation starts (``mropt.sim.placement``), so a trace-sized file need not list them.

**Pools and queues** (optional): the Fair Scheduler's allocation file and the Capacity
Scheduler's queue configuration (Hadoop 1.0.3 names and defaults). ``pools``:
``{"id", "min_maps" 0, "min_reduces" 0, "max_maps", "max_reduces" (default unbounded),
"weight" 1, "max_running" (unbounded), "mode" "fair" or "fifo"}``; a job's pool not listed
gets the defaults. ``queues``: ``{"id", "capacity" (percent; the listed queues' must sum to
100), "maximum_capacity" (percent, default unbounded), "minimum_user_limit_percent" 100,
"user_limit_factor" 1, "supports_priority" false}``; when queues are listed, every job's
queue must be one of them.

**Faults** (``faults``, optional): ``{"node": "n-3", "down": 100, "up": 400}`` takes the
node down at 100 s (its running attempts are killed and re-queued) and back at 400 s
(``up`` omitted: never).

``alpha`` (default 0.3) is eq. 1's penalty ratio for late jobs. Unknown fields are kept
(``extra`` / ``meta``) and written back.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from mropt.model.base import KeyedInstance, check_unique_ids, frozen_mapping, plain_number
from mropt.model.errors import InputError
from mropt.model.fields import read_int, read_number, read_str, require_mapping
from mropt.model.sense import MAXIMISE

# the settings sections (timing, faults, placement, pools, queues), re-exported (``X as X``)
from mropt.model.workload_settings import DEFAULT_RACK_FACTOR as DEFAULT_RACK_FACTOR
from mropt.model.workload_settings import DEFAULT_REMOTE_FACTOR as DEFAULT_REMOTE_FACTOR
from mropt.model.workload_settings import DEFAULT_STRAGGLER_SLOWDOWN as DEFAULT_STRAGGLER_SLOWDOWN
from mropt.model.workload_settings import Fault as Fault
from mropt.model.workload_settings import Placement as Placement
from mropt.model.workload_settings import PoolSpec as PoolSpec
from mropt.model.workload_settings import QueueSpec as QueueSpec
from mropt.model.workload_settings import Timing as Timing

KIND = "workload"
SCHEMA_VERSION = 1
DEFAULT_RACK = "rack0"
DEFAULT_USER = "default"
DEFAULT_QUEUE = "default"
DEFAULT_ALPHA = 0.3
STAGE_TYPES = ("map", "reduce")
#: the input of a task that gives no ``input_mb``: one 128 MB HDFS block (dfs.blocksize of Hadoop 2)
DEFAULT_INPUT_MB = 128.0

_NODE_FIELDS = ("id", "rack", "speed", "map_slots", "reduce_slots", "resources", "count")
_GROUP_FIELDS = ("duration", "count", "demand", "replicas", "input_mb")
_STAGE_FIELDS = ("type", "tasks")
_JOB_FIELDS = ("id", "submit_time", "user", "pool", "queue", "priority", "deadline", "benefit", "stages")
_INSTANCE_FIELDS = (
    "kind",
    "schema_version",
    "name",
    "cluster",
    "jobs",
    "timing",
    "faults",
    "placement",
    "alpha",
    "pools",
    "queues",
)


def _read_list(data: Mapping[str, Any], key: str, where: str, *, default: Any = None) -> list[Any]:
    if key not in data:
        if default is None:
            raise InputError(f"{where}: field '{key}' is missing")
        return list(default)
    value = data[key]
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise InputError(f"{where}: field '{key}' must be a list, got {type(value).__name__}")
    return list(value)


def _read_amounts(data: Mapping[str, Any], key: str, where: str) -> dict[str, float]:
    if key not in data:
        return {}
    value = require_mapping(data[key], f"{where}: field '{key}'")
    out: dict[str, float] = {}
    for name in value:
        if not isinstance(name, str) or not name:
            raise InputError(f"{where}: field '{key}' has a bad resource name {name!r:.40}")
        out[name] = read_number(value, name, f"{where} {key}", nonnegative=True)
    return out


#: read-only amounts already made (:func:`_shared_amounts`), by their items; cleared when full
_AMOUNTS: dict[tuple[tuple[str, float, float], ...], Mapping[str, float]] = {}
_AMOUNTS_KEPT = 1 << 12


def _shared_amounts(amounts: dict[str, float]) -> Mapping[str, float]:
    """``frozen_mapping(amounts)``, one read-only mapping shared by every group that reads the same
    amounts: a trace's task groups repeat a few demands (the Alibaba 2017 day: 67,937 groups), and
    a mapping of its own each was 21 MiB of its 69 (issue 32). Keyed by name, value and the value's
    sign bit (``-0.0`` keeps its own); read-only, so no reader can tell it is shared."""
    key = tuple((name, value, math.copysign(1.0, value)) for name, value in amounts.items())
    shared = _AMOUNTS.get(key)
    if shared is None:
        if len(_AMOUNTS) >= _AMOUNTS_KEPT:
            _AMOUNTS.clear()
        shared = _AMOUNTS[key] = frozen_mapping(amounts)
    return shared


def _read_node_ids(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise InputError(f"{where} must be a list of node ids, got {value!r:.60}")
    for node in value:
        if not isinstance(node, str) or not node:
            raise InputError(f"{where} must list node ids (non-empty strings), got {node!r:.40}")
    return tuple(value)


@dataclass(frozen=True)
class NodeSpec:
    """One node (or ``count`` identical nodes ``id-0`` ...): rack, speed, slots or resources."""

    id: str
    rack: str = DEFAULT_RACK
    speed: float = 1.0
    map_slots: int | None = None
    reduce_slots: int | None = None
    resources: Mapping[str, float] = field(default_factory=dict)
    count: int = 1
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def node_ids(self) -> tuple[str, ...]:
        """The ids of the nodes this entry stands for."""
        if self.count == 1:
            return (self.id,)
        return tuple(f"{self.id}-{k}" for k in range(self.count))

    @classmethod
    def from_dict(cls, data: Any, index: int) -> NodeSpec:
        where = f"cluster.nodes[{index}]"
        data = require_mapping(data, where)
        node_id = read_str(data, "id", where)
        where = f"node {node_id!r}"
        slots = [read_int(data, k, where, minimum=0) if k in data else None for k in ("map_slots", "reduce_slots")]
        if (slots[0] is None) != (slots[1] is None):
            raise InputError(f"{where}: give both 'map_slots' and 'reduce_slots', or neither")
        return cls(
            id=node_id,
            rack=read_str(data, "rack", where, default=DEFAULT_RACK),
            speed=read_number(data, "speed", where, default=1.0, positive=True),
            map_slots=slots[0],
            reduce_slots=slots[1],
            resources=frozen_mapping(_read_amounts(data, "resources", where)),
            count=read_int(data, "count", where, default=1, minimum=1, maximum=10_000_000),
            extra=frozen_mapping({k: v for k, v in data.items() if k not in _NODE_FIELDS}),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        if self.count != 1:
            out["count"] = self.count
        out["rack"] = self.rack
        if self.speed != 1.0:
            out["speed"] = plain_number(self.speed)
        if self.map_slots is not None:
            out["map_slots"] = self.map_slots
            out["reduce_slots"] = self.reduce_slots
        if self.resources:
            out["resources"] = {k: plain_number(v) for k, v in self.resources.items()}
        out.update(self.extra)
        return out


@dataclass(frozen=True)
class TaskGroup:
    """``count`` identical tasks: base ``duration``, resource ``demand``, input ``replicas`` and size.

    ``replicas`` is empty (no locality), one tuple shared by every task of the group, or
    ``count`` tuples, one per task (``per_task_replicas``). ``input_mb``: MB read by each
    task (None: not given; :attr:`task_input_mb` gives the default, one block).
    """

    duration: float
    count: int = 1
    demand: Mapping[str, float] = field(default_factory=dict)
    replicas: tuple[tuple[str, ...], ...] = ()
    input_mb: float | None = None

    @property
    def task_input_mb(self) -> float:
        """MB read by each task: ``input_mb``, or one HDFS block (:data:`DEFAULT_INPUT_MB`)."""
        return DEFAULT_INPUT_MB if self.input_mb is None else self.input_mb

    @property
    def per_task_replicas(self) -> bool:
        return len(self.replicas) > 1 or (self.count == 1 and len(self.replicas) == 1)

    def replicas_of(self, k: int) -> tuple[str, ...]:
        """The replica nodes of the group's k-th task."""
        if not self.replicas:
            return ()
        return self.replicas[k] if len(self.replicas) > 1 else self.replicas[0]

    @classmethod
    def from_dict(cls, data: Any, where: str) -> TaskGroup:
        data = require_mapping(data, where)
        unknown = sorted(set(data) - set(_GROUP_FIELDS))
        if unknown:
            raise InputError(f"{where}: unknown field {unknown[0]!r} (known: {', '.join(_GROUP_FIELDS)})")
        count = read_int(data, "count", where, default=1, minimum=1, maximum=100_000_000)
        replicas: tuple[tuple[str, ...], ...] = ()
        if "replicas" in data:
            raw = data["replicas"]
            if not isinstance(raw, Sequence) or isinstance(raw, str):
                raise InputError(f"{where}: field 'replicas' must be a list, got {raw!r:.60}")
            if raw and all(isinstance(r, str) for r in raw):
                replicas = (_read_node_ids(raw, f"{where}: field 'replicas'"),)
            elif raw:
                if len(raw) != count:
                    raise InputError(
                        f"{where}: field 'replicas' must be one list of node ids, or one list per task "
                        f"({count}), got {len(raw)} lists"
                    )
                replicas = tuple(_read_node_ids(r, f"{where}: field 'replicas[{i}]'") for i, r in enumerate(raw))
        return cls(
            duration=read_number(data, "duration", where, positive=True),
            count=count,
            demand=_shared_amounts(_read_amounts(data, "demand", where)),
            replicas=replicas,
            input_mb=read_number(data, "input_mb", where, default=None, positive=True),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"duration": plain_number(self.duration)}
        if self.count != 1:
            out["count"] = self.count
        if self.demand:
            out["demand"] = {k: plain_number(v) for k, v in self.demand.items()}
        if self.replicas:
            if len(self.replicas) == 1 and self.count != 1:
                out["replicas"] = list(self.replicas[0])
            else:
                out["replicas"] = [list(r) for r in self.replicas]
        if self.input_mb is not None:
            out["input_mb"] = plain_number(self.input_mb)
        return out


@dataclass(frozen=True)
class Stage:
    """A stage of a job: its slot ``type`` (``map`` or ``reduce``) and its task groups."""

    type: str
    tasks: tuple[TaskGroup, ...]

    @property
    def n_tasks(self) -> int:
        return sum(g.count for g in self.tasks)

    @classmethod
    def from_dict(cls, data: Any, where: str) -> Stage:
        data = require_mapping(data, where)
        unknown = sorted(set(data) - set(_STAGE_FIELDS))
        if unknown:
            raise InputError(f"{where}: unknown field {unknown[0]!r} (known: type, tasks)")
        stype = read_str(data, "type", where)
        if stype not in STAGE_TYPES:
            raise InputError(f"{where}: field 'type' must be 'map' or 'reduce', got {stype!r}")
        groups = _read_list(data, "tasks", where)
        if not groups:
            raise InputError(f"{where}: field 'tasks' must list at least one task group, got []")
        return cls(stype, tuple(TaskGroup.from_dict(g, f"{where}.tasks[{i}]") for i, g in enumerate(groups)))

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "tasks": [g.to_dict() for g in self.tasks]}


@dataclass(frozen=True)
class WorkloadJob:
    """One job: when it arrives, whose it is, its deadline and benefit, its stages."""

    id: str
    stages: tuple[Stage, ...]
    submit_time: float = 0.0
    user: str = DEFAULT_USER
    pool: str | None = None
    queue: str = DEFAULT_QUEUE
    priority: int = 0
    deadline: float | None = None
    benefit: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def pool_name(self) -> str:
        """The Fair Scheduler pool: ``pool``, or the user (Hadoop's default pool name property)."""
        return self.pool if self.pool is not None else self.user

    @property
    def n_tasks(self) -> int:
        return sum(s.n_tasks for s in self.stages)

    @classmethod
    def from_dict(cls, data: Any, index: int) -> WorkloadJob:
        data = require_mapping(data, f"jobs[{index}]")
        job_id = read_str(data, "id", f"jobs[{index}]")
        where = f"job {job_id!r}"
        submit = read_number(data, "submit_time", where, default=0.0, nonnegative=True)
        deadline = read_number(data, "deadline", where, default=None, positive=True)
        if deadline is not None and not deadline > submit:
            raise InputError(f"{where}: field 'deadline' must be later than submit_time {submit:g}, got {deadline:g}")
        stages = _read_list(data, "stages", where)
        if not stages:
            raise InputError(f"{where}: field 'stages' must list at least one stage, got []")
        return cls(
            id=job_id,
            stages=tuple(Stage.from_dict(s, f"{where}: stages[{i}]") for i, s in enumerate(stages)),
            submit_time=submit,
            user=read_str(data, "user", where, default=DEFAULT_USER),
            pool=read_str(data, "pool", where, default=None),
            queue=read_str(data, "queue", where, default=DEFAULT_QUEUE),
            priority=read_int(data, "priority", where, default=0, minimum=-1000, maximum=1000),
            deadline=deadline,
            benefit=read_number(data, "benefit", where, default=None, nonnegative=True),
            extra=_shared_amounts({})
            if all(k in _JOB_FIELDS for k in data)
            else frozen_mapping({k: v for k, v in data.items() if k not in _JOB_FIELDS}),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        if self.submit_time:
            out["submit_time"] = plain_number(self.submit_time)
        if self.user != DEFAULT_USER:
            out["user"] = self.user
        if self.pool is not None:
            out["pool"] = self.pool
        if self.queue != DEFAULT_QUEUE:
            out["queue"] = self.queue
        if self.priority:
            out["priority"] = self.priority
        if self.deadline is not None:
            out["deadline"] = plain_number(self.deadline)
        if self.benefit is not None:
            out["benefit"] = plain_number(self.benefit)
        out["stages"] = [s.to_dict() for s in self.stages]
        out.update(self.extra)
        return out


@dataclass(frozen=True)
class WorkloadInstance(KeyedInstance):
    """A cluster and its jobs: the simulator's input (module docstring)."""

    nodes: tuple[NodeSpec, ...]
    jobs: tuple[WorkloadJob, ...]
    timing: Timing = field(default_factory=Timing)
    faults: tuple[Fault, ...] = ()
    placement: Placement | None = None
    alpha: float = DEFAULT_ALPHA
    pools: tuple[PoolSpec, ...] = ()
    queues: tuple[QueueSpec, ...] = ()
    name: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    kind = KIND
    SENSE = MAXIMISE  # a run's objective: total benefit earned under AMB eq. 1
    schema_version = SCHEMA_VERSION
    _ITEMS = "jobs"

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "jobs", tuple(self.jobs))
        object.__setattr__(self, "faults", tuple(self.faults))
        object.__setattr__(self, "meta", frozen_mapping(self.meta))
        values = {"alpha": self.alpha}
        object.__setattr__(self, "alpha", read_number(values, "alpha", "instance", low=0.0, high=1.0))
        if not self.nodes:
            raise InputError("cluster: field 'nodes' must list at least one node, got []")
        if not self.jobs:
            raise InputError("instance: field 'jobs' must list at least one job, got []")
        check_unique_ids(self.jobs, "job", "jobs")
        object.__setattr__(self, "pools", tuple(self.pools))
        object.__setattr__(self, "queues", tuple(self.queues))
        check_unique_ids(self.pools, "pool", "pools")
        check_unique_ids(self.queues, "queue", "queues")
        if self.queues:
            total = sum(q.capacity for q in self.queues)
            if abs(total - 100.0) > 1e-6:
                raise InputError(f"queues: field 'capacity' must sum to 100 over the queues, got {total:g}")
            names = {q.id for q in self.queues}
            for job in self.jobs:
                if job.queue not in names:
                    raise InputError(f"job {job.id!r}: field 'queue' is {job.queue!r}, not one of the queues")
        self._check_cluster()
        self._check_jobs()

    # -- validation ----------------------------------------------------------------------
    def _check_cluster(self) -> None:
        slotted = {spec.map_slots is not None for spec in self.nodes}
        if len(slotted) > 1:
            raise InputError("cluster: either every node gives map_slots and reduce_slots, or none does")
        seen: dict[str, str] = {}
        for spec in self.nodes:
            if spec.map_slots is None and not spec.resources:
                raise InputError(f"node {spec.id!r}: give map_slots and reduce_slots, or resources")
            for node_id in spec.node_ids:
                if node_id in seen:
                    raise InputError(f"node {node_id!r}: duplicate node id (entries {seen[node_id]!r} and {spec.id!r})")
                seen[node_id] = spec.id
        for fault in self.faults:
            if fault.node not in seen:
                raise InputError(f"faults: node {fault.node!r} is not a node of the cluster")

    def _check_jobs(self) -> None:
        known = set(self.node_ids)
        resources = {name for spec in self.nodes for name in spec.resources}
        slotted = self.uses_slots
        capacity = {
            "map": max(s.map_slots or 0 for s in self.nodes),
            "reduce": max(s.reduce_slots or 0 for s in self.nodes),
        }
        for job in self.jobs:
            where = f"job {job.id!r}"
            for s, stage in enumerate(job.stages):
                if slotted and capacity[stage.type] == 0:
                    raise InputError(f"{where}: stages[{s}] has {stage.type} tasks, but no node has {stage.type} slots")
                for g, group in enumerate(stage.tasks):
                    here = f"{where}: stages[{s}].tasks[{g}]"
                    unknown = sorted(set(group.demand) - resources)
                    if unknown:
                        raise InputError(f"{here}: field 'demand' names resource {unknown[0]!r}, which no node has")
                    if not slotted and not any(group.demand.values()):
                        raise InputError(f"{here}: field 'demand' is missing (nodes give resources, not slots)")
                    if group.demand and not any(
                        all(spec.resources.get(k, 0.0) >= v for k, v in group.demand.items()) for spec in self.nodes
                    ):
                        raise InputError(f"{here}: field 'demand' fits on no node of the cluster")
                    for replicas in group.replicas:
                        for node in replicas:
                            if node not in known:
                                raise InputError(f"{here}: field 'replicas' names node {node!r}, not in the cluster")

    # -- derived data ------------------------------------------------------------------------
    @property
    def uses_slots(self) -> bool:
        """True when nodes give map and reduce slots (else they give resources only)."""
        return self.nodes[0].map_slots is not None

    @cached_property
    def node_ids(self) -> tuple[str, ...]:
        return tuple(node_id for spec in self.nodes for node_id in spec.node_ids)

    @property
    def n_nodes(self) -> int:
        return sum(spec.count for spec in self.nodes)

    @property
    def n_tasks(self) -> int:
        return sum(job.n_tasks for job in self.jobs)

    # -- JSON ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": KIND, "schema_version": SCHEMA_VERSION}
        if self.name is not None:
            out["name"] = self.name
        out["cluster"] = {"nodes": [spec.to_dict() for spec in self.nodes]}
        if self.alpha != DEFAULT_ALPHA:
            out["alpha"] = plain_number(self.alpha)
        timing = self.timing.to_dict()
        if timing:
            out["timing"] = timing
        if self.placement is not None:
            out["placement"] = self.placement.to_dict()
        if self.pools:
            out["pools"] = [p.to_dict() for p in self.pools]
        if self.queues:
            out["queues"] = [q.to_dict() for q in self.queues]
        if self.faults:
            out["faults"] = [f.to_dict() for f in self.faults]
        out["jobs"] = [j.to_dict() for j in self.jobs]
        out.update(self.meta)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> WorkloadInstance:
        data = require_mapping(data, "instance")
        if "cluster" not in data:
            raise InputError("instance: field 'cluster' is missing")
        cluster = require_mapping(data["cluster"], "field 'cluster'")
        nodes = _read_list(cluster, "nodes", "cluster")
        jobs = _read_list(data, "jobs", "instance")
        return cls(
            nodes=tuple(NodeSpec.from_dict(n, i) for i, n in enumerate(nodes)),
            jobs=tuple(WorkloadJob.from_dict(j, i) for i, j in enumerate(jobs)),
            timing=Timing.from_dict(data["timing"]) if "timing" in data else Timing(),
            faults=tuple(
                Fault.from_dict(f, i) for i, f in enumerate(_read_list(data, "faults", "instance", default=[]))
            ),
            placement=Placement.from_dict(data["placement"]) if "placement" in data else None,
            alpha=read_number(data, "alpha", "instance", default=DEFAULT_ALPHA),
            pools=tuple(
                PoolSpec.from_dict(p, i) for i, p in enumerate(_read_list(data, "pools", "instance", default=[]))
            ),
            queues=tuple(
                QueueSpec.from_dict(q, i) for i, q in enumerate(_read_list(data, "queues", "instance", default=[]))
            ),
            name=read_str(data, "name", "instance", default=None),
            meta={k: v for k, v in data.items() if k not in _INSTANCE_FIELDS},
        )
