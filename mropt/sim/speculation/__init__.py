"""Speculative execution rules for the simulator (issue 17, items 1-2): ``--speculation NAME``.

* ``none``: no backups (the default; the engine runs exactly as without this package);
* ``hadoop-0.20``: Hadoop 0.20 / 1.x ``hasSpeculativeTask`` (:mod:`.hadoop020`);
* ``late``: Hadoop 0.21's LATE, ``JobInProgress.findSpeculativeTask`` (:mod:`.late`);
* ``late-percentile``: the LATE paper's percentile thresholds (:mod:`.percentile`);
* ``clairvoyant``: backs up exactly the tasks whose backup would finish first (:mod:`.clairvoyant`).

A rule works with any scheduling policy: the engine offers it the free slots the policy left
(:mod:`.base`). Each registers with :func:`~mropt.sim.speculation.table.register_rule` (its
name, summary, source and typed parameters); :func:`make_speculation` builds one by name (None
for ``none``), and ``mropt policies`` lists them all with their parameters.
"""

from __future__ import annotations

# isort: off
# registration order is the order of `mropt policies` and of --speculation's choices
from mropt.sim.speculation import hadoop020  # noqa: F401
from mropt.sim.speculation import late  # noqa: F401
from mropt.sim.speculation import percentile  # noqa: F401
from mropt.sim.speculation import clairvoyant  # noqa: F401
# isort: on

from mropt.sim.speculation.base import Speculation, progress, rate
from mropt.sim.speculation.clairvoyant import Clairvoyant
from mropt.sim.speculation.hadoop020 import Hadoop020
from mropt.sim.speculation.late import Late, cap_allows, cap_count
from mropt.sim.speculation.percentile import LatePercentile
from mropt.sim.speculation.table import RULES, RuleInfo, make_speculation, register_rule, rule_info, rules

__all__ = [
    "RULES",
    "Clairvoyant",
    "Hadoop020",
    "Late",
    "LatePercentile",
    "RuleInfo",
    "Speculation",
    "cap_allows",
    "cap_count",
    "make_speculation",
    "progress",
    "rate",
    "register_rule",
    "rule_info",
    "rules",
]
