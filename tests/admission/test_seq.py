"""SEQ evaluation (AMB sec. 4.1) against a naive reference, and the incremental insertion test."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mropt.admission.insertion import InsertionOracle
from mropt.admission.seq import evaluate
from mropt.admission.verify import literal_reduce_completion_times


def naive_seq(tcm, tcr, deadlines, order, release=None):
    """The paper's procedure literally (sec. 4.1): prefix sums, then O(n^2) occupied-interval filling."""
    cotm, clock = [], 0.0
    for j in order:
        clock = max(clock, 0.0 if release is None else release[j]) + tcm[j]
        cotm.append(clock)
    cotr = literal_reduce_completion_times(cotm, [tcr[j] for j in order], [deadlines[j] for j in order])
    return np.array(cotm), np.array(cotr)


def test_paper_figure2_example():
    # Figure 2 text: S = j1, j2, ...; COTm(j1) = 140, TCr(j1) = 220, COTm(j2) = 330, j2 reduce [360, 480]
    tcm = np.array([140.0, 190.0])
    tcr = np.array([220.0, 120.0])
    d = np.array([500.0, 600.0])
    s = evaluate(tcm, tcr, d, [0, 1])
    assert s.cotm.tolist() == [140, 330] and s.cotr.tolist() == [360, 480] and s.valid


jobs_strategy = st.integers(1, 9).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(1, 30), min_size=n, max_size=n),
        st.lists(st.integers(0, 30), min_size=n, max_size=n),  # 0: map-only jobs
        st.lists(st.integers(1, 200), min_size=n, max_size=n),
        st.lists(st.integers(0, 60), min_size=n, max_size=n),
        st.booleans(),
        st.permutations(list(range(n))),
    )
)


@settings(max_examples=100, deadline=None)
@given(jobs_strategy)
def test_evaluate_matches_naive(data):
    tcm, tcr, d, rel, use_rel, order = data
    tcm, tcr, d, rel = (np.array(v, dtype=float) for v in (tcm, tcr, d, rel))
    release = rel if use_rel else None
    s = evaluate(tcm, tcr, d, order, release)
    cotm, cotr = naive_seq(tcm, tcr, d, order, release)
    assert np.array_equal(s.cotm, cotm)
    assert np.allclose(s.cotr, cotr, atol=1e-9)
    assert s.valid == bool(np.all(np.asarray(cotr) <= d[list(order)] * (1 + 0.5e-9)))  # the methods' limit


def test_map_only_jobs_finish_with_their_maps():
    s = evaluate(np.array([10.0, 5.0]), np.array([0.0, 0.0]), np.array([10.0, 14.0]), [0, 1])
    assert s.cotr.tolist() == [10, 15] and s.on_time.tolist() == [True, False]


def test_release_times_delay_maps():
    s = evaluate(np.array([10.0, 5.0]), np.array([3.0, 3.0]), np.array([100.0, 100.0]), [0, 1], np.array([0.0, 40.0]))
    assert s.cotm.tolist() == [10, 45] and s.cotr.tolist() == [13, 48]


@settings(max_examples=100, deadline=None)
@given(jobs_strategy, st.integers(1, 30), st.integers(0, 30), st.integers(1, 250), st.integers(0, 60), st.booleans())
def test_incremental_insertion_agrees_with_full_evaluation(data, xm, xr, xd, xrel, dense):
    tcm, tcr, d, rel, use_rel, order = data
    tcm, tcr, d, rel = (np.array(v, dtype=float) for v in (tcm + [xm], tcr + [xr], d + [xd], rel + [xrel]))
    release = rel if use_rel else None
    # make the order valid: relax deadlines of late jobs to their completion time
    s = evaluate(tcm, tcr, d, order, release)
    d[list(order)] = np.maximum(d[list(order)], s.cotr)
    x = len(order)
    oracle = InsertionOracle(tcm, tcr, d, order, release, dense_cells=10**6 if dense else 0)
    assert np.allclose(oracle.cotr, s.cotr)
    a, b = oracle.theorem_range(x)
    for p in range(len(order) + 1):
        full = evaluate(tcm, tcr, d, np.insert(np.array(order, dtype=np.intp), p, x), release).valid
        assert oracle.can_insert(x, p) == full, p
        if p < a or p > b:  # Theorems 3-4 never prune a valid position
            assert not full
