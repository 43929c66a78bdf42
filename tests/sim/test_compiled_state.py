"""What a compiled run leaves besides its tables, and the sizes its buffers are given (review of issue 32).

* The simulation after ``run_compiled`` holds what the Python engine's ``run`` leaves: the cluster's
  counts (``busy``, ``runnable``, ``remaining``), each node's free resources bit for bit, ``active`` in
  arrival order, and each job's status and counts and its tasks' states, on random workloads of
  ``drf``, ``ddrf`` and ``delay``, run to their end or stopped by ``until``.
* The most batches that can run at once (``drf_engine._in_flight``: the event heap's and the batch
  slots' size) bounds every run's concurrency (counted from its tasks table), and stays near the
  cluster's capacity when some jobs demand no CPU and others no memory (it was one slot a task).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy

from sim_helpers import workload

numba = pytest.importorskip("numba")

from mropt.sim.compiled import drf_engine  # noqa: E402  (imports numba)

POLICIES = (("drf", {}), ("ddrf", {"e1": 1, "e2": 2}), ("delay", {"d": 2}))


def _random_workload(rng: random.Random, zeros: bool = False) -> WorkloadInstance:
    nodes = [
        {"id": f"n{i}", "rack": f"r{i % 2}", "resources": {"cpu": rng.choice([2, 4, 6]), "mem": rng.choice([1, 4])}}
        for i in range(rng.randint(2, 6))
    ]
    jobs = []
    for k in range(rng.randint(3, 25)):
        cpu, mem = rng.choice([0.5, 1, 2]), rng.choice([0.25, 0.5, 1])
        if zeros:  # some jobs need no CPU, others no memory (never neither: such a run is unbounded)
            cpu, mem = rng.choice([(cpu, 0), (0, mem), (cpu, mem)])
        group = {
            "duration": rng.choice([1.0, 2.0, 3.5]),
            "count": rng.randint(1, 12),
            "demand": {"cpu": cpu, "mem": mem},
        }
        job: dict[str, Any] = {
            "id": f"j{k}",
            "submit_time": float(rng.randint(0, 15)),
            "stages": [{"type": "map", "tasks": [group]}],
        }
        job["user"] = f"u{rng.randint(0, 4)}"
        jobs.append(job)
    extra = {"placement": {"replicas": 2, "seed": rng.randint(0, 9)}} if rng.random() < 0.7 else {}
    return workload(nodes, jobs, **extra)


def _left(sim: Simulation) -> tuple[Any, ...]:
    jobs = [
        (j.status, j.remaining, j.runnable, j.running, j.first_start, j.finish, j.stages[0].pending,
         j.stages[0].finished, j.stages[0].running, bytes(j.stages[0].state))
        for j in sim.jobs
    ]  # fmt: skip
    free = [[float(x).hex() for x in f] for f in sim.free_resources]
    return sim.busy, sim.runnable, sim.remaining, free, list(sim.active), jobs, sim.jobs_finished, sim.next_attempt


@pytest.mark.parametrize(("policy", "params"), POLICIES)
def test_the_simulation_left_by_a_compiled_run_is_the_python_engines(policy: str, params: dict[str, int]) -> None:
    rng = random.Random(f"compiled-state-{policy}")
    for k in range(30):
        w = _random_workload(rng)
        until = rng.choice([None, None, 2.0, 4.5, 9.0])
        py = Simulation(w, make_policy(policy, params), until=until)
        py.run()
        cc = Simulation(w, make_policy(policy, params), until=until)
        drf_engine.run_compiled(cc)
        assert _left(cc) == _left(py), f"{policy} workload {k}, until {until}"


def _most_running(sim: Simulation) -> int:
    cols = sim.record.tasks_columns()
    start, end = np.asarray(cols["start"], dtype=float), np.asarray(cols["end"], dtype=float)
    times = np.concatenate((start, end))
    steps = np.concatenate((np.ones(len(start)), -np.ones(len(end))))
    order = np.lexsort((steps, times))  # (at one time, the ends first: a slot is freed before it is taken)
    return int(np.cumsum(steps[order]).max()) if len(order) else 0


@pytest.mark.parametrize("zeros", [False, True])
def test_the_in_flight_bound_holds_and_stays_near_the_capacity(zeros: bool) -> None:
    rng = random.Random(f"compiled-in-flight-{zeros}")
    for k in range(30):
        w = _random_workload(rng, zeros)
        policy, params = POLICIES[k % 3]
        sim = Simulation(w, make_policy(policy, params))
        work, _, _, n_tasks = drf_engine._work(sim)
        bound = drf_engine._in_flight(work, np.array([f[0] for f in sim.free_resources]),
                                      np.array([f[1] for f in sim.free_resources]), n_tasks)  # fmt: skip
        drf_engine.run_compiled(sim)
        assert _most_running(sim) < bound, f"workload {k}"
        # every node fits at most capacity / smallest positive demand tasks of each kind, plus slack
        cpu = sum(f[0] for f in sim.capacity._res) / min((d for d in work.j_d0 if d > 0), default=np.inf)
        mem = sum(f[1] for f in sim.capacity._res) / min((d for d in work.j_d1 if d > 0), default=np.inf)
        assert bound <= cpu + mem + 4 * sim.n_nodes + 1, f"workload {k}: {bound} slots for {n_tasks} tasks"
