"""The running time of an attempt: the rule, and the straggler draws.

**The rule** (:meth:`AttemptTime.of`): base duration / node speed x locality factor (1
node-local or without replicas, ``rack_factor`` rack-local, ``remote_factor`` off-rack; Mumak's
1.0 / 1.5 / 3.0) x ``straggler_slowdown`` when the attempt is drawn a straggler. The engine's
launches, a backup's start (``speculate``), the clairvoyant rule's look ahead (``next_work``)
and a policy's prediction (``predicted_duration``, no draw) all call it.

**The draws** (probability ``straggler_rate``), one of :data:`STRAGGLER_DRAWS`:

* ``stream`` (the default without a speculation rule): one seeded draw per attempt, in launch
  order, from ``random.Random(seed)``;
* ``task`` (the default under a rule): the draw of the k-th attempt of a task is a hash of the
  seed, the job, stage and task indices and k, so runs whose launch orders differ (with and
  without backups, or under two rules) meet the same stragglers.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from mropt.model.errors import InputError
from mropt.model.workload_settings import Timing
from mropt.sim.state import NODE

if TYPE_CHECKING:
    from mropt.sim.state import Stage

#: how straggler draws are made (``Simulation(straggler_draws=...)``, module docstring)
STRAGGLER_DRAWS = ("stream", "task")
_MASK64 = (1 << 64) - 1


def task_uniform(seed: int, job: int, stage: int, task: int, k: int) -> float:
    """A uniform in [0, 1) from (seed, job, stage, task, attempt number): splitmix64 finalisers chained."""
    x = seed & _MASK64
    for v in (job, stage, task, k):
        x = ((x ^ (v & _MASK64)) + 0x9E3779B97F4A7C15) & _MASK64
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
        x ^= x >> 31
    return (x >> 11) * (1.0 / (1 << 53))


class AttemptTime:
    """The attempt-time rule of one run and its straggler draws (module docstring)."""

    __slots__ = ("factors", "speed", "rate", "slowdown", "seed", "draws", "_rng", "_task_draws", "_peek")

    def __init__(self, timing: Timing, speed: Sequence[float], seed: int, draws: str) -> None:
        if draws not in STRAGGLER_DRAWS:
            raise InputError(f"simulate: straggler_draws must be one of {', '.join(STRAGGLER_DRAWS)}, got {draws!r}")
        self.factors = (1.0, timing.rack_factor, timing.remote_factor)
        self.speed = speed
        self.rate = timing.straggler_rate
        self.slowdown = timing.straggler_slowdown
        self.seed = seed
        self.draws = draws
        self._rng = random.Random(seed)
        # task draws: attempts drawn so far per (job, stage, task)
        self._task_draws: dict[tuple[int, int, int], int] | None = {} if draws == "task" else None
        self._peek: tuple[int, bool] | None = None  # (next attempt id, its stream draw), see ``peek``

    def of(self, stage: Stage, task: int, node: int, level: int, slow: bool = False) -> float:
        """The running time of ``task`` of ``stage`` on ``node`` at locality ``level`` (the rule)."""
        durations = stage.durations
        work = (durations[0] if len(durations) == 1 else stage.duration_of(task)) / self.speed[node]
        if level > NODE:
            work *= self.factors[level]
        if slow:
            work *= self.slowdown
        return work

    def draw(self, job: int, stage: int, task: int) -> bool:
        """Whether the attempt starting now is a straggler (a draw made: call once per attempt, in launch order)."""
        if not self.rate:
            return False
        draws = self._task_draws
        if draws is None:
            return self._rng.random() < self.rate
        key = (job, stage, task)
        k = draws.get(key, 0)
        draws[key] = k + 1
        return task_uniform(self.seed, job, stage, task, k) < self.rate

    def peek(self, job: int, stage: int, task: int, next_attempt: int) -> bool:
        """What :meth:`draw` would answer for an attempt of the task started now, without drawing.

        ``next_attempt``: the id that attempt would get (stream draws happen only at launches, so
        the next draw is known until the next attempt id).
        """
        if not self.rate:
            return False
        draws = self._task_draws
        if draws is not None:
            return task_uniform(self.seed, job, stage, task, draws.get((job, stage, task), 0)) < self.rate
        peek = self._peek
        if peek is None or peek[0] != next_attempt:
            state = self._rng.getstate()
            peek = self._peek = (next_attempt, self._rng.random() < self.rate)
            self._rng.setstate(state)
        return peek[1]
