"""Simple admission baselines, registered as methods.

``edf-greedy``: take the jobs in deadline order (earliest deadline first; ties by
submit time, then by position in the file) and accept each one whose addition keeps
the SEQ plan valid, with the map order equal to the deadline order. It is the
simplest admission rule that respects the SEQ model of AMB sec. 4.1, and a floor for
every other method.
"""

from __future__ import annotations

import numpy as np

from mropt.admission.objective import solution_from_order
from mropt.model.admission import AdmissionInstance
from mropt.model.solution import Solution


def edf_greedy_order(instance: AdmissionInstance) -> list[int]:
    """Indices of the jobs edf-greedy accepts, in map order.

    Because candidates come in non-decreasing deadline order and are appended last,
    each one has the lowest reduce priority and the latest release of the plan: the
    accepted jobs' COTr do not change, and the candidate's reduce starts when both its
    maps and every earlier reduce are done, ``COTr = max(COTm, last COTr) + TCr``. So
    one test costs O(1), not a full SEQ evaluation.
    """
    tcm, tcr = instance.tcm, instance.tcr
    deadlines, limits, release = instance.deadlines, instance.deadline_limits, instance.submit_times
    candidates = np.lexsort((np.arange(instance.n), release, deadlines))
    map_clock = reduce_clock = 0.0
    accepted: list[int] = []
    for j in candidates:
        cotm = max(map_clock, release[j]) + tcm[j]
        cotr = max(cotm, reduce_clock) + tcr[j]
        if cotr <= limits[j]:
            accepted.append(int(j))
            map_clock, reduce_clock = cotm, cotr
    return accepted


def edf_greedy(instance: AdmissionInstance, *, time_limit: float | None = None, seed: int = 0) -> Solution:
    """Registered method ``edf-greedy``: deadline-order admission under SEQ (AMB sec. 4.1), a baseline."""
    return solution_from_order(instance, edf_greedy_order(instance))
