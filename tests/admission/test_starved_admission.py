"""Admission's exact methods and bounds with each solver call stopped at once.

The defect: in the Benders loop of ``cpsat``, a CP-SAT master stopped before its first
solution (status UNKNOWN) handed back CP-SAT's unproven "best bound", 0 for this
maximisation; the loop took it as proven, the bound fell below the incumbent and the
run ended ``optimal`` below the true optimum (AMB Table 2 defaults, N = 60, seed 2:
"optimal" 13380 where a plan of 13461 passes ``mropt verify``). ``slots-cpsat`` read the
same unproven bound. Here every solver call of a run is stopped in turn
(:mod:`mropt.backends.starve`, deterministic) and no result may claim an optimum other
than the brute-force one (tests/admission/brute_force.py) or a bound below it.
"""

from __future__ import annotations

import dataclasses
import functools

import pytest

from mropt.admission.exact_benders import MasterResult, benders
from mropt.backends.starve import starved
from mropt.instances.admission_gen import generate_admission
from mropt.model import AdmissionInstance
from mropt.registry import solve

from brute_force import brute_force
from starved_runs import checked_methods, false_claims, starved_runs
from test_exact import random_instance
from test_slots import phase_instance

#: tight instances on which the Benders loop needs 2 to 5 solver calls (seed, jobs, releases)
TIGHT = [(8, 8, False), (12, 8, False), (21, 8, False), (15, 7, True)]


def common_deadline(seed: int, scale: float = 1.0) -> AdmissionInstance:
    """Phase-time jobs with one common deadline: the slot optimum equals the SEQ optimum
    (mropt/admission/slots.py), so the SEQ brute force is the slot optimum too; ``scale``
    0.1 puts the times off the binary grid (slots-cpsat then solves a restriction and a
    relaxation)."""
    inst = phase_instance(seed, 5, common_deadline=True)
    jobs = tuple(
        dataclasses.replace(
            j,
            map_phase_time=j.map_phase_time * scale,
            reduce_phase_time=j.reduce_phase_time * scale,
            deadline=j.deadline * scale,
        )
        for j in inst.jobs
    )
    return AdmissionInstance(inst.cluster, jobs)


@functools.cache
def optimum(inst: AdmissionInstance) -> float:
    """The brute-force optimum, computed once per instance."""
    return brute_force(inst)[0]


def cases(method: str) -> list[tuple[str, AdmissionInstance]]:
    if method == "slots-cpsat":  # the slot-level problem: its optimum is SEQ's only on these
        return [(f"common deadline {s} x{f}", common_deadline(s, f)) for s, f in ((50, 1.0), (52, 1.0), (51, 0.1))]
    return [(f"tight {s}/{n}{'/releases' if r else ''}", random_instance(s, n, releases=r)) for s, n, r in TIGHT]


@pytest.mark.parametrize("method", checked_methods("admission"))
def test_no_false_optimum_or_bound_when_any_solver_call_stops(method: str) -> None:
    for name, inst in cases(method):
        runs = starved_runs(inst, method)
        assert not false_claims(inst, runs, optimum(inst)), name
        assert runs[0][1].status in ("optimal", "bound"), (name, runs[0][1].details)  # unstarved: proven


def test_a_stopped_master_is_no_proof() -> None:
    """N = 60, seed 2 (``mropt generate admission --jobs 60 --seed 2``), the second master
    solve (the run's 6th solver call: the energy rows' LP, amb's order oracle, bound-lp's
    LP, master, order oracle, master) stopped at once: the old loop returned "optimal"
    13380 with the bound "master stopped early (its proven bound)"."""
    inst = generate_admission(2, jobs=60)
    with starved({6}) as run:
        sol = solve(inst, "cpsat", time_limit=60)
    assert run.starved == [(6, "cpsat")]
    assert sol.status == "time_limit" and sol.details["master_message"] == "CP-SAT: UNKNOWN"
    assert sol.bound >= 13461  # a plan of 13461 passes mropt verify
    assert sol.details["bound_from"] != "master stopped early (its proven bound)"


def test_a_master_bound_below_a_valid_plan_never_tightens_the_bound() -> None:
    """Defence in depth: a master "bound" below an order already found contradicts the
    relaxation; the loop keeps its proven bound and records the contradiction."""
    inst = random_instance(8, 8)
    best = optimum(inst)

    def lying_master(data, cuts, time_left, hint):  # noqa: ANN001, ANN202
        return MasterResult(None, None, 0.0, False, "stopped")

    sol = benders(inst, lying_master, time_limit=None, solver={"name": "test", "version": ""})
    assert sol.status == "time_limit" and sol.objective < best <= sol.bound
    assert sol.details["bounds_rejected"] == [
        {"from": "master stopped early (its proven bound)", "bound": 0.0, "plan": sol.objective}
    ]
