"""AMB dynamic part (AMB sec. 4.2, "动态部分", Example 3), registered as ``amb-online``.

At time t new jobs J' arrive while a valid order S runs. They are sorted by Score
(eq. 2; here J' is the candidate set of eq. 3, so a batch of one job has Ad = 1) and
taken in turn: each is inserted at a position that Theorems 3-4 allow and that keeps
S valid, else rejected. Choices (the paper leaves them open):

* a job whose map phase has started by t (planned map start ``max(COTm_prev, release)
  < t``) is never moved (Example 3), so positions before it are not tried;
* a new job cannot start its maps before t: its release is ``max(submit_time, t)``;
* among the valid positions, the latest one is taken: it shifts the fewest planned
  jobs (in Example 3 the position is unique anyway);
* ``amb-online`` feeds an instance's jobs in ``submit_time`` order; jobs with equal
  submit times form one batch scored together; the first batch is planned by the
  static part (Algorithm 1 as ``amb`` runs it, :func:`mropt.admission.amb.run_amb`:
  every valid order by default, ``beam=K`` for a beam variant) at its submit time,
  within ``time_limit`` (status ``time_limit`` when the static part stopped).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mropt.admission.amb import amb_details, run_amb
from mropt.admission.insertion import InsertionOracle
from mropt.admission.objective import solution_from_order
from mropt.admission.scoring import score_order
from mropt.admission.seq import map_completion_times
from mropt.model.admission import AdmissionInstance
from mropt.model.solution import Solution


def locked_prefix(instance: AdmissionInstance, plan_order: Sequence[int] | np.ndarray, t: float) -> int:
    """How many leading jobs of the plan have started their map phase before time t."""
    order = np.asarray(plan_order, dtype=np.intp)
    if not len(order):
        return 0
    release = instance.submit_times[order]
    cotm = map_completion_times(instance.tcm[order], release)
    start = np.maximum(np.concatenate(([0.0], cotm[:-1])), release)
    return int(np.searchsorted(start, t, side="left"))  # start is non-decreasing


def amb_insert(
    instance: AdmissionInstance,
    plan_order: Sequence[int] | np.ndarray,
    t: float,
    new_job_indices: Sequence[int] | np.ndarray,
    *,
    reference: bool = False,
) -> tuple[np.ndarray, list[int], list[int]]:
    """AMB dynamic part at time ``t``: returns (new order, accepted new jobs, rejected new jobs).

    ``plan_order`` must be valid (Definition 2). Accepted jobs are listed in the order
    they were considered (descending Score). The oracle is built with ``locked`` (the
    started prefix): it leaves out the jobs whose reduces end before the next map ends,
    with the same answers (:class:`~mropt.admission.insertion.InsertionOracle`);
    ``reference=True`` builds it over the whole plan, as written plain.
    """
    order = np.asarray(plan_order, dtype=np.intp)
    new = np.asarray(new_job_indices, dtype=np.intp)
    release = np.array(instance.submit_times, dtype=float)
    release[new] = np.maximum(release[new], t)
    lo = locked_prefix(instance, order, t)
    accepted: list[int] = []
    rejected: list[int] = []
    for x in score_order(instance, new):
        x = int(x)
        oracle = InsertionOracle(
            instance.tcm, instance.tcr, instance.deadline_limits, order, release, locked=0 if reference else lo
        )
        a, b = oracle.theorem_range(x, lo)
        chosen = next((p for p in range(b, a - 1, -1) if oracle.can_insert(x, p)), None)
        if chosen is None:
            rejected.append(x)
        else:
            order = oracle.insert(x, chosen)
            accepted.append(x)
    return order, accepted, rejected


#: what ``amb-online`` reports of its static part: how it kept phi, and where it stopped if it did
_STATIC_KEYS = (
    "search",
    "beam_cut",
    "stopped",
    "stopped_at",
    "candidates_decided",
    "completed_greedily",
    "completion_untested",
)


def amb_online_order(
    instance: AdmissionInstance, *, beam: int = 0, search: str = "oracle", time_limit: float | None = None
) -> tuple[np.ndarray, dict, str]:
    """Feed the jobs by submit time (batches of equal times); first batch static, then :func:`amb_insert`.

    Returns the order, ``details`` and the status (``time_limit`` when the static part stopped).
    """
    submit = instance.submit_times
    times = np.unique(submit)
    order = np.empty(0, dtype=np.intp)
    batches: list[dict] = []
    status, static = "feasible", dict[str, Any]()
    for k, t in enumerate(times):
        batch = np.flatnonzero(submit == t)
        if k == 0:
            res = run_amb(instance, batch, beam=beam, search=search, time_limit=time_limit)
            status, static = amb_details(instance, res, beam=beam, search=search, time_limit=time_limit)
            order, acc, rej = res.order, res.accepted + res.completed, res.rejected
        else:
            order, acc, rej = amb_insert(instance, order, float(t), batch)
        batches.append({"time": float(t), "jobs": len(batch), "accepted": len(acc), "rejected": len(rej)})
    details = {"batches": len(batches), "beam": beam, "first_batch_jobs": batches[0]["jobs"]}
    details.update({key: static[key] for key in _STATIC_KEYS if key in static})
    return order, details, status


def amb_online(
    instance: AdmissionInstance, *, time_limit: float | None = None, seed: int = 0, beam: int = 0
) -> Solution:
    """Registered method ``amb-online`` (AMB sec. 4.2, dynamic part; see the module docstring)."""
    order, details, status = amb_online_order(instance, beam=int(beam), time_limit=time_limit)
    return solution_from_order(instance, order, status=status, details=details)
