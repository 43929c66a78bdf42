"""``mropt policies`` says what ``ddrf`` and ``delay`` do at their default delays: exactly ``drf``'s decisions.

README and docs/simulation.md say so; the listing a newcomer reads first did not. The claim is
checked here too, on a workload with replicas (so the delays could matter): the default run of each
policy has drf's event log.
"""

from __future__ import annotations

import pytest

from mropt.instances.workload_gen import generate_workload
from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy

from cli_capture import run_cli


def listing() -> list[str]:
    r = run_cli("policies", "--params")
    assert r.code == 0, r.err
    return r.out.splitlines()


@pytest.mark.parametrize("policy,params", [("ddrf", ("e1", "e2")), ("delay", ("d",))])
def test_listing_says_the_default_delays_make_drfs_decisions(policy: str, params: tuple[str, ...]) -> None:
    lines = listing()
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == [policy])
    assert "default" in lines[at] and "exactly drf's decisions" in lines[at], lines[at]
    for i, name in enumerate(params, start=at + 1):
        assert lines[i].strip().startswith(f"{name}: "), lines[i]
        assert "drf's decisions" in lines[i], lines[i]


def test_the_default_delays_make_drfs_event_log() -> None:
    w = generate_workload("ddrf", 2, nodes=30, jobs=8)
    logs = {name: Simulation(w, make_policy(name, None)).run().event_log_hash() for name in ("drf", "ddrf", "delay")}
    assert logs["ddrf"] == logs["drf"] and logs["delay"] == logs["drf"]
