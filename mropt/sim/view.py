"""What a policy may read of a running simulation, and the actions it may take.

:class:`SimView` is a typing protocol: the engine (:class:`mropt.sim.engine.Simulation`) is
the object behind it. Jobs, stages and attempts are seen through read-only protocols too
(:class:`JobView`, :class:`StageView`, :class:`AttemptView`: the engine's ``Job``, ``Stage``
and ``Attempt`` objects), so a policy type-checked against them (``make lint``) can neither
assign to the state nor read what is not listed here: it changes the run only through the
actions (``launch``, ``launch_tasks``, ``speculate``, ``kill``, ``drop``, ``wake_at``). What a
policy must provide is :class:`mropt.sim.policy.Policy`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Protocol

from mropt.model.workload import WorkloadInstance
from mropt.sim.state import Replicas


class StageView(Protocol):
    """One stage of a job at run time (``mropt.sim.state.Stage``); task ids are ``0 .. n - 1``."""

    @property
    def index(self) -> int: ...
    @property
    def type(self) -> int:
        """The slot type of its tasks (``MAP`` or ``REDUCE``)."""
        ...

    @property
    def n(self) -> int: ...
    @property
    def offsets(self) -> Sequence[int]:
        """The first task id of each task group."""
        ...

    @property
    def durations(self) -> Sequence[float]:
        """The base duration of each task group."""
        ...

    @property
    def demands(self) -> Sequence[tuple[float, ...] | None]:
        """The demand of each task group (``SimView.resources`` order; None: slots only)."""
        ...

    @property
    def replicas(self) -> Replicas | None:
        """The nodes holding each task's input (None: no task has replicas)."""
        ...

    @property
    def state(self) -> Sequence[int]:
        """Each task's state (``mropt.sim.task_states``: PENDING, RUNNING, DONE)."""
        ...

    @property
    def pending(self) -> int: ...
    @property
    def running(self) -> int: ...
    @property
    def finished(self) -> int: ...
    @property
    def end_time(self) -> float | None: ...
    def duration_of(self, task: int) -> float: ...
    def demand_of(self, task: int) -> tuple[float, ...] | None: ...
    def replicas_of(self, task: int) -> tuple[int, ...]: ...
    def level_on(self, task: int, node: int, rack: int, node_rack: Sequence[int]) -> int:
        """The locality of ``task`` run on ``node`` (in ``rack``): NODE, RACK, ANY, or NONE without replicas."""
        ...


class JobView(Protocol):
    """A job at run time (``mropt.sim.state.Job``): its workload fields, stages, status and counts."""

    @property
    def index(self) -> int:
        """Its index in ``SimView.jobs``."""
        ...

    @property
    def id(self) -> str: ...
    @property
    def submit(self) -> float: ...
    @property
    def deadline(self) -> float | None: ...
    @property
    def benefit(self) -> float | None: ...
    @property
    def user(self) -> str: ...
    @property
    def pool(self) -> str: ...
    @property
    def queue(self) -> str: ...
    @property
    def priority(self) -> int: ...
    @property
    def stages(self) -> Sequence[StageView]: ...
    @property
    def cur(self) -> int:
        """Its first unfinished stage."""
        ...

    @property
    def status(self) -> str:
        """``waiting``, ``active``, ``finished``, ``rejected`` or ``dropped`` (``mropt.sim.state``)."""
        ...

    @property
    def running(self) -> Sequence[int]:
        """Running attempts per slot type."""
        ...

    @property
    def runnable(self) -> Sequence[int]:
        """Pending tasks of launchable stages per slot type."""
        ...

    @property
    def remaining(self) -> Sequence[int]:
        """Unfinished tasks per slot type, over all its stages."""
        ...

    @property
    def first_start(self) -> float | None: ...
    @property
    def map_end(self) -> float | None: ...
    @property
    def finish(self) -> float | None: ...
    @property
    def n_tasks(self) -> int: ...
    def launchable(self, stype: int, slowstart: float | None) -> StageView | None:
        """The stage of type ``stype`` whose pending tasks may launch now, or None."""
        ...


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
    def jobs(self) -> Sequence[JobView]: ...
    @property
    def active(self) -> Mapping[int, JobView]:
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
