"""``why_not`` names a reason for every simulation the compiled loop cannot run, and ``run_compiled`` refuses it.

Every unsupported case (policies other than drf, ddrf and delay, their subclasses, heartbeat mode,
slots, other than two resources, more than one stage, duration or demand per stage, speculation,
faults, stragglers, slow-start, live utilisation rows, listed replicas, a trace) gets a reason, and
``run_compiled`` refuses it before running; a simulation already run is refused; a supported one gets
none and runs as the Python engine does; and a job whose demand fits no node never reaches the loop
(the workload itself is refused).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("numba")

from mropt.model.errors import InputError  # noqa: E402
from mropt.model.workload import WorkloadInstance  # noqa: E402
from mropt.sim.engine import Simulation  # noqa: E402
from mropt.sim.policies.ddrf import Ddrf, Delay  # noqa: E402
from mropt.sim.policies.drf import Drf  # noqa: E402
from mropt.sim.policy import make_policy  # noqa: E402
from mropt.sim.speculation.table import make_speculation  # noqa: E402

from compiled_helpers import (  # noqa: E402
    NODES,
    _group,
    _job,
    _sim,
    assert_same_runs,
    compiled_fixture,  # noqa: F401  (the fixture compiled)
    supported,
)
from sim_helpers import policy_params, workload  # noqa: E402

# ---------------------------------------------------------------------------------------------
# why_not: a reason for every simulation the loop cannot run


def _with_three_resources() -> WorkloadInstance:
    nodes = [{"id": f"n{i}", "resources": {"cpu": 4, "mem": 4, "disk": 2}} for i in range(2)]
    return workload(nodes, [_job("a", {"duration": 1.0, "count": 2, "demand": {"cpu": 1, "mem": 1, "disk": 1}})])


class _DrfKind(Drf):
    """A subclass of drf: it may change any rule, so the loop does not run it."""


class _DdrfKind(Ddrf):
    pass


class _DelayKind(Delay):
    pass


def _subclass_sim(cls: type, name: str, **params: Any) -> Simulation:
    return Simulation(supported(placement={"replicas": 2, "seed": 3}), cls(**policy_params(name, **params)))


#: the policies the loop does not run, and the name its reason gives
POLICY_REASONS = {
    "policy fair": "fair",
    "a subclass of drf": "_drfkind",
    "a subclass of ddrf": "_ddrfkind",
    "a subclass of delay": "_delaykind",
}

UNSUPPORTED: dict[str, Callable[[], Simulation]] = {
    "policy fair": lambda: _sim(supported(), "fair"),
    "a subclass of drf": lambda: _subclass_sim(_DrfKind, "drf"),
    "a subclass of ddrf": lambda: _subclass_sim(_DdrfKind, "ddrf", e1=1, e2=2),
    "a subclass of delay": lambda: _subclass_sim(_DelayKind, "delay", d=1),
    "heartbeat mode": lambda: _sim(supported(), mode="heartbeat"),
    "slots and resources": lambda: _sim(
        workload(
            [{**n, "map_slots": 2, "reduce_slots": 1} for n in NODES],
            [_job("a", _group(), user="u0")],
        )
    ),
    "slots only": lambda: _sim(
        workload(
            [{"id": "n0", "map_slots": 2, "reduce_slots": 1}], [_job("a", {"duration": 2.0, "count": 3}, user="u0")]
        )
    ),
    "one resource": lambda: _sim(
        workload(
            [{"id": "n0", "resources": {"cpu": 4}}],
            [_job("a", {"duration": 1.0, "count": 2, "demand": {"cpu": 1}})],
        )
    ),
    "three resources": lambda: _sim(_with_three_resources()),
    "two stages": lambda: _sim(
        workload(
            NODES,
            [
                {
                    "id": "a",
                    "stages": [
                        {"type": "map", "tasks": [_group()]},
                        {"type": "reduce", "tasks": [_group(count=1)]},
                    ],
                }
            ],
        )
    ),
    "two durations in one stage": lambda: _sim(workload(NODES, [_job("a", _group(2.0), _group(3.0))])),
    "two demands in one stage": lambda: _sim(workload(NODES, [_job("a", _group(2.0), _group(2.0, cpu=2.0))])),
    "speculation": lambda: _sim(supported(), speculation=make_speculation("late")),
    "faults": lambda: _sim(supported(faults=[{"node": "n1", "down": 1.0, "up": 5.0}])),
    "stragglers": lambda: _sim(supported(timing={"straggler_rate": 0.2})),
    "reduce slow-start": lambda: _sim(supported(timing={"reduce_slowstart": 0.5})),
    "live utilisation rows": lambda: _sim(supported(), utilisation_rows="live"),
    "listed replicas": lambda: _sim(
        workload(NODES, [_job("a", _group(replicas=["n0"]), user="u0"), _job("b", _group(), user="u1")])
    ),
    "listed replicas with a placement": lambda: _sim(
        workload(
            NODES,
            [_job("a", _group(replicas=["n1"]), user="u0"), _job("b", _group(), user="u1")],
            placement={"replicas": 2, "seed": 1},
        )
    ),
    "a trace": lambda: Simulation(supported(), make_policy("drf", {}, trace=[])),
    "a ddrf trace": lambda: Simulation(supported(), make_policy("ddrf", {"e1": 1, "e2": 1}, trace=[])),
    "a delay trace": lambda: Simulation(supported(), make_policy("delay", {"d": 2}, reference=True, trace=[])),
    "ddrf in heartbeat mode": lambda: _sim(supported(), "ddrf", {"e1": 0, "e2": 2}, mode="heartbeat"),
    "delay with speculation": lambda: _sim(supported(), "delay", {"d": 1}, speculation=make_speculation("late")),
    "delay with listed replicas": lambda: _sim(
        workload(NODES, [_job("a", _group(replicas=["n0"]), user="u0"), _job("b", _group(), user="u1")]),
        "delay",
        {"d": 3},
    ),
}


@pytest.mark.parametrize("case", list(UNSUPPORTED))
def test_why_not_names_a_reason_and_run_compiled_refuses(compiled: Any, case: str) -> None:
    sim = UNSUPPORTED[case]()
    reason = compiled.why_not(sim)
    assert isinstance(reason, str) and reason, case
    if case in POLICY_REASONS:  # drf, ddrf and delay themselves, not a subclass (it may change a rule)
        assert reason == f"policy {POLICY_REASONS[case]} (only drf, ddrf and delay run compiled)", reason
    else:
        assert "only drf, ddrf and delay" not in reason, (case, reason)
    with pytest.raises(ValueError, match="cannot run"):
        compiled.run_compiled(sim)
    assert sim.events == 0 and sim.now == 0.0 and not sim.record.job_end_order  # refused before running


def test_why_not_refuses_a_simulation_already_run(compiled: Any) -> None:
    sim = _sim(supported())
    assert compiled.why_not(sim) is None
    sim.run()
    assert compiled.why_not(sim) is not None


@pytest.mark.parametrize("placed", [False, True])
@pytest.mark.parametrize(
    ("policy", "params"), [("drf", {}), ("ddrf", {"e1": 1, "e2": 2}), ("ddrf", {"e1": 0, "e2": 0}), ("delay", {"d": 2})]
)
def test_why_not_is_none_for_a_supported_simulation_and_it_runs(
    compiled: Any, placed: bool, policy: str, params: dict[str, Any]
) -> None:
    extra = {"placement": {"replicas": 2, "seed": 3}} if placed else {}
    w = supported(**extra)
    assert compiled.why_not(_sim(w, policy, params)) is None
    assert compiled.why_not(Simulation(w, make_policy(policy, params, reference=True))) is None
    assert compiled.why_not(_sim(w, policy, params, heartbeat=0.5)) is None
    assert_same_runs(compiled, w, "supported", policy=policy, params=params)
    assert_same_runs(compiled, w, "supported, plain rule", reference=True, policy=policy, params=params)


# ---------------------------------------------------------------------------------------------
# a job that fits no node: refused with the workload, before any engine


def test_a_job_whose_demand_fits_no_node_is_refused_with_the_workload() -> None:
    # the compiled loop never sees one: the workload itself is refused (so every job of the random
    # workloads in test_compiled_drf.py can finish)
    nodes = [{"id": "n0", "resources": {"cpu": 4, "mem": 1}}, {"id": "n1", "resources": {"cpu": 1, "mem": 4}}]
    job = {"id": "j", "stages": [{"type": "map", "tasks": [{"duration": 1, "demand": {"cpu": 2, "mem": 2}}]}]}
    with pytest.raises(InputError, match="fits on no node"):
        workload(nodes, [job])
