"""The active jobs of a deadline policy kept in EDF order between offers (``dc``, ``minedf-wc``).

EDF order (the AMB paper's baselines, sec. 2.2: DC of Kc & Anyanwu, CloudCom 2010, and ARIA's
MinEDF-WC, Verma et al., ICAC 2011) is deadline, then submit time, then job index (:func:`edf_key`;
a job without a deadline last). Both policies sorted the active jobs at every offer; only an
accepted arrival (the job becomes active) and a job's end change that set, and a job's key never
changes, so :class:`EdfOrder` keeps the list sorted by inserting and removing one job at a time
(bisect on the key). Speed only: ``make_policy(..., reference=True)`` runs each policy's plain
rule, which sorts ``sim.active`` at every offer.
"""

from __future__ import annotations

import math
from bisect import bisect_left

from mropt.sim.view import JobView


def edf_key(job: JobView) -> tuple[float, float, int]:
    """EDF's order: deadline (none: infinite), then submit time, then index (unique)."""
    return (math.inf if job.deadline is None else job.deadline, job.submit, job.index)


class EdfOrder:
    """The jobs added and not removed, in EDF order (``jobs``, a list read as it stands)."""

    __slots__ = ("jobs",)

    def __init__(self) -> None:
        self.jobs: list[JobView] = []

    def add(self, job: JobView) -> None:
        """``job`` in its place (an accepted arrival: it is active from now)."""
        self.jobs.insert(bisect_left(self.jobs, edf_key(job), key=edf_key), job)

    def remove(self, job: JobView) -> None:
        """``job`` out, at its end; a job never added (rejected) is not there and nothing changes."""
        jobs = self.jobs
        at = bisect_left(jobs, edf_key(job), key=edf_key)
        if at < len(jobs) and jobs[at].index == job.index:
            del jobs[at]
