"""One scheduling round: Quincy-style min-cost flow vs DRF greedy, delay scheduling and DDRF."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from mropt.fairness.ddrf import compare_round, ddrf_round
from mropt.fairness.flow import Costs, SchedulingRound, min_cost_placement, round_cost, round_from_instance
from mropt.instances.fairness_gen import generate_fairness

RACK = {"a1": "A", "a2": "A", "b1": "B"}


def test_min_cost_flow_prefers_node_then_rack():
    rnd = SchedulingRound(
        slots={"a1": 1, "a2": 1, "b1": 1},
        rack=RACK,
        tasks=(("u", 0, ("a1",)), ("u", 1, ("a1",)), ("w", 0, ("b1",)), ("w", 1, ("b1",))),
    )
    best = min_cost_placement(rnd, Costs(rack_cost=1, any_cost=3, unscheduled_cost=10, wait_cost=0))
    assert best["levels"] == {"node": 2, "rack": 1, "any": 0}
    assert best["cost"] == 0 + 0 + 1 + 10  # two local, one rack-local, one unscheduled (3 slots)
    assert sorted(Counter(best["assignment"].values()).values()) == [1, 1, 1]


def test_waiting_users_are_scheduled_first():
    rnd = SchedulingRound(slots={"b1": 1}, rack=RACK, tasks=(("u", 0, ("a1",)), ("w", 0, ("a1",))), waiting={"w": 5})
    best = min_cost_placement(rnd, Costs(wait_cost=1))
    assert list(best["assignment"]) == [("w", 0)]


def test_counts_fix_tasks_per_user():
    rnd = SchedulingRound(
        slots={"a1": 2, "b1": 2}, rack=RACK, tasks=tuple(("u", k, ("a1",)) for k in range(3)) + (("w", 0, ("b1",)),)
    )
    best = min_cost_placement(rnd, counts={"u": 3, "w": 0})
    assert Counter(k[0] for k in best["assignment"]) == {"u": 3}
    assert best["levels"] == {"node": 2, "rack": 0, "any": 1}


def test_infinite_delay_launches_only_local_tasks():
    inst = generate_fairness(2, users=4, nodes=10, with_nodes=True, replicas=2, tasks_min=3, tasks_max=6)
    rnd = round_from_instance(inst, slots_per_node=1)
    res = ddrf_round(rnd, 10**6, 10**6, seed=1, instance=inst, rack_level=False)
    assert res["levels"]["rack"] == res["levels"]["any"] == 0


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 1000), slots=st.integers(1, 3), e1=st.integers(0, 4), extra=st.integers(0, 6))
def test_flow_is_the_locality_optimum_of_every_policy(seed, slots, e1, extra):
    inst = generate_fairness(
        seed, users=5, nodes=12, rack_size=4, with_nodes=True, replicas=2, tasks_min=2, tasks_max=8
    )
    rnd = round_from_instance(inst, slots_per_node=slots)
    for row in compare_round(rnd, E1=e1, E2=e1 + extra, D=e1 + extra, seed=seed, instance=inst):
        assert row["optimum_same_counts"] <= row["cost"]
        assert row["placed"] <= sum(rnd.slots.values())
    res = ddrf_round(rnd, e1, e1 + extra, seed=seed, instance=inst)
    assert max(Counter(res["assignment"].values()).values(), default=0) <= slots
    opt = min_cost_placement(rnd)
    assert opt["cost"] == round_cost(rnd, opt["assignment"])
    assert opt["cost"] <= round_cost(rnd, res["assignment"])
