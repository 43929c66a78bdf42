"""A workload's simulation settings: timing, faults, placement, Fair Scheduler pools, Capacity Scheduler queues.

The optional sections of a workload file (``timing``, ``faults``, ``placement``, ``pools``,
``queues``), each read and written by a frozen dataclass. Their meaning, defaults and Hadoop
sources are documented in :mod:`mropt.model.workload`'s module docstring, which also
re-exports every name here.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from mropt.model.base import plain_number
from mropt.model.errors import InputError
from mropt.model.fields import read_int, read_number, read_str, require_mapping

#: Mumak's defaults (conf/mumak.xml: mumak.scale.racklocal, mumak.scale.rackremote)
DEFAULT_RACK_FACTOR = 1.5
DEFAULT_REMOTE_FACTOR = 3.0
DEFAULT_STRAGGLER_SLOWDOWN = 3.0

_TIMING_FIELDS = ("rack_factor", "remote_factor", "straggler_rate", "straggler_slowdown", "reduce_slowstart")


@dataclass(frozen=True)
class Timing:
    """How long an attempt takes beyond its base duration (module docstring, **Timing**)."""

    rack_factor: float = DEFAULT_RACK_FACTOR
    remote_factor: float = DEFAULT_REMOTE_FACTOR
    straggler_rate: float = 0.0
    straggler_slowdown: float = DEFAULT_STRAGGLER_SLOWDOWN
    reduce_slowstart: float | None = None

    @classmethod
    def from_dict(cls, data: Any) -> Timing:
        where = "timing"
        data = require_mapping(data, "field 'timing'")
        unknown = sorted(set(data) - set(_TIMING_FIELDS))
        if unknown:
            raise InputError(f"{where}: unknown field {unknown[0]!r} (known: {', '.join(_TIMING_FIELDS)})")
        slowstart = data.get("reduce_slowstart")
        return cls(
            rack_factor=read_number(data, "rack_factor", where, default=DEFAULT_RACK_FACTOR, low=1.0),
            remote_factor=read_number(data, "remote_factor", where, default=DEFAULT_REMOTE_FACTOR, low=1.0),
            straggler_rate=read_number(data, "straggler_rate", where, default=0.0, low=0.0, high=1.0),
            straggler_slowdown=read_number(
                data, "straggler_slowdown", where, default=DEFAULT_STRAGGLER_SLOWDOWN, low=1.0
            ),
            reduce_slowstart=None
            if slowstart is None
            else read_number(data, "reduce_slowstart", where, low=0.0, high=1.0),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        default = Timing()
        for key in _TIMING_FIELDS:
            value = getattr(self, key)
            if value != getattr(default, key):
                out[key] = plain_number(value)
        return out


@dataclass(frozen=True)
class Fault:
    """Node ``node`` is down from ``down`` to ``up`` (None: for good)."""

    node: str
    down: float
    up: float | None = None

    @classmethod
    def from_dict(cls, data: Any, index: int) -> Fault:
        where = f"faults[{index}]"
        data = require_mapping(data, where)
        down = read_number(data, "down", where, nonnegative=True)
        up = read_number(data, "up", where, default=None, nonnegative=True)
        if up is not None and not up > down:
            raise InputError(f"{where}: field 'up' must be later than down {down:g}, got {up:g}")
        return cls(read_str(data, "node", where), down, up)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"node": self.node, "down": plain_number(self.down)}
        if self.up is not None:
            out["up"] = plain_number(self.up)
        return out


@dataclass(frozen=True)
class Placement:
    """Seeded HDFS-default replicas for first-stage tasks that list none (module docstring)."""

    replicas: int = 3
    seed: int = 0

    @classmethod
    def from_dict(cls, data: Any) -> Placement:
        data = require_mapping(data, "field 'placement'")
        return cls(
            replicas=read_int(data, "replicas", "placement", default=3, minimum=1, maximum=16),
            seed=read_int(data, "seed", "placement", default=0, minimum=0),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"replicas": self.replicas, "seed": self.seed}


@dataclass(frozen=True)
class PoolSpec:
    """A Fair Scheduler pool (Hadoop 1.0.3 allocation file: minMaps, maxMaps, weight, maxRunningJobs, schedulingMode)."""

    id: str
    min_maps: int = 0
    min_reduces: int = 0
    max_maps: int | None = None
    max_reduces: int | None = None
    weight: float = 1.0
    max_running: int | None = None
    mode: str = "fair"

    @classmethod
    def from_dict(cls, data: Any, index: int) -> PoolSpec:
        where = f"pools[{index}]"
        data = require_mapping(data, where)
        unknown = sorted(set(data) - {f.name for f in fields(cls)})
        if unknown:
            raise InputError(f"{where}: unknown field {unknown[0]!r}")
        mode = read_str(data, "mode", where, default="fair")
        if mode not in ("fair", "fifo"):
            raise InputError(f"{where}: field 'mode' must be 'fair' or 'fifo', got {mode!r}")
        return cls(
            id=read_str(data, "id", where),
            min_maps=read_int(data, "min_maps", where, default=0, minimum=0),
            min_reduces=read_int(data, "min_reduces", where, default=0, minimum=0),
            max_maps=read_int(data, "max_maps", where, default=None, minimum=0),
            max_reduces=read_int(data, "max_reduces", where, default=None, minimum=0),
            weight=read_number(data, "weight", where, default=1.0, positive=True),
            max_running=read_int(data, "max_running", where, default=None, minimum=0),
            mode=mode,
        )

    def to_dict(self) -> dict[str, Any]:
        return {f.name: plain_number(getattr(self, f.name)) for f in fields(self) if getattr(self, f.name) is not None}


@dataclass(frozen=True)
class QueueSpec:
    """A Capacity Scheduler queue (Hadoop 1.0.3 capacity-scheduler.xml; percents of the cluster's slots)."""

    id: str
    capacity: float
    maximum_capacity: float | None = None
    minimum_user_limit_percent: float = 100.0
    user_limit_factor: float = 1.0
    supports_priority: bool = False

    @classmethod
    def from_dict(cls, data: Any, index: int) -> QueueSpec:
        where = f"queues[{index}]"
        data = require_mapping(data, where)
        unknown = sorted(set(data) - {f.name for f in fields(cls)})
        if unknown:
            raise InputError(f"{where}: unknown field {unknown[0]!r}")
        priority = data.get("supports_priority", False)
        if not isinstance(priority, bool):
            raise InputError(f"{where}: field 'supports_priority' must be true or false, got {priority!r:.40}")
        capacity = read_number(data, "capacity", where, low=0.0, high=100.0)
        maximum = read_number(data, "maximum_capacity", where, default=None, low=0.0, high=100.0)
        if maximum is not None and maximum < capacity:
            raise InputError(f"{where}: field 'maximum_capacity' must be >= capacity {capacity:g}, got {maximum:g}")
        return cls(
            id=read_str(data, "id", where),
            capacity=capacity,
            maximum_capacity=maximum,
            minimum_user_limit_percent=read_number(
                data, "minimum_user_limit_percent", where, default=100.0, low=0.0, high=100.0
            ),
            user_limit_factor=read_number(data, "user_limit_factor", where, default=1.0, positive=True),
            supports_priority=priority,
        )

    def to_dict(self) -> dict[str, Any]:
        return {f.name: plain_number(getattr(self, f.name)) for f in fields(self) if getattr(self, f.name) is not None}
