"""The recorder's on_time and verify_simulation's apply one rule, exactly.

The rule (docs/tolerances.md): on time when ``finish <= deadline * (1 + 1e-9)`` in exact
arithmetic. A job with deadline 105.999999894 that ends at exactly 106 s is late by it
(the limit is 1.7e-15 below 106), though the float ``d + 1e-9 * d`` rounds up to 106.0.
"""

from __future__ import annotations

from fractions import Fraction

from sim_helpers import mr_job, run, workload

D = 105.999999894


def test_the_case_is_late_in_exact_arithmetic() -> None:
    assert Fraction(106) > Fraction(D) * (1 + Fraction(1, 10**9))  # hand check of the premise


def test_a_job_ending_just_past_the_exact_limit_is_late_and_verified() -> None:
    nodes = [{"id": "n", "count": 1, "map_slots": 1, "reduce_slots": 1}]
    w = workload(nodes, [mr_job("j", 100.0, 6.0, deadline=D, benefit=10)])
    _, rec = run(w, "fifo", mode="event")  # run() fails on any problem verify_simulation finds
    jobs = rec.jobs_columns()
    assert jobs["finish"].tolist() == [106.0]
    assert jobs["on_time"] == [False]


def test_a_job_ending_within_the_limit_is_on_time_and_verified() -> None:
    nodes = [{"id": "n", "count": 1, "map_slots": 1, "reduce_slots": 1}]
    w = workload(nodes, [mr_job("j", 100.0, 6.0, deadline=105.9999999, benefit=10)])  # limit 106.0000000059
    _, rec = run(w, "fifo", mode="event")
    assert rec.jobs_columns()["on_time"] == [True]
