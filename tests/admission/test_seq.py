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


def _plan_with_gaps(rng: np.random.Generator, n: int, integer: bool) -> tuple:
    """n jobs with releases spread out (earlier jobs done before later maps end), made valid."""
    size = (lambda lo, hi, k: rng.integers(lo, hi, k).astype(float)) if integer else rng.uniform
    tcm, tcr = size(1, 30, n + 1), size(0, 30, n + 1) * (rng.random(n + 1) < 0.8)
    rel = np.sort(size(0, 20.0 * n, n + 1))
    d = rel + size(1, 50, n + 1)  # tight: most deadlines are relaxed to COTr below
    order = np.arange(n)
    s = evaluate(tcm, tcr, d, order, rel)
    d[:n] = np.maximum(d[:n], s.cotr)
    return tcm, tcr, d, rel, order


def test_locked_oracle_leaves_out_the_settled_prefix_with_the_same_answers():
    # locked=k (the dynamic part's started prefix) builds the tables over the jobs whose reduces
    # may still be running; every test at p >= k must answer as the whole order's oracle, and as
    # full evaluation (brute force) on integer times; float times check the floats are the same.
    rng = np.random.default_rng(7)
    settled = 0
    for case in range(300):
        n, integer = int(rng.integers(2, 14)), case % 2 == 0
        tcm, tcr, d, rel, order = _plan_with_gaps(rng, n, integer)
        x = n
        rel[x] = rel[n - 1] + float(rng.uniform(0, 30))
        dense_cells = int(rng.choice([0, 10**6]))
        plain = InsertionOracle(tcm, tcr, d, order, rel, dense_cells=dense_cells)
        for locked in range(n + 1):
            oracle = InsertionOracle(tcm, tcr, d, order, rel, dense_cells=dense_cells, locked=locked)
            assert oracle.settled < max(locked, 1)
            settled += oracle.settled > 0
            assert np.array_equal(oracle.cotr, plain.cotr)
            assert oracle.theorem_range(x, locked) == plain.theorem_range(x, locked)
            for p in range(locked, n + 1):
                assert oracle.can_insert(x, p) == plain.can_insert(x, p), (case, locked, p)
                if integer:
                    full = evaluate(tcm, tcr, d, np.insert(order, p, x), rel).valid
                    assert oracle.can_insert(x, p) == full
    assert settled > 300  # the cut happens often in these plans


def test_locked_oracle_refuses_a_position_in_the_settled_prefix():
    tcm, tcr, d = np.array([5.0, 5.0, 5.0]), np.array([1.0, 1.0, 1.0]), np.array([100.0, 100.0, 100.0])
    rel = np.array([0.0, 50.0, 51.0])
    oracle = InsertionOracle(tcm, tcr, d, [0, 1], rel, locked=2)
    assert oracle.settled == 1  # job 0 reduces in [5, 6], before job 1's maps end at 55
    try:
        oracle.can_insert(2, 1)
    except ValueError as exc:
        assert "settled" in str(exc)
    else:
        raise AssertionError("a position in the settled prefix was tested")
    assert oracle.can_insert(2, 2)
