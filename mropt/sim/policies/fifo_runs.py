"""FIFO's offer run: :meth:`Fifo.assign <mropt.sim.policies.fifo.Fifo.assign>` for every node of
an event-mode pass in one loop, its launches planned and started in bulk (speed only).

The rule is ``Fifo.assign``'s (Hadoop 1.0.3 ``JobQueueTaskScheduler.assignTasks``): for each
node, maps up to its tracker's capacity from the first jobs of the queue that have maps, then
at most one reduce from the first job with a reduce. Within a pass no event happens and no
launch ends a job, so what the rule reads stays what it was except for what its own launches
change: the queue, each tracker's capacity (remaining maps; pending plus running reduces) and
the free slots of a node not yet offered. The run therefore keeps its own counts of the
launches it planned (pending tasks left, of the cluster and of the job it takes from: jobs are
taken from in queue order, so a pointer per slot type says where), plans each node's tasks as
the rule would launch them, one call each, and hands them to :class:`~mropt.sim.launch_runs.LaunchRuns`,
which starts them in the same order with the same attempts and batches.

A job whose stage is not eligible there (replicas, re-queued tasks, task groups, demands,
slow-start's early reduces: :meth:`LaunchRuns.eligible`) is never planned: the run starts what
it planned, offers that node by ``Fifo.assign`` itself and goes on from the true counts. The
result is the plain pass's (``tests/sim/test_sim_fifo_runs.py`` compares the event logs on
random workloads); ``make_policy("fifo", without={"runs"})`` or ``reference=True`` turn it off.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from mropt.sim.state import MAP, REDUCE

if TYPE_CHECKING:
    from mropt.sim.launch_runs import LaunchRuns, Segment
    from mropt.sim.policies.fifo import Fifo


def offer_run(policy: Fifo, nodes: Sequence[int], held: set[int], runs: LaunchRuns) -> int:
    """Offer ``nodes`` in order as the event pass's loop would (``mropt.sim.offers``): skip a node
    that is down, hold one without a free slot of a type with pending tasks, stop when no task is
    pending; the number of nodes gone through before stopping (``len(nodes)`` when none)."""
    sim = policy.sim
    queue, jobs = policy._queue, sim.jobs
    runnable = sim.runnable
    free_map, free_reduce = sim.free
    slots_map, slots_reduce = sim.slots
    node_up = sim.node_up
    total_map, total_reduce = sim.total_slots
    remaining_map = sim.remaining[MAP]  # (no launch changes it)
    reduce_demand = runnable[REDUCE] + sim.busy[REDUCE]  # (a launch moves a reduce from one to the other)
    eligible = runs.eligible
    plan: list[Segment] = []
    seg_job, seg_type, seg = -1, -1, [0]  # the last segment of the plan: its job, its type, its nodes
    # the counts as the planned launches leave them; a pointer per type into the queue: the job
    # taken from, what it has left (the jobs before it have none left)
    maps, reduces = runnable
    mi = ri = -1
    m_left = r_left = 0
    for i, node in enumerate(nodes):
        if maps + reduces == 0:
            runs.start(plan)
            return i
        if not node_up[node]:
            continue
        fm, fr = free_map[node], free_reduce[node]
        if not ((maps and fm > 0) or (reduces and fr > 0)):
            held.add(node)
            continue
        plain = False
        if maps and fm > 0:
            slots = slots_map[node]
            capacity = min(-(-remaining_map * slots // total_map), slots) if total_map else 0
            available = capacity - (slots - fm)
            while available > 0:
                if not m_left:  # the next job of the queue with maps
                    mi += 1
                    while mi < len(queue) and not jobs[queue[mi][2]].runnable[MAP]:
                        mi += 1
                    if mi == len(queue):
                        break
                    job = queue[mi][2]
                    if not eligible(job, MAP):
                        plain = True
                        break
                    m_left = jobs[job].runnable[MAP]
                job = queue[mi][2]
                take = available if available < m_left else m_left
                if job == seg_job and seg_type == MAP:
                    seg += [node] * take
                else:
                    seg_job, seg_type, seg = job, MAP, [node] * take
                    plan.append((job, MAP, seg))
                available -= take
                m_left -= take
                maps -= take
        if (
            not plain
            and reduces
            and fr > 0
            and total_reduce
            and min(-(-reduce_demand * slots_reduce[node] // total_reduce), slots_reduce[node])
            - (slots_reduce[node] - fr)
            > 0
        ):
            if not r_left:  # the next job of the queue with reduces
                ri += 1
                while ri < len(queue) and not jobs[queue[ri][2]].runnable[REDUCE]:
                    ri += 1
            if ri < len(queue):
                job = queue[ri][2]
                if r_left or eligible(job, REDUCE):
                    if not r_left:
                        r_left = jobs[job].runnable[REDUCE]
                    if job == seg_job and seg_type == REDUCE:
                        seg.append(node)
                    else:
                        seg_job, seg_type, seg = job, REDUCE, [node]
                        plan.append((job, REDUCE, seg))
                    r_left -= 1
                    reduces -= 1
                else:
                    plain = True
        if plain:  # a stage the run does not plan for: this node by the rule itself, from the true counts
            runs.start(plan)
            seg_job = -1
            policy.assign(node)
            maps, reduces = runnable
            mi = ri = -1
            m_left = r_left = 0
    runs.start(plan)
    return len(nodes)
