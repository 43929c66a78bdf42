"""Each attempt row's task group, found for millions of rows at once (the tables of a long run).

A stage's tasks come in groups (``WorkloadTaskGroup``: a count of tasks with one duration,
demand and input size); ``Stage.demand_of`` finds a task's group by ``bisect_right`` over the
groups' first tasks. :class:`TaskGroups` numbers every group of every stage of every job and
finds the groups of many rows ``(job, stage, task)`` with one ``searchsorted`` over the flat
first tasks: the last group starting at or before the task, as ``bisect_right`` finds it (an
empty group is skipped the same way). Used by ``tasks.parquet``'s ``input_mb`` and
``demand_<name>`` columns (:mod:`mropt.sim.tasks_table`) and the recorder's spans
(:meth:`mropt.sim.ended_attempts.EndedAttempts.spans`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from mropt.model.workload import WorkloadJob
    from mropt.sim.state import Job


class TaskGroups:
    """The task groups of every stage of every job, numbered in job, stage and group order."""

    def __init__(self, jobs: Sequence[Sequence[Sequence[int]]]) -> None:
        """``jobs``: per job, per stage, its groups' task counts."""
        job_stage: list[int] = []  # job -> flat index of its first stage
        stage_task: list[int] = []  # flat stage -> flat index of its first task
        starts: list[int] = []  # flat group -> flat index of its first task
        tasks = 0
        one_each = True
        for stages in jobs:
            job_stage.append(len(stage_task))
            for counts in stages:
                stage_task.append(tasks)
                one_each = one_each and len(counts) == 1
                for count in counts:
                    starts.append(tasks)
                    tasks += count
        self.job_stage = np.array(job_stage, dtype=np.int64)
        self.stage_task = np.array(stage_task, dtype=np.int64)
        self.starts = np.array(starts, dtype=np.int64)
        #: every stage one group: a stage's flat index is its group's (no search; the Alibaba day's shape)
        self.one_each = one_each

    def of(self, job: np.ndarray, stage: np.ndarray, task: np.ndarray) -> np.ndarray:
        """The flat group of each row's task (the last group starting at or before it)."""
        if self.one_each:
            return self.job_stage[job] + stage
        first = self.stage_task[self.job_stage[job] + stage]
        return np.searchsorted(self.starts, first + task, side="right") - 1


def demand_groups(jobs: Sequence[Job], n_res: int) -> tuple[TaskGroups, np.ndarray]:
    """The run-time stages' groups (``Stage.offsets``) and each one's demand (groups x ``n_res``;
    0 for a group without demand), as ``Stage.demand_of`` gives it."""
    groups = TaskGroups([[_counts(st.offsets, st.n) for st in job.stages] for job in jobs])
    zero = (0.0,) * n_res
    held = [d or zero for job in jobs for st in job.stages for d in st.demands]
    return groups, np.array(held, dtype=float).reshape(len(held), n_res)


def _counts(offsets: list[int], n: int) -> list[int]:
    """The groups' task counts of a stage of ``n`` tasks whose groups start at ``offsets`` (in plain
    Python: ``np.diff`` costs a microsecond a call, and a day has 100,000s of stages)."""
    return [b - a for a, b in zip(offsets, [*offsets[1:], n])]


def input_groups(jobs: Sequence[WorkloadJob]) -> tuple[TaskGroups, np.ndarray]:
    """The workload's groups and the MB each task of one reads: ``task_input_mb`` in a map
    stage, NaN in a reduce stage."""
    groups = TaskGroups([[[g.count for g in st.tasks] for st in job.stages] for job in jobs])
    mb = [g.task_input_mb if st.type == "map" else np.nan for job in jobs for st in job.stages for g in st.tasks]
    return groups, np.array(mb, dtype=float)


__all__ = ["TaskGroups", "demand_groups", "input_groups"]
