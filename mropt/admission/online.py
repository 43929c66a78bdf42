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
  static part (Algorithm 1, :func:`mropt.admission.amb.amb_static`) at its submit time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mropt.admission.amb import DEFAULT_BEAM, amb_static
from mropt.admission.insertion import InsertionOracle
from mropt.admission.objective import solution_from_order
from mropt.admission.scoring import score_order
from mropt.admission.seq import map_completion_times
from mropt.model.admission import AdmissionInstance
from mropt.model.solution import Solution
from mropt.registry import Param, register


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
) -> tuple[np.ndarray, list[int], list[int]]:
    """AMB dynamic part at time ``t``: returns (new order, accepted new jobs, rejected new jobs).

    ``plan_order`` must be valid (Definition 2). Accepted jobs are listed in the order
    they were considered (descending Score).
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
        oracle = InsertionOracle(instance.tcm, instance.tcr, instance.deadline_limits, order, release)
        a, b = oracle.theorem_range(x, lo)
        chosen = next((p for p in range(b, a - 1, -1) if oracle.can_insert(x, p)), None)
        if chosen is None:
            rejected.append(x)
        else:
            order = oracle.insert(x, chosen)
            accepted.append(x)
    return order, accepted, rejected


def amb_online_order(instance: AdmissionInstance, *, beam: int = DEFAULT_BEAM) -> tuple[np.ndarray, dict]:
    """Feed the jobs by submit time (batches of equal times); first batch static, then :func:`amb_insert`."""
    submit = instance.submit_times
    times = np.unique(submit)
    order = np.empty(0, dtype=np.intp)
    batches: list[dict] = []
    for k, t in enumerate(times):
        batch = np.flatnonzero(submit == t)
        if k == 0:
            res = amb_static(instance, batch, beam=beam)
            order, acc, rej = res.order, res.accepted, res.rejected
        else:
            order, acc, rej = amb_insert(instance, order, float(t), batch)
        batches.append({"time": float(t), "jobs": len(batch), "accepted": len(acc), "rejected": len(rej)})
    return order, {"batches": len(batches), "beam": beam, "first_batch_jobs": batches[0]["jobs"]}


@register(
    "amb-online",
    kind="admission",
    summary="AMB dynamic part: jobs arrive by submit time, scored per batch and inserted where Theorems 3-4 allow",
    params={"beam": Param(int, DEFAULT_BEAM, "max valid orders kept by the static part for the first batch "
                                             "(0 = unlimited)", minimum=0)},
)
def amb_online(
    instance: AdmissionInstance, *, time_limit: float | None = None, seed: int = 0, beam: int = DEFAULT_BEAM
) -> Solution:
    """Registered method ``amb-online`` (AMB sec. 4.2, dynamic part; see the module docstring)."""
    order, details = amb_online_order(instance, beam=int(beam))
    return solution_from_order(instance, order, details=details)
