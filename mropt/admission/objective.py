"""Total benefit P of eq. 1 (AMB sec. 3), shared by every admission method.

``P = sum of benefits of accepted jobs finished on time - alpha * sum of benefits of
accepted jobs finished late``. Rejected jobs count nothing. ``mropt.admission.verify``
recomputes it with code of its own.
"""

from __future__ import annotations

import numpy as np

from mropt.admission.seq import SeqSchedule, evaluate
from mropt.model.admission import AdmissionInstance
from mropt.model.solution import Solution


def total_benefit(benefits: np.ndarray, on_time: np.ndarray, alpha: float) -> float:
    """Eq. 1 for accepted jobs with these benefits and on-time flags."""
    benefits = np.asarray(benefits, dtype=float)
    on_time = np.asarray(on_time, dtype=bool)
    return float(benefits[on_time].sum() - alpha * benefits[~on_time].sum())


def evaluate_plan(instance: AdmissionInstance, order: np.ndarray) -> tuple[float, SeqSchedule]:
    """Eq. 1 objective and SEQ schedule of the accepted jobs run in map order ``order``."""
    schedule = evaluate(
        instance.tcm, instance.tcr, instance.deadlines, order, instance.submit_times, instance.deadline_limits
    )
    return total_benefit(instance.benefits[schedule.order], schedule.on_time, instance.alpha), schedule


def solution_from_order(
    instance: AdmissionInstance,
    order: np.ndarray | list[int],
    *,
    status: str = "feasible",
    bound: float | None = None,
    solver: dict[str, str] | None = None,
    details: dict | None = None,
) -> Solution:
    """A Solution accepting exactly the jobs of ``order``, in that map order, with eq. 1's value."""
    from mropt.registry import mropt_solver  # registry imports problem packages lazily

    order = np.asarray(order, dtype=np.intp)
    objective, _ = evaluate_plan(instance, order)
    ids = [instance.ids[i] for i in order]
    return Solution(
        method="",
        status=status,
        objective=objective,
        bound=bound,
        accepted=tuple(ids),
        sequence=tuple(ids),
        solver=solver or mropt_solver(),
        details=details or {},
    )
