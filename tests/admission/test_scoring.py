"""Scoring of the AMB paper (sec. 4.2, eqs. 2-3, Table 1, Example 1)."""

import numpy as np
import pytest

from mropt.admission import scoring
from mropt.model.admission import AdmissionInstance, Cluster, Job

from paper_table1 import table1


def test_table1_benefit_ratio_and_scores():
    inst = table1()
    br = dict(zip(inst.ids, scoring.benefit_ratio(inst)))
    sc = dict(zip(inst.ids, scoring.scores(inst)))
    printed = {"j1": 1.90, "j2": 2.24, "j3": 2.15, "j4": 2.32, "j5": 3.09, "j6": 2.16}
    for j, v in printed.items():
        assert round(br[j], 2) == v
    printed_score = dict(printed, j5=1.91)
    for j, v in printed_score.items():
        assert round(sc[j], 2) == v


def test_example1_j5_adjusted_time():
    inst = table1()
    k = inst.index["j5"]
    assert inst.stc[k] == pytest.approx(440)
    assert scoring.adjusted_time(inst)[k] == pytest.approx(713, abs=0.5)
    assert scoring.scores(inst)[k] == pytest.approx(1.91, abs=0.005)


def test_table1_score_order():
    inst = table1()
    assert [inst.ids[i] for i in scoring.score_order(inst)] == ["j4", "j2", "j6", "j3", "j5", "j1"]


def test_adjustment_four_cases():
    # M = R: both weights 1/2; beta = 2. Job 0 against two others of mean (10, 10).
    cases = {
        (100, 100): 1 + 0.9 * 0.5 + 0.9 * 0.5,  # both phases too long
        (100, 10): 1 + 0.9 * 0.5,  # map only
        (10, 100): 1 + 0.9 * 0.5,  # reduce only
        (20, 20): 1.0,  # 20 <= 2 * 10: not too long (boundary is not penalised)
    }
    for (m, r), expected in cases.items():
        ad = scoring.adjustment(np.array([m, 10, 10]), np.array([r, 10, 10]), 10, 10, 2.0)
        assert ad[0] == pytest.approx(expected)


def test_adjustment_single_job_and_map_only():
    assert scoring.adjustment(np.array([5.0]), np.array([7.0]), 3, 2, 2.0).tolist() == [1.0]
    ad = scoring.adjustment(np.array([10.0, 10.0, 10.0]), np.array([0.0, 0.0, 50.0]), 3, 2, 2.0)
    assert np.all(np.isfinite(ad)) and ad[2] == pytest.approx(1 + 0.4)


def test_tie_breaking_deadline_then_index():
    jobs = (
        Job(id="a", map_phase_time=10, reduce_phase_time=10, deadline=90, benefit=10),
        Job(id="b", map_phase_time=10, reduce_phase_time=10, deadline=50, benefit=10),
        Job(id="c", map_phase_time=10, reduce_phase_time=10, deadline=90, benefit=10),
        Job(id="d", map_phase_time=10, reduce_phase_time=10, deadline=90, benefit=20),
    )
    inst = AdmissionInstance(cluster=Cluster(2, 2), jobs=jobs)
    assert [inst.ids[i] for i in scoring.score_order(inst)] == ["d", "b", "a", "c"]


def test_scores_of_a_subset_use_the_subset_as_J():
    inst = table1()
    sub = [inst.index["j5"], inst.index["j1"]]
    # against j1 alone (150, 170): j5's 400 > 300 and 500 > 340: both phases too long
    ad = 1 + (400 - 150) / 400 * 0.6 + (500 - 170) / 500 * 0.4
    assert scoring.scores(inst, sub)[0] == pytest.approx(1360 / (440 * ad))
