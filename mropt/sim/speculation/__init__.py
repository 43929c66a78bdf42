"""Speculative execution rules for the simulator (issue 17, items 1-2): ``--speculation NAME``.

* ``none``: no backups (the default; the engine runs exactly as without this package);
* ``hadoop-0.20``: Hadoop 0.20 / 1.x ``hasSpeculativeTask`` (:mod:`.hadoop020`);
* ``late``: Hadoop 0.21's LATE, ``JobInProgress.findSpeculativeTask`` (:mod:`.late`);
* ``late-percentile``: the LATE paper's percentile thresholds (:mod:`.percentile`);
* ``clairvoyant``: backs up exactly the tasks whose backup would finish first (:mod:`.clairvoyant`).

A rule works with any scheduling policy: the engine offers it the free slots the policy left
(:mod:`.base`). :func:`make_speculation` builds one by name (None for ``none``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mropt.model.errors import InputError
from mropt.sim.speculation.base import Speculation, progress, rate
from mropt.sim.speculation.clairvoyant import Clairvoyant
from mropt.sim.speculation.hadoop020 import Hadoop020
from mropt.sim.speculation.late import Late, cap_allows, cap_count
from mropt.sim.speculation.percentile import LatePercentile

#: the rules by name (a contract: ``mropt simulate --speculation``); ``none`` has no class
RULES: dict[str, type[Speculation] | None] = {
    "none": None,
    "hadoop-0.20": Hadoop020,
    "late": Late,
    "late-percentile": LatePercentile,
    "clairvoyant": Clairvoyant,
}

#: each rule's parameters and defaults (``--speculation-param NAME=VALUE``)
RULE_PARAMS: dict[str, dict[str, float]] = {
    "none": {},
    "hadoop-0.20": {"gap": 0.2, "lag": 60.0},
    "late": {"slow_task_threshold": 1.0, "slow_node_threshold": 1.0, "speculative_cap": 0.1, "lag": 60.0},
    "late-percentile": {
        "speculative_cap": 0.1,
        "slow_node_percentile": 25.0,
        "slow_task_percentile": 25.0,
        "lag": 60.0,
    },
    "clairvoyant": {},
}


def make_speculation(name: str | None, params: Mapping[str, Any] | None = None) -> Speculation | None:
    """The rule ``name`` with ``params`` checked (numbers >= 0); None for ``none`` (or None)."""
    if name is None:
        name = "none"
    if name not in RULES:
        raise InputError(f"simulate: speculation must be one of {', '.join(RULES)}, got {name!r}")
    known = RULE_PARAMS[name]
    checked: dict[str, float] = {}
    for key, value in (params or {}).items():
        if key not in known:
            raise InputError(f"speculation {name!r}: unknown parameter {key!r} (known: {', '.join(known) or 'none'})")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or value == float("inf"):
            raise InputError(f"speculation {name!r}: parameter {key!r} must be a number >= 0, got {value!r}")
        checked[key] = float(value)
    cls = RULES[name]
    if cls is None:
        return None
    return cls(**checked)


__all__ = [
    "RULES",
    "RULE_PARAMS",
    "Clairvoyant",
    "Hadoop020",
    "Late",
    "LatePercentile",
    "Speculation",
    "cap_allows",
    "cap_count",
    "make_speculation",
    "progress",
    "rate",
]
