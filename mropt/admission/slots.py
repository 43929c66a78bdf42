"""Slot-level exact admission with CP-SAT: ``slots-cpsat``.

The cluster as it is: ``M`` map slots and ``R`` reduce slots (AMB sec. 3), each task
runs without preemption on one slot, a job's reduce tasks start only after all of its
map tasks have ended, and every accepted job ends by its deadline; maximise the total
benefit of the accepted jobs (eq. 1 with only on-time jobs accepted). It measures what
the SEQ abstraction (sec. 4.1) costs or gains.

Tasks per job:

* task form: ``map_tasks`` tasks of ``map_task_time * rho`` and ``reduce_tasks`` tasks of
  ``reduce_task_time * rho`` (the slack factor of Appendix A kept, so the SEQ phase
  time is ``ceil(tasks / slots)`` such tasks);
* phase-time form (TCm, TCr given): the phase is one full wave, ``M`` map tasks of
  length TCm and ``R`` reduce tasks of length TCr, which is the reading of TCm as
  "the time of the phase when the whole cluster serves it" with the same slot-time
  ``M x TCm`` as the STC of sec. 4.2.

Model: one optional interval per task (present iff its job is accepted), a
``cumulative`` of capacity M over map tasks and R over reduce tasks, a map-done
variable per job (>= every map end, <= every reduce start), deadlines and submit
times as bounds, and start-order symmetry breaking among a job's identical tasks.
Times go on an integer grid whose unit is a power of two, with the latest on-time
limit ``method_deadline_limit(deadline)`` at about ``2**42`` units (finer than the tolerance, so a plan that is
tight in exact arithmetic survives the rounding) (integer and binary-fraction
times stay exact; ``details["times_exact"]``). Where the grid is not exact the model is
solved twice: rounded to a restriction (durations up, deadlines down: every schedule
found is valid) and to a relaxation (the other way: its bound holds); ``optimal`` only
when the two meet within ``OBJECTIVE_RTOL``. Benefits go on a grid of about ``2**40``
units, with the rounding slack added to the bound (as in ``cpsat``). So the model
and the answer are the same in any unit of time or benefit.

How it compares with the SEQ optimum (tests/admission/test_slots.py):

* phase-time jobs, equal submit times: slot optimum <= SEQ optimum. A slot schedule's
  map completions, in order, are at least the SEQ prefix sums (Theorem 1's argument),
  and its reduce work obeys Horn's condition, so SEQ accepts the same set. It can be
  strictly smaller: SEQ's reduce stage is preemptive EDF, slot tasks are not
  preemptive. With one common deadline the two are equal (the SEQ plan in map order,
  without preemption, is a slot schedule, and one deadline needs no preemption).
* task form: either way. Partial waves let the next job's tasks use idle slots, so a
  slot schedule can beat SEQ's ``ceil(tasks/slots)`` waves; non-preemption can lose.

The returned ``sequence`` is the accepted jobs by map completion; SEQ ``verify`` holds
only where ``details["seq_valid"]`` is true. Size limits: at most ``max_tasks`` tasks
in all (default 400) -- beyond that the method returns status ``error`` with
``details["error"]`` naming the limit and the task count (``max_tasks <= 0`` is an
InputError); paper instances (M = R = 80, about 150 map tasks per job) are far beyond it. Sizes the
tests prove (tests/admission/test_slots.py): up to 6 jobs on 2 map and 2 reduce slots, each
within their 20 s limit.
"""

from __future__ import annotations

import math
import time

import numpy as np
from ortools.sat.python import cp_model

from mropt.admission.objective import evaluate_plan
from mropt.backends import cpsat as cpsat_backend
from mropt.model.admission import AdmissionInstance
from mropt.model.errors import InputError
from mropt.model.solution import Solution
from mropt.model.tolerance import integer_grid, within


def job_tasks(instance: AdmissionInstance, k: int) -> tuple[int, float, int, float]:
    """(map task count, map task time, reduce task count, reduce task time) of job k."""
    job, cl = instance.jobs[k], instance.cluster
    if job.has_task_form:  # Job requires both phase times or all four task fields
        assert job.map_tasks is not None and job.reduce_tasks is not None
        assert job.map_task_time is not None and job.reduce_task_time is not None
        return (
            int(job.map_tasks),
            float(job.map_task_time) * instance.rho,
            int(job.reduce_tasks),
            float(job.reduce_task_time) * instance.rho,
        )
    assert job.map_phase_time is not None and job.reduce_phase_time is not None
    tcr = float(job.reduce_phase_time)
    return cl.map_slots, float(job.map_phase_time), (cl.reduce_slots if tcr > 0 else 0), tcr


#: the largest time (deadline) of the model is about 2**_TIME_BITS grid units
_TIME_BITS = 42
#: the largest benefit is about 2**_WEIGHT_BITS units of the objective
_WEIGHT_BITS = 40


def slots_cpsat(
    instance: AdmissionInstance,
    *,
    time_limit: float | None = None,
    seed: int = 0,
    threads: int = 1,
    max_tasks: int = 400,
) -> Solution:
    """Registered method ``slots-cpsat``: AMB eq. 1 on the slot-level cluster of sec. 3 (module docstring)."""
    if (
        isinstance(max_tasks, bool)
        or not isinstance(max_tasks, (int, float))
        or max_tasks != int(max_tasks)
        or max_tasks <= 0
    ):
        raise InputError(f"slots-cpsat: max_tasks must be a positive integer, got {max_tasks!r}")
    record = cpsat_backend.record()
    n = instance.n
    tasks = [job_tasks(instance, k) for k in range(n)]
    total = sum(t[0] + t[2] for t in tasks)
    max_tasks = int(max_tasks)
    if total > max_tasks:  # a limit of the method, not bad input: reported, not raised
        return Solution(
            method="slots-cpsat",
            status="error",
            objective=None,
            bound=None,
            accepted=(),
            sequence=None,
            solver=record,
            details={
                "error": f"slots-cpsat size limit: the instance has {total} tasks, more than max_tasks = {max_tasks}",
                "tasks": total,
                "max_tasks": int(max_tasks),
            },
        )
    # on an exact grid (integer data with deadline * TIME_RTOL below one unit) the
    # restriction below is the exact model: integer starts suffice, and an integer
    # completion within the limit is within the deadline
    times = [x for t in tasks for x in (t[1], t[3])] + list(instance.deadlines) + list(instance.submit_times)
    s, exact_times = integer_grid(times, _TIME_BITS)
    unit, exact_weights = integer_grid(instance.benefits, _WEIGHT_BITS)
    weights = [round(b * unit) for b in instance.benefits]
    slack = 0.0 if exact_weights else 0.5 * n  # weight rounding, in grid units
    start = time.perf_counter()
    res, accept, map_done = _solve(
        instance, tasks, s, weights, relax=False, threads=threads, seed=seed, time_limit=time_limit
    )
    details: dict = {"model": "slot-level", "tasks": total, "time_scale": s, "times_exact": exact_times}
    # the restricted model's bound bounds the true problem only on an exact grid; only a
    # bound CP-SAT proved counts (status optimal or feasible; mropt.backends.cpsat)
    bound = None
    if exact_times and res.proven_bound is not None:
        bound = (res.proven_bound + slack) / unit
    if not exact_times and res.status in ("optimal", "feasible", "infeasible"):
        # a relaxation (durations down, deadlines up) bounds the true optimum
        left = None if time_limit is None else max(0.05, time_limit - (time.perf_counter() - start))
        relaxed, _, _ = _solve(instance, tasks, s, weights, relax=True, threads=threads, seed=seed, time_limit=left)
        if relaxed.proven_bound is not None:
            bound = (relaxed.proven_bound + slack) / unit
        details["relaxation"] = relaxed.status
    if not res.has_solution:
        details["message"] = res.message
        return Solution(
            method="slots-cpsat",
            status="time_limit",
            objective=0.0,
            bound=bound,
            accepted=(),
            sequence=(),
            solver=record,
            details=details,
        )
    chosen = [k for k in range(n) if res.solver.value(accept[k])]
    chosen.sort(key=lambda k: (res.solver.value(map_done[k]), k))
    objective = float(sum(instance.benefits[k] for k in chosen))
    seq_value, schedule = evaluate_plan(instance, np.asarray(chosen, dtype=np.intp))
    details["seq_valid"] = bool(schedule.valid)
    details["map_done"] = {instance.ids[k]: res.solver.value(map_done[k]) / s for k in chosen}
    optimal = res.status == "optimal" and bound is not None and within(objective, bound)
    if bound is not None:
        bound = max(bound, objective)
    return Solution(
        method="slots-cpsat",
        status="optimal" if optimal else "time_limit",
        objective=objective,
        bound=objective if optimal else bound,
        accepted=tuple(instance.ids[k] for k in chosen),
        sequence=tuple(instance.ids[k] for k in chosen),
        solver=record,
        details=details,
    )


def _solve(
    instance: AdmissionInstance,
    tasks: list[tuple[int, float, int, float]],
    s: float,
    weights: list[int],
    *,
    relax: bool,
    threads: int,
    seed: int,
    time_limit: float | None,
) -> tuple[cpsat_backend.CpResult, list[cp_model.IntVar], list[cp_model.IntVar]]:
    """Build and solve the model of the module docstring on the time grid ``s``.

    ``relax``: durations and submit times rounded down, deadlines up (a relaxation);
    otherwise the other way (a restriction: every schedule found is valid).
    """
    inner = lambda x: math.floor(x * s) if relax else math.ceil(x * s)  # noqa: E731
    outer = lambda x: math.ceil(x * s) if relax else math.floor(x * s)  # noqa: E731
    due = [outer(d) for d in instance.deadline_limits]
    rel = [inner(r) for r in instance.submit_times]
    horizon = max(due)
    n = instance.n
    model = cp_model.CpModel()
    accept = [model.new_bool_var(f"y{k}") for k in range(n)]
    map_iv, red_iv = [], []
    map_done = []
    for k, (nm, tm, nr, tr) in enumerate(tasks):
        pm, pr = inner(tm), inner(tr)
        if rel[k] + pm + (pr if nr else 0) > due[k]:
            model.add(accept[k] == 0)
        done = model.new_int_var(0, horizon, f"md{k}")
        map_done.append(done)
        prev = None
        for i in range(nm):
            st = model.new_int_var(min(rel[k], horizon), horizon, f"ms{k}_{i}")
            iv = model.new_optional_fixed_size_interval_var(st, pm, accept[k], f"m{k}_{i}")
            map_iv.append(iv)
            model.add(st + pm <= done).only_enforce_if(accept[k])
            if prev is not None:
                model.add(prev <= st)
            prev = st
        prev = None
        for i in range(nr):
            st = model.new_int_var(0, horizon, f"rs{k}_{i}")
            iv = model.new_optional_fixed_size_interval_var(st, pr, accept[k], f"r{k}_{i}")
            red_iv.append(iv)
            model.add(st >= done).only_enforce_if(accept[k])
            model.add(st + pr <= due[k]).only_enforce_if(accept[k])
            if prev is not None:
                model.add(prev <= st)
            prev = st
        model.add(done <= due[k]).only_enforce_if(accept[k])
    cl = instance.cluster
    if map_iv:
        model.add_cumulative(map_iv, [1] * len(map_iv), cl.map_slots)
    if red_iv:
        model.add_cumulative(red_iv, [1] * len(red_iv), cl.reduce_slots)
    model.maximize(sum(w * y for w, y in zip(weights, accept)))
    res = cpsat_backend.solve(model, threads=threads, seed=seed, time_limit=time_limit)
    return res, accept, map_done
