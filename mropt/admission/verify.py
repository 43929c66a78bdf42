"""Independent check of an admission solution (DESIGN.md: ``verify``).

Shares no code with the methods or with :mod:`mropt.admission.seq`: it replays the
SEQ strategy of AMB sec. 4.1 literally, in exact rational arithmetic
(:class:`fractions.Fraction`), with the paper's own procedure for the reduce stage:
jobs taken in deadline order, each marking as "occupied" the earliest free time
from its map completion until it has its TCr (ties in deadline go to the earlier
map, as in the methods). It then recomputes eq. 1 from the decision alone.

Phase times are recomputed from the raw job fields (sec. 4.1 and Appendix A), not
read from the instance's cached arrays. The tolerances are the documented ones
(docs/tolerances.md), written here separately as exact fractions: a job is on time
when its exact ``COTr <= deadline * (1 + 10**-9)``, and a claimed objective must match
the recomputed one within a relative 1e-9, or within 1e-12 of the total benefit of
the instance when the objective is near 0 (no absolute constant: the check is the
same in every unit of benefit).

What the solution claims besides its decision follows :mod:`mropt.model.claims`, as for
every kind: with nothing accepted, status ``bound`` is a bound-only result (``ideal``,
``bound-lp``, ``bound-energy``; its objective need only be a finite number, nothing is
recomputed) and ``error``, ``infeasible`` or ``time_limit`` may claim no objective or 0;
otherwise the claimed objective is eq. 1 of the decision, whatever the status, and the
bound lies at or above it (maximisation), equal under ``optimal``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from mropt.model.admission import AdmissionInstance, Job
from mropt.model.claims import bound_problems, without_decision
from mropt.model.solution import Solution
from mropt.model.solution import Verdict as BaseVerdict

_TIME_RTOL = Fraction(1, 10**9)
_OBJECTIVE_RTOL = 1e-9
_OBJECTIVE_ATOL_FACTOR = 1e-12


@dataclass
class Verdict(BaseVerdict):
    """What ``verify`` found: the common fields, the replayed times and the late jobs."""

    completion: dict[str, tuple[float, float]] = field(default_factory=dict)  # id -> (COTm, COTr)

    def summary(self) -> dict[str, float]:
        """Jobs on time and late among the accepted ones (the replayed schedule)."""
        if not self.checked_schedule:
            return {}
        return {"on_time": len(self.completion) - len(self.late), "late": len(self.late)}


def _phase_times(job: Job, instance: AdmissionInstance) -> tuple[Fraction, Fraction]:
    if job.map_phase_time is not None:  # Job requires both phase times or all four task fields
        assert job.reduce_phase_time is not None
        return Fraction(job.map_phase_time), Fraction(job.reduce_phase_time)
    assert job.map_tasks is not None and job.reduce_tasks is not None
    assert job.map_task_time is not None and job.reduce_task_time is not None
    rho = Fraction(instance.rho)
    m_waves = -(-job.map_tasks // instance.cluster.map_slots)
    r_waves = -(-job.reduce_tasks // instance.cluster.reduce_slots)
    return m_waves * Fraction(job.map_task_time) * rho, r_waves * Fraction(job.reduce_task_time) * rho


def _replay(jobs: list[Job], instance: AdmissionInstance) -> dict[str, tuple[Fraction, Fraction]]:
    """COTm and COTr of ``jobs`` run in this map order under SEQ."""
    cotm: dict[str, Fraction] = {}
    clock = Fraction(0)
    for job in jobs:
        clock = max(clock, Fraction(job.submit_time)) + _phase_times(job, instance)[0]
        cotm[job.id] = clock
    cotr = literal_reduce_completion_times(
        [cotm[job.id] for job in jobs], [_phase_times(job, instance)[1] for job in jobs], [job.deadline for job in jobs]
    )
    return {job.id: (cotm[job.id], end) for job, end in zip(jobs, cotr)}


def literal_reduce_completion_times(cotm: Sequence[Any], tcr: Sequence[Any], deadlines: Sequence[Any]) -> list[Any]:
    """COTr by AMB sec. 4.1 step 2 as written, for jobs given in map order.

    Jobs in deadline order (ties: the earlier map) each take the earliest unoccupied
    reduce time from their own COTm on. O(n^2), on whatever numbers it is given
    (``Fraction`` here, floats where tests and benchmarks use it as the plain
    reference implementation).
    """
    busy: list[tuple[Any, Any]] = []  # disjoint occupied intervals, sorted
    cotr: list[Any] = [None] * len(cotm)
    for k in sorted(range(len(cotm)), key=lambda k: (deadlines[k], k)):
        need, t = tcr[k], cotm[k]
        end = t
        taken: list[tuple[Any, Any]] = []
        for start, stop in busy:
            if need <= 0:
                break
            if stop <= t:
                continue
            if start > t:
                piece = min(need, start - t)
                taken.append((t, t + piece))
                need -= piece
                end = t + piece
            t = max(t, stop)
        if need > 0:  # free for ever after the last occupied interval
            taken.append((t, t + need))
            end = t + need
        busy = sorted(busy + taken)
        cotr[k] = end
    return cotr


def verify(instance: AdmissionInstance, solution: Solution, *, allow_late: bool = False) -> Verdict:
    """Recompute eq. 1 from ``solution.accepted`` and ``solution.sequence``.

    Problems reported: unknown or repeated job ids, a sequence that is not an order of
    exactly the accepted set, a missing sequence when jobs are accepted, a job finishing
    after its deadline (unless ``allow_late``, when eq. 1's penalty applies instead), an
    objective that differs from the recomputed one, a bound below it, and the claims of a
    solution that accepts nothing (module docstring).
    """
    verdict = Verdict()
    atol = _OBJECTIVE_ATOL_FACTOR * sum(abs(job.benefit) for job in instance.jobs)
    if not solution.accepted and not solution.sequence:
        undecided = without_decision(solution, empty_value=0.0, atol=atol)
        if undecided is not None:  # a bound-only result, or nothing decided: nothing to recompute
            verdict.problems.extend(undecided)
            return verdict
    jobs = {job.id: job for job in instance.jobs}
    accepted = list(solution.accepted)
    unknown = [j for j in accepted if j not in jobs]
    if unknown:
        verdict.problems.append(f"accepted lists unknown job ids: {', '.join(map(repr, unknown))}")
    if len(set(accepted)) != len(accepted):
        verdict.problems.append("accepted lists a job more than once")
    sequence = solution.sequence
    if sequence is None:
        if accepted:
            verdict.problems.append("solution accepts jobs but gives no sequence (map order) to check")
        sequence = ()
    if len(set(sequence)) != len(sequence):
        verdict.problems.append("sequence lists a job more than once")
    if set(sequence) != set(accepted):
        missing = sorted(set(accepted) - set(sequence))
        extra = sorted(set(sequence) - set(accepted))
        verdict.problems.append(
            "sequence and accepted disagree"
            + (f"; accepted but not in sequence: {', '.join(missing)}" if missing else "")
            + (f"; in sequence but not accepted: {', '.join(extra)}" if extra else "")
        )
    if verdict.problems:
        return verdict

    times = _replay([jobs[j] for j in sequence], instance)
    verdict.checked_schedule = True
    total = Fraction(0)
    for job_id in sequence:
        job = jobs[job_id]
        cotm, cotr = times[job_id]
        verdict.completion[job_id] = (float(cotm), float(cotr))
        if cotr <= Fraction(job.deadline) * (1 + _TIME_RTOL):
            total += Fraction(job.benefit)
        else:
            total -= Fraction(instance.alpha) * Fraction(job.benefit)
            verdict.late.append(job_id)
            if not allow_late:
                verdict.problems.append(
                    f"sequence is not valid: job {job_id!r} finishes at {float(cotr):.12g} s, "
                    f"after its deadline {job.deadline:.12g} s"
                )
    verdict.objective = float(total)
    claimed = solution.objective
    if claimed is None:
        verdict.problems.append(f"solution gives no objective; recomputed {verdict.objective:g}")
    elif not math.isclose(claimed, verdict.objective, rel_tol=_OBJECTIVE_RTOL, abs_tol=atol):
        verdict.problems.append(f"objective {claimed:g} claimed, {verdict.objective:g} recomputed (eq. 1)")
    verdict.problems.extend(bound_problems(instance.SENSE, solution, verdict.objective, atol=atol))
    return verdict
