"""Slot-level exact admission with CP-SAT: ``slots-cpsat`` (issue 5, item 3).

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
Times are scaled to integers (the smallest of 1, 10, 100, 1000 that makes every
duration, deadline and submit time integral; otherwise 1000 with durations rounded up
and deadlines down, so every schedule found is valid, noted in ``details``).

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

import numpy as np

from mropt.admission.objective import evaluate_plan
from mropt.model.admission import AdmissionInstance
from mropt.model.errors import InputError
from mropt.model.solution import Solution
from mropt.registry import register

import ortools
from ortools.sat.python import cp_model


def job_tasks(instance: AdmissionInstance, k: int) -> tuple[int, float, int, float]:
    """(map task count, map task time, reduce task count, reduce task time) of job k."""
    job, cl = instance.jobs[k], instance.cluster
    if job.has_task_form:
        return (int(job.map_tasks), float(job.map_task_time) * instance.rho,
                int(job.reduce_tasks), float(job.reduce_task_time) * instance.rho)
    tcr = float(job.reduce_phase_time)
    return cl.map_slots, float(job.map_phase_time), (cl.reduce_slots if tcr > 0 else 0), tcr


def _scale(values: list[float]) -> tuple[int, bool]:
    for s in (1, 10, 100, 1000):
        if all(abs(v * s - round(v * s)) < 1e-9 for v in values):
            return s, True
    return 1000, False


@register("slots-cpsat", kind="admission", exact=True,
          params={"threads": "CP-SAT search workers (default 1)",
                  "max_tasks": "refuse instances with more tasks than this (default 400)"},
          summary="slot-level exact admission (M map, R reduce slots, non-preemptive tasks) with CP-SAT")
def slots_cpsat(instance: AdmissionInstance, *, time_limit: float | None = None, seed: int = 0,
                threads: int = 1, max_tasks: int = 400) -> Solution:
    if isinstance(max_tasks, bool) or not isinstance(max_tasks, (int, float)) or max_tasks != int(max_tasks) \
            or max_tasks <= 0:
        raise InputError(f"slots-cpsat: max_tasks must be a positive integer, got {max_tasks!r}")
    record = {"name": "OR-Tools CP-SAT", "version": ortools.__version__}
    n = instance.n
    tasks = [job_tasks(instance, k) for k in range(n)]
    total = sum(t[0] + t[2] for t in tasks)
    max_tasks = int(max_tasks)
    if total > max_tasks:  # a limit of the method, not bad input: reported, not raised
        return Solution(method="slots-cpsat", status="error", objective=None, bound=None, accepted=(),
                        sequence=None, solver=record,
                        details={"error": f"slots-cpsat size limit: the instance has {total} tasks, "
                                          f"more than max_tasks = {max_tasks}", "tasks": total,
                                 "max_tasks": int(max_tasks)})
    times = [x for t in tasks for x in (t[1], t[3])] + list(instance.deadlines) + list(instance.submit_times)
    s, exact_times = _scale(times)
    dur = lambda x: int(math.ceil(x * s - 1e-9))  # noqa: E731
    due = [int(math.floor(d * s + 1e-9)) for d in instance.deadlines]
    rel = [int(math.ceil(r * s - 1e-9)) for r in instance.submit_times]
    horizon = max(due)
    bscale = 1 if all(float(b).is_integer() for b in instance.benefits) else 1000
    weights = [int(round(b * bscale)) for b in instance.benefits]

    model = cp_model.CpModel()
    accept = [model.NewBoolVar(f"y{k}") for k in range(n)]
    map_iv, red_iv = [], []
    map_done = []
    for k, (nm, tm, nr, tr) in enumerate(tasks):
        pm, pr = dur(tm), dur(tr)
        if rel[k] + pm + (pr if nr else 0) > due[k]:
            model.Add(accept[k] == 0)
        done = model.NewIntVar(0, horizon, f"md{k}")
        map_done.append(done)
        prev = None
        for i in range(nm):
            st = model.NewIntVar(rel[k], horizon, f"ms{k}_{i}")
            iv = model.NewOptionalFixedSizeIntervalVar(st, pm, accept[k], f"m{k}_{i}")
            map_iv.append(iv)
            model.Add(st + pm <= done).OnlyEnforceIf(accept[k])
            if prev is not None:
                model.Add(prev <= st)
            prev = st
        prev = None
        for i in range(nr):
            st = model.NewIntVar(0, horizon, f"rs{k}_{i}")
            iv = model.NewOptionalFixedSizeIntervalVar(st, pr, accept[k], f"r{k}_{i}")
            red_iv.append(iv)
            model.Add(st >= done).OnlyEnforceIf(accept[k])
            model.Add(st + pr <= due[k]).OnlyEnforceIf(accept[k])
            if prev is not None:
                model.Add(prev <= st)
            prev = st
        model.Add(done <= due[k]).OnlyEnforceIf(accept[k])
    cl = instance.cluster
    if map_iv:
        model.AddCumulative(map_iv, [1] * len(map_iv), cl.map_slots)
    if red_iv:
        model.AddCumulative(red_iv, [1] * len(red_iv), cl.reduce_slots)
    model.Maximize(sum(w * y for w, y in zip(weights, accept)))

    solver = cp_model.CpSolver()
    solver.parameters.num_search_workers = max(1, int(threads))
    solver.parameters.random_seed = int(seed)
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    status = solver.Solve(model)
    details: dict = {"model": "slot-level", "tasks": total, "time_scale": s, "times_exact": exact_times}
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        details["message"] = f"CP-SAT: {solver.StatusName(status)}"
        return Solution(method="slots-cpsat", status="time_limit", objective=0.0,
                        bound=solver.BestObjectiveBound() / bscale if status == cp_model.UNKNOWN else None,
                        accepted=(), sequence=(), solver=record, details=details)
    chosen = [k for k in range(n) if solver.Value(accept[k])]
    chosen.sort(key=lambda k: (solver.Value(map_done[k]), k))
    objective = float(sum(instance.benefits[k] for k in chosen))
    seq_value, schedule = evaluate_plan(instance, np.asarray(chosen, dtype=np.intp))
    details["seq_valid"] = bool(schedule.valid)
    details["map_done"] = {instance.ids[k]: solver.Value(map_done[k]) / s for k in chosen}
    bound = solver.BestObjectiveBound() / bscale
    return Solution(method="slots-cpsat", status="optimal" if status == cp_model.OPTIMAL else "time_limit",
                    objective=objective, bound=max(bound, objective), accepted=tuple(instance.ids[k] for k in chosen),
                    sequence=tuple(instance.ids[k] for k in chosen), solver=record, details=details)
