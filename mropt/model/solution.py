"""The result of one method on one instance (DESIGN.md, "Core interfaces").

A :class:`Solution` carries the decision, typed per instance kind
(:mod:`mropt.model.decisions`: admission's accepted jobs and map order, fairness's
allocation, priority's slots), its objective, the best proven bound where an exact
method has one, the status, the wall time and the solver's name and version.
``details`` holds whatever else a method reports (node counts, whether a beam cut
orders, ...).

The JSON form is a contract: the solution's own fields first (``accepted`` and
``sequence`` are admission's decision, written empty for other kinds), then the
decision's fields at the top level (e.g. ``allocation``).

``instance_hash`` is the SHA-256 content hash of the instance the solution was computed
for (``instance.content_hash()``; :func:`mropt.registry.solve` records it), so checking a
solution against another instance is caught (:meth:`Solution.instance_mismatch`; ``mropt
verify`` exits 1). Files written before it existed have none, and are checked as before.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from mropt.model.decisions import AdmissionDecision, Decision, decision_from_json
from mropt.model.errors import InputError
from mropt.model.fields import read_number, read_str, require_mapping

#: Status values (DESIGN.md). ``bound`` marks a bound-only result, such as Ideal (AMB eq. 4).
STATUSES = ("optimal", "feasible", "infeasible", "time_limit", "error", "bound")
_FIELDS = (
    "method",
    "status",
    "objective",
    "bound",
    "accepted",
    "sequence",
    "wall_time",
    "solver",
    "seed",
    "instance_hash",
    "params",
    "details",
)


@dataclass(frozen=True)
class Solution:
    """One method's answer (see the module docstring).

    ``decision`` is the kind's typed decision; a plain mapping is read as the JSON
    fields of one (kind inferred from its keys). Admission methods may give
    ``accepted`` and ``sequence`` instead (the map order, AMB Definition 1): they
    become an :class:`AdmissionDecision` (they win over a given one), and always mirror it.
    """

    method: str
    status: str
    objective: float | None
    bound: float | None = None
    accepted: tuple[str, ...] = ()
    sequence: tuple[str, ...] | None = None
    wall_time: float = 0.0
    solver: Mapping[str, str] = field(default_factory=lambda: {"name": "mropt", "version": ""})
    seed: int = 0
    params: Mapping[str, Any] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)
    decision: Mapping[str, Any] = field(default_factory=dict)  # a Decision once constructed
    instance_hash: str | None = None  # content hash of the instance solved (None: not recorded)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise InputError(f"solution: field 'status' must be one of {', '.join(STATUSES)}, got {self.status!r}")
        given = self.decision
        decision: Decision | None = None
        if isinstance(given, Decision):
            decision = given
        elif isinstance(given, Mapping) and given:
            clash = sorted(set(given) & set(_FIELDS))
            if clash:
                raise InputError(f"solution: decision key {clash[0]!r} clashes with a solution field")
            decision = decision_from_json(given, accepted=self.accepted, sequence=self.sequence)
        if isinstance(decision, AdmissionDecision) and (tuple(self.accepted), self.sequence) != ((), None):
            decision = None  # the fields win (dataclasses.replace(sol, accepted=...) keeps the old decision)
        if decision is None:
            decision = AdmissionDecision(tuple(self.accepted), None if self.sequence is None else tuple(self.sequence))
        object.__setattr__(self, "decision", decision)
        object.__setattr__(self, "accepted", decision.accepted)
        object.__setattr__(self, "sequence", decision.sequence)
        for key in ("solver", "params", "details"):
            object.__setattr__(self, key, MappingProxyType(dict(getattr(self, key))))

    @property
    def typed_decision(self) -> Decision:
        """The decision as its kind's class (always one once the solution is built)."""
        assert isinstance(self.decision, Decision)
        return self.decision

    def instance_mismatch(self, instance: Any) -> str | None:
        """One line when this solution records the hash of another instance than ``instance``, else None."""
        if self.instance_hash is None:
            return None
        own = instance.content_hash()
        if self.instance_hash == own:
            return None
        return f"solution is for another instance (hash {self.instance_hash[:12]}..., this instance {own[:12]}...)"

    def summary(self) -> dict[str, float]:
        """The decision's numbers (for the harness's ``metrics`` column)."""
        return self.typed_decision.summary()

    def to_dict(self) -> dict[str, Any]:
        def num(x: float | None) -> float | None:
            return None if x is None or not math.isfinite(x) else float(x)

        out = {
            "method": self.method,
            "status": self.status,
            "objective": num(self.objective),
            "bound": num(self.bound),
            "accepted": list(self.accepted),
            "sequence": None if self.sequence is None else list(self.sequence),
            "wall_time": round(self.wall_time, 6),
            "solver": dict(self.solver),
            "seed": self.seed,
            "instance_hash": self.instance_hash,
            "params": dict(self.params),
            "details": dict(self.details),
        }
        out.update(self.typed_decision.json_fields())
        return out

    @classmethod
    def from_dict(cls, data: Any, *, kind: str | None = None) -> Solution:
        """Parse a solution file (as written by ``mropt solve --json``), checking field types.

        ``kind`` (the instance's, when known) types the decision; otherwise its fields do.
        """
        data = require_mapping(data, "solution")
        where = "solution"

        def optional_number(key: str) -> float | None:
            if data.get(key) is None:
                return None
            return read_number(data, key, where, bounded=False)

        def id_list(key: str, required: bool) -> tuple[str, ...] | None:
            value = data.get(key)
            if value is None:
                if required:
                    raise InputError(f"{where}: field '{key}' is missing")
                return None
            if not isinstance(value, Sequence) or isinstance(value, str):
                raise InputError(f"{where}: field '{key}' must be a list of job ids, got {value!r:.60}")
            for item in value:
                if not isinstance(item, str):
                    raise InputError(f"{where}: field '{key}' must hold job id strings, got {item!r:.60}")
            return tuple(value)

        solver = data.get("solver") or {}
        instance_hash = data.get("instance_hash")
        if instance_hash is not None and not isinstance(instance_hash, str):
            raise InputError(
                f"{where}: field 'instance_hash' must be a string (a SHA-256 in hex), got {instance_hash!r:.60}"
            )
        accepted = id_list("accepted", required=True) or ()
        sequence = id_list("sequence", required=False)
        decision = decision_from_json(
            {k: v for k, v in data.items() if k not in _FIELDS}, accepted=accepted, sequence=sequence, kind=kind
        )
        return cls(
            method=read_str(data, "method", where),
            status=read_str(data, "status", where),
            objective=optional_number("objective"),
            bound=optional_number("bound"),
            accepted=accepted,
            sequence=sequence,
            wall_time=read_number(data, "wall_time", where, default=0.0, nonnegative=True, bounded=False),
            solver=require_mapping(solver, "solution field 'solver'"),
            seed=int(read_number(data, "seed", where, default=0, bounded=False)),
            params=require_mapping(data.get("params") or {}, "solution field 'params'"),
            details=require_mapping(data.get("details") or {}, "solution field 'details'"),
            decision=decision,
            instance_hash=instance_hash,
        )


@dataclass
class Verdict:
    """What a problem package's independent ``verify`` found (each kind adds its fields).

    ``objective`` is the objective recomputed from the decision alone; ``ok`` is False
    when ``problems`` (one line each) is not empty.
    """

    objective: float | None = None
    problems: list[str] = field(default_factory=list)
    checked_schedule: bool = False
    late: list[str] = field(default_factory=list)  # ids that miss their deadline (kinds with deadlines)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> dict[str, float]:
        """Numbers this kind's ``verify`` measured, for the harness's ``metrics`` column."""
        return {"late": len(self.late)} if self.checked_schedule else {}
