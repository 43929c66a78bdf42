"""DRF progressive filling (DDRF paper sec. 3.1): Table 1, modes, properties."""

from __future__ import annotations

import copy
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings

from mropt.fairness.drf import progressive_filling
from mropt.fairness.verify import verify
from mropt.instances.fairness_gen import generate_fairness
from mropt.model import instance_from_dict
from mropt.registry import solve, verify_solution

from conftest import PAPER_EXAMPLE
from strategies import fairness_instances

F = Fraction


def paper():
    return instance_from_dict(copy.deepcopy(PAPER_EXAMPLE))


def test_table1_order_and_shares():
    inst = paper()
    res = progressive_filling(inst)
    assert res.tasks.tolist() == [3, 2]
    assert [inst.ids[i] for i in res.order] == ["B", "A", "A", "B", "A"]
    # replay Table 1 row by row: resource shares of A and B, dominant shares, CPU and memory used
    table1 = [
        ((F(0), F(0)), F(0), (F(3, 9), F(1, 18)), F(1, 3), F(3, 9), F(1, 18)),
        ((F(1, 9), F(4, 18)), F(2, 9), (F(3, 9), F(1, 18)), F(1, 3), F(4, 9), F(5, 18)),
        ((F(2, 9), F(8, 18)), F(4, 9), (F(3, 9), F(1, 18)), F(1, 3), F(5, 9), F(9, 18)),
        ((F(2, 9), F(8, 18)), F(4, 9), (F(6, 9), F(2, 18)), F(2, 3), F(8, 9), F(10, 18)),
        ((F(3, 9), F(12, 18)), F(2, 3), (F(6, 9), F(2, 18)), F(2, 3), F(1), F(14, 18)),
    ]
    demand = {"A": (1, 4), "B": (3, 1)}
    count = {"A": 0, "B": 0}
    for step, user in enumerate(res.order):
        count[inst.ids[user]] += 1
        shares = {u: (F(count[u] * demand[u][0], 9), F(count[u] * demand[u][1], 18)) for u in count}
        a_res, a_dom, b_res, b_dom, cpu, mem = table1[step]
        assert shares["A"] == a_res and max(a_res) == a_dom
        assert shares["B"] == b_res and max(b_res) == b_dom
        assert shares["A"][0] + shares["B"][0] == cpu and shares["A"][1] + shares["B"][1] == mem


def test_solution_json_keys_and_verify():
    inst = paper()
    sol = solve(inst, "drf")
    out = sol.to_dict()
    assert out["allocation"] == {"A": 3, "B": 2}
    assert out["dominant_shares"] == pytest.approx({"A": 2 / 3, "B": 2 / 3})
    assert out["utilisation"] == pytest.approx({"cpu": 1.0, "mem": 14 / 18})
    assert out["order"] == ["B", "A", "A", "B", "A"]
    assert sol.objective == pytest.approx(2 / 3)
    assert verify_solution(inst, sol).ok


def test_index_tie_break_same_allocation():
    res = progressive_filling(paper(), tie_break="index")
    assert res.tasks.tolist() == [3, 2] and res.order[0] == 0


def test_text_goes_on_where_the_listing_stops():
    # A (weight 4) uses up the CPU and, with the smallest weighted share, is picked when its
    # task no longer fits: the listing stops there, the text keeps serving C (memory only)
    inst = instance_from_dict(
        {
            "kind": "fairness",
            "schema_version": 1,
            "resources": {"cpu": 4, "mem": 100},
            "users": [{"id": "A", "demand": {"cpu": 2, "mem": 1}, "weight": 4}, {"id": "C", "demand": {"mem": 10}}],
        }
    )
    listing = progressive_filling(inst, mode="listing")
    text = progressive_filling(inst, mode="text")
    assert text.tasks.tolist() == [2, 9]
    assert listing.tasks.tolist() == [2, 3]
    assert verify_solution(inst, solve(inst, "drf", mode="listing")).ok


def test_weights_and_caps():
    inst = instance_from_dict(
        {
            "kind": "fairness",
            "schema_version": 1,
            "resources": {"cpu": 12},
            "users": [
                {"id": "A", "demand": {"cpu": 1}, "weight": 2},
                {"id": "B", "demand": {"cpu": 1}},
                {"id": "C", "demand": {"cpu": 1}, "max_tasks": 1},
            ],
        }
    )
    assert progressive_filling(inst).tasks.tolist() == [7, 4, 1]


def _fits_somewhere(inst, res, i):
    d = inst.demands[i]
    if inst.nodes is None:
        return bool(np.all(res.used + d <= inst.capacity + 1e-9))
    free = inst.node_capacity - res.per_node.T @ inst.demands
    return bool(np.any(np.all(free - d >= -1e-9, axis=1)))


@settings(max_examples=80, deadline=None)
@given(fairness_instances(max_users=6, max_caps=30, small=False))
def test_never_exceeds_capacity_and_leaves_no_task_that_fits(inst):
    res = progressive_filling(inst)
    assert np.all(res.tasks @ inst.demands <= inst.capacity + 1e-9)
    assert np.all(res.tasks <= inst.task_caps)
    for i in range(inst.n):
        if res.tasks[i] < inst.task_caps[i]:
            assert not _fits_somewhere(inst, res, i)
    assert verify(inst, solve(inst, "drf")).ok


@settings(max_examples=50, deadline=None)
@given(fairness_instances(max_users=5, max_caps=20, with_nodes=True, small=False))
def test_with_nodes_placement_fits_and_verifies(inst):
    for rule in ("first-fit", "best-fit"):
        res = progressive_filling(inst, placement=rule)
        assert np.all(res.per_node.T @ inst.demands <= inst.node_capacity + 1e-9)
        for i in range(inst.n):
            if res.tasks[i] < inst.task_caps[i]:
                assert not _fits_somewhere(inst, res, i)
        sol = solve(inst, "drf", placement=rule)
        assert verify(inst, sol).ok, verify(inst, sol).problems


def test_locality_preference_uses_input_nodes():
    inst = generate_fairness(3, users=4, nodes=6, with_nodes=True, replicas=2, tasks_min=1, tasks_max=3, rack_size=3)
    res = progressive_filling(inst)
    assert res.levels["node"] == int(res.tasks.sum())  # the cluster is nearly empty: every task node-local
    assert verify_solution(inst, solve(inst, "drf")).ok


def test_verify_catches_tampering():
    inst = paper()
    sol = solve(inst, "drf")
    from dataclasses import replace

    bad = replace(sol, decision={**sol.decision, "allocation": {"A": 3, "B": 3}})
    problems = " ".join(verify(inst, bad).problems)
    assert "resource 'cpu'" in problems and "order launches" in problems
    bad = replace(sol, objective=0.9)
    assert "objective" in " ".join(verify(inst, bad).problems)
