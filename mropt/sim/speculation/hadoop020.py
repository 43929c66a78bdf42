"""Speculation as Hadoop 0.20 / 1.x does it: ``TaskInProgress.hasSpeculativeTask``.

Source: ``src/mapred/org/apache/hadoop/mapred/TaskInProgress.java`` and ``JobInProgress.
findSpeculativeTask`` of Hadoop 1.0.3 (``../shared/reference/schedulers-and-simulators.md``
sec. 4). A running task of job J gets a backup on tracker X when all hold:

* it has no backup yet (one active attempt);
* its progress is at least 0.2 below the average (``SPECULATIVE_GAP``): the average is J's
  ``mapProgress()`` / ``reduceProgress()``, the mean progress over all tasks of the type,
  finished tasks counting 1 and tasks not started 0 (mropt: over the tasks of the task's
  stage, which is the same for a map-reduce job);
* it started at least 60 s ago (``SPECULATIVE_LAG``, from the task's first dispatch);
* it never ran or failed on X.

Candidates are taken in locality-cache order (maps: node-local to X, rack-local, other racks,
then tasks without input locations; reduces: launch order), **not** by time left, and the
first that qualifies gets the backup. No job-level cap: at most one backup per task.
"""

from __future__ import annotations

from mropt.registry import Param
from mropt.sim.speculation.base import SPECULATIVE_LAG, Speculation, progress
from mropt.sim.speculation.table import register_rule
from mropt.sim.state import MAP, NONE

#: Hadoop 0.20 TaskInProgress.SPECULATIVE_GAP
SPECULATIVE_GAP = 0.2


@register_rule(
    "hadoop-0.20",
    summary="Hadoop 0.20 / 1.x: a task 0.2 behind its stage's average progress, run 60 s, no backup yet",
    source="Hadoop 1.0.3 TaskInProgress.hasSpeculativeTask, JobInProgress.findSpeculativeTask",
    params={
        "gap": Param(float, SPECULATIVE_GAP, "progress below the average a task needs (SPECULATIVE_GAP)", minimum=0.0),
        "lag": Param(float, SPECULATIVE_LAG, "seconds since a task's first dispatch (SPECULATIVE_LAG)", minimum=0.0),
    },
)
class Hadoop020(Speculation):
    """The Hadoop 0.20 / 1.x rule (module docstring)."""

    def __init__(self, *, gap: float, lag: float) -> None:
        super().__init__(gap=gap, lag=lag)
        self.gap = gap
        self.lag = lag

    def choose(self, node: int, stype: int) -> tuple[int, int, int] | None:
        sim = self.sim
        now = sim.now
        rack = sim.node_rack[node]
        for job in self.job_order(stype):
            tasks = self.running[(job, stype)]
            stages = sim.jobs[job].stages
            # the average progress of each stage with running tasks: finished 1, pending 0
            sums: dict[int, float] = {}
            prog: dict[tuple[int, int], float] = {}
            for (stage, task), attempts in tasks.items():
                p = max(progress(sim, a, now) for a in attempts)
                prog[(stage, task)] = p
                sums[stage] = sums.get(stage, 0.0) + p
            average = {s: (stages[s].finished + total) / stages[s].n for s, total in sums.items()}
            ordered = []
            for rank, ((stage, task), attempts) in enumerate(tasks.items()):
                if len(attempts) != 1:
                    continue
                if stype == MAP:
                    level = stages[stage].level_on(task, node, rack, sim.node_rack)
                    ordered.append((3 if level == NONE else level, rank, stage, task, attempts))
                else:
                    ordered.append((0, rank, stage, task, attempts))
            ordered.sort(key=lambda item: (item[0], item[1]))
            for _, _, stage, task, attempts in ordered:
                if now - self.first_dispatch[(job, stage, task)] < self.lag:
                    continue
                if average[stage] - prog[(stage, task)] < self.gap:
                    continue
                if self.ran_on(job, stage, task, attempts, node):
                    continue
                return job, stage, task
        return None
