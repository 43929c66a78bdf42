"""AMB on the cluster: the static plan run by SEQ, online admission, timeout handling (AMB sec. 4).

The workload must convert to an admission instance
(:func:`mropt.instances.workload_convert.to_admission`): AMB plans on the SEQ model.

* **Static part** (sec. 4.2, Algorithm 1): the jobs submitted at the first submit time are
  planned at :meth:`Amb.start` by :func:`mropt.admission.amb.run_amb` (the registered
  ``amb`` method: every valid order, ``beam=0``; ``beam=K`` for a beam variant). Its
  accepted set is admitted, the rest rejected; the order is executed as SEQ
  (:class:`mropt.sim.policies.seq.SeqExecutor`).
* **Dynamic part** (sec. 4.2): a later arrival is admitted by
  :func:`mropt.admission.online.amb_insert` at its submit time, with every job submitted
  at that same time as one batch scored together (as ``amb-online`` does), so without
  faults the plan is ``amb-online``'s order. The plan lives on the SEQ model (times from 0,
  finished jobs kept in the order, as in ``amb-online``).
* **Timeout handling** (sec. 4.3, Algorithm 2, :func:`mropt.admission.timeout.handle_timeout`;
  parameter ``timeout_handling``, default true). The running job is the first job of S
  with maps left. Its map end is re-estimated after a node failure (``on_node``) and when
  its planned map end (the model's COTm) passes with maps unfinished (a slow phase: a timer
  at the planned COTm). **Re-estimate**: the running job's pending map tasks are handed,
  in a list schedule, to the map slots now up, each slot free at the end of the attempt it
  runs now (any job's: tasks are not preempted) or now; the estimate is the latest end of
  those and of the job's running map attempts (exact on the idealised cluster when no
  other failure follows). When it is later than the planned COTm, the running job's TCm
  becomes ``estimate - its planned map start`` and Algorithm 2 decides; the jobs it names
  are dropped (``sim.drop``, the reason naming the branch of the listing). The plan then
  keeps the new TCm for the running job, anchored so that the model's COTm of the running
  job is the estimate in the order without the dropped jobs. With ``timeout_handling``
  false the estimate still updates the plan but nothing is dropped.

Not re-estimated: reduce phases (a failure while no job has maps left is only absorbed by
the run); jobs that finished earlier than planned do not make the plan earlier. A
new arrival that finds the plan invalid under the current estimates (a miss that
timeout handling was off for, or could not repair) is rejected with that reason.

:meth:`Amb.plan_times` gives the current plan's SEQ-model (COTm, COTr) per kept job.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from mropt.admission.amb import run_amb
from mropt.admission.online import amb_insert
from mropt.admission.seq import map_completion_times
from mropt.admission.timeout import handle_timeout
from mropt.instances.workload_convert import to_admission
from mropt.model.admission import AdmissionInstance, Job
from mropt.model.errors import InputError
from mropt.registry import Param
from mropt.sim.policies.seq import SeqExecutor
from mropt.sim.policy import Admission, register_policy
from mropt.sim.state import ACTIVE, MAP
from mropt.sim.view import SimView

#: the float slack (relative) below which an estimate is not a miss (docs/tolerances.md's TIME_RTOL)
_RTOL = 1e-9


def with_map_phase_time(instance: AdmissionInstance, job: int, tcm: float) -> AdmissionInstance:
    """``instance`` with job ``job``'s TCm set to ``tcm`` (TCr unchanged)."""
    old = instance.jobs[job]
    tcr = float(instance.tcr[job])
    common: dict[str, Any] = {
        "id": old.id,
        "deadline": old.deadline,
        "benefit": old.benefit,
        "submit_time": old.submit_time,
        "extra": old.extra,
    }
    if tcr > 0:
        new = Job(map_phase_time=tcm, reduce_phase_time=tcr, **common)
    else:  # a map-only job (task form): one map task whose time is TCm under rho
        new = Job(map_tasks=1, reduce_tasks=0, map_task_time=tcm / instance.rho, reduce_task_time=1.0, **common)
    jobs = list(instance.jobs)
    jobs[job] = new
    return replace(instance, jobs=tuple(jobs))


def planned_map_window(instance: AdmissionInstance, order: list[int], job: int) -> tuple[float, float]:
    """(planned map start, COTm) of ``job`` in ``order`` under the SEQ model with submit times."""
    idx = np.asarray(order, dtype=np.intp)
    release = instance.submit_times[idx]
    cotm = map_completion_times(instance.tcm[idx], release)
    k = order.index(job)
    start = max(float(cotm[k - 1]) if k else 0.0, float(release[k]))
    return start, float(cotm[k])


@register_policy(
    "amb",
    summary="AMB: static plan (Algorithm 1) run as SEQ, later arrivals inserted online, timeout handling "
    "(Algorithm 2) on a re-estimated miss",
    source="AMB sec. 4.1-4.3 (Algorithms 1 and 2)",
    needs=("slots", "admission"),
    params={
        "timeout_handling": Param(
            bool, True, "run Algorithm 2 when a re-estimate shows a miss, dropping the jobs it names"
        ),
        "beam": Param(int, 0, "orders kept by the static part (0: all, Algorithm 1 exactly)", minimum=0),
    },
)
class Amb(SeqExecutor):
    """AMB on the cluster (module docstring)."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.timeout_handling = bool(params["timeout_handling"])
        self.beam = int(params["beam"])
        self.adm: AdmissionInstance
        self.order: list[int] = []
        self._decided: dict[int, Admission] = {}
        self._version = 0
        #: what timeout handling did: (time, running job id, estimate, branch, dropped ids)
        self.timeouts: list[tuple[float, str, float, str, tuple[str, ...]]] = []

    # -- planning --------------------------------------------------------------------------
    def start(self, sim: SimView) -> None:
        super().start(sim)
        #: the jobs of each submit time, by index: an arrival's batch (``_admit``) without a pass over every job
        self._same_submit: dict[float, list[int]] = {}
        for j in sim.jobs:
            self._same_submit.setdefault(j.submit, []).append(j.index)
        try:
            self.adm = to_admission(sim.workload)
        except InputError as exc:
            raise InputError(f"policy 'amb': the workload is not an admission instance: {exc}") from None
        submit = self.adm.submit_times
        t0 = float(submit.min())
        batch = np.flatnonzero(submit == t0)
        res = run_amb(self.adm, batch, beam=self.beam, search="oracle")
        accepted = set(int(j) for j in res.order)
        for k in batch.tolist():
            self._decided[k] = (
                Admission(True, "AMB Algorithm 1: accepted in the static plan")
                if k in accepted
                else Admission(False, f"AMB Algorithm 1: no valid order with this job (static batch at t={t0:g})")
            )
        self._replan([int(j) for j in res.order])

    def _replan(self, order: list[int]) -> None:
        self.order = order
        self.set_sequence(order)
        self._version += 1
        self._arm()

    def _arm(self) -> None:
        """A timer at the running job's planned COTm (the slow-phase check; now if it has passed)."""
        target = self.running_job()
        if target is None or target not in self.order:
            return
        _, cotm = planned_map_window(self.adm, self.order, target)
        self.sim.wake_at(max(cotm, self.sim.now), ("amb-check", target, self._version))

    def on_arrival(self, job: int) -> Admission:
        decision = self._admit(job)
        if decision.accept:  # arm the slow-phase check once the job is active
            self.sim.wake_at(self.sim.now, ("amb-arm",))
        return decision

    def _admit(self, job: int) -> Admission:
        decided = self._decided.pop(job, None)
        if decided is not None:
            return decided
        sim = self.sim
        t = sim.now
        submit = sim.jobs[job].submit
        batch = [k for k in self._same_submit[submit] if k not in self._decided]
        try:
            order, acc, rej = amb_insert(self.adm, self.order, t, batch, reference=self.reference)
        except ValueError:
            reason = f"AMB dynamic part: the running plan is not valid under the current estimates at t={t:g}"
            for j in batch:
                self._decided[j] = Admission(False, reason)
        else:
            for j in acc:
                self._decided[j] = Admission(True, f"AMB dynamic part: inserted into the plan at t={t:g}")
            for j in rej:
                self._decided[j] = Admission(False, f"AMB dynamic part: no valid insertion position at t={t:g}")
            if acc:
                self._replan([int(j) for j in order])
        return self._decided.pop(job)

    # -- timeout handling ----------------------------------------------------------------------
    def on_timer(self, tag: Hashable) -> None:
        if not isinstance(tag, tuple) or not tag:
            return
        if tag[0] == "amb-arm":
            self._version += 1
            self._arm()
        elif tag[0] == "amb-check" and tag[2] == self._version and tag[1] == self.running_job():
            self._check()

    def on_node(self, node: int, up: bool) -> None:
        if up:
            self._version += 1
            self._arm()
        else:
            self._check()

    def on_stage_end(self, job: int, stage: int) -> None:
        if self.sim.jobs[job].stages[stage].type == MAP:
            self._version += 1
            self._arm()

    def estimate_map_end(self, job: int) -> float:
        """The running job's map end re-estimated on the slots now up (module docstring)."""
        sim = self.sim
        now = sim.now
        j = sim.jobs[job]
        stage = j.stages[j.cur]
        own = [a.end for a in sim.running.values() if a.job == job and a.type == MAP and a.end is not None]
        end = max(own, default=now)
        pending = stage.pending if stage.type == MAP else 0
        if not pending:
            return end
        busy = [a.end if a.end is not None else now for a in sim.running.values() if a.type == MAP]
        free = sim.total_slots[MAP] - len(busy)
        if free + len(busy) <= 0:
            return math.inf
        slots = busy + [now] * max(free, 0)
        heapq.heapify(slots)
        duration = stage.durations[0] if len(stage.durations) == 1 else max(stage.durations)
        speed = max(sim.node_speed) if sim.node_speed else 1.0
        for _ in range(pending):
            t = heapq.heappop(slots) + duration / speed
            end = max(end, t)
            heapq.heappush(slots, t)
        return end

    def _check(self) -> None:
        running = self.running_job()
        if running is None or running not in self.order:
            return
        estimate = self.estimate_map_end(running)
        start, cotm = planned_map_window(self.adm, self.order, running)
        if not math.isfinite(estimate) or estimate <= cotm + _RTOL * max(abs(cotm), 1.0):
            return  # on plan (the armed timer stays), or no map slot up (re-armed when one comes back)
        sim = self.sim
        ids = self.adm.ids
        dropped: tuple[int, ...] = ()
        kept = list(self.order)
        branch = "off"
        if self.timeout_handling:
            decision = handle_timeout(self.adm, self.order, running, map_phase_time=estimate - start, now=sim.now)
            dropped, kept, branch = decision.dropped, list(decision.order), decision.branch
            for j in dropped:
                if sim.jobs[j].status == ACTIVE:
                    sim.drop(
                        j,
                        f"AMB timeout handling (Algorithm 2, {branch}): job {ids[running]!r}'s maps re-estimated "
                        f"to end at {estimate:g} instead of {cotm:g}",
                    )
        self.timeouts.append((sim.now, ids[running], estimate, branch, tuple(ids[j] for j in dropped)))
        if running in kept:
            new_start, _ = planned_map_window(self.adm, kept, running)
            self.adm = with_map_phase_time(self.adm, running, estimate - new_start)
        self._replan(kept)

    def plan_times(self) -> Mapping[str, tuple[float, float]] | None:
        return self.model_times(self.adm, self.order)
