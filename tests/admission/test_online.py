"""AMB dynamic part (AMB sec. 4.2, Example 3) and the ``amb-online`` method.

Example 3's Figure 5 (with the parameters of j7 and j8) is not in the text. What the
text gives: at t = 300, with the plan of Table 1 running, Score(j7) = 2.13,
Score(j8) = 1.92, j7 is inserted between j6 and j3 (right before j3), j8 is rejected.
Assumed here (M = 30, R = 20), both submitted at t = 300:

* j7: TCm 100, TCr 100, deadline 800, benefit 213 -> STC 100, Ad 1, Score 2.13;
* j8: TCm 125, TCr 125, deadline 1000, benefit 240 -> STC 125, Ad 1, Score 1.92.

With the errata's plan j4, j6, j2, j3 (COTm 140, 330, 490, 680): j4 and j6 have started
their maps by t = 300; j7 after j3 is pruned by Theorem 4 (680 + 200 > 800), before j2 makes
j2 late (its reduce ends at 730 > 650), before j3 is valid -> j4, j6, j2, j7, j3. Then j8
is pruned everywhere: before j3 by Theorem 3 (125 + 780 + 180 > 980), after j3 by
Theorem 4 (780 + 250 > 1000). Without j7, j8 would fit at the end: the score order matters.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mropt.admission.amb import amb_static
from mropt.admission.online import amb_insert, locked_prefix
from mropt.admission.scoring import scores
from mropt.admission.seq import evaluate
from mropt.admission.verify import verify
from mropt.instances.admission_gen import generate_admission
from mropt.registry import solve

from paper_table1 import table1

J7 = ("j7", 100, 100, 800, 213, 300.0)
J8 = ("j8", 125, 125, 1000, 240, 300.0)


def instance(extra=(J7, J8)):
    return table1(extra)


def ids(inst, order):
    return [inst.ids[i] for i in order]


def test_example3_scores():
    inst = instance()
    s = scores(inst, [6, 7])
    assert round(s[0], 2) == 2.13 and round(s[1], 2) == 1.92


def test_example3_insert_j7_reject_j8():
    inst = instance()
    plan = amb_static(inst, range(6), beam=0).order
    assert ids(inst, plan) == ["j4", "j6", "j2", "j3"]
    assert locked_prefix(inst, plan, 300) == 2
    order, acc, rej = amb_insert(inst, plan, 300, [6, 7])
    assert ids(inst, order) == ["j4", "j6", "j2", "j7", "j3"]
    assert ids(inst, acc) == ["j7"] and ids(inst, rej) == ["j8"]
    assert evaluate(inst.tcm, inst.tcr, inst.deadlines, order, inst.submit_times).valid


def test_example3_j8_alone_would_fit():
    inst = instance()
    plan = amb_static(inst, range(6), beam=0).order
    order, acc, rej = amb_insert(inst, plan, 300, [7])
    assert ids(inst, acc) == ["j8"] and ids(inst, order)[-1] == "j8"


def test_amb_online_method_on_example3():
    inst = instance()
    sol = solve(inst, "amb-online")
    assert list(sol.sequence) == ["j4", "j6", "j2", "j7", "j3"]
    assert sol.objective == 1470 + 213
    assert verify(inst, sol).ok and sol.details["batches"] == 2


def test_started_jobs_are_never_moved():
    # a tight new job cannot go before j4 or j6, whose maps started before t = 300
    inst = instance(extra=(("x", 10, 10, 330, 50, 300.0),))
    plan = amb_static(inst, range(6), beam=0).order
    order, acc, rej = amb_insert(inst, plan, 300, [6])
    assert ids(inst, order)[:2] == ["j4", "j6"]
    assert ids(inst, rej) == ["x"]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 25), st.sampled_from([20.0, 60.0, 150.0]))
def test_amb_online_plans_verify(seed, n, gap):
    inst = generate_admission(seed, jobs=n, mean_interarrival=gap)
    sol = solve(inst, "amb-online")
    assert sol.status == "feasible", sol.details
    assert verify(inst, sol).ok


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 15))
def test_amb_insert_keeps_started_prefix_and_validity(seed, n):
    inst = generate_admission(seed, jobs=n + 3, mean_interarrival=0)
    plan = amb_static(inst, range(n)).order
    t = float(np.random.default_rng(seed).uniform(0, 800))
    lo = locked_prefix(inst, plan, t)
    order, acc, rej = amb_insert(inst, plan, t, [n, n + 1, n + 2])
    assert order[:lo].tolist() == plan[:lo].tolist()
    assert sorted(acc + rej) == [n, n + 1, n + 2]
    release = np.array(inst.submit_times)
    release[[n, n + 1, n + 2]] = t
    assert evaluate(inst.tcm, inst.tcr, inst.deadlines, order, release).valid
