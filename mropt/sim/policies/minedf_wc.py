"""MinEDF-WC: ARIA's minimal slot allocation, EDF, work-conserving (Verma et al., ICAC 2011 / NOMS 2012).

The AMB paper's baseline [15, 16] (ARIA, ICAC 2011, pp. 235-244; NOMS 2012, pp. 900-905;
AMB sec. 2.2: a fixed number of map *and* reduce slots per job, minimising the
total number of slots it gets, and an admission test).

**ARIA's bound** (ICAC 2011): n tasks of mean time mu and maximum lambda on k slots take
between ``n mu / k`` and ``(n - 1) mu / k + lambda``. With ``a`` and ``b`` the map and reduce
terms and ``C`` the constant one, a job meets deadline ``T`` (from now) on m map and r
reduce slots when ``a / m + b / r = D' = T - C``; minimising ``m + r`` (Lagrange) gives
(:func:`aria_minimum`)::

    m* = sqrt(a) (sqrt(a) + sqrt(b)) / D',   r* = sqrt(b) (sqrt(a) + sqrt(b)) / D'

rounded up. Parameter ``bound`` picks the estimate: ``low`` (default; ``a = N_M M_avg``,
``b = N_R R_avg``, ``C = 0``: the lower bound), ``up`` (``a = (N_M - 1)
M_avg``, ``b = (N_R - 1) R_avg``, ``C = M_max + R_max``) or ``avg`` (their mean, the one ARIA
reports closest; unconfirmed). Task times are the base durations (the job profile); the shuffle is
part of the reduce tasks.

**Admission**: a job is rejected when ``D' <= 0`` or its (m*, r*) exceeds the cluster's
slots (up at its arrival), and when (m*, r*) does not fit in the slots not committed to
accepted jobs. Parameter ``commit`` (the papers leave it open): ``job`` (default) commits a job's (m*, r*) until it
ends; ``phase`` commits m* while it has maps left and r* while it has reduces left.
Jobs without a deadline are rejected.

**Run time** (MinEDF-WC): jobs in EDF order (deadline, submit, index). A free slot goes
first to the earliest-deadline job running fewer tasks of that type than its minimum, then
(work conserving) to the earliest-deadline job with a task to launch. Reclaiming spare
slots (the papers leave it open), parameter ``reclaim``: ``wait`` (default: borrowed tasks run to completion; freed
slots serve jobs below their minimum first) or ``kill``: when an accepted job (at arrival,
or when its reduce stage opens) is short of its minimum and no slot is free, attempts
beyond other jobs' minima are killed (latest deadline first, newest attempt first) and
their tasks re-queued. Allocations are not recomputed as tasks finish (MinEDF's
recomputation is not modelled).
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

from mropt.registry import Param
from mropt.sim.policies.dc import ceil_count, stage_work
from mropt.sim.policies.edf_order import EdfOrder, edf_key
from mropt.sim.policy import EVENT, Admission, Policy, register_policy
from mropt.sim.state import ANY, MAP, REDUCE
from mropt.sim.view import JobView

BOUNDS = ("low", "avg", "up")
COMMITS = ("job", "phase")
RECLAIMS = ("wait", "kill")


def aria_minimum(a: float, b: float, d_prime: float) -> tuple[float, float]:
    """ARIA's minimal (m, r) with ``a / m + b / r = D'`` (Lagrange; not rounded)."""
    sa, sb = math.sqrt(a), math.sqrt(b)
    return sa * (sa + sb) / d_prime, sb * (sa + sb) / d_prime


def aria_terms(job: JobView, bound: str) -> tuple[float, float, float]:
    """(a, b, C) of the job's ARIA estimate under ``bound`` (module docstring)."""
    maps, reduces = stage_work(job)
    low = (sum(maps), sum(reduces), 0.0)
    if bound == "low":
        return low
    up_a = (len(maps) - 1) * (sum(maps) / len(maps)) if maps else 0.0
    up_b = (len(reduces) - 1) * (sum(reduces) / len(reduces)) if reduces else 0.0
    up_c = max(maps, default=0.0) + max(reduces, default=0.0)
    if bound == "up":
        return up_a, up_b, up_c
    return (low[0] + up_a) / 2, (low[1] + up_b) / 2, up_c / 2


@register_policy(
    "minedf-wc",
    summary="MinEDF-WC (ARIA): minimal (m*, r*) from the ARIA bound, EDF, spare slots handed out and reclaimed",
    source="Verma, Cherkasova, Campbell: ARIA (ICAC 2011), NOMS 2012",
    needs=("slots", "deadlines"),
    params={
        "bound": Param(str, "low", "ARIA estimate the minimum is computed from", choices=BOUNDS),
        "commit": Param(
            str, "job", "how long an accepted job's minimum stays committed: whole job, or per phase", choices=COMMITS
        ),
        "reclaim": Param(
            str, "wait", "how spare slots come back for a job below its minimum: wait or kill", choices=RECLAIMS
        ),
    },
)
class MinEdfWc(Policy):
    """MinEDF-WC (module docstring)."""

    mode = EVENT

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.bound, self.commit, self.reclaim = str(params["bound"]), str(params["commit"]), str(params["reclaim"])
        self.minimum: dict[int, tuple[int, int]] = {}
        self._edf = EdfOrder()  # the active jobs in EDF order (``_assign_fast``)

    def _committed(self, stype: int) -> int:
        total = 0
        for i, job in self.sim.active.items():
            if i not in self.minimum:
                continue
            if self.commit == "phase" and job.remaining[stype] == 0:
                continue
            total += self.minimum[i][stype]
        return total

    def on_arrival(self, job: int) -> Admission:
        sim = self.sim
        j = sim.jobs[job]
        if j.deadline is None:
            return Admission(False, "MinEDF-WC: no deadline")
        a, b, c = aria_terms(j, self.bound)
        d_prime = j.deadline - sim.now - c
        if d_prime <= 0:
            return Admission(False, f"MinEDF-WC: D' = deadline - now - C = {d_prime:g} <= 0")
        m_f, r_f = aria_minimum(a, b, d_prime)
        maps, reduces = stage_work(j)
        m = max(1, ceil_count(m_f)) if maps else 0
        r = max(1, ceil_count(r_f)) if reduces else 0
        m_slots, r_slots = sim.total_slots[MAP], sim.total_slots[REDUCE]
        if m > m_slots or r > r_slots:
            return Admission(
                False, f"MinEDF-WC: needs (m*, r*) = ({m}, {r}) slots, the cluster has ({m_slots}, {r_slots})"
            )
        free_m, free_r = m_slots - self._committed(MAP), r_slots - self._committed(REDUCE)
        if m > free_m or r > free_r:
            return Admission(False, f"MinEDF-WC: needs (m*, r*) = ({m}, {r}) slots, ({free_m}, {free_r}) not committed")
        self.minimum[job] = (m, r)
        self._edf.add(j)  # (it becomes active once accepted)
        if self.reclaim == "kill":
            sim.wake_at(sim.now, "minedf-reclaim")
        return Admission(True, f"MinEDF-WC: (m*, r*) = ({m}, {r})")

    def on_job_end(self, job: int) -> None:
        self._edf.remove(self.sim.jobs[job])

    def on_stage_end(self, job: int, stage: int) -> None:
        if self.reclaim == "kill":
            self.sim.wake_at(self.sim.now, "minedf-reclaim")

    def on_timer(self, tag: Hashable) -> None:
        if tag == "minedf-reclaim":
            for stype in (MAP, REDUCE):
                self._reclaim(stype)

    def _reclaim(self, stype: int) -> None:
        """Kill borrowed attempts (beyond their job's minimum) for jobs short of theirs (``reclaim=kill``)."""
        sim = self.sim
        short = 0
        for i, job in sim.active.items():
            want = min(self.minimum.get(i, (0, 0))[stype], job.running[stype] + job.runnable[stype])
            short += max(0, want - job.running[stype])
        free = sum(f for f, up in zip(sim.free[stype], sim.node_up, strict=True) if up)
        to_kill = short - free
        if to_kill <= 0:
            return
        victims = sorted(
            (job for i, job in sim.active.items() if job.running[stype] > self.minimum.get(i, (0, 0))[stype]),
            key=edf_key,
            reverse=True,
        )
        for job in victims:
            excess = job.running[stype] - self.minimum.get(job.index, (0, 0))[stype]
            attempts = sorted(
                (a for a in sim.running.values() if a.job == job.index and a.type == stype),
                key=lambda a: (a.start, a.id),
                reverse=True,
            )
            for attempt in attempts[: min(excess, to_kill)]:
                sim.kill(attempt.id)
                to_kill -= 1
            if to_kill <= 0:
                return

    def assign(self, node: int) -> None:
        """Fill the node's free slots: minimums first, then work conserving, in EDF order (module
        docstring). The plain rule (``_assign_reference``) under ``reference``, else ``_assign_fast``."""
        if self.reference:
            self._assign_reference(node)
        else:
            self._assign_fast(node)

    def _assign_fast(self, node: int) -> None:
        """``_assign_reference``'s launches, the same calls' outcomes without the calls that start nothing.

        The EDF order is kept between offers (:class:`~mropt.sim.policies.edf_order.EdfOrder`: a job
        joins when accepted and leaves at its end). A job with no runnable task of the type is passed
        by (its launch would return -1); a job's launches in a row are one
        ``sim.launch_tasks(count=k)``, which starts what k calls of ``sim.launch`` would, stopping
        where one would return -1 or the node's slots of the type run out; the pass over the jobs ends once the node has no free slot of the type or no task
        of the type is runnable anywhere (every later launch would return -1).
        """
        sim = self.sim
        order = self._edf.jobs
        minimum = self.minimum
        runnable = sim.runnable
        for stype in (MAP, REDUCE):
            free = sim.free[stype]
            if not (runnable[stype] and free[node] > 0):
                continue
            for job in order:  # minimums first
                if not job.runnable[stype]:
                    continue
                mins = minimum.get(job.index)
                if mins is None:
                    continue
                short = mins[stype] - job.running[stype]
                if short > 0:
                    sim.launch_tasks(job.index, node, stype, ANY, min(short, free[node]))
                    if free[node] <= 0 or not runnable[stype]:
                        break
            for job in order:  # then spare slots, work conserving
                if free[node] <= 0 or not runnable[stype]:
                    break
                if job.runnable[stype]:
                    sim.launch_tasks(job.index, node, stype, ANY, free[node])

    def _assign_reference(self, node: int) -> None:
        """The plain MinEDF-WC offer: the active jobs sorted in EDF order, each asked for tasks one launch at a time."""
        sim = self.sim
        order = sorted(sim.active.values(), key=edf_key)
        for stype in (MAP, REDUCE):
            if not (sim.runnable[stype] and sim.free[stype][node] > 0):
                continue
            for job in order:  # minimums first
                floor = self.minimum.get(job.index, (0, 0))[stype]
                while (
                    sim.free[stype][node] > 0
                    and job.running[stype] < floor
                    and sim.launch(job.index, node, stype, ANY) >= 0
                ):
                    pass
            for job in order:  # then spare slots, work conserving
                while sim.free[stype][node] > 0 and sim.launch(job.index, node, stype, ANY) >= 0:
                    pass
                if sim.free[stype][node] == 0:
                    break
