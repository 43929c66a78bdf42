"""The lifted energy cuts of the Benders decomposition are valid and cut what they are made from.

Checked against the plain brute force of ``brute_force.py`` (every subset, every order,
Horn's condition in exact arithmetic; no code shared with the methods) on the small
instances that stress the oracle: every row made from any set (feasible or not) holds
for every brute-force valid set, and a set refuted by the oracle's necessary conditions
violates a row made from it (the cut removes the master's set, not only its core).
"""

from __future__ import annotations

from hypothesis import given
from test_exact_properties import _SETTINGS, stressing_instances

from mropt.admission.exact_master import lifted_energy_cuts
from mropt.admission.exact_oracle import SubsetOracle
from mropt.model import AdmissionInstance, Cluster

from brute_force import brute_force, feasible_sets
from small_jobs import job


def _lhs(row: tuple[dict[int, float], float], chosen: tuple[int, ...]) -> float:
    return sum(c for j, c in row[0].items() if j in chosen)


@_SETTINGS
@given(stressing_instances())
def test_rows_hold_for_every_valid_set_and_cut_their_set(instance: AdmissionInstance) -> None:
    oracle = SubsetOracle(instance)
    candidates = [j for j in range(instance.n) if oracle.alone_ok[j]]
    feasible = feasible_sets(instance)
    valid = [s for s, ok in feasible.items() if ok]
    for s in feasible:
        if not s or not all(oracle.alone_ok[j] for j in s):
            continue
        rows = lifted_energy_cuts(oracle, candidates, s)
        for row in rows:
            assert _lhs(row, s) > row[1], f"a row made from {s} does not cut it"
            for v in valid:
                assert _lhs(row, v) <= row[1], f"a row made from {s} cuts the valid set {v}"
        if not oracle.necessary(list(s)):
            assert rows, f"{s} fails a necessary condition, but no row cuts it"


def test_one_row_removes_every_set_failing_the_same_prefix() -> None:
    # one deadline, 20: three maps of 6 and reduces of 4 fit only two at a time (6 + 6 + 4 <= 20)
    jobs = tuple(job(k, 6, 4, 20, 5) for k in range(4))
    instance = AdmissionInstance(Cluster(1, 1), jobs)
    oracle = SubsetOracle(instance)
    rows = lifted_energy_cuts(oracle, [0, 1, 2, 3], (0, 1, 2))
    assert brute_force(instance)[0] == 10
    # the no-good cut of {0, 1, 2} leaves {0, 1, 3}, {0, 2, 3}, {1, 2, 3} and {0, 1, 2, 3}; the row none
    for s in [(0, 1, 3), (0, 2, 3), (1, 2, 3), (0, 1, 2, 3)]:
        assert any(_lhs(row, s) > row[1] for row in rows), s
