"""Runs of quiet heartbeats offered one at a time (``lone_beats.QUIET_GROWTH`` 1: every offer is a
probe of one heartbeat, as 4 offers in 5 are on the SWIM day): the same outputs as the heartbeats run
one at a time through ``assign`` (``test_sim_quiet_runs.py``'s comparison, whose offers grow to 8, 64,
... heartbeats after an all-quiet one), and the hand-counted waits that reach their limit inside a
run, one of them exactly (sums of halves), at a probe: every quiet answer then goes through the
one-heartbeat paths, ``HeldBeats._quiet_one`` and ``FairQuiet._quiet_one`` (a ``>`` for ``>=`` at a
wait's limit in the latter passes ``test_sim_quiet_runs.py`` and fails here)."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from test_sim_quiet_runs import late_start, map_job_on, outputs, quiet_params, quiet_workload, two_racks

from mropt.sim import lone_beats


@pytest.fixture(autouse=True)
def probes_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lone_beats, "QUIET_GROWTH", 1)


@pytest.mark.parametrize(
    ("n", "delay", "start", "node", "quiet"),
    [(10, 4.0, 4.8, "n6", 12), (6, 4.5, 5.0, "n4", 7)],  # (test_sim_quiet_runs.py's cases)
)
def test_a_wait_reaching_its_limit_at_a_probe(n: int, delay: float, start: float, node: str, quiet: int) -> None:
    got, seen = late_start(
        two_racks(n), [map_job_on("long", "n0"), map_job_on("late", "n0", duration=1.0)], delay, "bulk"
    )
    assert got == [(pytest.approx(start), node, "rack")]
    assert seen["quiet"] == quiet and seen["long runs"] == 0, seen
    assert seen["stopped at a wait's limit"] == 0, seen  # (a probe that is not quiet ends no run: it is one)


def test_probes_give_the_outputs_of_heartbeats_one_at_a_time() -> None:
    rng = random.Random("quiet-probes")
    quiet = 0
    for _ in range(20):
        w = quiet_workload(rng)
        params = quiet_params(rng)
        until = rng.choice([None, None, float(rng.randint(20, 150))])
        options: dict[str, Any] = {"until": until, "limit": rng.choice([4, 25, 100_000]), "rows": "after"}
        options["whole_phases"] = rng.random() < 0.2
        seen: Counter[str] = Counter()
        bulk = outputs(w, params, "bulk", seen=seen, **options)
        quiet += seen["quiet"]
        assert outputs(w, params, "alone", **options) == bulk, (params, options, w)
    assert quiet > 400, quiet  # (672)
