"""Timeout handling: Algorithm 2 of the AMB paper (sec. 4.3, Examples 4-5).

When the estimate of a running job grows (a node failed, Example 4), the plan may
no longer be valid. Algorithm 2 chooses the jobs C to drop:

* line 01: sort the accepted jobs by benefit, ascending;
* lines 02-03: if the running job has the smallest benefit, drop it;
* lines 05-16: else, for each job j_i of smaller benefit than the running one
  (ascending): if dropping j_i alone makes S valid, C = {j_i} and stop (lines 06-07);
  else, if j_i plus the jobs already in C are worth less than the running job, add j_i
  to C and stop if dropping all of C makes S valid (lines 08-11); else C = {running}
  (lines 13-14).

Reading of the listing (documented choices):

* line 14 has no BREAK in the listing; it is followed literally (the loop goes on, and
  a later job that alone repairs S still replaces C, line 06-07);
* if the loop ends and C does not make S valid (or no job is cheaper than the running
  one and C is empty), C = {running}, the "most basic strategy" the text gives before
  the listing;
* dropping a job: a job after the running one in S is removed; a job before it has
  finished its maps, so its map time stays and only its reduce is dropped; the running
  job keeps the map time already spent (``now`` minus its map start; ``now`` defaults to
  its map start, i.e. nothing spent) and loses its reduce.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from mropt.admission.seq import evaluate, map_completion_times
from mropt.model.admission import AdmissionInstance


@dataclass(frozen=True)
class TimeoutDecision:
    """Algorithm 2's output C (``dropped``), the kept order, and whether it is valid under the new estimate."""

    dropped: tuple[int, ...]
    order: tuple[int, ...]
    valid: bool
    late_before: tuple[int, ...]  # jobs late in the original order under the new estimate
    branch: str  # which part of the listing decided: "valid", "lines 02-03", "lines 06-07", "lines 10-11", "running"


def _plan_is_valid(
    instance: AdmissionInstance,
    order: np.ndarray,
    tcm: np.ndarray,
    tcr: np.ndarray,
    running: int,
    dropped: Iterable[int],
    now: float | None,
) -> tuple[bool, np.ndarray]:
    """SEQ validity of S without ``dropped`` (see the module docstring), and the late kept jobs."""
    drop = set(int(j) for j in dropped)
    pos_running = int(np.flatnonzero(order == running)[0])
    release = instance.submit_times[order]
    cotm = map_completion_times(tcm[order], release)
    start_running = max(cotm[pos_running - 1] if pos_running else 0.0, release[pos_running])
    spent = 0.0 if now is None else max(0.0, min(now, cotm[pos_running]) - start_running)
    m, r, d, rel, ids = [], [], [], [], []
    for pos, j in enumerate(order):
        j = int(j)
        if j in drop:
            if pos > pos_running:
                continue  # not started: removed
            m.append(spent if j == running else tcm[j])  # maps done (or partly done) stay
            r.append(0.0)
            d.append(np.inf)
        else:
            m.append(tcm[j])
            r.append(tcr[j])
            d.append(instance.deadlines[j])
        rel.append(instance.submit_times[j])
        ids.append(j)
    if not m:
        return True, np.empty(0, dtype=np.intp)
    s = evaluate(np.array(m), np.array(r), np.array(d), np.arange(len(m)), np.array(rel))
    late_mask = ~s.on_time
    late = np.array([ids[k] for k in np.flatnonzero(late_mask)], dtype=np.intp)
    return not late_mask.any(), late


def handle_timeout(
    instance: AdmissionInstance,
    order: Sequence[int] | np.ndarray,
    running: int,
    *,
    map_phase_time: float | None = None,
    reduce_phase_time: float | None = None,
    now: float | None = None,
) -> TimeoutDecision:
    """Algorithm 2 (AMB sec. 4.3): jobs to drop when ``running``'s estimate grows.

    ``order`` is the accepted set's valid order S (indices into the instance's jobs),
    ``running`` the index of the running job, ``map_phase_time`` / ``reduce_phase_time``
    its new TCm / TCr (None: unchanged). Example 4: j4's maps end at 170 instead of 140
    (``map_phase_time=170``), j2 becomes late; Example 5: C = {j2}.
    """
    order = np.asarray(order, dtype=np.intp)
    if running not in set(order.tolist()):
        raise ValueError(f"running job {running} is not in the plan")
    tcm = np.array(instance.tcm, dtype=float)
    tcr = np.array(instance.tcr, dtype=float)
    if map_phase_time is not None:
        tcm[running] = float(map_phase_time)
    if reduce_phase_time is not None:
        tcr[running] = float(reduce_phase_time)

    def valid_without(c: Iterable[int]) -> bool:
        return _plan_is_valid(instance, order, tcm, tcr, running, c, now)[0]

    def decision(c: list[int], branch: str) -> TimeoutDecision:
        ok = valid_without(c)
        kept = tuple(int(j) for j in order if int(j) not in set(c))
        return TimeoutDecision(tuple(c), kept, ok, tuple(int(j) for j in late_before), branch)

    ok, late_before = _plan_is_valid(instance, order, tcm, tcr, running, (), now)
    if ok:
        return decision([], "valid")
    benefits = instance.benefits
    by_benefit = sorted((int(j) for j in order), key=lambda j: (benefits[j], j))  # line 01 (ties: index)
    others = [int(j) for j in order if int(j) != running]
    if not others or benefits[running] <= min(benefits[j] for j in others):
        return decision([running], "lines 02-03")  # the running job has the smallest benefit
    c: list[int] = []
    branch = "running"
    for j in by_benefit:  # line 05
        if j == running or not benefits[j] < benefits[running]:
            continue
        if valid_without([j]):  # lines 06-07
            c, branch = [j], "lines 06-07"
            break
        if benefits[j] + sum(benefits[i] for i in c) < benefits[running]:  # line 08
            c = c + [j]  # line 09
            if valid_without(c):  # lines 10-11
                branch = "lines 10-11"
                break
        else:
            c = [running]  # lines 13-14 (no BREAK in the listing)
    if branch == "running" or not valid_without(c):
        c, branch = [running], "running"
    return decision(c, branch)
