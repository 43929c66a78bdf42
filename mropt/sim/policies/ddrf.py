"""DRF with delay scheduling: ``ddrf``'s two levels and ``delay``'s one (DDRF paper, ``docs/papers.md``).

Both are :class:`mropt.sim.policies.drf._DrfBase` (DRF's order of users by dominant share, its
offers and their accelerations: :mod:`mropt.sim.policies.drf`) with a delay rule of their own:
``_level``, the locality a job's skip count allows, and ``_after_launch``, when the count resets.

**DDRF** (sec. 4.1; params ``e1`` <= ``e2``): node-local only while the job's skip count is
below E1, rack-local (or better) while E1 <= skips < E2, any node once skips >= E2; the
count goes back to 0 at every launch, local or not ("每当任务启动后(无论是否满足本地化计算)都将
作业的延迟置为 0"). The listing increments the count a second time inside the rack-local
branch; mropt counts one increment per declined offer instead (mropt's choice), so E1 and E2
count offers. E1 = E2 = 0 is plain DRF. Tasks without input replicas (reduces) are local
everywhere and never cause a skip.

**delay** (Zaharia et al., EuroSys 2010, Algorithm 1, "skip count" form; param ``d``): the
same DRF order, one wait: node-local only until the job has been skipped D times, then any
node. As in Zaharia's algorithm the count resets only at a node-local launch (a job past
its wait goes on launching non-local tasks until it gets a local one).
"""

from __future__ import annotations

from typing import Any

from mropt.model.errors import InputError
from mropt.registry import Param
from mropt.sim.policies.drf import _DrfBase
from mropt.sim.policy import register_policy
from mropt.sim.state import ANY, NODE, RACK


@register_policy(
    "ddrf",
    summary=(
        "DRF with two-level delay: node-local until E1 skips, rack-local until E2, then any (DDRF sec. 4.1); "
        "the default E1 = E2 = 0 makes exactly drf's decisions"
    ),
    source="DDRF paper sec. 4.1 listing",
    needs=(),
    params={
        "e1": Param(
            int, 0, "E1: skips before a job accepts a rack-local node (e1 = e2 = 0: drf's decisions)", minimum=0
        ),
        "e2": Param(
            int, 0, "E2 (>= E1): skips before a job accepts any node (e1 = e2 = 0: drf's decisions)", minimum=0
        ),
    },
)
class Ddrf(_DrfBase):
    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.e1, self.e2 = int(params["e1"]), int(params["e2"])
        if self.e1 > self.e2:
            raise InputError(f"policy 'ddrf': parameter 'e1' must be <= e2 = {self.e2}, got {self.e1}")

    def _level(self, job: int) -> int:
        skips = self.skips[job]
        if skips >= self.e2:
            return ANY
        return RACK if skips >= self.e1 else NODE


@register_policy(
    "delay",
    summary=(
        "DRF with single-level delay scheduling: node-local until D skips, then any (Zaharia et al. 2010); "
        "the default D = 0 makes exactly drf's decisions"
    ),
    source="Zaharia et al., EuroSys 2010, Algorithm 1 (skip counts); DDRF paper sec. 3.2",
    needs=(),
    params={"d": Param(int, 0, "D: skips before a job accepts a non-local node (0: drf's decisions)", minimum=0)},
)
class Delay(_DrfBase):
    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.d = int(params["d"])

    def _level(self, job: int) -> int:
        return ANY if self.skips[job] >= self.d else NODE

    def _run_level(self, job: int) -> int | None:
        # past its wait a job launches at any level, and a local launch would reset it: one at a time,
        # unless D = 0 (no skip is ever counted and every level is ANY: a run as drf's)
        if self._level(job) == NODE:
            return NODE
        return ANY if self.d == 0 else None

    def _after_launch(self, job: int, level: int) -> None:
        if level <= NODE:  # node-local, or a task without replicas: Zaharia resets on a local launch
            self.skips[job] = 0
