"""slots-cpsat against the SEQ optimum.

Which way the difference goes (proved in mropt/admission/slots.py):
* phase-time jobs, equal submit times: slot optimum <= SEQ optimum (slot schedules
  satisfy Theorem 1's map bound and Horn's condition; preemption is SEQ's edge);
* phase-time jobs with one common deadline: equal;
* task form: either way (partial waves favour slots), shown on a concrete instance.
"""

from __future__ import annotations

import numpy as np
import pytest

from mropt.model import AdmissionInstance, Cluster, Job
from mropt.registry import solve

from brute_force import brute_force


def phase_instance(seed: int, n: int, common_deadline: bool = False) -> AdmissionInstance:
    rng = np.random.default_rng(seed)
    common = int(rng.integers(10, 30))
    jobs = []
    for k in range(n):
        a, b = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        d = common if common_deadline else a + b + int(rng.integers(0, 12))
        jobs.append(Job(id=f"j{k}", map_phase_time=a, reduce_phase_time=b, deadline=d, benefit=int(rng.integers(1, 9))))
    return AdmissionInstance(Cluster(2, 2), tuple(jobs))


@pytest.mark.parametrize("seed", range(6))
def test_slot_optimum_at_most_seq_for_phase_jobs(seed: int) -> None:
    inst = phase_instance(seed, 4 + seed % 3)
    seq_opt, _ = brute_force(inst)
    sol = solve(inst, "slots-cpsat", time_limit=20)
    assert sol.status == "optimal"
    assert sol.objective <= seq_opt + 1e-9
    assert sol.details["seq_valid"]  # what slots accept, SEQ accepts too


@pytest.mark.parametrize("seed", range(3))
def test_slot_optimum_equals_seq_with_common_deadline(seed: int) -> None:
    inst = phase_instance(50 + seed, 5, common_deadline=True)
    seq_opt, _ = brute_force(inst)
    sol = solve(inst, "slots-cpsat", time_limit=20)
    assert sol.status == "optimal" and sol.objective == pytest.approx(seq_opt)


def test_preemption_makes_seq_strictly_better() -> None:
    """A: TCm 1, TCr 10, d 12; B: TCm 5, TCr 1, d 7. SEQ preempts A's reduce for B."""
    jobs = (
        Job(id="A", map_phase_time=1, reduce_phase_time=10, deadline=12, benefit=1),
        Job(id="B", map_phase_time=5, reduce_phase_time=1, deadline=7, benefit=1),
    )
    inst = AdmissionInstance(Cluster(2, 2), jobs)
    assert brute_force(inst)[0] == 2
    assert solve(inst, "slots-cpsat").objective == 1


def test_partial_waves_make_slots_strictly_better() -> None:
    """M = 2: job X has 3 map tasks (2 waves in SEQ), Y has 1; slots run Y in X's idle slot."""
    jobs = (
        Job(id="X", map_tasks=3, reduce_tasks=0, map_task_time=1, reduce_task_time=1, deadline=2, benefit=1),
        Job(id="Y", map_tasks=1, reduce_tasks=0, map_task_time=1, reduce_task_time=1, deadline=2, benefit=1),
    )
    inst = AdmissionInstance(Cluster(2, 1), jobs)
    assert brute_force(inst)[0] == 1
    sol = solve(inst, "slots-cpsat")
    assert sol.status == "optimal" and sol.objective == 2 and not sol.details["seq_valid"]


def test_too_many_tasks_is_a_method_limit_not_an_error() -> None:
    """Over max_tasks: status "error" naming the limit and the task count, no exception."""
    from mropt.model.errors import InputError

    jobs = tuple(Job(id=f"j{k}", map_phase_time=5, reduce_phase_time=5, deadline=100, benefit=1) for k in range(5))
    inst = AdmissionInstance(Cluster(80, 80), jobs)
    sol = solve(inst, "slots-cpsat")
    assert sol.status == "error" and sol.objective is None
    assert "max_tasks = 400" in sol.details["error"] and "800 tasks" in sol.details["error"]
    assert "Traceback" not in sol.details["error"]
    small = AdmissionInstance(Cluster(2, 2), jobs[:1])
    for bad in (0, -3, 2.5):
        with pytest.raises(InputError, match="max_tasks"):
            solve(small, "slots-cpsat", max_tasks=bad)
