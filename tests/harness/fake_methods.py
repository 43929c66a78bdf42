"""Test-only methods for the harness, registered when imported.

Experiments name this module in ``imports = ["tests.harness.fake_methods"]`` so that the
worker processes register them too.
"""

from __future__ import annotations

import os
import signal
import time

from mropt.model.solution import Solution
from mropt.registry import Param, mropt_solver, register


def _empty(name: str) -> Solution:
    return Solution(method=name, status="feasible", objective=0.0, accepted=(), sequence=(), solver=mropt_solver())


def _register(name: str, summary: str, params: dict[str, Param] | None = None):
    def decorate(func):
        try:
            return register(name, kind="admission", summary=summary, params=params)(func)
        except RuntimeError:  # imported twice under two names: keep the first
            return func

    return decorate


@_register("test-trivial", "accept nothing, at once (harness overhead)")
def trivial(instance, *, time_limit=None, seed=0):
    return _empty("test-trivial")


@_register("test-raise", "raise an exception")
def raises(instance, *, time_limit=None, seed=0):
    raise RuntimeError("boom from test-raise")


@_register("test-sleep", "sleep past any time limit, ignoring it")
def sleeps(instance, *, time_limit=None, seed=0):
    time.sleep(3600)
    return _empty("test-sleep")


@_register("test-crash", "kill its own process with SIGKILL")
def crashes(instance, *, time_limit=None, seed=0):
    os.kill(os.getpid(), signal.SIGKILL)
    return _empty("test-crash")


@_register(
    "test-spin",
    "burn CPU for `work` seconds, then accept nothing",
    params={"work": Param(float, 0.2, "seconds of CPU", minimum=0)},
)
def spins(instance, *, time_limit=None, seed=0, work=0.2):
    end = time.process_time() + float(work)
    x = 0
    while time.process_time() < end:
        x += 1
    return _empty("test-spin")


@_register(
    "test-slow",
    "edf-greedy after a pause of `delay` seconds",
    params={"delay": Param(float, 0.3, "seconds", minimum=0)},
)
def slow(instance, *, time_limit=None, seed=0, delay=0.3):
    from mropt.admission.baselines import edf_greedy

    time.sleep(float(delay))
    return edf_greedy(instance, time_limit=time_limit, seed=seed)


@_register("test-sigint", "send SIGINT to its own worker process (as Ctrl-C would), then sleep")
def sigint_self(instance, *, time_limit=None, seed=0):
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)
    return _empty("test-sigint")


@_register("test-sigterm", "send SIGTERM to its own worker process, then sleep")
def sigterm_self(instance, *, time_limit=None, seed=0):
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(5)
    return _empty("test-sigterm")


@_register("test-unverified", "claim an objective that verify rejects")
def unverified(instance, *, time_limit=None, seed=0):
    return Solution(
        method="test-unverified", status="feasible", objective=1e9, accepted=(), sequence=(), solver=mropt_solver()
    )
