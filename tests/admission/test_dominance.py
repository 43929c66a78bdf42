"""The dominance rows ``x_j <= x_i`` of the exact admission masters keep an optimum.

Checked against the plain brute force of ``brute_force.py`` (every subset, every order,
Horn's condition in exact arithmetic; no code shared with the methods) on the small
instances that stress the oracle (tied deadlines, equal and zero benefits, submit
times): for every pair the rows imply, swapping the dominated job for its dominator
keeps every valid set valid, and the best set obeying all rows is a brute-force optimum.
"""

from __future__ import annotations

from hypothesis import given
from test_exact_properties import _SETTINGS, stressing_instances

from mropt.admission.exact_master import dominance_pairs
from mropt.admission.exact_oracle import SubsetOracle
from mropt.model import AdmissionInstance, Cluster

from brute_force import feasible_sets
from small_jobs import job


def _closure(n: int, pairs: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """Every (j, i) the rows imply: x_j <= x_i through a chain of rows."""
    up: dict[int, set[int]] = {k: set() for k in range(n)}
    for j, i in pairs:
        up[j].add(i)
    for k in range(n):  # Floyd-Warshall on booleans: fine for a handful of jobs
        for j in range(n):
            if k in up[j]:
                up[j] |= up[k]
    return {(j, i) for j in range(n) for i in up[j]}


def _pairs(instance: AdmissionInstance) -> list[tuple[int, int]]:
    oracle = SubsetOracle(instance)
    candidates = [j for j in range(instance.n) if oracle.alone_ok[j]]
    return dominance_pairs(oracle, candidates, [float(w) for w in instance.benefits])


@_SETTINGS
@given(stressing_instances())
def test_each_implied_row_is_a_valid_swap_and_an_optimum_obeys_all(instance: AdmissionInstance) -> None:
    feasible = feasible_sets(instance)
    implied = _closure(instance.n, _pairs(instance))
    assert all(j != i for j, i in implied), "the rows form a cycle"
    value = {s: float(instance.benefits[list(s)].sum()) for s, ok in feasible.items() if ok}
    for j, i in implied:
        assert instance.benefits[i] >= instance.benefits[j]
        for s in value:
            if j in s and i not in s:
                swapped = tuple(sorted((set(s) - {j}) | {i}))
                assert feasible[swapped], f"{s} valid, but {swapped} (job {j} -> {i}) is not"
    obeying = [v for s, v in value.items() if all(i in s for j, i in implied if j in s)]
    assert max(obeying) == max(value.values())


def test_pairs_are_the_covering_relation_of_a_chain() -> None:
    # job 0 easiest and worth most, then 1, then 2; job 3 is worth more than all but is hardest
    rows = [(1, 1, 30, 9), (2, 2, 30, 8), (3, 3, 20, 7), (4, 4, 10, 50)]
    instance = AdmissionInstance(Cluster(1, 1), tuple(job(k, a, b, d, w) for k, (a, b, d, w) in enumerate(rows)))
    assert sorted(_pairs(instance)) == [(1, 0), (2, 1)]  # (2, 0) follows; job 3 dominates and is dominated by none


def test_identical_jobs_are_ordered_by_index_without_a_cycle() -> None:
    instance = AdmissionInstance(Cluster(1, 1), tuple(job(k, 2, 2, 9, 5) for k in range(3)))
    assert sorted(_pairs(instance)) == [(1, 0), (2, 1)]


def test_a_later_submit_time_or_a_smaller_benefit_breaks_dominance() -> None:
    # job 1 has shorter phases and a later deadline than job 0
    def pairs(submit_1: int, benefit_1: int) -> list[tuple[int, int]]:
        jobs = (job(0, 3, 3, 20, 5), job(1, 2, 2, 30, benefit_1, submit_1))
        return _pairs(AdmissionInstance(Cluster(1, 1), jobs))

    assert pairs(0, 9) == [(0, 1)]
    assert pairs(5, 9) == []  # submitted later
    assert pairs(0, 3) == []  # worth less


def test_a_later_submit_time_can_make_the_swap_invalid() -> None:
    # job 0 beats job 1 in TCm, TCr, deadline and benefit, but is submitted at 3, not 0
    rows = [(1, 2, 6, 5, 3), (1, 4, 5, 5, 0), (4, 2, 9, 1, 0)]
    instance = AdmissionInstance(Cluster(1, 1), tuple(job(k, a, b, d, w, r) for k, (a, b, d, w, r) in enumerate(rows)))
    feasible = feasible_sets(instance)
    assert feasible[(1, 2)] and not feasible[(0, 2)]  # so x_1 <= x_0 would cut off every plan with job 2
    assert (1, 0) not in _closure(instance.n, _pairs(instance))
