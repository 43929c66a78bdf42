"""``mpsa-exact`` within a memory cap and its time limit.

Before: a 1.2 KB priority file asking for 20,000 x 10,000 slots made mpsa-exact take
5 GB and overrun its time limit; ``--time-limit`` was not looked at.
"""

from __future__ import annotations

import json
import tracemalloc

import pytest

import mropt
from mropt.instances.priority_gen import generate_priority
from mropt.model import InputError
from mropt.model.io import instance_from_dict
from mropt.priority import exact
from mropt.priority.verify import verify

from cli_capture import run_completed


def _instance(map_slots: int, reduce_slots: int, **overrides):
    data = generate_priority(1, **{"arrival_rate": 0.0005, **overrides}).to_dict()
    data["map_slots"], data["reduce_slots"] = map_slots, reduce_slots
    return instance_from_dict(data)


def test_an_instance_beyond_the_memory_cap_is_refused_before_allocating(monkeypatch):
    inst = _instance(20_000, 10_000)
    assert len(json.dumps(inst.to_dict())) < 1500
    assert exact.memory_estimate(inst) > exact.MAX_MEMORY_BYTES

    def no_table(*args, **kwargs):
        # T_i(x, y) for every slot pair: 20001 x 10001 float64, 1.6 GB per priority, before the DP
        raise AssertionError("the sojourn table T_i(x, y) was allocated")

    monkeypatch.setattr(exact, "sojourn_table", no_table)
    with pytest.raises(InputError) as info:
        mropt.solve(inst, "mpsa-exact", time_limit=60)
    message = str(info.value)
    assert "20000 x 10000 slots" in message and "GiB" in message and "1 GiB cap" in message


def test_the_refusal_is_one_line_on_the_command_line(tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(_instance(20_000, 10_000).to_dict()))
    done = run_completed("solve", path, "--method", "mpsa-exact")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "mpsa-exact:" in done.stderr


def test_out_of_time_before_any_allocation():
    inst = _instance(2000, 1000)
    sol = mropt.solve(inst, "mpsa-exact", time_limit=1e-9)
    assert sol.status == "time_limit" and sol.objective is None
    assert "time limit" in sol.details["stopped"]
    assert verify(inst, sol).ok


def test_out_of_time_in_the_search_over_the_ratio_returns_the_best_so_far(monkeypatch):
    """No allocation meets every deadline (the paper's default rate): the search over r is cut short."""
    inst = _instance(100, 50, arrival_rate=0.1 / 60)
    full = mropt.solve(inst, "mpsa-exact")
    assert full.status == "infeasible" and "proven" not in full.details
    assert full.details["saturated"] == []  # so: DP 1 finds nothing, DP 2 (the largest ratio) finds one
    calls = {"n": 0}
    real = exact.knapsack

    def knapsack(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 2:  # out of time in the binary search over r
            raise exact._OutOfTime
        return real(*args, **kwargs)

    monkeypatch.setattr(exact, "knapsack", knapsack)
    cut = mropt.solve(inst, "mpsa-exact", time_limit=3600)
    assert cut.status == "infeasible" and cut.details["proven"] is False
    assert cut.details["worst_ratio"] >= full.details["worst_ratio"]
    assert verify(inst, cut).ok


def test_within_the_cap_and_the_limit_nothing_changes():
    inst = _instance(200, 100)
    a = mropt.solve(inst, "mpsa-exact")
    b = mropt.solve(inst, "mpsa-exact", time_limit=60)
    assert a.status == b.status == "optimal" and a.objective == b.objective
    assert a.decision["allocation"] == b.decision["allocation"]


def test_iterations_are_counted_not_walked_and_capped():
    """``iterations = 2^63 - 1`` built the visit string "MR" * 2^63 (all the memory, then the OOM killer)."""
    from mropt.priority.queueing import routing_from_pattern_mix

    mix = {"simple": 1.0, "iterative": 1.0, "chain": 1.0}
    r = routing_from_pattern_mix(mix, 3)
    assert (r.q11, r.q12, r.q21) == pytest.approx((1 / 7, 5 / 7, 3 / 5))  # sec. 5, Table 1
    tracemalloc.start()
    big = routing_from_pattern_mix(mix, 10**6)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 100_000 and 0 < big.q21 < 1  # counted: the visit string "MR" * 10^6 alone is 2 MB
    data = generate_priority(1).to_dict()
    data["iterations"] = 2**63 - 1
    with pytest.raises(InputError, match=r"'iterations' must be an integer in \[1, 1000000\]"):
        instance_from_dict(data)
