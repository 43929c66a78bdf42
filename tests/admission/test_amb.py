"""AMB static part (Algorithm 1, AMB sec. 4.2): Table 1 / Example 2, properties, beam."""

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from mropt.admission.amb import amb_static
from mropt.admission.scoring import score_order
from mropt.admission.seq import evaluate
from mropt.admission.verify import verify
from mropt.instances.admission_gen import generate_admission
from mropt.model.admission import AdmissionInstance, Cluster, Job
from mropt.registry import solve

from paper_table1 import table1


def ids(inst, order):
    return [inst.ids[i] for i in order]


def test_table1_amb_accepts_j2_j3_j4_j6():
    inst = table1()
    sol = solve(inst, "amb")
    assert sol.status == "feasible"
    assert set(sol.accepted) == {"j2", "j3", "j4", "j6"}
    assert sol.objective == 1470
    assert list(sol.sequence) == ["j4", "j6", "j2", "j3"]  # the errata's valid order
    assert verify(inst, sol).ok
    assert sol.details["beam_cut"] is False and sol.details["max_orders"] >= 1


def test_example2_steps():
    inst = table1()
    res = amb_static(inst, beam=0)
    assert ids(inst, res.accepted) == ["j4", "j2", "j6", "j3"]
    assert ids(inst, res.rejected) == ["j5", "j1"]
    assert [ids(inst, o) for o in res.orders] == [["j4", "j6", "j2", "j3"]]


def naive_algorithm1(inst):
    """Algorithm 1 literally, no pruning: every position of every valid order, full SEQ evaluation."""
    rel = inst.submit_times
    phi = {()}
    accepted = []
    for x in score_order(inst):
        new = set()
        for s in phi:
            for p in range(len(s) + 1):
                cand = s[:p] + (int(x),) + s[p:]
                if evaluate(inst.tcm, inst.tcr, inst.deadlines, list(cand), rel).valid:
                    new.add(cand)
        if new:
            accepted.append(int(x))
            phi = new
    return accepted, phi


def small_instance(draw_jobs, m, r):
    jobs = tuple(
        Job(id=f"j{k}", map_phase_time=a, reduce_phase_time=b, deadline=d, benefit=w)
        for k, (a, b, d, w) in enumerate(draw_jobs)
    )
    return AdmissionInstance(cluster=Cluster(m, r), jobs=jobs)


job = st.tuples(st.integers(1, 40), st.integers(1, 40), st.integers(20, 200), st.integers(1, 100))
instances = st.builds(small_instance, st.lists(job, min_size=1, max_size=7), st.integers(1, 5), st.integers(1, 5))


@settings(max_examples=60, deadline=None)
@given(instances)
def test_unlimited_beam_equals_naive_algorithm1(inst):
    res = amb_static(inst, beam=0)
    accepted, phi = naive_algorithm1(inst)
    assert res.accepted == accepted
    assert {tuple(int(i) for i in o) for o in res.orders} == phi


@settings(max_examples=60, deadline=None)
@given(instances, st.sampled_from([0, 1, 2, 16]))
def test_amb_solutions_verify(inst, beam):
    sol = solve(inst, "amb", beam=beam)
    assert sol.status == "feasible", sol.details
    assert verify(inst, sol).ok
    res = amb_static(inst, beam=beam)
    for order in res.orders:  # every kept order is valid, whatever the beam cut
        assert evaluate(inst.tcm, inst.tcr, inst.deadlines, order, inst.submit_times).valid
    if beam:
        assert len(res.orders) <= beam


def test_beam_cut_is_reported_and_plans_verify():
    inst = generate_admission(3, jobs=40, deadline=3000)
    sol = solve(inst, "amb", beam=2)
    assert sol.details["beam_cut"] is True and sol.details["max_orders"] == 2
    assert verify(inst, sol).ok
    assert solve(inst, "amb", beam=2).sequence == sol.sequence  # deterministic


def test_paper_default_instance():
    inst = generate_admission(0, jobs=30)
    sol = solve(inst, "amb")
    assert sol.status == "feasible" and verify(inst, sol).ok and sol.objective > 0


def test_submit_times_are_release_times():
    inst = generate_admission(1, jobs=25, mean_interarrival=30)
    sol = solve(inst, "amb")
    assert verify(inst, sol).ok


def test_beam_parameter_is_declared():
    from mropt.registry import get_method

    assert "beam" in get_method("amb").params


def test_orders_are_permutations_of_accepted():
    inst = generate_admission(5, jobs=20)
    res = amb_static(inst, beam=4)
    for o in res.orders:
        assert sorted(o.tolist()) == sorted(res.accepted)
    assert not set(res.accepted) & set(res.rejected)
    assert len(res.accepted) + len(res.rejected) == inst.n
    assert list(itertools.chain(res.accepted)) == [i for i in score_order(inst) if i in set(res.accepted)]
