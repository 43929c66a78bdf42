"""``verify`` accepts good solutions and rejects tampered ones."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mropt
from mropt.admission.objective import evaluate_plan, solution_from_order
from mropt.admission.verify import verify
from mropt.model import AdmissionInstance, Cluster, Job

from paper_table1 import table1


def _order(inst, ids):
    return [inst.index[i] for i in ids]


def test_paper_order_is_valid_and_text_order_is_not():
    inst = table1()
    # The errata: (j4, j6, j2, j3) is the valid order of AMB's accepted set, benefit 1470.
    good = solution_from_order(inst, _order(inst, ["j4", "j6", "j2", "j3"]))
    verdict = verify(inst, good)
    assert verdict.ok, verdict.problems
    assert verdict.objective == 1470
    # COTm by prefix sums: 140, 330, 490, 680 (sec. 4.1).
    assert [verdict.completion[j][0] for j in ("j4", "j6", "j2", "j3")] == [140, 330, 490, 680]
    # The order printed in the text, (j4, j2, j6, j3), makes j6 late: COTr = 300 + 190 + 120 = 610 > 600 (Example 2 and its erratum).
    printed = dataclasses.replace(good, sequence=("j4", "j2", "j6", "j3"), accepted=("j4", "j2", "j6", "j3"))
    verdict = verify(inst, printed)
    assert not verdict.ok and "'j6'" in verdict.problems[0]
    assert verdict.completion["j6"][1] == 610


def test_figure2_reduce_fill():
    """Sec. 4.1's example: COTr(j2) = 480 after j1 occupies [140, 360] (TCr(j1) = 220)."""
    jobs = (
        Job(id="j1", map_phase_time=140, reduce_phase_time=220, deadline=400, benefit=1),
        Job(id="j2", map_phase_time=190, reduce_phase_time=120, deadline=500, benefit=1),
    )
    inst = AdmissionInstance(Cluster(10, 10), jobs)
    sol = solution_from_order(inst, [0, 1])
    verdict = verify(inst, sol)
    assert verdict.completion == {"j1": (140, 360), "j2": (330, 480)}


@pytest.mark.parametrize(
    "tamper, phrase",
    [
        (lambda s: dataclasses.replace(s, objective=s.objective + 1), "objective"),
        (lambda s: dataclasses.replace(s, sequence=s.sequence[:-1]), "disagree"),
        (lambda s: dataclasses.replace(s, accepted=s.accepted + ("j99",)), "unknown"),
        (lambda s: dataclasses.replace(s, sequence=None), "no sequence"),
        (
            lambda s: dataclasses.replace(
                s, accepted=s.accepted + s.accepted[:1], sequence=s.sequence + s.sequence[:1]
            ),
            "more than once",
        ),
        (lambda s: dataclasses.replace(s, objective=None), "no objective"),
    ],
)
def test_tampered_solutions_are_rejected(tamper, phrase):
    inst = table1()
    good = solution_from_order(inst, _order(inst, ["j4", "j6", "j2", "j3"]))
    verdict = verify(inst, tamper(good))
    assert not verdict.ok
    assert any(phrase in p for p in verdict.problems), verdict.problems


def test_late_jobs_pay_the_penalty_when_allowed():
    inst = table1()
    order = _order(inst, ["j4", "j2", "j6", "j3"])  # j6 late
    objective, schedule = evaluate_plan(inst, order)
    assert objective == 380 + 340 + 400 - 0.3 * 350
    sol = solution_from_order(inst, order)
    assert not verify(inst, sol).ok
    verdict = verify(inst, sol, allow_late=True)
    assert verdict.ok and verdict.late == ["j6"] and verdict.objective == pytest.approx(objective)


@st.composite
def instances(draw):
    n = draw(st.integers(1, 8))
    times = st.integers(1, 60)
    jobs = []
    for k in range(n):
        submit = draw(st.sampled_from([0, 0, 0, 10, 35]))
        jobs.append(
            Job(
                id=f"j{k}",
                map_phase_time=draw(times),
                reduce_phase_time=draw(st.sampled_from([0.5, 3.25]) | times),
                deadline=submit + draw(st.integers(1, 300)),
                benefit=draw(st.integers(0, 50)),
                submit_time=submit,
            )
        )
    return AdmissionInstance(Cluster(4, 4), tuple(jobs), alpha=draw(st.sampled_from([0.0, 0.3, 1.0])))


@settings(max_examples=150, deadline=None)
@given(inst=instances(), data=st.data())
def test_methods_evaluator_and_verify_agree_on_random_orders(inst, data):
    order = data.draw(st.permutations(range(inst.n)))
    k = data.draw(st.integers(0, inst.n))
    order = list(order[:k])
    objective, schedule = evaluate_plan(inst, order)
    verdict = verify(inst, solution_from_order(inst, order), allow_late=True)
    assert verdict.ok
    assert verdict.objective == pytest.approx(objective, abs=1e-9)
    for pos, idx in enumerate(order):
        cotm, cotr = verdict.completion[inst.ids[idx]]
        assert cotm == pytest.approx(schedule.cotm[pos])
        assert cotr == pytest.approx(schedule.cotr[pos])
    assert verdict.late == [inst.ids[i] for p, i in enumerate(order) if not schedule.on_time[p]]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 60))
def test_edf_greedy_solutions_verify(seed, n):
    inst = mropt.generate_admission(seed, jobs=n, mean_interarrival=float(seed % 3) * 40)
    sol = mropt.solve(inst, "edf-greedy")
    assert sol.status == "feasible"
    verdict = verify(inst, sol)
    assert verdict.ok, verdict.problems
    # nothing it rejected could have been appended at the end of its plan
    accepted = [inst.index[j] for j in sol.sequence]
    assert np.all(np.diff(inst.deadlines[accepted]) >= 0)


def test_verify_writes_the_documented_tolerances_down_on_its_own() -> None:
    """verify shares no code with the methods, but its numbers are docs/tolerances.md's."""
    import importlib

    verify_module = importlib.import_module("mropt.admission.verify")
    from mropt.model import tolerance

    assert float(verify_module._TIME_RTOL) == tolerance.TIME_RTOL
    assert verify_module._OBJECTIVE_RTOL == tolerance.OBJECTIVE_RTOL
    assert verify_module._OBJECTIVE_ATOL_FACTOR == tolerance.VALUE_ATOL_FACTOR
