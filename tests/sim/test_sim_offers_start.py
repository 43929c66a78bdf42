"""Event mode ends an instant in the offer run's pass once the run began (``EventOffers.start``, issue 32).

With launch runs allowed and a policy that has an offer run (``fifo``), ``Simulation._run`` calls
``EventOffers._pass_runs`` itself at the end of every instant; without one (``fifo`` under
``reference=True`` or ``without={"runs"}``, batches off, a policy without an offer run) it calls
``_pass``. Both give the plain rules' event log (``test_sim_fifo_runs.py`` checks it on random
workloads; here on one workload of section 1's shape).
"""

from __future__ import annotations

from typing import Any

import pytest

from mropt.sim.engine import Simulation
from mropt.sim.offers import EventOffers
from mropt.sim.policy import make_policy

from sim_helpers import workload


def _workload() -> Any:
    """Six jobs of section 1's shape on four nodes."""
    jobs = [
        {
            "id": f"j{i}",
            "submit_time": float(i),
            "stages": [
                {"type": "map", "tasks": [{"duration": 3.0 + i, "count": 5 + i}]},
                {"type": "reduce", "tasks": [{"duration": 2.0 + i % 3, "count": 2 + i % 2}]},
            ],
        }
        for i in range(6)
    ]
    return workload([{"id": "n", "count": 4, "map_slots": 2, "reduce_slots": 2}], jobs)


def _run(policy: str, **options: Any) -> tuple[Any, str, int]:
    """The function that ended the run's instants, the event-log hash and the event count."""
    reference = options.pop("reference", False)
    sim = Simulation(_workload(), make_policy(policy, reference=reference), mode="event", **options)
    rec = sim.run()
    offers = sim.offers
    assert isinstance(offers, EventOffers)
    return offers.after_instant.__func__, rec.event_log_hash(), sim.events  # type: ignore[attr-defined]


def test_fifo_with_runs_ends_each_instant_in_the_runs_pass() -> None:
    ended_by, log, events = _run("fifo")
    assert ended_by is EventOffers._pass_runs
    plain_by, plain_log, plain_events = _run("fifo", reference=True)
    assert plain_by is EventOffers._pass
    assert (log, events) == (plain_log, plain_events)


@pytest.mark.parametrize(("policy", "options"), [("fifo", {"batch": False}), ("fair", {})])
def test_without_an_offer_run_or_runs_the_instant_ends_in_the_pass(policy: str, options: dict[str, Any]) -> None:
    assert _run(policy, **options)[0] is EventOffers._pass


def test_plain_after_start_runs_the_plain_pass() -> None:
    """``plain()`` after ``start()`` (review): ``start`` had made ``_pass_runs`` the end of an instant,
    which asserts on the launch runs ``plain`` removes; ``plain`` restores ``_pass``, and the run
    gives the plain rules' event log."""
    sim = Simulation(_workload(), make_policy("fifo"), mode="event")
    offers = sim.offers
    assert isinstance(offers, EventOffers)
    started = offers.start
    seen = []

    def start_then_plain() -> None:
        started()
        seen.append(offers.after_instant.__func__)  # type: ignore[attr-defined]
        offers.plain()
        seen.append(offers.after_instant.__func__)  # type: ignore[attr-defined]

    offers.start = start_then_plain  # type: ignore[method-assign]
    log = sim.run().event_log_hash()
    assert seen == [EventOffers._pass_runs, EventOffers._pass]
    assert log == _run("fifo", reference=True)[1]
