"""What a policy may read of a running simulation, and the actions it may take.

:class:`SimView` is a typing protocol: the engine (:class:`mropt.sim.engine.Simulation`) is
the object behind it, and a policy type-checked against the protocol cannot assign to the
state. Jobs are :class:`mropt.sim.state.Job` objects; read them, never write them.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Protocol

from mropt.model.workload import WorkloadInstance
from mropt.sim.state import Job

#: What one ``sim.launch_tasks`` call started: ``(first, started, level, demand)``, the first
#: attempt id (-1 when none; the others follow it, ``first .. first + started - 1``), how many
#: tasks, and the locality level (NONE without replicas) and demand (``SimView.resources`` order;
#: None: slots only) of the last one. A plain tuple: a launch is the engine's most frequent call.
Launched = tuple[int, int, int, tuple[float, ...] | None]


class AttemptView(Protocol):
    """A running or finished attempt (``mropt.sim.attempts.Attempt``, or a batch member's ``Member``)."""

    @property
    def id(self) -> int: ...
    @property
    def job(self) -> int: ...
    @property
    def stage(self) -> int: ...
    @property
    def task(self) -> int: ...
    @property
    def node(self) -> int: ...
    @property
    def type(self) -> int: ...
    @property
    def start(self) -> float: ...
    @property
    def end(self) -> float | None: ...
    @property
    def level(self) -> int: ...
    @property
    def speculative(self) -> bool: ...
    @property
    def demand(self) -> tuple[float, ...] | None:
        """The resources it holds, in ``SimView.resources`` order (None: slots only)."""
        ...


class SimView(Protocol):
    """The read-only state and the actions of a simulation (see :mod:`mropt.sim.policy`)."""

    @property
    def now(self) -> float: ...
    @property
    def workload(self) -> WorkloadInstance: ...
    @property
    def seed(self) -> int: ...
    @property
    def jobs(self) -> Sequence[Job]: ...
    @property
    def active(self) -> Mapping[int, Job]:
        """Accepted jobs not yet finished, in arrival order (job index -> job)."""
        ...

    @property
    def n_nodes(self) -> int: ...
    @property
    def node_rack(self) -> Sequence[int]: ...
    @property
    def node_speed(self) -> Sequence[float]: ...
    @property
    def node_up(self) -> Sequence[bool]: ...
    @property
    def slots(self) -> Sequence[Sequence[int]]:
        """Slots per type and node (``slots[type][node]``; 0 on a down node)."""
        ...

    @property
    def free(self) -> Sequence[Sequence[int]]:
        """Free slots per type and node (``free[type][node]``)."""
        ...

    @property
    def total_slots(self) -> Sequence[int]:
        """Slots per type of the nodes that are up."""
        ...

    @property
    def busy(self) -> Sequence[int]:
        """Running attempts per slot type."""
        ...

    @property
    def runnable(self) -> Sequence[int]:
        """Pending tasks of launchable stages of active jobs, per slot type."""
        ...

    @property
    def remaining(self) -> Sequence[int]:
        """Unfinished tasks of active jobs per slot type, over all their stages."""
        ...

    @property
    def resources(self) -> Sequence[str]: ...
    @property
    def free_resources(self) -> Sequence[Sequence[float]]:
        """Free amount per node and resource (``free_resources[node][k]``)."""
        ...

    @property
    def running(self) -> Mapping[int, AttemptView]:
        """Running attempts by id."""
        ...

    @property
    def heartbeat_interval(self) -> float: ...
    @property
    def slowstart(self) -> float | None: ...

    def launchable(self, job: int, slot_type: int) -> bool:
        """Whether the job has a pending task of this slot type that may launch now."""
        ...

    def fits(self, job: int, slot_type: int, node: int) -> bool:
        """Whether a task of this type of the job fits the node's free capacity now."""
        ...

    def predicted_duration(self, job: int, stage: int, task: int, node: int) -> float:
        """The time the task would take on the node (speed and locality; no straggler draw)."""
        ...

    # actions
    def launch(self, job: int, node: int, slot_type: int, level: int = ...) -> int:
        """Start the best pending task of the job's launchable stage of this type for the node, at
        locality ``level`` or better (default ANY); its attempt id, or -1 when none exists or fits."""
        ...

    def launch_tasks(self, job: int, node: int, slot_type: int, level: int = ..., count: int = ...) -> Launched:
        """Up to ``count`` tasks as ``launch`` would start them in as many calls, stopping at the first -1."""
        ...

    def speculate(self, job: int, stage: int, task: int, node: int) -> int:
        """Start a backup attempt of a running task on the node; its id, or -1."""
        ...

    def kill(self, attempt: int, outcome: str = ...) -> None:
        """End a running attempt now (``killed`` or ``failed``); its task goes back to pending."""
        ...

    def drop(self, job: int, reason: str) -> None:
        """Stop an accepted job: kill its attempts, forget its pending tasks."""
        ...

    def wake_at(self, time: float, tag: Hashable = ...) -> None:
        """Call ``Policy.on_timer(tag)`` at ``time`` (not before now)."""
        ...
