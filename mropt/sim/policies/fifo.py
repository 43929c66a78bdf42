"""FIFO: Hadoop 1.0.3's default ``JobQueueTaskScheduler``.

Source: ``src/mapred/org/apache/hadoop/mapred/JobQueueTaskScheduler.java`` (Hadoop 1.0.3;
``../shared/reference/schedulers-and-simulators.md`` sec. 3c):

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

from mropt.sim.policy import ACCEPT, HEARTBEAT, Admission, Policy, register_policy
from mropt.sim.state import ANY, MAP, RACK, REDUCE
from mropt.sim.view import SimView


@register_policy(
    "fifo",
    summary="Hadoop 1.0.3 FIFO (JobQueueTaskScheduler): priority, then submit order; one off-switch map per heartbeat",
    source="Hadoop 1.0.3 JobQueueTaskScheduler",
)
class Fifo(Policy):
    mode = HEARTBEAT

    def start(self, sim: SimView) -> None:
        super().start(sim)
        self._queue: list[tuple[int, float, int]] = []  # (-priority, submit, job), sorted

    def on_arrival(self, job: int) -> Admission:
        j = self.sim.jobs[job]
        insort(self._queue, (-j.priority, j.submit, job))
        return ACCEPT

    def on_job_end(self, job: int) -> None:
        j = self.sim.jobs[job]
        self._queue.remove((-j.priority, j.submit, job))

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
        queue = [entry[2] for entry in self._queue]  # a copy: launches may end jobs
        if sim.runnable[MAP] and sim.free[MAP][node] > 0:
            running = sim.slots[MAP][node] - sim.free[MAP][node]
            available = self._tracker_capacity(MAP, node) - running
            while available > 0:
                launched = False
                off_switch = False
                for j in queue:
                    if not sim.launchable(j, MAP):
                        continue
                    # up to `available` local maps of the first job in one call: what that
                    # many one-slot rounds would launch (each would pick this job again)
                    if sim.launch(j, node, MAP, RACK, count=available) >= 0:
                        available -= sim.launched
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
        if sim.runnable[REDUCE] and sim.free[REDUCE][node] > 0:
            running = sim.slots[REDUCE][node] - sim.free[REDUCE][node]
            if self._tracker_capacity(REDUCE, node) - running > 0:
                for j in queue:
                    if sim.launchable(j, REDUCE) and sim.launch(j, node, REDUCE, ANY) >= 0:
                        break
