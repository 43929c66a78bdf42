"""Test-only builder of small admission jobs from integers (shared by the exact-method tests)."""

from __future__ import annotations

from mropt.model import Job


def job(k: int, a: int, b: int, d: int, w: int, r: int = 0, *, map_tasks: int = 1) -> Job:
    """Job ``j<k>`` with TCm ``a``, TCr ``b``, deadline ``d``, benefit ``w``, submit ``r``.

    ``b == 0`` is a map-only job, given in the task form (``map_tasks`` tasks of ``a``
    on as many map slots, no reduce tasks), since phase times need a reduce phase.
    """
    if b == 0:
        return Job(
            id=f"j{k}",
            map_tasks=map_tasks,
            reduce_tasks=0,
            map_task_time=a,
            reduce_task_time=1,
            deadline=d,
            benefit=w,
            submit_time=r,
        )
    return Job(id=f"j{k}", map_phase_time=a, reduce_phase_time=b, deadline=d, benefit=w, submit_time=r)
