"""Attempt objects, and batches of identical attempts (a speed-only device of the engine).

An :class:`Attempt` is one attempt of a task on a node: the row of ``tasks.parquet`` it
becomes. The engine may make it a *batch* (on unless ``Simulation(batch=False)``; batches
change no simulated time and no row of any table, ``tests/sim/test_sim_batching.py``): a
launch joins the attempt made by the launch just before it when both started at this
instant, are of the same job and stage, have the same locality level, resource demand and
running time (compared exactly), and neither is speculative nor an early (slow-start) reduce.
The nodes may differ. A batch of ``n`` tasks is one object with ``n`` consecutive attempt ids
and one completion event instead of ``n``. :class:`Batches` says which attempt the next launch
may join (the join itself is made in one place, ``Launches.launch_tasks``): only the last one
made, and any other completion scheduled in between (another attempt, an early reduce's end)
closes it, so simultaneous completions keep the order single attempts would have. Straggler draws stay one per task in launch order; a task drawn slow
joins only a batch of its own running time (one drawn slow too).

When a batch ends, its tasks are completed in id order, in bulk when nothing can tell the
difference, else one by one exactly as single attempts (``mropt.sim.engine``). Batches stay
killable per task: a member is killed alone (``dead`` records when) and the others run on.
:class:`Running` maps every attempt id, members included, to its attempt or a :class:`Member`
view, so a policy sees one attempt per task (``mropt.sim.view.AttemptView``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mropt.sim.state import Stage


class Attempt:
    """One attempt of a task on a node, or a batch of ``n`` (module docstring).

    Member ``i`` of a batch has attempt id ``id + i``, task ``tasks[i]`` and node ``nodes[i]``;
    the object's own ``task`` and ``node`` are member 0's. ``tasks`` is a ``range`` while the
    members' tasks are consecutive (a launch run's: :mod:`mropt.sim.launch_runs`; their end marks
    them done in one slice), a list once a join breaks that (``Launches.launch_tasks``' join:
    the range's missing ``append`` makes the list). ``live`` counts the members still
    running; ``dead`` maps a member killed early to the time it ended.
    """

    __slots__ = (
        "id",
        "job",
        "stage",
        "task",
        "node",
        "type",
        "start",
        "end",
        "level",
        "speculative",
        "work",
        "demand",
        "n",
        "live",
        "tasks",
        "nodes",
        "dead",
    )

    def __init__(
        self,
        aid: int,
        job: int,
        stage: int,
        task: int,
        node: int,
        stype: int,
        start: float,
        level: int,
        speculative: bool,
        work: float,
        demand: tuple[float, ...] | None,
    ) -> None:
        self.id = aid
        self.job = job
        self.stage = stage
        self.task = task
        self.node = node
        self.type = stype
        self.start = start
        self.end: float | None = None
        self.level = level
        self.speculative = speculative
        self.work = work  # the attempt's full running time on its node
        self.demand = demand
        self.n = 1
        self.live = 1
        self.tasks: list[int] | range | None = None  # a range where consecutive (a launch run's)
        self.nodes: list[int] | None = None
        self.dead: dict[int, float] | None = None

    def task_of(self, aid: int) -> int:
        """The task of attempt id ``aid`` (this attempt's, or a member's)."""
        return self.task if self.tasks is None else self.tasks[aid - self.id]

    def node_of(self, aid: int) -> int:
        """The node of attempt id ``aid`` (this attempt's, or a member's)."""
        return self.node if self.nodes is None else self.nodes[aid - self.id]

    def member(self, i: int) -> Attempt | Member:
        """Member ``i``'s view (the object itself for a single attempt)."""
        return self if self.n == 1 else Member(self, i)


class Member:
    """The attempt view of one member of a batch (read-only; ``mropt.sim.view.AttemptView``)."""

    __slots__ = ("batch", "i")

    def __init__(self, batch: Attempt, i: int) -> None:
        self.batch = batch
        self.i = i

    @property
    def id(self) -> int:
        return self.batch.id + self.i

    @property
    def job(self) -> int:
        return self.batch.job

    @property
    def stage(self) -> int:
        return self.batch.stage

    @property
    def task(self) -> int:
        tasks = self.batch.tasks
        return tasks[self.i] if tasks is not None else self.batch.task

    @property
    def node(self) -> int:
        nodes = self.batch.nodes
        return nodes[self.i] if nodes is not None else self.batch.node

    @property
    def type(self) -> int:
        return self.batch.type

    @property
    def start(self) -> float:
        return self.batch.start

    @property
    def end(self) -> float | None:
        dead = self.batch.dead
        if dead is not None and self.i in dead:
            return dead[self.i]
        return self.batch.end

    @property
    def level(self) -> int:
        return self.batch.level

    @property
    def speculative(self) -> bool:
        return self.batch.speculative

    @property
    def work(self) -> float:
        return self.batch.work

    @property
    def demand(self) -> tuple[float, ...] | None:
        return self.batch.demand


class Running(Mapping[int, "Attempt | Member"]):
    """The running attempts by id, batch members included (``Simulation.running``).

    Iterates in attempt id order, like the dict it stands for; a batch member's value is a
    :class:`Member` view made on access.
    """

    __slots__ = ("of",)

    def __init__(self) -> None:
        self.of: dict[int, Attempt] = {}  # attempt id -> its attempt (a batch for each member)

    def __getitem__(self, aid: int) -> Attempt | Member:
        a = self.of[aid]
        return a if aid == a.id else Member(a, aid - a.id)

    def __contains__(self, aid: object) -> bool:
        return aid in self.of

    def __iter__(self) -> Iterator[int]:
        return iter(self.of)

    def __len__(self) -> int:
        return len(self.of)


class Batches:
    """Which attempt the next launch may join (module docstring): the open batch and its stage.

    ``open`` is the attempt made last at this instant while it may still grow, else None
    (``mropt.sim.launches`` joins it and opens new ones); :meth:`close` ends that (it ended, lost
    a member, or another completion was scheduled after it). With ``on`` False
    (``Simulation(batch=False)``, or a speculation rule) nothing opens.
    """

    __slots__ = ("on", "open", "stage")

    def __init__(self, on: bool) -> None:
        self.on = on
        self.open: Attempt | None = None
        self.stage: Stage | None = None

    def close(self) -> None:
        """No later launch may join the open batch."""
        self.open = None
