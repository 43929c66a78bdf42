"""The summary of a finished run: :func:`summarise` (called by :func:`mropt.sim.run.simulate`).

**The summary** (the ``mropt simulate --json`` object; a contract for its first eight
keys): ``policy``, ``jobs``, ``accepted``, ``on_time``, ``benefit``, ``makespan``,
``events``, ``wall_time`` (seconds: the run and this summary, which reads the utilisation
rows built after the run), then ``seed``, ``mode``, ``params``, ``rejected``, ``dropped``
(accepted, then dropped by the policy), ``finished``, ``unfinished`` (accepted, neither
finished nor dropped), ``late`` (finished after its deadline), ``attempts``,
``event_log_sha256`` (:meth:`Recorder.event_log_hash`), ``utilisation``, ``ideal`` and
``stopped``:

* ``benefit``: the sum of the jobs' earned benefit, AMB eq. 1 (``mropt.sim.recorder``);
* ``makespan``: the time the last attempt ended (0 when nothing ran);
* ``utilisation``: per slot type, busy slot-seconds over capacity slot-seconds (slots of the
  nodes that are up) on ``[0, makespan]``, from the exact step series of the recorder;
  null for a type without slots; on a cluster of resources, per resource instead (``cpu``,
  ``memory`` for the workload's ``mem``): held over capacity amount-seconds, :func:`mropt.sim.utilisation.resource_ratio`;
* ``on_time``, ``late``: jobs with a deadline that finished by it, or after it; null when no
  job has a deadline (not 0: a trace without deadlines is not "0 on time");
* ``ideal``: AMB sec. 5.1 eq. 4, the fractional knapsack over the jobs with a deadline and
  a benefit: STC(j) = (map work + reduce work) / (speed-weighted map + reduce slots) (the
  SEQ model's ``(M TCm + R TCr)/(M + R)`` with task work in base seconds), ``Max_time`` =
  the latest deadline; null when no job has both, or the cluster has no slots, and for a
  stopped run (the bound is over every job of the workload, not those it submitted). On an
  idealised cluster converted from an admission instance it is the registered ``ideal``
  bound's value;
* ``stopped``: null for a run that reached its last event; ``"until"``, ``"time_limit"`` or
  ``"interrupted"`` for one stopped before (``until``: a simulated time; ``time_limit``:
  wall-clock seconds; Ctrl-C with ``stop_on_interrupt``: :mod:`mropt.sim.watch`), whose
  tables hold what happened by then (:mod:`mropt.sim.engine`: attempts still running end
  then, ``killed``; accepted jobs not finished are ``unfinished``, cause ``stopped``). A
  stopped run's summary adds ``stopped_at`` (the simulated time it stopped at) and
  ``not_submitted`` (jobs whose arrival it did not reach: neither accepted nor rejected; a
  stalled run that left some has it too). ``benefit`` counts an unfinished job as AMB eq. 1
  counts one that never finishes: the run as if it ended there.

A run whose attempts read input replicas (a workload with placement) adds ``locality``
(:func:`locality_shares`): ``attempts``, the attempts (rows of ``tasks.parquet``) with a
locality level, and ``node``, ``rack``, ``any``, the shares of them launched node-local,
rack-local and off-rack: the measure DDRF is about (DDRF paper sec. 4.2, L(E)), the policy
study's ``locality_node`` and ``locality_rack`` (:mod:`mropt.harness.policy_metrics`).

**Speculation** (``speculation``: a rule name of :mod:`mropt.sim.speculation`, default
``none``; ``speculation_params``: its parameters). With a rule other than ``none`` the summary
gains, after ``ideal``: ``speculation`` (the rule's name), ``speculation_params``, ``backups``
(backup attempts started: rows of ``tasks.parquet`` with ``speculative`` true) and
``wasted_work`` (slot-seconds, rounded like the other times: for every task that had two
attempts running when one of them succeeded, the time the other had run when it was killed
at that instant, whichever of the two was the backup; an attempt killed for another reason,
a node failure or preemption, is not counted). With ``none`` the summary and every table are
exactly what they were before speculation existed. ``straggler_draws`` (``stream`` or
``task``; default ``stream`` without a rule, ``task`` with one: :mod:`mropt.sim.engine`)
picks how straggler draws are made; give ``task`` to a run without speculation to compare it
with a rule's run on the same stragglers. The summary records it (``straggler_draws``) when
it is ``task``.

A run of the compiled core (:mod:`mropt.sim.engines`) adds ``engine``: ``"compiled"`` (``simulate``
sets it after this summary is made; a run of the Python engine has no ``engine`` key, as before).

The ratios of ``utilisation`` are :mod:`mropt.sim.utilisation`'s. Moved out of
:mod:`mropt.sim.run`, which re-exports these names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from mropt.model.workload import WorkloadInstance
from mropt.sim.recorder import Recorder
from mropt.sim.state import ANY, NODE, RACK
from mropt.sim.utilisation import plain, resource_ratio, utilisation_ratio

#: the summary's keys, in order (the first eight are the contract of ``mropt simulate --json``)
SUMMARY_KEYS = (
    "policy",
    "jobs",
    "accepted",
    "on_time",
    "benefit",
    "makespan",
    "events",
    "wall_time",
    "seed",
    "mode",
    "params",
    "rejected",
    "dropped",
    "finished",
    "unfinished",
    "late",
    "attempts",
    "event_log_sha256",
    "utilisation",
    "ideal",
    "stopped",
)


def summarise(recorder: Recorder, policy: str, params: Mapping[str, Any], wall_time: float) -> dict[str, Any]:
    """The summary dict of a finished run (module docstring)."""
    sim = recorder.sim
    jobs = recorder.jobs_columns()
    accepted = np.asarray(jobs["accepted"], dtype=bool)
    dropped = np.asarray(jobs["dropped"], dtype=bool)
    finish = np.asarray(jobs["finish"], dtype=float)
    finished = accepted & ~np.isnan(finish)
    on_time = np.array([v is True for v in jobs["on_time"]], dtype=bool)
    late = np.array([v is False for v in jobs["on_time"]], dtype=bool) & finished
    deadlines = bool((~np.isnan(np.asarray(jobs["deadline"], dtype=float))).any())  # else on_time, late: null
    makespan = recorder.last_end()
    not_submitted = sum(1 for d in jobs["decision"] if d == "not_submitted")
    out: dict[str, Any] = {
        "policy": policy,
        "jobs": int(jobs["_n"]),
        "accepted": int(accepted.sum()),
        "on_time": int(on_time.sum()) if deadlines else None,
        "benefit": plain(float(np.sum(jobs["benefit"]))),
        "makespan": plain(makespan),
        "events": int(sim.events),
        "wall_time": wall_time,
        "seed": int(sim.seed),
        "mode": sim.mode,
        "params": {k: _json_value(v) for k, v in params.items()},
        "rejected": int((~accepted).sum()) - not_submitted,
        "dropped": int(dropped.sum()),
        "finished": int(finished.sum()),
        "unfinished": int((accepted & ~dropped & np.isnan(finish)).sum()),
        "late": int(late.sum()) if deadlines else None,
        "attempts": recorder.attempts,
        "event_log_sha256": recorder.event_log_hash(),
        "utilisation": {**utilisation_ratio(recorder, makespan), **resource_ratio(recorder, makespan)},
        "ideal": ideal_benefit(sim.workload) if sim.stopped is None else None,  # eq. 4 is over every job
        "stopped": sim.stopped,
    }
    locality = locality_shares(recorder)
    if locality is not None:
        out["locality"] = locality
    if sim.stopped is not None:
        out["stopped_at"] = float(sim.now)  # exact (not rounded): verify compares submit times with it
    if sim.stopped is not None or not_submitted:
        out["not_submitted"] = not_submitted
    if sim.straggler_draws != "stream":
        out["straggler_draws"] = sim.straggler_draws
    rule = sim.speculation
    if rule is not None:
        out["speculation"] = rule.name
        out["speculation_params"] = {k: _json_value(v) for k, v in rule.params.items()}
        out["backups"] = int(sim.backups)
        out["wasted_work"] = plain(float(sim.wasted_work))
    if sim.stalled:
        out["stalled"] = True
    return out


def locality_shares(recorder: Recorder) -> dict[str, Any] | None:
    """The summary's ``locality`` (module docstring), None when no attempt has a level (no replicas).

    Counted on the recorder's entries (one per attempt, or per batch with its attempt count), not
    on expanded rows; the shares are the quotients of these exact counts, as ``run_metrics``'s."""
    store = recorder.ended_attempts
    level, count = store.column("level"), store.column("count")  # (int8 and int32: no widened copies,
    # a mask a level: the Alibaba day's 7.8 M entries would make 190 MB of int64/float64 temporaries)
    counts = {lvl: int(count[level == lvl].sum(dtype=np.int64)) for lvl in (NODE, RACK, ANY)}
    have = sum(counts.values())
    if not have:
        return None
    shares = {name: plain(counts[lvl] / have) for lvl, name in ((NODE, "node"), (RACK, "rack"), (ANY, "any"))}
    return {"attempts": have, **shares}


def ideal_benefit(workload: WorkloadInstance) -> float | None:
    """AMB eq. 4 on a workload (module docstring); None when it does not apply."""
    if not workload.uses_slots:
        return None
    slots = sum(((spec.map_slots or 0) + (spec.reduce_slots or 0)) * spec.speed * spec.count for spec in workload.nodes)
    if slots <= 0:
        return None
    items = []
    for k, job in enumerate(workload.jobs):
        if job.deadline is None or job.benefit is None:
            continue
        work = sum(g.duration * g.count for stage in job.stages for g in stage.tasks)
        items.append((job.benefit, work / slots, k))
    if not items:
        return None
    max_time = max(job.deadline for job in workload.jobs if job.deadline is not None)
    items.sort(key=lambda item: (-item[0] / item[1], item[2]))
    used = total = 0.0
    for benefit, stc, _ in items:
        if used + stc <= max_time:
            used += stc
            total += benefit
        else:
            total += (max_time - used) / stc * benefit
            break
    return plain(total)


def _json_value(v: Any) -> Any:
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): _json_value(x) for k, x in v.items()}
    return str(v)
