"""Run-time state of jobs, stages and attempts: what the engine mutates and policies read.

Built from a :class:`~mropt.model.workload.WorkloadInstance` by :func:`build_jobs`. Everything
is plain Python (lists, ``bytearray``, ``__slots__`` classes) because the engine touches it on
every event; policies read it through :class:`mropt.sim.view.SimView` and change it only through
the engine's actions (``launch``, ``speculate``, ``kill``, ``drop``).

Task ids are per stage, ``0 .. n-1`` in the order of the stage's task groups. A stage keeps
its pending tasks in three structures, all lazily cleaned (an entry whose task is no longer
pending is skipped when met): ``requeue`` (tasks whose attempt was killed, served first, as
Hadoop re-runs failed tasks first), a ``fresh`` pointer over task ids in order, and, when its
tasks have input replicas, per-node and per-rack stacks for locality. The stacks are built
when the stage is first asked for a task (:meth:`Stage.take`) and dropped when it completes
(:meth:`Stage.drop_locality`), so a replay of a long trace holds them only for the stages
that can run. Replicas are a list of tuples (listed in the workload) or, for generated
placement (``mropt.sim.placement``), an int32 array of shape (tasks, R).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence

import numpy as np

from mropt.model.workload import WorkloadInstance
from mropt.sim.locality_stacks import Stacks, build_stacks, top_pending
from mropt.sim.task_states import DONE, PENDING, RUNNING  # noqa: F401 (also read from here)

#: replicas of a stage's tasks: a tuple of node indices per task, or an int32 array (tasks, R)
Replicas = list[tuple[int, ...]] | np.ndarray

MAP, REDUCE = 0, 1
SLOT_TYPES = ("map", "reduce")
#: locality levels (Hadoop's LocalityLevel NODE < RACK < ANY); NONE: the task has no replicas
NODE, RACK, ANY, NONE = 0, 1, 2, -1
LEVEL_NAMES = {NODE: "node", RACK: "rack", ANY: "any", NONE: None}

#: job status
WAITING, ACTIVE, FINISHED, REJECTED, DROPPED = "waiting", "active", "finished", "rejected", "dropped"


class Stage:
    """One stage of a job at run time (see the module docstring)."""

    __slots__ = (
        "index",
        "type",
        "n",
        "offsets",
        "durations",
        "demands",
        "replicas",
        "state",
        "fresh",
        "requeue",
        "node_q",
        "rack_q",
        "running",
        "finished",
        "pending",
        "running_of",
        "end_time",
        "waiting",
    )

    def __init__(
        self,
        index: int,
        stype: int,
        counts: Sequence[int],
        durations: Sequence[float],
        demands: Sequence[tuple[float, ...] | None],
        replicas: Replicas | None,
    ) -> None:
        self.index = index
        self.type = stype
        self.offsets: list[int] = []
        total = 0
        for count in counts:
            self.offsets.append(total)
            total += count
        self.n = total
        self.durations = list(durations)
        self.demands = list(demands)
        self.replicas = replicas  # per task (node indices), or None: no task has replicas
        self.state = bytearray(total)
        self.fresh = 0
        self.requeue: list[int] = []
        self.node_q: Stacks | None = None
        self.rack_q: Stacks | None = None
        self.running = 0
        self.finished = 0
        self.pending = total  # tasks in state PENDING
        # task -> its running attempt ids, kept only for tasks given a backup (``speculate``)
        self.running_of: dict[int, list[int]] = {}
        self.end_time: float | None = None
        self.waiting: list[int] = []  # early reduce attempts waiting for the previous stage (slow-start)

    def group_of(self, task: int) -> int:
        return bisect_right(self.offsets, task) - 1

    def duration_of(self, task: int) -> float:
        if len(self.durations) == 1:
            return self.durations[0]
        return self.durations[bisect_right(self.offsets, task) - 1]

    def demand_of(self, task: int) -> tuple[float, ...] | None:
        if len(self.demands) == 1:
            return self.demands[0]
        return self.demands[bisect_right(self.offsets, task) - 1]

    def replicas_of(self, task: int) -> tuple[int, ...]:
        """The nodes holding ``task``'s input (empty without replicas)."""
        if self.replicas is None:
            return ()
        nodes = self.replicas[task]
        return tuple(nodes.tolist()) if isinstance(nodes, np.ndarray) else nodes

    def build_locality(self, node_rack: Sequence[int]) -> None:
        """Per-node and per-rack stacks of the tasks with replicas (lowest task id on top)."""
        if self.replicas is None:
            return
        self.node_q, self.rack_q = build_stacks(self.replicas, node_rack)

    def drop_locality(self) -> None:
        """Free the locality stacks: the stage completed (:meth:`take` would rebuild them from the
        replicas), or the run has returned (``mropt.sim.run.release_locality``, which drops the
        replicas too: nothing takes a task after it)."""
        self.node_q = self.rack_q = None

    def requeue_task(self, task: int, node_rack: Sequence[int]) -> None:
        """Put a task back to pending, on top of every stack that can serve it."""
        self.state[task] = PENDING
        self.pending += 1
        self.requeue.append(task)
        if self.node_q is not None and self.rack_q is not None:
            racks = set()
            for node in self.replicas_of(task):
                self.node_q.push(node, task)
                racks.add(node_rack[node])
            for rack in sorted(racks):
                self.rack_q.push(rack, task)

    def take(self, node: int, rack: int, level: int, node_rack: Sequence[int]) -> tuple[int, int]:
        """A pending task to run on ``node`` at locality ``level`` or better: (task, level got), or (-1, -1).

        Tasks without replicas are taken at any level (level NONE). Preference: node-local,
        rack-local, then any (requeued tasks first, then in task order).
        """
        if self.pending == 0:
            return -1, -1
        if self.replicas is None:
            return self.take_far(node, rack, node_rack)  # (every task is at level NONE)
        if self.node_q is None:
            self.build_locality(node_rack)
        assert self.node_q is not None and self.rack_q is not None
        task = self.node_q.pop(node, self.state)
        if task >= 0:
            return task, NODE
        if level >= RACK:
            task = self.rack_q.pop(rack, self.state)
            if task >= 0:
                return task, RACK
        if level >= ANY:
            return self.take_far(node, rack, node_rack)
        return -1, -1

    def take_far(self, node: int, rack: int, node_rack: Sequence[int]) -> tuple[int, int]:
        """:meth:`take` at level ANY once the stacks of ``node`` and of ``rack`` came up empty: the
        first requeued pending task, else the lowest pending one; (task, level got), or (-1, -1).

        The stacks hold every pending task with a replica on the node or in the rack, so the task
        has none there: its level is ANY (NONE without replicas), what :meth:`level_on` says,
        without reading its replicas (unless an entry named no node: then ``level_on`` itself).
        ``Launches.launch_tasks`` calls this for a run's next tasks on the node once one came
        from here: launches only take pending tasks away, so the stacks stay empty. A stage without
        replicas has no stacks: :meth:`take` is this at every level, its tasks at level NONE
        (``launch_tasks`` makes this scan inline where no task is re-queued, and ``Launches._join_far``
        for a run's next far tasks: a change here is made there too).
        """
        if self.pending == 0:
            return -1, -1
        task = top_pending(self.requeue, self.state)
        if task < 0:
            state, k, n = self.state, self.fresh, self.n
            while k < n and state[k] != PENDING:
                k += 1
            self.fresh = k
            if k == n:
                return -1, -1
            task = k
        replicas = self.replicas
        if replicas is None:
            return task, NONE
        stacks = self.node_q
        if stacks is None or stacks.padded:
            return task, self.level_on(task, node, rack, node_rack)
        if isinstance(replicas, np.ndarray):
            return task, ANY if replicas.shape[1] else NONE
        return task, ANY if len(replicas[task]) else NONE

    def level_on(self, task: int, node: int, rack: int, node_rack: Sequence[int]) -> int:
        """Locality of ``task`` run on ``node`` (in ``rack``): NODE, RACK, ANY, or NONE without replicas."""
        if self.replicas is None:
            return NONE
        nodes = self.replicas_of(task)
        if not nodes:
            return NONE
        if node in nodes:
            return NODE
        for other in nodes:
            if node_rack[other] == rack:
                return RACK
        return ANY


class Job:
    """A job at run time: its stages, status, counters per slot type and outcome."""

    __slots__ = (
        "index",
        "id",
        "submit",
        "deadline",
        "benefit",
        "user",
        "pool",
        "queue",
        "priority",
        "stages",
        "cur",
        "status",
        "reason",
        "running",
        "runnable",
        "remaining",
        "first_start",
        "map_end",
        "finish",
        "map_stage_last",
    )

    def __init__(self, index: int, spec_id: str, submit: float, stages: list[Stage]) -> None:
        self.index = index
        self.id = spec_id
        self.submit = submit
        self.deadline: float | None = None
        self.benefit: float | None = None
        self.user = ""
        self.pool = ""
        self.queue = ""
        self.priority = 0
        self.stages = stages
        self.cur = 0  # first unfinished stage
        self.status = WAITING
        self.reason = ""
        self.running = [0, 0]  # running attempts per slot type
        self.runnable = [0, 0]  # pending tasks of launchable stages per slot type
        self.remaining = [0, 0]  # unfinished tasks per slot type, all stages
        for stage in stages:
            self.remaining[stage.type] += stage.n
        self.first_start: float | None = None
        self.map_end: float | None = None
        self.finish: float | None = None
        # the map phase ends with the last map stage before the first reduce stage
        last = 0
        for k, stage in enumerate(stages):
            if stage.type == REDUCE:
                break
            last = k
        self.map_stage_last = last

    @property
    def n_tasks(self) -> int:
        return sum(s.n for s in self.stages)

    def launchable(self, stype: int, slowstart: float | None) -> Stage | None:
        """The stage of type ``stype`` whose pending tasks may launch now, or None."""
        stages = self.stages
        k = self.cur
        if k >= len(stages):
            return None
        stage = stages[k]
        if stage.type == stype:
            return stage if stage.pending else None
        if slowstart is not None and stype == REDUCE and k + 1 < len(stages):
            nxt = stages[k + 1]
            if nxt.type == REDUCE and stage.finished >= slowstart_threshold(stage.n, slowstart):
                return nxt if nxt.pending else None
        return None


def slowstart_threshold(n_maps: int, slowstart: float) -> int:
    """Maps that must finish before reduces may launch: ceil(slowstart * maps) (Hadoop JobInProgress)."""
    return math.ceil(slowstart * n_maps)


def node_indices(workload: WorkloadInstance) -> tuple[list[str], list[int], list[str], list[float]]:
    """Node ids, rack index per node, rack names (in first-seen order), speed per node."""
    ids: list[str] = []
    racks: list[int] = []
    rack_names: list[str] = []
    rack_index: dict[str, int] = {}
    speeds: list[float] = []
    for spec in workload.nodes:
        if spec.rack not in rack_index:
            rack_index[spec.rack] = len(rack_names)
            rack_names.append(spec.rack)
        for node_id in spec.node_ids:
            ids.append(node_id)
            racks.append(rack_index[spec.rack])
            speeds.append(spec.speed)
    return ids, racks, rack_names, speeds


def build_jobs(
    workload: WorkloadInstance,
    resources: Sequence[str],
    node_index: dict[str, int],
    placed: dict[int, np.ndarray] | None = None,
) -> list[Job]:
    """Run-time jobs of a workload, in the workload's order.

    ``placed`` maps a job index to generated replicas of its first stage's tasks
    (``mropt.sim.placement``), used for tasks that list none.
    """
    jobs: list[Job] = []
    for j, spec in enumerate(workload.jobs):
        stages: list[Stage] = []
        for s, st in enumerate(spec.stages):
            counts = [g.count for g in st.tasks]
            durations = [g.duration for g in st.tasks]
            demands = [tuple(g.demand.get(r, 0.0) for r in resources) if g.demand else None for g in st.tasks]
            replicas: Replicas | None = None
            if any(g.replicas for g in st.tasks):
                listed: list[tuple[int, ...]] = []
                for g in st.tasks:
                    for k in range(g.count):
                        listed.append(tuple(node_index[n] for n in g.replicas_of(k)))
                replicas = listed
            elif s == 0 and placed is not None and j in placed:
                replicas = placed[j]
            stages.append(Stage(s, 0 if st.type == "map" else 1, counts, durations, demands, replicas))
        job = Job(j, spec.id, spec.submit_time, stages)
        job.deadline = spec.deadline
        job.benefit = spec.benefit
        job.user = spec.user
        job.pool = spec.pool_name
        job.queue = spec.queue
        job.priority = spec.priority
        jobs.append(job)
    return jobs
