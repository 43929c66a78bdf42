"""FIFO's offer run: :meth:`Fifo.assign <mropt.sim.policies.fifo.Fifo.assign>` for every node of
an event-mode pass in one loop, its launches planned and started in bulk (speed only).

The rule is ``Fifo.assign``'s (Hadoop 1.0.3 ``JobQueueTaskScheduler.assignTasks``): for each
node, maps up to its tracker's capacity from the first jobs of the queue that have maps, then
at most one reduce from the first job with a reduce. Within a pass no event happens and no
launch ends a job, so what the rule reads stays what it was except for what its own launches
change: the queue, each tracker's capacity (remaining maps; pending plus running reduces) and
the free slots of a node not yet offered stay. The run therefore keeps its own counts of the
launches it planned (pending tasks left, of the cluster and of the job it takes from: jobs are
taken from in queue order, so a pointer per slot type says which), plans each node's tasks as
the rule would launch them, and hands them to :class:`~mropt.sim.launch_runs.LaunchRuns`, which
starts them in the same order with the same attempts and batches (one segment for the tasks of
one job on consecutive nodes, where the rule made a ``launch_tasks`` call per node).

A job whose stage is not eligible there (replicas, re-queued tasks, task groups, demands,
slow-start's early reduces: :meth:`LaunchRuns.eligible`) is never planned: the run starts what
it planned, offers that node by ``Fifo.assign`` itself and goes on from the true counts.

A pass with no reduce pending (most of them) is planned in short loops (:func:`_maps_alone`):
a node takes ``capacity - slots + free`` maps, a number of its slot count and free slots alone,
so the pass's launches are its nodes, each repeated that many times, in order (listed only as
far as the queue's runnable maps go), cut into the runnable maps of the queue's jobs; those jobs
are checked eligible first, so a pass that falls back to the rule lists no slot. A pass with
reduces pending, where every up node has as many reduce slots, is planned in bulk too
(:func:`_with_reduces`): its maps as above, its reduces the first nodes with reduce room, merged
in node order. Both take the free slots off as they list them, a step a node
(:func:`_slots_taken`), and start their segments with ``LaunchRuns.slots_taken_off`` set (the segments do
not lower them a task at a time).

The event logs are the plain pass's (``tests/sim/test_sim_fifo_runs.py``, random workloads);
``make_policy("fifo", without={"runs"})`` or ``reference=True`` turn it off.
"""

from __future__ import annotations

import sys
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from itertools import compress, islice
from typing import TYPE_CHECKING

from mropt.sim.state import MAP, REDUCE

if TYPE_CHECKING:
    from mropt.sim.launch_runs import LaunchRuns, Segment
    from mropt.sim.policies.fifo import Fifo
    from mropt.sim.view import JobView, SimView


def offer_run(policy: Fifo, nodes: Sequence[int], runs: LaunchRuns, map_nodes: Sequence[int] | None = None) -> None:
    """Offer ``nodes`` in order as the event pass's loop would (``EventOffers._pass``): skip a node
    that is down or without a free slot of a type with pending tasks, stop when no task is pending.

    ``map_nodes``: the nodes of ``nodes`` with a free map slot, when ``nodes`` has others (the
    pass's nodes with a free reduce slot): once no reduce is pending, only they can take a task,
    and the run goes on over them alone (the others would be skipped).
    """
    sim = policy.sim
    runnable = sim.runnable
    if not runnable[REDUCE]:
        if _maps_alone(policy, nodes, runs):
            return
    elif _with_reduces(policy, nodes, runs, map_nodes):
        return
    queue, jobs = policy._queue, sim.jobs
    free_map, free_reduce = sim.free
    slots_map, slots_reduce = sim.slots
    total_map, total_reduce = sim.total_slots
    remaining_map = sim.remaining[MAP]  # (no launch changes it)
    reduce_demand = runnable[REDUCE] + sim.busy[REDUCE]  # (a launch moves a reduce from one to the other)
    # a tracker's capacity less its slots, by its slots (``Fifo._tracker_capacity``, which nothing here changes)
    map_room: dict[int, int] = {}
    reduce_room: dict[int, int] = {}
    eligible = runs.eligible
    plan: list[Segment] = []
    seg: list[int] = []  # the nodes of the plan's last segment
    seg_of = 0  # whose the last segment is: 1 the map job's (``m_job``), 2 the reduce job's, 0 another's
    # the counts as the planned launches leave them; a pointer per type into the queue: the job
    # taken from, what it has left (the jobs before it have none left)
    maps, reduces = runnable
    mi = ri = -1
    m_job = r_job = -1
    m_left = r_left = 0
    plain = False  # a node to offer by the rule itself
    left = iter(nodes)
    while True:
        # a node with a free slot is up (a node down has none): the tests of a node are on its slots
        for node in left:
            fm = free_map[node]
            if maps and fm > 0:
                slots = slots_map[node]
                try:
                    available = map_room[slots] + fm
                except KeyError:
                    capacity = min(-(-remaining_map * slots // total_map), slots) if total_map else 0
                    map_room[slots] = capacity - slots
                    available = capacity - slots + fm
                while available > 0:
                    if not m_left:  # the next job of the queue with maps
                        mi += 1
                        while mi < len(queue) and not jobs[queue[mi][2]].runnable[MAP]:
                            mi += 1
                        if mi == len(queue):
                            break
                        m_job = queue[mi][2]
                        if seg_of == 1:
                            seg_of = 0
                        if not eligible(m_job, MAP):
                            plain = True
                            break
                        m_left = jobs[m_job].runnable[MAP]
                    take = available if available < m_left else m_left
                    if seg_of == 1:
                        if take == 1:
                            seg.append(node)
                        else:
                            seg += [node] * take
                    else:
                        seg = [node] * take
                        seg_of = 1
                        plan.append((m_job, MAP, seg))
                    available -= take
                    m_left -= take
                    maps -= take
                fr = free_reduce[node]
            elif reduces:
                fr = free_reduce[node]
                if fr <= 0:
                    continue
            else:
                continue
            if reduces and fr > 0 and not plain:
                slots = slots_reduce[node]
                try:
                    room = reduce_room[slots]
                except KeyError:
                    capacity = min(-(-reduce_demand * slots // total_reduce), slots) if total_reduce else 0
                    room = reduce_room[slots] = capacity - slots
                if room + fr > 0:
                    if not r_left:  # the next job of the queue with reduces
                        ri += 1
                        while ri < len(queue) and not jobs[queue[ri][2]].runnable[REDUCE]:
                            ri += 1
                        if ri < len(queue):
                            r_job = queue[ri][2]
                            if seg_of == 2:
                                seg_of = 0
                            if eligible(r_job, REDUCE):
                                r_left = jobs[r_job].runnable[REDUCE]
                            else:
                                plain = True
                    if r_left:
                        if seg_of == 2:
                            seg.append(node)
                        else:
                            seg = [node]
                            seg_of = 2
                            plan.append((r_job, REDUCE, seg))
                        r_left -= 1
                        reduces -= 1
            if plain:  # a stage the run does not plan for: this node by the rule itself, from the true counts
                runs.start(plan)
                seg_of = 0
                policy.assign(node)
                maps, reduces = runnable
                mi = ri = -1
                m_left = r_left = 0
                plain = False
            if not reduces:
                if not maps:
                    runs.start(plan)
                    return
                if map_nodes is not None:
                    break
        else:
            break
        # no reduce pending, maps are: the rest of the pass is its nodes with a free map slot
        left = iter(map_nodes[bisect_right(map_nodes, node) :])
        map_nodes = None
    runs.start(plan)


def _maps_alone(policy: Fifo, nodes: Sequence[int], runs: LaunchRuns) -> bool:
    """:func:`offer_run` when no reduce is pending (module docstring); False, having launched
    nothing, where a job it would take from is not eligible.

    Node ``n`` takes ``capacity - slots + free`` maps (``Fifo.assign``; none when that is <= 0),
    its capacity ``min(ceil(remaining maps x slots / cluster slots), slots)``
    (``Fifo._tracker_capacity``): the same for every node of as many slots (a node down has 0
    slots and none free), and below its slots only when fewer maps remain than the cluster has slots.

    The jobs taken from are found, and checked eligible, before the nodes' slots are listed: the
    rule takes from a job only while launches are left for it, and a pass launches at most the
    cluster's free map slots (``total_slots - busy``: a slot is free or runs an attempt, a node down
    has neither). Past that bound nothing is checked; a job not eligible below it ends the pass
    unplanned, unless the pass's launches (then counted) stop before that job.
    """
    sim = policy.sim
    total, remaining = sim.total_slots[MAP], sim.remaining[MAP]
    room = None if remaining >= total else _room(policy, remaining, total)
    most = total - sim.busy[MAP]
    jobs = sim.jobs
    takes: list[tuple[int, int]] = []  # the jobs with maps, in queue order, and their runnable maps
    wanted = 0
    for entry in policy._queue:
        if wanted >= most:
            break
        job = entry[2]
        left = jobs[job].runnable[MAP]
        if left:
            if not runs.eligible(job, MAP):
                if wanted < _launches(sim, nodes, room):
                    return False
                break
            takes.append((job, left))
            wanted += left
    if not takes:
        return True
    taken = _slots_taken(runs, nodes, room, wanted if wanted < most else None)
    runs.slots_taken_off = True  # (``_slots_taken`` took the slots off: the segments leave them alone)
    try:
        if len(takes) == 1:  # (most passes: one job's maps, one segment, started without a plan)
            if taken:
                runs.segment(takes[0][0], MAP, taken)
            return True
        plan: list[Segment] = []
        i, n = 0, len(taken)
        for job, left in takes:  # the pass's launches cut into the jobs' runnable maps
            if i >= n:
                break
            plan.append((job, MAP, taken[i : i + left]))
            i += left
        runs.start(plan)
    finally:
        runs.slots_taken_off = False
    return True


def _with_reduces(policy: Fifo, nodes: Sequence[int], runs: LaunchRuns, map_nodes: Sequence[int] | None) -> bool:
    """:func:`offer_run` when reduces are pending, planned in bulk; False, having launched nothing,
    where the nodes' reduce slot counts differ or a job it would take from is not eligible.

    The rule's two choices at a node are independent: its maps (``capacity - slots + free`` of
    them, :func:`_maps_alone`) read the map counts alone, its reduce (one when ``free > slots -
    capacity``, ``Fifo._tracker_capacity``, which no launch of the pass changes) the reduce
    counts alone. So the pass's map launches are :func:`_slots_taken` over the nodes, its reduces
    the first ``runnable[REDUCE]`` nodes with reduce room, each list cut into its jobs' runnable
    tasks in queue order, and its plan is the two merged in node order (a node's maps before its
    reduce), one segment for each run of launches of one job and type, as the loop makes them.
    """
    sim = policy.sim
    maps, reduces = sim.runnable
    jobs, queue, eligible = sim.jobs, policy._queue, runs.eligible
    total_reduce = sim.total_slots[REDUCE]
    counts = policy._reduce_slot_counts
    if len(counts) != 2 or not total_reduce:  # (0 and the one count of the up nodes)
        return False
    s = max(counts)
    above = s - min(-(-(reduces + sim.busy[REDUCE]) * s // total_reduce), s)  # a node takes one with more free
    free = sim.free[REDUCE]
    if type(nodes) is range and nodes == range(len(free)):
        room = compress(nodes, map(above.__lt__, free))
    else:
        room = compress(nodes, map(above.__lt__, map(free.__getitem__, nodes)))
    reduce_nodes = list(islice(room, reduces))
    reduce_jobs = _cut(jobs, queue, eligible, REDUCE, len(reduce_nodes))
    if reduce_jobs is None:
        return False
    taken: list[int] = []
    map_jobs: list[tuple[int, int]] = []
    if maps:
        total, remaining = sim.total_slots[MAP], sim.remaining[MAP]
        most = total - sim.busy[MAP]
        taken = _slots_taken(
            runs,
            nodes if map_nodes is None else map_nodes,
            None if remaining >= total else _room(policy, remaining, total),
            maps if maps < most else None,
        )
        cut = _cut(jobs, queue, eligible, MAP, len(taken))
        if cut is None:
            _give_back(runs, taken, 0)
            return False
        map_jobs = cut
    plan: list[Segment] = []
    i = k = 0  # the next map launch, the next reduce launch
    mj = rj = 0  # their jobs (in ``map_jobs``, ``reduce_jobs``)
    n_maps, n_reduces = (map_jobs[-1][1] if map_jobs else 0), (reduce_jobs[-1][1] if reduce_jobs else 0)
    # every slot listed is a launch (the queue's runnable tasks are the cluster's: ``_slots_taken``)
    assert n_maps == len(taken) and n_reduces == len(reduce_nodes)
    free_reduce = runs.sim.free[REDUCE]
    for node in reduce_nodes:  # the reduce slots taken off too (the segments start with ``slots_taken_off`` set)
        free_reduce[node] -= 1
    while i < n_maps or k < n_reduces:
        if k < n_reduces and (i == n_maps or reduce_nodes[k] < taken[i]):  # reduces before the next map's node
            job, end = reduce_jobs[rj]
            if i < n_maps:
                end = min(end, bisect_left(reduce_nodes, taken[i], k))
            plan.append((job, REDUCE, reduce_nodes[k:end]))
            k = end
            if k == reduce_jobs[rj][1]:
                rj += 1
        else:  # maps up to the next reduce's node, its own included
            job, end = map_jobs[mj]
            if k < n_reduces:
                end = min(end, bisect_right(taken, reduce_nodes[k], i))
            plan.append((job, MAP, taken[i:end]))
            i = end
            if i == map_jobs[mj][1]:
                mj += 1
    runs.slots_taken_off = True
    try:
        runs.start(plan)
    finally:
        runs.slots_taken_off = False
    return True


def _cut(
    jobs: Sequence[JobView],
    queue: list[tuple[int, float, int]],
    eligible: Callable[[int, int], bool],
    stype: int,
    n: int,
) -> list[tuple[int, int]] | None:
    """The queue's jobs that ``n`` launches of ``stype`` take from, in order, each with the index
    its launches end at (the last one's at most ``n``); None if one of them is not eligible."""
    cut: list[tuple[int, int]] = []
    end = 0
    for entry in queue:
        if end >= n:
            break
        job = entry[2]
        left = jobs[job].runnable[stype]
        if left:
            if not eligible(job, stype):
                return None
            end = end + left if end + left < n else n
            cut.append((job, end))
    return cut


def _room(policy: Fifo, remaining: int, total: int) -> dict[int, int]:
    """Each map slot count's ``capacity - slots`` (<= 0) when fewer maps remain than the cluster has slots."""
    room = {}
    for s in policy._map_slot_counts:
        capacity = -(-remaining * s // total)
        room[s] = capacity - s if capacity < s else 0
    return room


def _launches(sim: SimView, nodes: Sequence[int], room: dict[int, int] | None) -> int:
    """How many maps ``nodes`` take (``room``: as for :func:`_slots_taken`), counted, not listed."""
    free = sim.free[MAP]
    if room is None:
        return sum(map(free.__getitem__, nodes))  # (free slots are never negative)
    slots = sim.slots[MAP]
    return sum(a for a in (free[node] + room[slots[node]] for node in nodes) if a > 0)


def _slots_taken(runs: LaunchRuns, nodes: Sequence[int], room: dict[int, int] | None, wanted: int | None) -> list[int]:
    """Every node of ``nodes`` repeated as many times as it takes maps, in order: the pass's launches
    (``room``: :func:`_room`; None when every capacity is its slots: a node takes its free slots).
    The slots listed are taken off (``free[node]`` lowered as the node is listed), and the callers
    start their segments with :attr:`~mropt.sim.launch_runs.LaunchRuns.slots_taken_off` set: one step a node,
    not one a task in :meth:`~mropt.sim.launch_runs.LaunchRuns.segment`.

    ``wanted``: the runnable maps the pass takes from, when fewer than the cluster's free map slots
    (None otherwise): the list stops once it holds that many, since the nodes after take none, and
    is cut at that many (the slots of the last node past it given back). Every slot listed is then
    a launch: without ``wanted`` the list is at most the cluster's free map slots, fewer than the
    runnable maps."""
    sim = runs.sim  # (the engine: the slots are its own, which the policy's view only reads)
    free = sim.free[MAP]
    taken: list[int] = []
    if room is None and wanted is None:  # (most passes) every free slot of the nodes
        for node in nodes:
            available = free[node]
            if available == 1:
                taken.append(node)
                free[node] = 0
            elif available == 2:  # (two appends: no list made and repeated)
                taken.append(node)
                taken.append(node)
                free[node] = 0
            elif available > 2:
                taken += [node] * available
                free[node] = 0
        return taken
    slots = sim.slots[MAP]
    limit = sys.maxsize if wanted is None else wanted
    for node in nodes:
        available = free[node] if room is None else free[node] + room[slots[node]]
        if available == 1:
            taken.append(node)
            free[node] -= 1
        elif available == 2:
            taken.append(node)
            taken.append(node)
            free[node] -= 2
        elif available > 2:
            taken += [node] * available
            free[node] -= available
        else:
            continue
        if len(taken) >= limit:
            if len(taken) > limit:
                _give_back(runs, taken, limit)
            break
    return taken


def _give_back(runs: LaunchRuns, taken: list[int], n: int) -> None:
    """Launch only ``taken[:n]`` (:func:`_slots_taken` took every slot of ``taken`` off): the others' slots
    are free again, and the list is cut."""
    free = runs.sim.free[MAP]
    for node in taken[n:]:
        free[node] += 1
    del taken[n:]
