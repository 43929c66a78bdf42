"""DC: the Deadline Constraint scheduler of Kc & Anyanwu (CloudCom 2010), the AMB paper's baseline [14].

What is confirmed (Kc & Anyanwu's abstract; AMB sec. 2.2 and 5):
DC admits only jobs whose deadline it estimates it can meet, gives each a *fixed number of
map slots* from its size, *assumes the job can use every reduce slot* in its reduce phase,
and its estimate is static. The formulas (as He, Lu & Swanson restate DC in "Real-Time
Scheduling in MapReduce Clusters", HPCC 2013, sec. III; unconfirmed: neither text was at hand),
with the job's map work ``W_m = sum of map task times`` (sigma c_m) and reduce work ``W_r`` (f sigma c_r; the
transfer cost c_d is 0: the shuffle is part of the reduce tasks here)::

    S_r^max = deadline - W_r / R                 (latest reduce start, all R reduce slots)
    n_m^min = ceil(W_m / (S_r^max - S_m))        (maps done by S_r^max)
    n_r^min = ceil(W_r / (deadline - S_r^m))     (S_r^m = S_m + W_m / n_m^min, the map end)

A job is accepted when ``n_m^min`` map slots are available from ``S_m`` and ``n_r^min``
reduce slots from ``S_r^m``; otherwise rejected with the numbers in the reason. Jobs
without a deadline are rejected (DC schedules deadline jobs only).

**At run time** jobs are served in EDF order (deadline, then submit, then index); a job
never runs more than its ``n_m^min`` maps at once (free map slots beyond the jobs' counts
stay idle: the underutilisation He, Lu & Swanson criticise); reduces go EDF with no cap
(every reduce slot assumed).

**mropt's choices** (parameters; the papers leave them open):

* ``availability`` (how slots held by accepted jobs are counted for a new one):
  ``calendar`` (default) keeps a reservation calendar: an
  accepted job reserves ``n_m^min`` map slots over ``[S_m, S_r^m)`` and ``n_r^min`` reduce
  slots over ``[S_r^m, S_r^m + W_r / n_r^min)``; a new job tries ``S_m`` = its arrival,
  then every later end of a map reservation before ``S_r^max`` (the earliest
  time its count is free), and needs its counts free over those intervals. ``current``:
  ``S_m`` is the arrival, and the free slots are those of the cluster now up minus the
  map counts of accepted jobs that still have maps (reduce counts are not held).
* Estimates are fluid (the formulas above: work over slots), not in whole waves, as the
  paper writes them; the slots are those up at the arrival.

**Speed** (no decision changes; ``make_policy("dc", reference=True)`` runs the plain rule,
``Dc._assign_reference``, and keeps the whole calendar; ``tests/sim/test_sim_dc_fast.py`` requires
the same event log). DC leaves map slots idle by design, so a pass after new work offers every node
with a free slot (``mropt.sim.offers``' room index) and most offers launch nothing: on the SWIM day
2.9 million offers, each of which sorted the active jobs and asked every job for a launch.
``Dc._assign_fast`` keeps the active jobs in EDF order (:mod:`mropt.sim.policies.edf_order`: a job
joins when accepted and leaves at its end) and, per instant, the jobs that may take a map
(runnable maps, fewer running than ``n_m^min``) and a reduce (runnable reduces): only a hook (an attempt's end, a stage's or job's end, an arrival, a
node, a rule's backup) or this policy's own launches change a job's runnable and running counts, so
the lists are rebuilt at the first offer after a hook and pruned as launches fill them. A job's
launches in a row are one ``sim.launch_tasks`` call (what the plain loop's calls would start). The
calendar drops reservations that ended before the arrival (every interval asked about starts at
the arrival or later, so they never count), else it grows with every accepted job.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from mropt.registry import Param
from mropt.sim.policies.edf_order import EdfOrder, edf_key
from mropt.sim.policy import EVENT, Admission, Policy, register_policy
from mropt.sim.state import ACTIVE, ANY, MAP, REDUCE
from mropt.sim.view import AttemptView, JobView

AVAILABILITY = ("calendar", "current")
#: float slack of the ceilings (a count that is an integer up to rounding is that integer)
_EPS = 1e-9


def stage_work(job: JobView) -> tuple[list[float], list[float]]:
    """Task times of the job's map stages and of its reduce stages (every task listed once)."""
    out: tuple[list[float], list[float]] = ([], [])
    for stage in job.stages:
        bounds = [*stage.offsets, stage.n]
        for g, duration in enumerate(stage.durations):
            out[stage.type].extend([duration] * (bounds[g + 1] - bounds[g]))
    return out


def ceil_count(x: float) -> int:
    """ceil(x), with x within a relative 1e-9 of an integer taken as that integer."""
    return max(0, math.ceil(x - _EPS * max(1.0, abs(x))))


def peak(reservations: Sequence[tuple[float, float, int]], start: float, end: float) -> int:
    """Most slots reserved at any instant of ``[start, end)``."""
    points = [start] + [s for s, _, _ in reservations if start < s < end]
    return max((sum(c for s, e, c in reservations if s <= t < e) for t in points), default=0)


@register_policy(
    "dc",
    summary="Deadline Constraint scheduler (Kc & Anyanwu 2010): fixed map-slot count n_m^min, all reduce slots "
    "assumed, EDF",
    source="Kc & Anyanwu, CloudCom 2010 (as AMB sec. 2.2 describes it)",
    needs=("slots", "deadlines"),
    params={
        "availability": Param(
            str,
            "calendar",
            "how slots held by accepted jobs count for a new one: 'calendar' (reservations over time) or "
            "'current' (counts of the jobs with maps left)",
            choices=AVAILABILITY,
        )
    },
)
class Dc(Policy):
    """DC (module docstring)."""

    mode = EVENT

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.availability = str(params["availability"])
        self.n_map: dict[int, int] = {}
        self.n_reduce: dict[int, int] = {}
        self.map_calendar: list[tuple[float, float, int]] = []
        self.reduce_calendar: list[tuple[float, float, int]] = []
        # the fast path's state (module docstring, "Speed"): the active jobs in EDF order, and the jobs
        # that may take a map / a reduce, valid until a hook marks them stale
        self._edf = EdfOrder()
        self._maps: list[JobView] = []
        self._reduces: list[JobView] = []
        self._stale = True

    def on_arrival(self, job: int) -> Admission:
        """DC's admission (module docstring); an accepted job joins the EDF order of the fast path."""
        self._stale = True
        admission = self._admit(job)
        if admission.accept:
            self._edf.add(self.sim.jobs[job])
        return admission

    def _admit(self, job: int) -> Admission:
        sim = self.sim
        j = sim.jobs[job]
        if j.deadline is None:
            return Admission(False, "DC: no deadline (DC schedules deadline jobs only)")
        maps, reduces = stage_work(j)
        w_m, w_r = sum(maps), sum(reduces)
        m_slots, r_slots = sim.total_slots[MAP], sim.total_slots[REDUCE]
        now, deadline = sim.now, j.deadline
        if (maps and m_slots == 0) or (reduces and r_slots == 0):
            return Admission(False, "DC: no map or reduce slots up")
        s_r_max = deadline - (w_r / r_slots if reduces else 0.0)
        calendar = self.availability == "calendar"
        if calendar and not self.reference:  # what ended by now never counts again (module docstring)
            self.map_calendar = [r for r in self.map_calendar if r[1] > now]
            self.reduce_calendar = [r for r in self.reduce_calendar if r[1] > now]
        starts = [now]
        held = 0
        if calendar:
            starts += sorted({e for _, e, _ in self.map_calendar if now < e < s_r_max})
        else:
            held = sum(self.n_map[i] for i, a in sim.active.items() if a.remaining[MAP] > 0 and i in self.n_map)
        why = f"DC: the latest reduce start {s_r_max:g} is not after the arrival {now:g}"
        for s_m in starts:
            if s_m >= s_r_max:
                break
            n_m = max(1, ceil_count(w_m / (s_r_max - s_m))) if maps else 0
            if n_m > m_slots:
                why = f"DC: needs n_m^min = {n_m} map slots from S_m = {s_m:g}, the cluster has {m_slots}"
                break
            map_end = s_m + (w_m / n_m if n_m else 0.0)
            free = m_slots - (peak(self.map_calendar, s_m, map_end) if calendar else held)
            if n_m > free:
                why = f"DC: needs n_m^min = {n_m} map slots from S_m = {s_m:g}, {free} available"
                continue
            n_r = max(1, ceil_count(w_r / (deadline - map_end))) if reduces else 0
            reduce_end = map_end + (w_r / n_r if n_r else 0.0)
            free_r = r_slots - (peak(self.reduce_calendar, map_end, reduce_end) if calendar else 0)
            if n_r > free_r:
                why = f"DC: needs n_r^min = {n_r} reduce slots from S_r = {map_end:g}, {free_r} available"
                continue
            self.n_map[job], self.n_reduce[job] = n_m, n_r
            if calendar:
                if n_m:
                    self.map_calendar.append((s_m, map_end, n_m))
                if n_r:
                    self.reduce_calendar.append((map_end, reduce_end, n_r))
            return Admission(True, f"DC: n_m^min = {n_m} map slots from S_m = {s_m:g}, n_r^min = {n_r}")
        return Admission(False, why)

    def assign(self, node: int) -> None:
        """Offer ``node``: the plain rule (``_assign_reference``) under ``reference``, else
        ``_assign_fast`` (the same decisions on kept lists: module docstring, "Speed")."""
        if self.reference:
            self._assign_reference(node)
        elif self._stale or self._maps or self._reduces:  # (else no job may launch: most offers)
            self._assign_fast(node)

    def _assign_reference(self, node: int) -> None:
        """The run-time rule: the active jobs in EDF order, each given maps on ``node`` up to its
        ``n_m^min`` running, then reduces in EDF order with no cap."""
        sim = self.sim
        order = sorted(sim.active.values(), key=edf_key)
        if sim.runnable[MAP] and sim.free[MAP][node] > 0:
            for j in order:
                cap = self.n_map.get(j.index, 0)
                while (
                    sim.free[MAP][node] > 0
                    and j.status == ACTIVE
                    and j.running[MAP] < cap
                    and sim.launch(j.index, node, MAP, ANY) >= 0
                ):
                    pass
                if sim.free[MAP][node] == 0:
                    break
        if sim.runnable[REDUCE] and sim.free[REDUCE][node] > 0:
            for j in order:
                while sim.free[REDUCE][node] > 0 and sim.launch(j.index, node, REDUCE, ANY) >= 0:
                    pass
                if sim.free[REDUCE][node] == 0:
                    break

    def _assign_fast(self, node: int) -> None:
        """``_assign_reference``'s decisions, asking only the jobs that may launch (module docstring)."""
        if self._stale:
            self._refresh()
        maps, reduces = self._maps, self._reduces
        if not (maps or reduces):
            return
        sim = self.sim
        free_map, free_reduce = sim.free
        if maps and free_map[node] > 0:
            n_map = self.n_map
            i = 0
            while i < len(maps):
                j = maps[i]
                cap = n_map[j.index]
                sim.launch_tasks(j.index, node, MAP, ANY, min(free_map[node], cap - j.running[MAP]))
                if j.runnable[MAP] and j.running[MAP] < cap:
                    i += 1  # (a task that did not fit the node: the plain rule goes on to the next job too)
                else:
                    del maps[i]
                if free_map[node] == 0:
                    break
        if reduces and free_reduce[node] > 0:
            i = 0
            while i < len(reduces):
                j = reduces[i]
                sim.launch_tasks(j.index, node, REDUCE, ANY, free_reduce[node])
                if j.runnable[REDUCE]:
                    i += 1
                else:
                    del reduces[i]
                if free_reduce[node] == 0:
                    break
        if self.self_check:
            self._check()

    def _refresh(self) -> None:
        """The jobs that may take a map (runnable maps, fewer running than ``n_m^min``) and those
        that may take a reduce, in EDF order."""
        self._stale = False
        n_map = self.n_map
        order = self._edf.jobs
        self._maps = [j for j in order if j.runnable[MAP] and j.running[MAP] < n_map[j.index]]
        self._reduces = [j for j in order if j.runnable[REDUCE]]
        if self.self_check:
            self._check()

    def _check(self) -> None:
        """``self_check``: the kept lists against a plain recomputation."""
        order = sorted(self.sim.active.values(), key=edf_key)
        assert [j.index for j in self._edf.jobs] == [j.index for j in order]
        n_map = self.n_map
        maps = [j.index for j in order if j.runnable[MAP] and j.running[MAP] < n_map[j.index]]
        assert [j.index for j in self._maps] == maps
        assert [j.index for j in self._reduces] == [j.index for j in order if j.runnable[REDUCE]]

    # every change of an active job's runnable or running counts but this policy's launches comes
    # with one of these hooks (module docstring): the fast path's lists are stale after it
    def on_attempts_end(self, attempt: AttemptView, outcome: str, count: int) -> None:
        self._stale = True

    def on_rule_backup(self, job: int, started: bool) -> None:
        self._stale = True

    def on_stage_end(self, job: int, stage: int) -> None:
        self._stale = True

    def on_job_end(self, job: int) -> None:
        self._stale = True
        self._edf.remove(self.sim.jobs[job])

    def on_node(self, node: int, up: bool) -> None:
        self._stale = True
