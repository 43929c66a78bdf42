"""Launch runs: fresh tasks a policy's offer run planned, started in bulk (speed only).

In event mode a pass offers many nodes in a row (:mod:`mropt.sim.offers`), and on a saturated
slot cluster each takes one task, mostly of the same stage as the node before it: one
:meth:`~mropt.sim.launches.Launches.launch_tasks` call per node, about 1 us of Python each, was
most of the FIFO model's run (``benchmarks/RESULTS.md``, issue 32). A policy that can say in
advance what its rule would launch on each node of a pass (an *offer run*, ``Fifo``'s
:mod:`mropt.sim.policies.fifo_runs`) hands the launches to :class:`LaunchRuns` instead: a
*segment* is a job, a slot type and the nodes that take one task each, in launch order (a node
repeated for several tasks), and :meth:`LaunchRuns.start` starts each segment's tasks in one
step, with what ``launch_tasks`` would have made of them call by call: the same tasks (the
fresh pointer's next ones), the same attempt ids, the same batch joins (the first task joins
the open batch when it may, the others join the first: :mod:`mropt.sim.attempts`), the same
counters, slots and recorded starts.

That holds only where a launch cannot fail and every task of the stage runs alike, so a run
is *allowed* (:func:`allowed`) on slots, with batches on, no speculation rule, no straggler
draws and one node speed; and a stage is *eligible* (:meth:`LaunchRuns.eligible`) when it is
its active job's current stage, of the slot type, without replicas (no locality: every task is
the fresh pointer's), without re-queued tasks, with one task group without demands, and its
pending tasks are the job's runnable ones. An eligible stage's pending tasks are the fresh
pointer's task or the one after it, and every task after that: ``Stage.take`` without replicas
takes a re-queued task (one below the pointer, on the list while it is pending, and the list is
empty) or the pointer's next one, so :meth:`LaunchRuns.segment` takes them from there unsearched
(``tests/sim/test_sim_launch_runs_fresh.py``). A policy plans only for eligible stages and the
nodes it knows have the free slots, and offers a node by its plain rule otherwise (after
:meth:`LaunchRuns.start`, so that the launches keep their order). A policy that lowers the nodes'
free slots itself as it lists them (a step a node where the segment takes one a task: FIFO's
``_slots_taken``) starts its segments with :attr:`LaunchRuns.slots_taken_off` set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mropt.sim.attempts import Attempt
from mropt.sim.state import ACTIVE, NONE, PENDING, RUNNING

if TYPE_CHECKING:
    from mropt.sim.engine import Simulation

#: a planned segment: (job, slot type, the nodes taking one task each, in launch order); the nodes'
#: list is the segment's own from then on (a batch it opens keeps it as its members' nodes)
Segment = tuple[int, int, list[int]]

_new = object.__new__
_RUNNING = bytearray([RUNNING])  # (a bytearray: a slice set from bytes would copy them into one first)
#: ``_RUNNING * c`` for the segments of fewer than 64 tasks, made once (a repeat makes a new one each time)
_RUNNINGS = [_RUNNING * c for c in range(64)]


def allowed(sim: Simulation) -> bool:
    """Whether launch runs may start this run's launches (module docstring)."""
    return (
        sim.uses_slots
        and sim.batches.on
        and sim.speculation is None
        and sim.timing.rate == 0
        and len(set(sim.node_speed)) <= 1
    )


class LaunchRuns:
    """The bulk start of planned segments for one run (module docstring)."""

    def __init__(self, sim: Simulation) -> None:
        from mropt.sim.offers import C_DONE, EV_DONE  # (offers imports this module)

        self.sim = sim
        #: the caller took the free slots of the segments' nodes off as it listed them (one less
        #: a task: ``fifo_runs._slots_taken``), so :meth:`segment` does not; set only while it starts them
        self.slots_taken_off = False
        self._c_done, self._ev_done = C_DONE, EV_DONE  # a completion's event class and kind

    def eligible(self, job: int, stype: int) -> bool:
        """Whether ``job``'s tasks of ``stype`` that may launch now are an eligible stage's (module docstring)."""
        j = self.sim.jobs[job]
        stages, k = j.stages, j.cur
        if j.status != ACTIVE or k >= len(stages):
            return False
        st = stages[k]
        return (
            st.type == stype
            and st.replicas is None
            and not st.requeue
            and len(st.durations) == 1
            and len(st.demands) == 1
            and st.demands[0] is None
            and st.pending == j.runnable[stype]
        )

    def start(self, plan: list[Segment]) -> None:
        """Start the segments of ``plan`` in order, and empty it."""
        for job, stype, nodes in plan:
            self.segment(job, stype, nodes)
        plan.clear()

    def segment(self, job: int, stype: int, nodes: list[int]) -> None:
        """One task of an eligible stage of ``job`` on each of ``nodes``, as ``launch_tasks`` would start them.

        The first task joins the open batch when it may, the others join it; else the first opens
        a batch (``Launches._start``: an attempt, its completion scheduled) that the others join,
        made here with all its members at once. The attempt time is ``AttemptTime.of``'s for one
        task group at locality ``NONE`` without a straggler draw (the run has one node speed).
        The nodes' free slots are lowered here, a task at a time, unless the caller took them off
        already (:attr:`slots_taken_off`).
        """
        sim = self.sim
        j = sim.jobs[job]
        stage = j.stages[j.cur]
        state = stage.state
        c = len(nodes)
        k = stage.fresh  # the fresh pointer's next task (``launch_tasks``): it, or the one after it
        t0 = k if state[k] == PENDING else k + 1  # (and the tasks after it are pending: module docstring)
        work = stage.durations[0] / sim.timing.speed[nodes[0]]
        now = sim.now
        batches = sim.batches
        o = batches.open
        aid = sim.next_attempt
        sim.next_attempt = aid + c
        live = sim._live
        if (
            o is not None
            and o.work == work
            and o.start == now
            and batches.stage is stage
            and o.level == NONE
            and o.demand is None
        ):  # every task joins the open batch
            tasks = o.tasks
            if tasks is None:
                o.tasks = range(t0 - 1, t0 + c) if o.task == t0 - 1 else [o.task, *range(t0, t0 + c)]
                o.nodes = [o.node, *nodes]
            else:
                if type(tasks) is range:  # consecutive tasks stay a range while they can
                    o.tasks = range(tasks.start, t0 + c) if tasks.stop == t0 else [*tasks, *range(t0, t0 + c)]
                else:
                    tasks.extend(range(t0, t0 + c))
                o.nodes.extend(nodes)  # type: ignore[union-attr]
            o.n += c
            o.live += c
        else:  # the first task opens a batch that the others join
            # ``Attempt(aid, job, stage.index, t0, nodes[0], stype, now, NONE, False, work, None)``, its
            # slots set here (no ``__init__`` call through the type: ``test_sim_fifo_slots_off.py``)
            o = _new(Attempt)
            o.id = aid
            o.job = job
            o.stage = stage.index
            o.task = t0
            o.node = nodes[0]
            o.type = stype
            o.start = now
            o.end = end = now + work
            o.level = NONE
            o.speculative = False
            o.work = work
            o.demand = None
            o.n = o.live = c
            if c > 1:
                o.tasks = range(t0, t0 + c)
                o.nodes = nodes  # (the segment's own list: ``Segment``)
            else:
                o.tasks = o.nodes = None
            o.dead = None
            sim.push(end, self._c_done, self._ev_done, o)
            batches.open = o
            batches.stage = stage
            if j.first_start is None:
                j.first_start = now
        if c == 1:
            live[aid] = o
        else:
            for i in range(aid, aid + c):
                live[i] = o
        state[t0 : t0 + c] = _RUNNINGS[c] if c < 64 else _RUNNING * c
        stage.fresh = t0 + c - 1
        stage.pending -= c
        j.runnable[stype] -= c
        sim.runnable[stype] -= c
        stage.running += c
        j.running[stype] += c
        sim.busy[stype] += c
        if not self.slots_taken_off:
            free = sim.free[stype]
            for node in nodes:
                free[node] -= 1
        if sim._rows_live:
            record = sim.record
            for _ in range(c):
                record.started(o, j)
