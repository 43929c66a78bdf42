"""The state of :class:`mropt.sim.policies.fair.Fair` that its mixins read, declared once.

``Fair`` is assembled from mixins, each holding one part of Hadoop 1.0.3's Fair Scheduler
(``fair_offers``, ``fair_quiet``, ``fair_assign``, ``fair_update``, ``fair_preemption``). They all
work on the state ``Fair.start`` makes; :class:`FairFields` names it and its types for them (and
for mypy). Nothing here runs: the attributes are set by ``Fair``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, ClassVar

from mropt.sim.policies.fair_shares import _Pool
from mropt.sim.view import SimView


class FairFields:
    """Fair's state as its mixins read it (module docstring)."""

    sim: SimView
    reference: bool
    self_check: bool
    #: FAIR_PARAMS' ``additive`` (a class attribute of ``Fair``)
    additive: ClassVar[bool]
    # the pools and the jobs' places in them (``fair_offers``: the kept orders)
    pools: dict[str, _Pool]
    weight: list[float]
    order: tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]
    placed: tuple[dict[str, tuple[Any, ...]], dict[str, tuple[Any, ...]]]
    key: list[list[tuple[Any, ...] | None]]
    repool: set[str]
    lone_stale: list[bool]
    # update() (``fair_update``)
    update_interval: float
    next_update: float
    force_update: bool
    is_runnable: bytearray
    demand: list[list[int]]
    demand_dirty: set[int]
    members_changed: set[str]
    total_slots_at_update: list[int]
    dirty: set[int]
    running_total: list[int]
    runnable_total: list[float]
    # the heartbeat: assignMultiple, the caps, delay scheduling's waits and levels
    assign_multiple: bool
    #: ``FairOffers._launched`` and ``FairAssign._job_key`` inline in ``_assign_fast`` and ``_refresh_keys``
    #: (the class's own, not a subclass's)
    inline_launched: bool
    caps: tuple[int, int]
    last_heartbeat: float | None
    skipped: Collection[int]
    waited: list[float]
    last_level: list[int]
    node_delay: float
    rack_delay: float
    input_places: dict[int, tuple[int, frozenset[int] | None, frozenset[int]]]
    no_locality: dict[tuple[int, int], bool]
    # preemption
    preemption: bool
    min_share_timeout: float
    fair_share_timeout: float
