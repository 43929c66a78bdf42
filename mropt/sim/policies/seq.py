"""SEQ: execute an admission plan on the cluster (AMB sec. 4.1).

The plan is an admission method's answer: the accepted jobs and their map sequence S
(Definition 1), e.g. a solution file written by ``mropt solve --json`` (``--plan``). Jobs
outside the plan are rejected at arrival. On the cluster the SEQ strategy is:

* a free map slot goes to the first job of S that has a map task to launch (sec. 4.1,
  step 1; Theorem 1: the maps of S complete in sequence order);
* a free reduce slot goes to the job of earliest deadline among those whose reduces are
  ready (sec. 4.1, step 2; ties by position in S).

Choices: a job of S that has not been submitted yet is skipped (its slots go to the next
job of S with maps, so the cluster is work conserving where the SEQ model waits; since
tasks are not preempted, the early job's tasks may then delay the late one by up to a task
time); an accepted job without a deadline
(a plan built outside the admission model) gets its reduces last. Tasks are not
preempted: a reduce running when a job of earlier deadline becomes ready keeps its slot
(the model's reduce stage is preemptive EDF, so the cluster matches it exactly only when
the reduce work divides evenly into the slots and stages do not overlap).

:meth:`Seq.plan_times` gives the SEQ model's prediction of the plan (COTm and COTr per
job, :func:`mropt.admission.seq.evaluate` on the admission instance of the workload,
:func:`mropt.instances.workload_convert.to_admission`), or None when the workload does
not convert.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mropt.admission.seq import evaluate
from mropt.instances.workload_convert import to_admission
from mropt.model.admission import AdmissionInstance
from mropt.model.errors import InputError
from mropt.model.io import read_json
from mropt.model.solution import Solution
from mropt.registry import Param
from mropt.sim.policy import EVENT, Admission, Policy, register_policy
from mropt.sim.state import ACTIVE, ANY, MAP, REDUCE, WAITING
from mropt.sim.view import SimView


def load_plan(path: str) -> Solution:
    """A solution file (``mropt solve --json``) as a :class:`Solution`; InputError naming the file."""
    data = read_json(path)
    try:
        return Solution.from_dict(data, kind="admission")
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None


def admission_of(sim: SimView) -> AdmissionInstance | None:
    """The admission instance of the simulated workload, or None when it does not convert."""
    try:
        return to_admission(sim.workload)
    except InputError:
        return None


class SeqExecutor(Policy):
    """Runs jobs by the SEQ strategy over ``self.sequence`` (job indices); see the module docstring."""

    mode = EVENT

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.sequence: list[int] = []
        self._position: dict[int, int] = {}
        self._head = 0

    def set_sequence(self, sequence: Sequence[int]) -> None:
        """Replace the map sequence S (job indices); the first job with maps left is searched again."""
        self.sequence = [int(j) for j in sequence]
        self._position = {j: k for k, j in enumerate(self.sequence)}
        self._head = 0

    def _advance(self) -> int:
        jobs, seq = self.sim.jobs, self.sequence
        k = self._head
        while k < len(seq):
            job = jobs[seq[k]]
            if job.status == WAITING or (job.status == ACTIVE and job.remaining[MAP] > 0):
                break
            k += 1
        self._head = k
        return k

    def running_job(self) -> int | None:
        """The first job of S that is active with maps left (the job whose map phase runs), or None."""
        jobs, seq = self.sim.jobs, self.sequence
        for k in range(self._advance(), len(seq)):
            job = jobs[seq[k]]
            if job.status == ACTIVE and job.remaining[MAP] > 0:
                return seq[k]
        return None

    def assign(self, node: int) -> None:
        sim = self.sim
        if sim.runnable[MAP] and sim.free[MAP][node] > 0:
            seq, jobs = self.sequence, sim.jobs
            k = self._advance()
            while k < len(seq) and sim.free[MAP][node] > 0 and sim.runnable[MAP]:
                j = seq[k]
                if jobs[j].status != ACTIVE or not sim.launchable(j, MAP) or sim.launch(j, node, MAP, ANY) < 0:
                    k += 1
        if sim.runnable[REDUCE] and sim.free[REDUCE][node] > 0:
            jobs, pos = sim.jobs, self._position
            ready = [j for j in sim.active if j in pos and sim.launchable(j, REDUCE)]
            ready.sort(key=lambda j: (math.inf if jobs[j].deadline is None else jobs[j].deadline, pos[j]))
            for j in ready:
                while sim.free[REDUCE][node] > 0 and sim.launch(j, node, REDUCE, ANY) >= 0:
                    pass
                if sim.free[REDUCE][node] == 0:
                    break

    def model_times(self, instance: AdmissionInstance | None, order: Sequence[int]) -> dict[str, tuple[float, float]]:
        """The SEQ model's (COTm, COTr) of ``order`` on ``instance`` (absolute times), by job id."""
        if instance is None or not len(order):
            return {}
        sched = evaluate(
            instance.tcm, instance.tcr, instance.deadlines, np.asarray(order, dtype=np.intp), instance.submit_times
        )
        ids = instance.ids
        return {ids[j]: (float(m), float(r)) for j, m, r in zip(sched.order, sched.cotm, sched.cotr, strict=True)}


@register_policy(
    "seq",
    summary="executes an admission plan (--plan): maps to the first job of the sequence, reduces EDF",
    source="AMB sec. 4.1 (SEQ strategy, Definition 1, Theorem 1)",
    needs=("slots",),
    params={
        "plan": Param(
            str, "", "a solution file of an admission method (mropt solve --json): its accepted jobs and sequence"
        )
    },
    needs_plan=True,
)
class Seq(SeqExecutor):
    """SEQ on the cluster (module docstring). ``plan``: a solution file path, a Solution, or job ids in map order."""

    def __init__(self, plan: str | Solution | Sequence[str] = "", **params: Any) -> None:
        super().__init__(**params)
        self._plan = plan
        self._accepted: set[int] = set()
        self._method = ""
        self._instance: AdmissionInstance | None = None

    def use_plan(self, plan: Solution) -> None:
        """The plan to execute (``mropt simulate --plan``: ``mropt.sim.run``), instead of the parameter's."""
        self._plan = plan

    def _resolve(self) -> tuple[list[str], list[str]]:
        plan = self._plan
        if isinstance(plan, str):
            if not plan:
                raise InputError("policy 'seq': parameter 'plan' is required (a solution file: --plan SOLUTION.json)")
            plan = load_plan(plan)
        if isinstance(plan, Solution):
            self._method = plan.method
            accepted = list(plan.accepted)
            sequence = list(plan.sequence) if plan.sequence is not None else []
        else:
            accepted = sequence = [str(x) for x in plan]
        sequence = sequence + [j for j in accepted if j not in set(sequence)]
        return accepted, sequence

    def start(self, sim: SimView) -> None:
        super().start(sim)
        accepted, sequence = self._resolve()
        index = {job.id: job.index for job in sim.jobs}
        for job_id in sequence:
            if job_id not in index:
                raise InputError(f"policy 'seq': the plan names job {job_id!r}, which is not in the workload")
        self._accepted = {index[j] for j in accepted}
        self.set_sequence([index[j] for j in sequence if index[j] in self._accepted])
        self._instance = admission_of(sim)

    def on_arrival(self, job: int) -> Admission:
        if job in self._accepted:
            return Admission(True, "accepted by the plan")
        by = f" of method {self._method!r}" if self._method else ""
        return Admission(False, f"not in the plan{by}")

    def plan_times(self) -> Mapping[str, tuple[float, float]] | None:
        if self._instance is None:
            return None
        return self.model_times(self._instance, self.sequence)
