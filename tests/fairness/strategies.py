"""Hypothesis strategies for small fairness instances."""

from __future__ import annotations

from hypothesis import strategies as st

from mropt.model.fairness import FairnessInstance, FairNode, User

RES = ("cpu", "mem", "disk")


@st.composite
def fairness_instances(
    draw, max_users: int = 4, max_caps: int = 6, with_nodes: bool = False, small: bool = True, min_resources: int = 1
):
    m = draw(st.integers(min_resources, 3 if not with_nodes else 2))
    names = RES[:m]
    n = draw(st.integers(1, max_users))
    users = []
    for i in range(n):
        demand = {r: draw(st.integers(0, 4)) for r in names}
        if not any(demand.values()):
            demand[names[0]] = 1
        cap = draw(st.one_of(st.none(), st.integers(0, max_caps))) if not small else draw(st.integers(0, max_caps))
        users.append(User(f"u{i}", demand, weight=draw(st.sampled_from([1, 1, 2, 3])), max_tasks=cap))
    if with_nodes:
        v = draw(st.integers(1, 3))
        nodes = tuple(
            FairNode(f"n{k}", {r: draw(st.integers(1, 10)) for r in names}, rack=f"r{k % 2}") for k in range(v)
        )
        return FairnessInstance(resources={}, users=tuple(users), nodes=nodes)
    resources = {r: draw(st.integers(4, 16)) for r in names}
    return FairnessInstance(resources=resources, users=tuple(users))
