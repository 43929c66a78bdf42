"""A test-only simulator policy for the harness, registered when imported.

Experiments name this module in ``imports = ["tests.harness.fake_policies"]`` so that the
worker processes register it too. ``test-slow-fifo`` is FIFO (``mropt.sim.policies.fifo``)
that first sleeps ``delay`` seconds of wall time: the same simulation, slow enough for a test
to kill a study between two runs.
"""

from __future__ import annotations

import contextlib
import time

from mropt.registry import Param
from mropt.sim.policies.fifo import Fifo
from mropt.sim.policy import register_policy
from mropt.sim.view import SimView


class SlowFifo(Fifo):
    def start(self, sim: SimView) -> None:
        time.sleep(self.params["delay"])
        super().start(sim)


with contextlib.suppress(ValueError):  # imported twice under two names: keep the first
    register_policy(
        "test-slow-fifo",
        summary="FIFO after sleeping 'delay' seconds (tests only)",
        source="tests/harness/fake_policies.py",
        needs=("slots",),
        params={"delay": Param(float, 0.0, "seconds of wall time slept before the run", minimum=0.0)},
    )(SlowFifo)
