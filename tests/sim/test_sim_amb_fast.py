"""AMB's dynamic part with the settled prefix left out decides as over the whole plan.

``amb_insert`` builds its insertion oracle with ``locked`` (the started prefix), so the jobs whose
reduces end before the next map ends are left out of its tables
(:class:`mropt.admission.insertion.InsertionOracle`); ``make_policy("amb", reference=True)``
builds it over the whole plan, finished jobs included. On seeded admission workloads arriving
over time (node failures for timeout handling in some) both must give the same event log.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np

from mropt.admission import insertion
from mropt.admission.online import amb_insert
from mropt.instances.admission_gen import generate_admission
from mropt.instances.workload_convert import to_workload
from mropt.model.workload import Fault
from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy


def _run(w, reference: bool) -> tuple[str, list[str], list]:  # type: ignore[no-untyped-def]
    policy = make_policy("amb", {"timeout_handling": True}, reference=reference)
    rec = Simulation(w, policy).run()
    return rec.event_log_hash(), list(rec.jobs_columns()["reason"]), policy.timeouts  # type: ignore[attr-defined]


def _settled_values(monkeypatch) -> list[int]:  # type: ignore[no-untyped-def]
    """The ``settled`` prefix of every insertion oracle built from now on, in order."""
    settled: list[int] = []
    init = insertion.InsertionOracle.__init__

    def recording(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        init(self, *args, **kwargs)
        settled.append(self.settled)

    monkeypatch.setattr(insertion.InsertionOracle, "__init__", recording)
    return settled


def test_reference_and_settled_oracle_give_the_same_event_log(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    built = _settled_values(monkeypatch)
    rng = random.Random("amb-fast")
    accepted = cut = 0
    for case in range(24):
        instance = generate_admission(
            rng.randint(0, 10**6),
            jobs=rng.randint(6, 30),
            nodes=rng.randint(1, 3),
            size=rng.choice([4, 8]),
            deadline=rng.choice([150, 300, 600]),
            mean_interarrival=rng.choice([10, 40, 120]),
        )
        w = to_workload(instance)
        if case % 3 == 0:
            w = dataclasses.replace(w, faults=(Fault("n-0", float(rng.randint(5, 200))),))
        plain = _run(w, reference=True)
        assert not any(built)  # the plain path: every oracle over the whole plan
        fast = _run(w, reference=False)
        assert plain == fast, case
        accepted += sum("inserted" in r for r in plain[1])
        cut += sum(s > 0 for s in built)
        built.clear()
    assert accepted > 30 and cut > 30  # insertions happen, often past a settled prefix


def test_amb_insert_reference_switch_on_a_plan_with_finished_jobs(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # jobs 0-3 arrive far apart and are planned one after the other; at t = 1000 jobs 0-2 have
    # ended (job 2's reduces at 600.6, before job 3's maps end at 1011.2): the fast oracle leaves
    # them out, and both jobs of the batch at 1000 are appended as over the whole plan
    instance = generate_admission(3, jobs=6, nodes=2, size=4, deadline=300, mean_interarrival=0)
    jobs = list(instance.jobs)
    for k, submit in enumerate([0.0, 250.0, 500.0, 990.0, 1000.0, 1000.0]):
        jobs[k] = dataclasses.replace(jobs[k], submit_time=submit, deadline=submit + 400.0)
    instance = dataclasses.replace(instance, jobs=tuple(jobs))
    settled = _settled_values(monkeypatch)
    for reference in (True, False):
        order, acc, rej = amb_insert(instance, np.arange(4), 1000.0, [4, 5], reference=reference)
        assert (order.tolist(), acc, rej) == ([0, 1, 2, 3, 4, 5], [4, 5], [])
    assert settled == [0, 0, 3, 3]
