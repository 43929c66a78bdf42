"""``drf`` honours its time limit and refuses what it cannot list.

Before: huge capacities against small demands made progressive filling run on, ignoring
``--time-limit``, its launch order growing without bound.
"""

from __future__ import annotations

import pytest

import mropt
from mropt.fairness import drf
from mropt.model import InputError
from mropt.model.io import instance_from_dict


def _instance(cpu: float, max_tasks: int | None = None, mem_demand: float = 0.0):
    user = {"id": "A", "demand": {"cpu": 1, "mem": mem_demand}}
    if max_tasks is not None:
        user["max_tasks"] = max_tasks
    return instance_from_dict(
        {
            "kind": "fairness",
            "schema_version": 1,
            "resources": {"cpu": cpu, "mem": 18},
            "users": [user, {"id": "B", "demand": {"cpu": 3, "mem": 1}, "max_tasks": 10}],
        }
    )


def test_more_launches_than_drf_can_list_are_refused_up_front(monkeypatch):
    inst = _instance(9007199254740993)
    assert drf.launch_bound(inst) > drf.MAX_LAUNCHES

    def no_filling(*args, **kwargs):
        raise AssertionError("progressive filling started")

    monkeypatch.setattr(drf, "share_key", no_filling)  # the heap's first key: the filling's first step
    with pytest.raises(InputError, match="could launch up to 9.01e[+]15 tasks"):
        mropt.solve(inst, "drf", time_limit=1)


def test_the_time_limit_stops_filling_with_a_valid_partial_allocation():
    inst = _instance(5_000_000, max_tasks=9_000_000, mem_demand=1e-9)
    sol = mropt.solve(inst, "drf", time_limit=0.3)  # how soon it stops: benchmarks/bench_time_claims.py
    assert sol.status == "time_limit" and "time limit" in sol.details["stopped"]
    assert 0 < sol.decision["allocation"]["A"] < 5_000_000
    assert mropt.verify(inst, sol).ok


def test_the_bound_is_not_hit_by_ordinary_instances():
    inst = mropt.generate_fairness(seed=1, users=200, tasks_max=50)
    assert drf.launch_bound(inst) <= drf.MAX_LAUNCHES
    sol = mropt.solve(inst, "drf", time_limit=60)
    assert sol.status == "feasible" and mropt.verify(inst, sol).ok


@pytest.mark.parametrize("scale", [1.401298464324817e-45, 1e-80, 1.0, 1e80])
@pytest.mark.parametrize("nodes", [False, True])
def test_tiny_capacities_fit_as_large_ones(scale, nodes):
    """A fit had an absolute 1e-9 besides the relative one: with capacities of 1e-45, four
    tasks of 1e-45 fitted in 1e-45 and verify rejected drf's answer (found by the
    malformed-input properties). The paper example's answer at every scale."""
    data = {
        "kind": "fairness",
        "schema_version": 1,
        "resources": {"cpu": 9 * scale, "mem": 18},
        "users": [
            {"id": "A", "demand": {"cpu": 1 * scale, "mem": 4}},
            {"id": "B", "demand": {"cpu": 3 * scale, "mem": 1}, "max_tasks": 10},
        ],
    }
    if nodes:
        data["nodes"] = [{"id": "n1", "capacity": {"cpu": 9 * scale, "mem": 18}}]
    inst = instance_from_dict(data)
    sol = mropt.solve(inst, "drf")
    assert dict(sol.decision["allocation"]) == {"A": 3, "B": 2}
    assert mropt.verify(inst, sol).ok
