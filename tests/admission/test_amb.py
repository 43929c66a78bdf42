"""AMB static part (Algorithm 1, AMB sec. 4.2): Table 1 / Example 2, properties, beam, time limit."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mropt.admission.amb import BEAM_VARIANT, amb_oracle, amb_static
from mropt.admission.exact_oracle import SubsetOracle
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
    assert sol.details["beam_cut"] is False and sol.details["beam"] == 0 and sol.details["search"] == "oracle"
    listed = solve(inst, "amb", search="enumerate")
    assert (listed.status, listed.objective, listed.sequence) == ("feasible", 1470, sol.sequence)
    assert listed.details["max_orders"] >= 1


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
@given(instances)
def test_implicit_phi_accepts_what_the_listing_accepts(inst):
    """phi is every valid order of A (module docstring), so the oracle's greedy is Algorithm 1."""
    listed = amb_static(inst, beam=0)
    implicit = amb_oracle(inst)
    assert implicit.accepted == listed.accepted and implicit.rejected == listed.rejected
    assert tuple(int(i) for i in implicit.order) in {tuple(int(i) for i in o) for o in listed.orders}
    assert solve(inst, "amb").objective == solve(inst, "amb", search="enumerate").objective


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

    assert get_method("amb").params["beam"].default == 0  # the paper's Algorithm 1
    assert get_method(BEAM_VARIANT).params["beam"].default == 16
    assert BEAM_VARIANT == "amb-beam16"


def test_beam_loses_an_easy_optimum():
    """8 jobs where the beam of 16 orders cuts the orders that admit later jobs.

    Algorithm 1 (every valid order) and EDF find the optimum 3288; beam 16 accepts 2712.
    """
    inst = generate_admission(16, jobs=8, deadline=400)
    oracle = SubsetOracle(inst)
    optimum = max(
        float(inst.benefits[list(s)].sum())
        for k in range(inst.n + 1)
        for s in itertools.combinations(range(inst.n), k)
        if oracle.check(list(s)) is not None
    )
    assert optimum == 3288
    for kwargs in ({}, {"search": "enumerate"}, {"beam": 0}):
        sol = solve(inst, "amb", **kwargs)
        assert (sol.status, sol.objective) == ("feasible", optimum) and verify(inst, sol).ok, kwargs
    assert solve(inst, "edf-greedy").objective == optimum
    beam = solve(inst, BEAM_VARIANT)
    assert beam.objective == 2712 and beam.details["beam_cut"] is True and verify(inst, beam).ok
    assert solve(inst, "amb", beam=16).objective == 2712  # the same variant, under the plain name


def test_time_limit_stops_the_listing_with_a_valid_plan():
    """`amb --param search=enumerate --time-limit 1` once ran past 45 s (phi grows like |A|!)."""
    inst = generate_admission(1, jobs=30)
    sol = solve(inst, "amb", search="enumerate", time_limit=1)  # the speed: benchmarks/bench_time_claims.py
    assert sol.status == "time_limit" and verify(inst, sol).ok and sol.objective > 0
    d = sol.details
    assert d["stopped_at"] in inst.ids and "time limit of 1 s" in d["stopped"] and 0 < d["candidates_decided"] < 30
    assert d["completed_greedily"] > 0  # the rest went in where they fit


@pytest.mark.slow
def test_time_limit_on_a_large_instance():
    """N = 10,000: Algorithm 1 needs about 1.5 s here; with 0.1 s it stops, saying where, with a valid
    plan (how soon, at N = 60,000 and 1 s: benchmarks/bench_time_claims.py)."""
    inst = generate_admission(0, jobs=10000)
    sol = solve(inst, "amb", time_limit=0.1)
    assert sol.status == "time_limit" and sol.details["stopped_at"] in inst.ids
    assert sol.details["candidates_decided"] < inst.n  # stopped: Algorithm 1 did not decide every job
    assert sol.bound is None and sol.objective > 0 and verify(inst, sol).ok
