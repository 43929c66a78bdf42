"""Each instance kind's typed decision: what a method decided, apart from its numbers.

A :class:`~mropt.model.solution.Solution` carries one of these as ``decision``:

* :class:`AdmissionDecision` -- the accepted jobs and the map order (AMB Definition 1);
  written as the solution's top-level ``accepted`` and ``sequence`` fields;
* :class:`FairnessDecision` -- tasks per user, dominant shares, utilisation, launch
  order, placement (DDRF sec. 3);
* :class:`PriorityDecision` -- slots per priority, shared slots, infeasible priorities,
  the routing and eq. 12's a, b (MPSA sec. 3-4).

Every decision writes its own JSON fields (:meth:`Decision.json_fields`, the contract
of ``mropt solve --json``), reads them back (:func:`decision_from_json`), and sums itself
up in numbers for the harness's ``metrics`` column (:meth:`Decision.summary`), so
generic code (the harness, the CLI) never asks which kind it holds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from mropt.model.errors import InputError


def _frozen(value: Any) -> Any:
    return MappingProxyType(dict(value)) if isinstance(value, Mapping) else value


def text_scalar(value: Any) -> str:
    """One value of ``mropt solve``'s text output: floats with 6 significant digits, None as '-'."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _is_scalar(value: Any) -> bool:
    return not isinstance(value, (Mapping, list, tuple))


def text_lines(value: Any, indent: int = 0) -> list[str]:
    """A JSON-like value as text lines, whole (never cut).

    A mapping gives one ``key: value`` line per entry. A nested mapping of scalars is
    one line of ``name=value`` pairs (``u1: n1=2 n3=1``), a deeper one its own lines
    indented by two under ``key:``. A list of scalars is one line, space-separated
    (empty: '-'); other lists are written as JSON; numbers as :func:`text_scalar`.
    """
    pad = " " * indent
    if isinstance(value, Mapping):
        if not value:
            return [pad + "-"]
        lines = []
        for key, item in value.items():
            if isinstance(item, Mapping) and item and all(_is_scalar(v) for v in item.values()):
                lines.append(f"{pad}{key}: " + " ".join(f"{k}={text_scalar(v)}" for k, v in item.items()))
            elif isinstance(item, Mapping) and item:
                lines.append(f"{pad}{key}:")
                lines += text_lines(item, indent + 2)
            else:
                lines.append(f"{pad}{key}: {text_lines(item)[0]}")
        return lines
    if isinstance(value, (list, tuple)):
        if not value:
            return [pad + "-"]
        if all(_is_scalar(v) for v in value):
            return [pad + " ".join(text_scalar(v) for v in value)]
        return [pad + json.dumps(_plain(value))]
    return [pad + text_scalar(value)]


def _plain(value: Any) -> Any:
    """JSON-ready copies of (possibly read-only) mappings and tuples."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class Decision(Mapping[str, Any]):
    """Base of the kinds' decisions; the admission fields are empty for the other kinds.

    Typed attributes per kind, and a read-only mapping of the JSON fields
    (``decision["allocation"]``) for code that treats a decision as data, like ``verify``.
    """

    kind: ClassVar[str] = ""
    #: the JSON keys this kind writes besides the solution's own fields
    json_keys: ClassVar[tuple[str, ...]] = ()
    #: fields of a solution file this kind does not know: kept and written back
    extra: Mapping[str, Any] = field(default_factory=dict, kw_only=True)

    @property
    def accepted(self) -> tuple[str, ...]:
        """Accepted job ids (admission); empty for other kinds."""
        return ()

    @property
    def sequence(self) -> tuple[str, ...] | None:
        """The map order (admission); None for other kinds."""
        return None

    def json_fields(self) -> dict[str, Any]:
        """Top-level JSON fields of this decision (after the solution's own fields)."""
        out = {k: _plain(getattr(self, k)) for k in self.json_keys if getattr(self, k) is not None}
        out.update(_plain(self.extra))
        return out

    def summary(self) -> dict[str, float]:
        """Numbers for the harness's ``metrics`` column and reports."""
        return {}

    # a read-only mapping of the JSON fields, too: decision["allocation"], {**decision, ...}
    def __getitem__(self, key: str) -> Any:
        return self.json_fields()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.json_fields())

    def __len__(self) -> int:
        return len(self.json_fields())

    def text_rows(self, instance: Any) -> list[tuple[str, Any]]:
        """(field, text) rows of ``mropt solve``'s text output: every field whole (:func:`text_lines`).

        A field of several lines continues on rows with an empty field name.
        """
        rows: list[tuple[str, Any]] = []
        for key, value in self.json_fields().items():
            lines = text_lines(value)
            rows.append((key, lines[0]))
            rows += [("", line) for line in lines[1:]]
        return rows


@dataclass(frozen=True)
class AdmissionDecision(Decision):
    """Accepted job ids and their map order (AMB sec. 3 and Definition 1)."""

    kind: ClassVar[str] = "admission"
    accepted_ids: tuple[str, ...] = ()
    order: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra", _frozen(self.extra))
        object.__setattr__(self, "accepted_ids", tuple(self.accepted_ids))
        if self.order is not None:
            object.__setattr__(self, "order", tuple(self.order))

    @property
    def accepted(self) -> tuple[str, ...]:
        return self.accepted_ids

    @property
    def sequence(self) -> tuple[str, ...] | None:
        return self.order

    def json_fields(self) -> dict[str, Any]:
        return dict(_plain(self.extra))  # accepted and sequence are the solution's own fields (the JSON contract)

    def summary(self) -> dict[str, float]:
        return {"accepted": len(self.accepted_ids)}

    def text_rows(self, instance: Any) -> list[tuple[str, Any]]:
        return [
            ("accepted", f"{len(self.accepted_ids)} of {instance.n}"),
            ("sequence", " ".join(self.order) if self.order is not None else None),
        ]


@dataclass(frozen=True)
class FairnessDecision(Decision):
    """Tasks per user and what they mean (DDRF sec. 3): shares, utilisation, order, placement."""

    kind: ClassVar[str] = "fairness"
    json_keys: ClassVar[tuple[str, ...]] = ("allocation", "dominant_shares", "utilisation", "order", "placement")
    allocation: Mapping[str, float] = field(default_factory=dict)
    dominant_shares: Mapping[str, float] = field(default_factory=dict)
    utilisation: Mapping[str, float] = field(default_factory=dict)
    order: tuple[str, ...] | None = None  # launch order (progressive filling)
    placement: Mapping[str, Mapping[str, float]] | None = None  # user -> node -> tasks

    def __post_init__(self) -> None:
        for key in ("allocation", "dominant_shares", "utilisation", "placement", "extra"):
            object.__setattr__(self, key, _frozen(getattr(self, key)))
        if self.order is not None:
            object.__setattr__(self, "order", tuple(self.order))

    def summary(self) -> dict[str, float]:
        shares = [float(v) for v in self.dominant_shares.values()]
        return {
            "tasks": float(sum(float(v) for v in self.allocation.values())),
            "users_served": sum(1 for v in self.allocation.values() if float(v) > 0),
            **({"min_dominant_share": min(shares), "max_dominant_share": max(shares)} if shares else {}),
        }


@dataclass(frozen=True)
class PriorityDecision(Decision):
    """Slots per priority (MPSA sec. 4.3), shared slots (sec. 4.4), the routing (eq. 12)."""

    kind: ClassVar[str] = "priority"
    json_keys: ClassVar[tuple[str, ...]] = ("allocation", "shared", "infeasible", "routing", "a", "b")
    allocation: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    shared: Mapping[str, int] = field(default_factory=dict)
    infeasible: tuple[str, ...] = ()
    routing: Mapping[str, Any] | None = None
    a: float | None = None
    b: float | None = None

    def __post_init__(self) -> None:
        for key in ("allocation", "shared", "routing", "extra"):
            object.__setattr__(self, key, _frozen(getattr(self, key)))
        if isinstance(self.infeasible, Sequence) and not isinstance(self.infeasible, str):
            object.__setattr__(self, "infeasible", tuple(self.infeasible))

    def summary(self) -> dict[str, float]:
        alloc = [v for v in self.allocation.values() if isinstance(v, Mapping)]
        return {
            "map_slots": sum(int(v.get("map_slots") or 0) for v in alloc),
            "reduce_slots": sum(int(v.get("reduce_slots") or 0) for v in alloc),
            "infeasible_priorities": len(self.infeasible),
        }


#: kind -> its decision class
DECISIONS: dict[str, type[Decision]] = {
    cls.kind: cls for cls in (AdmissionDecision, FairnessDecision, PriorityDecision)
}


def decision_from_json(
    fields: Mapping[str, Any],
    *,
    accepted: Sequence[str] = (),
    sequence: Sequence[str] | None = None,
    kind: str | None = None,
) -> Decision:
    """The typed decision of a solution file: its extra top-level ``fields`` and admission's two.

    ``kind`` (the instance's, when known) picks the class; otherwise the fields decide:
    ``dominant_shares`` means fairness, ``shared`` or ``routing`` priority, else admission.
    Fields the class does not know are kept in ``extra`` and written back.
    """
    if kind is None:
        kind = (
            "fairness"
            if "dominant_shares" in fields
            else "priority"
            if ("shared" in fields or "routing" in fields)
            else "admission"
        )
    cls = DECISIONS.get(kind)
    if cls is None:
        raise InputError(f"solution: no decision type for kind {kind!r}")
    known = {k: v for k, v in fields.items() if k in cls.json_keys}
    extra = {k: v for k, v in fields.items() if k not in cls.json_keys}
    if cls is AdmissionDecision:
        return AdmissionDecision(tuple(accepted), None if sequence is None else tuple(sequence), extra=extra)
    try:
        return cls(**known, extra=extra)
    except (TypeError, ValueError) as exc:
        raise InputError(f"solution: the {kind} decision is malformed: {exc}") from None
