"""FIFO: Hadoop 1.0.3's default ``JobQueueTaskScheduler``.

Source: ``src/mapred/org/apache/hadoop/mapred/JobQueueTaskScheduler.java`` of Hadoop 1.0.3:

* jobs in order of priority (higher first), then submit time, then job id
  (``JobQueueJobInProgressListener.FIFO_JOB_QUEUE_COMPARATOR``);
* a tracker runs at most ``ceil(load factor x its slots)`` maps, where the load factor is the
  remaining maps of the running jobs over the cluster's map slots (likewise reduces);
* for each free map slot, the first job with a node- or rack-local map gets the slot; else
  the first job with any map gets it, and that off-switch map ends the heartbeat's map
  assignment (at most one non-local map per heartbeat);
* at most one reduce per heartbeat, from the first job with a launchable reduce.

Not modelled: the padding rule (``mapred.jobtracker.taskalloc.capacitypad``), which keeps
slots free for speculative and failed tasks beyond the first job. Tasks without input
replicas are never off-switch (they have no locality to lose), so they do not stop the
heartbeat.
"""

from __future__ import annotations

from bisect import insort
from functools import partial
from typing import TYPE_CHECKING

from mropt.sim.policies import fifo_runs
from mropt.sim.policy import ACCEPT, HEARTBEAT, Admission, Policy, register_policy
from mropt.sim.state import ANY, MAP, RACK, REDUCE
from mropt.sim.view import SimView

if TYPE_CHECKING:
    from mropt.sim.offers import OfferRun


@register_policy(
    "fifo",
    summary="Hadoop 1.0.3 FIFO (JobQueueTaskScheduler): priority, then submit order; one off-switch map per heartbeat",
    source="Hadoop 1.0.3 JobQueueTaskScheduler",
    needs=("slots",),
)
class Fifo(Policy):
    """``assign`` is the rule, node by node; ``offer_run`` the same for an event-mode pass's nodes in
    one loop, its launches started in bulk (:mod:`mropt.sim.policies.fifo_runs`: the acceleration
    ``runs``, off under ``reference=True`` or ``without={"runs"}``)."""

    mode = HEARTBEAT
    accelerations = ("runs",)

    def start(self, sim: SimView) -> None:
        super().start(sim)
        self._queue: list[tuple[int, float, int]] = []  # (-priority, submit, job), sorted
        #: the offer run of an event pass (``mropt.sim.offers``), None when ``runs`` is off
        self.offer_run: OfferRun | None = None
        if not self.reference and "runs" not in self.without:
            self.offer_run = partial(fifo_runs.offer_run, self)
            #: the map slot counts a node may have (0: down), for ``fifo_runs._maps_alone``
            self._map_slot_counts = {0, *sim.slots[MAP]}
            #: the reduce slot counts a node may have, for ``fifo_runs._with_reduces``
            self._reduce_slot_counts = {0, *sim.slots[REDUCE]}

    def on_arrival(self, job: int) -> Admission:
        j = self.sim.jobs[job]
        insort(self._queue, (-j.priority, j.submit, job))
        return ACCEPT

    def on_job_end(self, job: int) -> None:
        j = self.sim.jobs[job]
        self._queue.remove((-j.priority, j.submit, job))

    def job_order(self, stype: int) -> list[int]:
        """The queue's order (priority, submit, id): the order speculation visits jobs in (mropt.sim.speculation)."""
        return [entry[2] for entry in self._queue]

    def _tracker_capacity(self, stype: int, node: int) -> int:
        """ceil(load factor x tracker slots), capped at the tracker's slots (JobQueueTaskScheduler.assignTasks)."""
        sim = self.sim
        total = sim.total_slots[stype]
        if total == 0:
            return 0
        # maps: desired - finished maps of the running jobs; reduces: of the jobs that schedule
        # their reduces (running or launchable ones)
        remaining = sim.remaining[MAP] if stype == MAP else sim.runnable[REDUCE] + sim.busy[REDUCE]
        slots = sim.slots[stype][node]
        return min(-(-remaining * slots // total), slots)

    def assign(self, node: int) -> None:
        sim = self.sim
        runnable, free = sim.runnable, sim.free
        # no launch ends a job, so the queue cannot change while this runs; a job's
        # ``runnable[type]`` counts the pending tasks it may launch now (0: skip it)
        queue, jobs = self._queue, sim.jobs
        if runnable[MAP] and free[MAP][node] > 0:
            total, slots = sim.total_slots[MAP], sim.slots[MAP][node]
            # _tracker_capacity(MAP, node), inline: this runs for every offered node
            capacity = min(-(-sim.remaining[MAP] * slots // total), slots) if total else 0
            available = capacity - (slots - free[MAP][node])
            while available > 0:
                launched = False
                off_switch = False
                for entry in queue:
                    j = entry[2]
                    if not jobs[j].runnable[MAP]:
                        continue
                    # up to `available` local maps of the first job in one call: what that
                    # many one-slot rounds would launch (each would pick this job again)
                    _, started, _, _ = sim.launch_tasks(j, node, MAP, RACK, available)
                    if started:
                        available -= started
                        launched = True
                        break
                    aid = sim.launch(j, node, MAP, ANY)
                    if aid >= 0:
                        available -= 1
                        launched = True
                        off_switch = sim.running[aid].level > RACK
                        break
                if not launched or off_switch:
                    break
        if (
            runnable[REDUCE]
            and free[REDUCE][node] > 0
            and self._tracker_capacity(REDUCE, node) - (sim.slots[REDUCE][node] - free[REDUCE][node]) > 0
        ):
            for entry in queue:
                j = entry[2]
                if jobs[j].runnable[REDUCE] and sim.launch(j, node, REDUCE, ANY) >= 0:
                    break
