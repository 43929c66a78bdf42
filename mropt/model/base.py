"""What every instance kind shares: items keyed by id, frozen extras, a content hash.

Each kind is a frozen dataclass with a tuple of items that carry an ``id`` (jobs,
users, priorities); :class:`KeyedInstance` names that tuple in ``_ITEMS`` and derives
``n``, ``ids`` and ``index`` from it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import cached_property
from types import MappingProxyType
from typing import Any

from mropt.model.errors import InputError


def plain_number(value: float | int | None) -> float | int | None:
    """Write integral floats as JSON integers (150.0 -> 150) for readable files."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def frozen_mapping(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A read-only copy (extra fields and metadata of immutable model objects)."""
    return MappingProxyType(dict(mapping or {}))


def check_unique_ids(items: Sequence[Any], what: str, field: str) -> None:
    """InputError naming the first repeated id: ``job 'j3': duplicate id (jobs[2] and jobs[5])``."""
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        if item.id in seen:
            raise InputError(f"{what} {item.id!r}: duplicate id ({field}[{seen[item.id]}] and {field}[{i}])")
        seen[item.id] = i


class KeyedInstance:
    """Mixin of the instance kinds: ``_ITEMS`` names the attribute holding the items."""

    _ITEMS = ""

    def _items(self) -> Sequence[Any]:
        items: Sequence[Any] = getattr(self, self._ITEMS)
        return items

    @property
    def n(self) -> int:
        """Number of items (jobs, users, priorities)."""
        return len(self._items())

    @cached_property
    def ids(self) -> tuple[str, ...]:
        return tuple(item.id for item in self._items())

    @cached_property
    def index(self) -> Mapping[str, int]:
        """Item id -> position."""
        return MappingProxyType({item.id: i for i, item in enumerate(self._items())})

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - every kind defines it
        raise NotImplementedError

    def content_hash(self) -> str:
        """SHA-256 of the canonical JSON: equal content, equal hash, whatever the file layout.

        Computed once per (immutable) instance: the harness asks for it per run.
        """
        return self._content_hash

    @cached_property
    def _content_hash(self) -> str:
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(text.encode()).hexdigest()
