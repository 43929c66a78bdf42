"""What a policy may read of a running simulation, and the actions it may take.

:class:`SimView` is a typing protocol: the engine (:class:`mropt.sim.engine.Simulation`) is
the object behind it, and a policy type-checked against the protocol cannot assign to the
state. Jobs are :class:`mropt.sim.state.Job` objects; read them, never write them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from mropt.model.workload import WorkloadInstance
from mropt.sim.state import Job


class AttemptView(Protocol):
    """A running or finished attempt (``mropt.sim.engine.Attempt``)."""

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

    @property
    def launched(self) -> int:
        """Tasks started by the last ``launch`` call (its attempt ids: the returned id and those after it)."""
        ...

    @property
    def launched_level(self) -> int:
        """Locality level of the last task the last ``launch`` call started (NONE without replicas)."""
        ...

    @property
    def launched_demand(self) -> tuple[float, ...] | None:
        """Demand of the last task the last ``launch`` call started (``resources`` order; None: slots only)."""
        ...

    # actions
    def launch(self, job: int, node: int, slot_type: int, level: int = ..., count: int = ...) -> int: ...
    def speculate(self, job: int, stage: int, task: int, node: int) -> int: ...
    def kill(self, attempt: int, outcome: str = ...) -> None: ...
    def drop(self, job: int, reason: str) -> None: ...
    def wake_at(self, time: float, tag: Any = ...) -> None: ...
