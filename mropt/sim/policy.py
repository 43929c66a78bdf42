"""The policy interface of the simulator, and the table of policies by name.

In the spirit of Hadoop's pluggable ``TaskScheduler`` (``org.apache.hadoop.mapred.TaskScheduler``:
``assignTasks(TaskTracker)`` returns the tasks to launch on a tracker that reported free
slots; job listeners hear of arrivals). A policy:

* decides at a job's arrival: :meth:`Policy.on_arrival` returns an :class:`Admission`
  (accept or reject, with a reason);
* fills a node with free capacity: :meth:`Policy.assign` calls ``sim.launch(job, node,
  slot_type, level)`` for each task it starts there (like ``JobInProgress.obtainNewMapTask``,
  the call takes the task and updates the state at once, so the next choice sees it);
* may kill attempts (``sim.kill``: preemption, reclaiming slots), start backup attempts
  (``sim.speculate``: LATE), drop accepted jobs (``sim.drop``: AMB's timeout handling), and
  ask to be woken (``sim.wake_at``: periodic updates, delay-scheduling timeouts);
* hears of finished attempts, stages and jobs, node failures and recoveries.

It reads the cluster and the jobs through ``sim`` (:class:`mropt.sim.view.SimView`), which
it must not mutate except through those actions.

A policy declares the assignment ``mode`` its rules are written for: ``event`` (offered
a node whenever capacity frees or work appears: SimMR's style, fast, for the admission
policies) or ``heartbeat`` (offered a node at its Hadoop 1.x heartbeats while it has free
capacity and work is pending: for rules stated per heartbeat). ``mropt simulate --mode``
overrides it.

Policies register with :func:`register_policy`; ``mropt policies`` lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from mropt.model.errors import InputError
from mropt.registry import Param

if TYPE_CHECKING:
    from mropt.sim.view import SimView

EVENT, HEARTBEAT = "event", "heartbeat"
MODES = (EVENT, HEARTBEAT)


@dataclass(frozen=True)
class Admission:
    """A policy's answer at a job's arrival."""

    accept: bool
    reason: str = ""


ACCEPT = Admission(True, "accepted")


class Policy:
    """Base class: accepts every job, launches nothing; subclasses override what they need."""

    name: ClassVar[str] = ""
    mode: ClassVar[str] = EVENT
    #: the slot types the policy schedules on each offer (both by default)

    def __init__(self, **params: Any) -> None:
        self.params = dict(params)
        self.sim: SimView

    def start(self, sim: SimView) -> None:
        """Called once before the first event."""
        self.sim = sim

    def on_arrival(self, job: int) -> Admission:
        """Accept or reject job ``job`` (an index into ``sim.jobs``) at its submit time."""
        return ACCEPT

    def assign(self, node: int) -> None:
        """Node ``node`` has free capacity and work is pending: launch what should run there."""

    def on_attempt_end(self, attempt: Any, outcome: str) -> None:
        """An attempt ended: ``outcome`` is ``succeeded``, ``killed`` or ``failed``.

        A policy that overrides this hook is told of every attempt alone, which makes the
        engine end a batch of identical attempts member by member. A policy that only
        counts should override :meth:`on_attempts_end` instead.
        """

    def on_attempts_end(self, attempt: Any, outcome: str, count: int) -> None:
        """``count`` attempts that share ``attempt``'s job, stage, type and demand ended together.

        Called for every end (``count`` 1 for an attempt ending alone, the number of live
        members when a batch succeeds at once) unless the policy overrides
        :meth:`on_attempt_end`; ``attempt.node`` is one member's node. Made for policies
        that keep running counts or resource usage (Fair, Capacity, DRF): one call per
        batch keeps the engine's bulk completion of batches.
        """

    def on_stage_end(self, job: int, stage: int) -> None:
        """Every task of a stage has finished."""

    def on_job_end(self, job: int) -> None:
        """A job finished (its last stage ended) or was dropped."""

    def on_timer(self, tag: Any) -> None:
        """A time asked for with ``sim.wake_at(t, tag)`` has come."""

    def on_node(self, node: int, up: bool) -> None:
        """A node went down (its attempts were killed and re-queued) or came back."""

    def plan_times(self) -> Mapping[str, tuple[float, float]] | None:
        """Predicted (map end, finish) per accepted job id, for policies that plan (SEQ, AMB)."""
        return None


@dataclass(frozen=True)
class PolicyInfo:
    """A registered policy: its class, a one-line summary, its typed parameters, its source."""

    name: str
    cls: type[Policy]
    summary: str
    params: Mapping[str, Param]
    source: str
    needs_plan: bool = False


_POLICIES: dict[str, PolicyInfo] = {}


def register_policy(
    name: str, *, summary: str, source: str, params: Mapping[str, Param] | None = None, needs_plan: bool = False
) -> Callable[[type[Policy]], type[Policy]]:
    """Class decorator: register a policy under ``name`` (a contract: scripts use the names)."""

    def wrap(cls: type[Policy]) -> type[Policy]:
        if name in _POLICIES:
            raise ValueError(f"policy {name!r} is registered twice")
        cls.name = name
        _POLICIES[name] = PolicyInfo(name, cls, summary, dict(params or {}), source, needs_plan)
        return cls

    return wrap


def policies() -> dict[str, PolicyInfo]:
    """Every registered policy, in registration order."""
    _load()
    return dict(_POLICIES)


def policy_info(name: str) -> PolicyInfo:
    _load()
    info = _POLICIES.get(name)
    if info is None:
        raise InputError(f"unknown policy {name!r} (known: {', '.join(_POLICIES)})")
    return info


def make_policy(name: str, params: Mapping[str, Any] | None = None) -> Policy:
    """An instance of policy ``name`` with its parameters checked against their declarations."""
    info = policy_info(name)
    given = dict(params or {})
    unknown = sorted(set(given) - set(info.params))
    if unknown:
        known = ", ".join(info.params) or "none"
        raise InputError(f"policy {name!r}: unknown parameter {unknown[0]!r} (known: {known})")
    checked = {key: param.default for key, param in info.params.items()}
    for key, value in given.items():
        checked[key] = info.params[key].check(name, key, value, what="policy")
    return info.cls(**checked)


def _load() -> None:
    import mropt.sim.policies  # noqa: F401  (the policies register on import)
