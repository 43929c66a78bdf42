"""Priority instances: deadline classes sharing the map and reduce slots of a cluster.

The problem of the MPSA paper (``docs/papers.md``; secs. 3-4): jobs arrive in
priority classes, each with a mean sojourn-time target (``deadline``, T_i of eq. 17), a
Poisson arrival rate (lambda_i) and a workload; every job walks the two-station Jackson
network of sec. 3 (a map and a reduce station). The routing probabilities come either
from a ``pattern_mix`` of the three job patterns of sec. 2.3 (simple, iterative with
``iterations`` rounds, chain), counted as in Table 1, or from an explicit ``routing``
object with ``q11``, ``q12`` and ``q21`` (``q10`` and ``q20`` may be given too and must
then agree).

Units: seconds and jobs per second. ``map_work`` and ``reduce_work`` are the slot-seconds
of one visit to the map and to the reduce station: a station given s slots serves at
``mu = s / work`` (the paper's f1 and f2, sec. 4.3).

A priority may leave out ``arrival_rate``, ``map_work`` or ``reduce_work`` when its
``history`` holds the series of that field (one value per time slice, at least two):
the AR(1) forecast of sec. 4.2 (eqs. 14-15) then supplies the value
(:mod:`mropt.priority.forecast`). An explicit value always wins over the forecast.
Unknown fields of the instance and of each priority are kept (``meta``, ``extra``)
and written back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np

from mropt.model.base import KeyedInstance, check_unique_ids, frozen_mapping, plain_number
from mropt.model.errors import InputError
from mropt.model.fields import read_int, read_number, read_str, require_mapping
from mropt.model.sense import MINIMISE

KIND = "priority"
SCHEMA_VERSION = 1
DEFAULT_ITERATIONS = 3  # the paper's iterative application repeats map -> reduce three times (sec. 5)
#: rounds of an iterative job at most: beyond ~2^53 the routing q21 = (n - 1) / n rounds to 1 in floating
#: point and jobs would never leave the network (MPSA eq. 2); a million rounds is already no MapReduce job
MAX_ITERATIONS = 1_000_000

PATTERNS = ("simple", "iterative", "chain")
SERIES = ("arrival_rate", "map_work", "reduce_work")
_PRIORITY_FIELDS = ("id", "deadline", *SERIES, "history")
_INSTANCE_FIELDS = (
    "kind",
    "schema_version",
    "name",
    "map_slots",
    "reduce_slots",
    "pattern_mix",
    "iterations",
    "routing",
    "priorities",
)
_ROUTING_GIVEN = ("q11", "q12", "q21")
_ROUTING_DERIVED = ("q10", "q20")
_ROUTING_TOLERANCE = 1e-9


def _read_series(data: Mapping[str, Any], key: str, where: str) -> tuple[float, ...]:
    value = data[key]
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise InputError(f"{where}: field '{key}' must be a list of numbers, got {value!r:.60}")
    if len(value) < 2:
        raise InputError(f"{where}: field '{key}' needs at least 2 time slices for AR(1), got {len(value)}")
    out = []
    for i, item in enumerate(value):
        if key == "arrival_rate":
            out.append(read_number({f"{key}[{i}]": item}, f"{key}[{i}]", where, nonnegative=True))
        else:
            out.append(read_number({f"{key}[{i}]": item}, f"{key}[{i}]", where, positive=True))
    return tuple(out)


@dataclass(frozen=True)
class Priority:
    """One priority class (MPSA sec. 4.1): sojourn target T_i, rate lambda_i, work per visit.

    ``arrival_rate``, ``map_work`` and ``reduce_work`` are None when the ``history``
    series of that name supplies them through the AR(1) forecast (sec. 4.2).
    """

    id: str
    deadline: float
    arrival_rate: float | None = None
    map_work: float | None = None
    reduce_work: float | None = None
    history: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        read_str({"id": self.id}, "id", "priority")
        where = f"priority {self.id!r}"
        history = self.history or {}
        if not isinstance(history, Mapping):
            raise InputError(f"{where}: field 'history' must be an object of series, got {history!r:.60}")
        unknown = sorted(set(history) - set(SERIES))
        if unknown:
            raise InputError(f"{where}: field 'history' has unknown series {unknown[0]!r} (known: {', '.join(SERIES)})")
        series = {key: _read_series(history, key, f"{where} history") for key in SERIES if key in history}
        given = {k: getattr(self, k) for k in ("deadline", *SERIES) if getattr(self, k) is not None}
        object.__setattr__(self, "deadline", read_number(given, "deadline", where, positive=True))
        for key in SERIES:
            if key not in given:
                if key not in series:
                    raise InputError(f"{where}: field '{key}' is missing (give it, or its series under 'history')")
                continue
            if key == "arrival_rate":
                object.__setattr__(self, key, read_number(given, key, where, nonnegative=True))
            else:
                object.__setattr__(self, key, read_number(given, key, where, positive=True))
        object.__setattr__(self, "history", MappingProxyType(series))
        object.__setattr__(self, "extra", frozen_mapping(self.extra))

    @classmethod
    def from_dict(cls, data: Any, index: int) -> Priority:
        data = require_mapping(data, f"priorities[{index}]")
        read_str(data, "id", f"priorities[{index}]")
        where = f"priority {data['id']!r}"
        known = {k: data[k] for k in ("id", "deadline", *SERIES) if k in data}
        known.setdefault("deadline", None)  # reported as missing by __post_init__
        history = require_mapping(data["history"], f"{where}: field 'history'") if "history" in data else {}
        extra = {k: v for k, v in data.items() if k not in _PRIORITY_FIELDS}
        return cls(**known, history=history, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "deadline": plain_number(self.deadline)}
        for key in SERIES:
            if getattr(self, key) is not None:
                out[key] = plain_number(getattr(self, key))
        if self.history:
            out["history"] = {k: [plain_number(v) for v in self.history[k]] for k in SERIES if k in self.history}
        out.update(self.extra)
        return out


def _check_routing(routing: Mapping[str, Any]) -> dict[str, float]:
    where = "instance: field 'routing'"
    unknown = sorted(set(routing) - set(_ROUTING_GIVEN) - set(_ROUTING_DERIVED))
    if unknown:
        raise InputError(f"{where} has unknown probability {unknown[0]!r} (known: q11, q12, q21, q10, q20)")
    q = {k: read_number(routing, k, "routing", low=0.0, high=1.0) for k in _ROUTING_GIVEN}
    if q["q11"] + q["q12"] > 1 + _ROUTING_TOLERANCE:
        raise InputError(f"routing: q11 + q12 must be <= 1 (q10 = 1 - q11 - q12), got {q['q11'] + q['q12']:g}")
    implied = {"q10": 1 - q["q11"] - q["q12"], "q20": 1 - q["q21"]}
    for key in _ROUTING_DERIVED:
        if key in routing:
            given = read_number(routing, key, "routing", low=0.0, high=1.0)
            if abs(given - implied[key]) > 1e-6:
                raise InputError(f"routing: field '{key}' must equal {implied[key]:g} (rows sum to 1), got {given:g}")
    if not 1 - q["q11"] - q["q12"] * q["q21"] > _ROUTING_TOLERANCE:
        raise InputError(
            "routing: jobs never leave the network (1 - q11 - q12*q21 must be > 0, MPSA eq. 2), "
            f"got q11={q['q11']:g}, q12={q['q12']:g}, q21={q['q21']:g}"
        )
    return q


def _check_mix(mix: Mapping[str, Any]) -> dict[str, float]:
    unknown = sorted(set(mix) - set(PATTERNS))
    if unknown:
        raise InputError(
            f"instance: field 'pattern_mix' names unknown pattern {unknown[0]!r} (known: {', '.join(PATTERNS)})"
        )
    weights = {k: read_number(mix, k, "pattern_mix", nonnegative=True) for k in PATTERNS if k in mix}
    if not sum(weights.values()) > 0:
        raise InputError(f"instance: field 'pattern_mix' must have a positive total weight, got {dict(mix)!r:.60}")
    return weights


@dataclass(frozen=True)
class PriorityInstance(KeyedInstance):
    """A multi-priority slot allocation instance (MPSA secs. 3-4, eq. 17).

    Exactly one of ``pattern_mix`` (weights of simple, iterative and chain jobs) and
    ``routing`` (q11, q12, q21) is set; ``iterations`` is the number of rounds of an
    iterative job. ``deadlines`` is a numpy view indexed like ``priorities``.
    """

    map_slots: int
    reduce_slots: int
    priorities: tuple[Priority, ...]
    pattern_mix: Mapping[str, float] | None = None
    iterations: int = DEFAULT_ITERATIONS
    routing: Mapping[str, float] | None = None
    name: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    kind = KIND
    SENSE = MINIMISE  # objective: the total number of reserved slots (MPSA eq. 17)
    schema_version = SCHEMA_VERSION
    _ITEMS = "priorities"

    def __post_init__(self) -> None:
        slots = {"map_slots": self.map_slots, "reduce_slots": self.reduce_slots}
        for key in slots:
            object.__setattr__(self, key, read_int(slots, key, "instance", minimum=1))
        object.__setattr__(
            self,
            "iterations",
            read_int({"iterations": self.iterations}, "iterations", "instance", minimum=1, maximum=MAX_ITERATIONS),
        )
        if self.pattern_mix is not None and self.routing is not None:
            raise InputError("instance: give either field 'pattern_mix' or field 'routing', not both")
        if self.pattern_mix is None and self.routing is None:
            raise InputError(
                "instance: field 'pattern_mix' is missing (give pattern_mix, or routing with q11, q12, q21)"
            )
        if self.pattern_mix is not None:
            mix = require_mapping(self.pattern_mix, "instance: field 'pattern_mix'")
            object.__setattr__(self, "pattern_mix", MappingProxyType(_check_mix(mix)))
        else:
            routing = require_mapping(self.routing, "instance: field 'routing'")
            object.__setattr__(self, "routing", MappingProxyType(_check_routing(routing)))
        object.__setattr__(self, "priorities", tuple(self.priorities))
        if not self.priorities:
            raise InputError("instance: field 'priorities' must list at least one priority, got []")
        check_unique_ids(self.priorities, "priority", "priorities")
        object.__setattr__(self, "meta", frozen_mapping(self.meta))

    # -- derived data (n, ids, index: KeyedInstance) ----------------------------------------
    @cached_property
    def deadlines(self) -> np.ndarray:
        arr = np.array([p.deadline for p in self.priorities], dtype=float)
        arr.setflags(write=False)
        return arr

    @property
    def reduce_to_map_ratio(self) -> float:
        """k = S_reduce / S_map (sec. 4.3, with the errata's direction)."""
        return self.reduce_slots / self.map_slots

    def priority(self, priority_id: str) -> Priority:
        try:
            return self.priorities[self.index[priority_id]]
        except KeyError:
            raise InputError(f"unknown priority id {priority_id!r}") from None

    # -- JSON ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": KIND, "schema_version": SCHEMA_VERSION}
        if self.name is not None:
            out["name"] = self.name
        out["map_slots"] = self.map_slots
        out["reduce_slots"] = self.reduce_slots
        if self.pattern_mix is not None:
            out["pattern_mix"] = {k: plain_number(v) for k, v in self.pattern_mix.items()}
            out["iterations"] = self.iterations
        else:
            out["routing"] = {k: plain_number(v) for k, v in self.routing.items()}  # type: ignore[union-attr]
            if self.iterations != DEFAULT_ITERATIONS:
                out["iterations"] = self.iterations
        out["priorities"] = [p.to_dict() for p in self.priorities]
        out.update(self.meta)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> PriorityInstance:
        data = require_mapping(data, "instance")
        for key in ("map_slots", "reduce_slots", "priorities"):
            if key not in data:
                raise InputError(f"instance: field '{key}' is missing")
        items = data["priorities"]
        if not isinstance(items, Sequence) or isinstance(items, str):
            raise InputError(f"instance: field 'priorities' must be a list, got {type(items).__name__}")
        for key in ("pattern_mix", "routing"):
            if key in data and data[key] is not None:
                require_mapping(data[key], f"instance: field '{key}'")
        return cls(
            map_slots=read_int(data, "map_slots", "instance", minimum=1),
            reduce_slots=read_int(data, "reduce_slots", "instance", minimum=1),
            priorities=tuple(Priority.from_dict(p, i) for i, p in enumerate(items)),
            pattern_mix=data.get("pattern_mix"),
            iterations=read_int(
                data, "iterations", "instance", default=DEFAULT_ITERATIONS, minimum=1, maximum=MAX_ITERATIONS
            ),
            routing=data.get("routing"),
            name=read_str(data, "name", "instance", default=None),
            meta={k: v for k, v in data.items() if k not in _INSTANCE_FIELDS},
        )
