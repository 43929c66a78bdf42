"""What a policy study measures in one simulation beyond its summary: completion times, slowdown,
the on-time share, locality.

The worker (:func:`mropt.harness.worker.simulate_task`) computes these from the run's tables
(the columns of ``jobs.parquet`` and ``tasks.parquet``, :mod:`mropt.sim.recorder`) and its
workload, and stores them in the row's ``metrics`` beside the summary (:mod:`mropt.sim.run`);
the policy tables (:mod:`mropt.harness.policy_report`) read them. Shares are fractions in
[0, 1]; a metric that does not apply to the run is None (JSON null), never 0:

* ``jct_mean``, ``jct_p95`` -- job completion time, ``finish - submit_time`` in seconds, over
  the finished jobs: its mean and 95th percentile (numpy's linear interpolation); None when no
  job finished;
* ``slowdown_mean`` -- the mean over the finished jobs of JCT / the job's *ideal span*: the sum
  over its stages (a chain) of the stage's longest base task duration divided by the fastest
  node's speed, i.e. its time alone on an idle cluster that runs each stage's tasks at once on
  the fastest nodes, node-local, without stragglers (:func:`mropt.sim.recorder.ideal_span`, the
  ``ideal_span`` column of ``jobs.parquet``; the usual slowdown of scheduling studies:
  response time over the time the job would take alone). It is >= 1 except for jobs whose reduces slow-start launched early (those may end before the
  maps' end plus their own duration);
* ``on_time_share`` -- jobs that finished by their deadline over the jobs **with a deadline**
  (rejected, dropped, late and unfinished ones count as missed); None when no job has a
  deadline, so a trace without deadlines is not reported as 0 % on time;
* ``acceptance`` -- accepted jobs over all jobs (AMB sec. 5's acceptance rate); None without jobs;
* ``locality_node``, ``locality_rack`` -- of the attempts that have a locality level (tasks
  with input replicas; every attempt, backups and killed ones included), the shares that ran
  node-local and rack-local (the locality levels of DDRF sec. 4.1 and of the recorder's
  ``locality`` column); None when no attempt has one.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from mropt.model.workload import WorkloadInstance
from mropt.sim.recorder import ideal_span

#: the keys :func:`run_metrics` adds to a simulation's metrics, in order (a contract of the store)
METRIC_KEYS = (
    "jct_mean",
    "jct_p95",
    "slowdown_mean",
    "on_time_share",
    "acceptance",
    "locality_node",
    "locality_rack",
)


def _plain(x: float) -> float | None:
    return float(f"{x:.12g}") if math.isfinite(x) else None


def run_metrics(workload: WorkloadInstance, jobs: Any, tasks: Any) -> dict[str, float | None]:
    """The metrics of :data:`METRIC_KEYS` of one run: ``jobs`` and ``tasks`` as ``jobs.parquet`` and
    ``tasks.parquet`` hold them (frames, or the recorder's column dicts: of the attempt table only
    ``locality`` is read, and no frame is made of it), ``workload`` the one simulated (module docstring)."""
    out: dict[str, float | None] = dict.fromkeys(METRIC_KEYS)
    jobs = _frame(jobs)
    finish = pd.to_numeric(jobs["finish"], errors="coerce").to_numpy(float)
    done = ~np.isnan(finish)
    jct = finish[done] - jobs["submit_time"].to_numpy(float)[done]
    if len(jct):
        out["jct_mean"] = _plain(float(np.mean(jct)))
        out["jct_p95"] = _plain(float(np.percentile(jct, 95)))
        speed = max(spec.speed for spec in workload.nodes)
        by_id = {job.id: job for job in workload.jobs}
        spans = np.array([ideal_span(by_id[str(j)], speed) for j in jobs["job_id"][done]], dtype=float)
        out["slowdown_mean"] = _plain(float(np.mean(jct / spans)))
    has_deadline = pd.to_numeric(jobs["deadline"], errors="coerce").notna().to_numpy()
    if has_deadline.any():
        on_time = np.array([v is True or v is np.True_ for v in jobs["on_time"]], dtype=bool)
        out["on_time_share"] = _plain(float(on_time[has_deadline].sum()) / float(has_deadline.sum()))
    if len(jobs):
        out["acceptance"] = _plain(float(np.asarray(jobs["accepted"], dtype=bool).mean()))
    levels = _locality_counts(tasks)
    have = sum(n for level, n in levels.items() if not pd.isna(level))
    if have:
        out["locality_node"] = _plain(levels["node"] / have)
        out["locality_rack"] = _plain(levels["rack"] / have)
    return out


def _locality_counts(tasks: Any) -> Counter[Any]:
    """The attempts of each value of the attempt table's ``locality`` column (``None`` and NaN, the
    attempts without a level, among them). A count over the Python objects, not a pandas series of
    them: 755,983 attempts of the SWIM day in 0.03 s rather than 0.1 s (issue 32); the shares are
    then the quotients of these exact counts, as a boolean series' mean gives them."""
    if isinstance(tasks, pd.DataFrame):
        return Counter(tasks["locality"].astype(object)) if len(tasks) else Counter()
    return Counter(tasks["locality"] if tasks else [])


def as_frames(jobs: Any, tasks: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``jobs`` and ``tasks`` as frames, from frames or from the recorder's column dicts (``_n`` left out)."""
    return _frame(jobs), _frame(tasks)


def _frame(cols: Any) -> pd.DataFrame:
    if isinstance(cols, pd.DataFrame):
        return cols
    return pd.DataFrame({k: v for k, v in cols.items() if not k.startswith("_")})
