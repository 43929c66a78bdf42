"""Generator of priority instances with the MPSA paper's experiment as defaults.

MPSA sec. 5 and Table 2: S_map = 100 and S_reduce = 50 slots (25 slaves with 4 map and
2 reduce slots); three priorities with deadlines T1 = 10, T2 = 20, T3 = 40 minutes; a map
stage of 100 map tasks of 1 minute on average (6000 slot-seconds per map visit) and
50 minutes of reduce work (3000 slot-seconds per reduce visit); one third each of simple,
iterative (3 rounds) and chain jobs (Table 1). Figure 6 uses a user arrival rate of
0.3 jobs per minute, taken here as the total over the three priorities (0.1 per minute,
1/600 jobs per second, each).

Parameters (all recorded in the file under ``generator``):

* ``arrival_rate`` (jobs/s per priority) and ``workload_scale`` (multiplies both works):
  the x axes of Figures 5 and 6;
* ``jitter`` in [0, 1): each priority's rate and works are multiplied by independent
  factors uniform in [1 - jitter, 1 + jitter] (0 by default: the paper's averages);
* ``history_slices``: when positive, each priority gets that many time slices of
  history per field instead of explicit values, drawn as an AR(1) process around the
  values above (``history_phi`` = 0.5, noise standard deviation ``history_cv`` = 0.2
  of the mean, clipped at 5% of the mean), so the allocation uses sec. 4.2's forecast.

Priority i's draws come from ``numpy.random.default_rng([seed, i])``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from mropt.instances.params import MAX_ITEMS, check_counts, check_seed, check_types
from mropt.model.errors import InputError
from mropt.model.priority import PATTERNS, Priority, PriorityInstance

MODEL_NAME = "mpsa-paper"
MODEL_VERSION = 1


@dataclass(frozen=True)
class PriorityParams:
    """Every parameter of the generator; the defaults are the paper's (Table 2, sec. 5).

    Each field is an option of ``mropt generate priority``, built from its type, default
    and ``metadata`` (:func:`mropt.cli.common.add_param_options`); ``"cli": False`` keeps
    a field off the command line (settable from Python and experiment files only).
    """

    map_slots: int = 100
    reduce_slots: int = 50
    deadlines: tuple[float, ...] = field(
        default=(600.0, 1200.0, 2400.0), metadata={"help": "seconds, comma-separated (default {default})"}
    )
    arrival_rate: float = field(default=0.1 / 60, metadata={"help": "jobs/s per priority (default 1/600)"})
    map_tasks: int = field(default=100, metadata={"help": "map tasks per map visit (default {default})"})
    map_task_time: float = field(default=60.0, metadata={"help": "s (default {default})"})
    reduce_work: float = field(default=3000.0, metadata={"help": "slot-seconds per reduce visit (default {default})"})
    workload_scale: float = field(default=1.0, metadata={"help": "multiplies map and reduce work (default {default})"})
    pattern_mix: Mapping[str, float] = field(
        default_factory=lambda: {p: 1.0 for p in PATTERNS},
        metadata={"help": "simple=1,iterative=1,chain=1 (default equal thirds)"},
    )
    iterations: int = field(default=3, metadata={"help": "rounds of an iterative job (default {default})"})
    jitter: float = field(
        default=0.0, metadata={"help": "per-priority rate and work vary by +/- this fraction (default {default})"}
    )
    history_slices: int = field(
        default=0, metadata={"help": "AR(1) history length instead of explicit values (default {default})"}
    )
    history_phi: float = field(default=0.5, metadata={"cli": False})
    history_cv: float = field(default=0.2, metadata={"cli": False})

    def check(self) -> None:
        def bad(name: str, rule: str) -> InputError:
            return InputError(f"generator: parameter '{name}' {rule}, got {getattr(self, name)!r}")

        check_types(self)
        for name in ("map_slots", "reduce_slots", "map_tasks", "iterations"):
            if not getattr(self, name) >= 1:
                raise bad(name, "must be >= 1")
        check_counts(self, ("history_slices",))
        if len(self.deadlines) > MAX_ITEMS:
            raise bad("deadlines", f"must list at most {MAX_ITEMS:,} priorities")
        for name in ("map_task_time", "reduce_work", "workload_scale"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) > 0):
                raise bad(name, "must be > 0")
        if not (math.isfinite(self.arrival_rate) and self.arrival_rate >= 0):
            raise bad("arrival_rate", "must be >= 0")
        if not self.deadlines or not all(math.isfinite(d) and d > 0 for d in self.deadlines):
            raise bad("deadlines", "must be a non-empty list of numbers > 0")
        if not 0 <= self.jitter < 1:
            raise bad("jitter", "must be in [0, 1)")
        if self.history_slices < 0 or self.history_slices == 1:
            raise bad("history_slices", "must be 0 (no history) or >= 2")
        if not -1 < self.history_phi < 1:
            raise bad("history_phi", "must be in (-1, 1)")
        if not self.history_cv >= 0:
            raise bad("history_cv", "must be >= 0")
        unknown = sorted(set(self.pattern_mix) - set(PATTERNS))
        if unknown:
            raise InputError(f"generator: parameter 'pattern_mix' names unknown pattern {unknown[0]!r}")
        if any(w < 0 for w in self.pattern_mix.values()) or not sum(self.pattern_mix.values()) > 0:
            raise bad("pattern_mix", "must have non-negative weights with a positive sum")

    def record(self) -> dict[str, Any]:
        out = asdict(self)
        out["deadlines"] = list(self.deadlines)
        out["pattern_mix"] = dict(self.pattern_mix)
        return out


def _ar1_series(rng: np.random.Generator, mean: float, n: int, phi: float, cv: float) -> tuple[float, ...]:
    values, x = [], mean
    for _ in range(n):
        x = mean + phi * (x - mean) + float(rng.normal(0.0, cv * mean))
        x = max(x, 0.05 * mean)
        values.append(float(f"{x:.6g}"))
    return tuple(values)


def generate_priority(seed: int = 0, params: PriorityParams | None = None, **overrides: Any) -> PriorityInstance:
    """A seeded priority instance; keyword overrides set fields of :class:`PriorityParams`.

    Same seed and parameters, same instance (and the same file, byte for byte).
    """
    seed = check_seed(seed)
    params = params or PriorityParams()
    if overrides:
        unknown = sorted(set(overrides) - set(PriorityParams.__dataclass_fields__))
        if unknown:
            raise InputError(f"generator: unknown parameter {unknown[0]!r}")
        params = PriorityParams(**{**asdict(params), "pattern_mix": params.pattern_mix, **overrides})
    check_types(params)  # before float() reads the deadlines
    params = PriorityParams(
        **{
            **asdict(params),
            "deadlines": tuple(float(d) for d in params.deadlines),
            "pattern_mix": dict(params.pattern_mix),
        }
    )
    params.check()
    priorities = []
    for i, deadline in enumerate(params.deadlines, start=1):
        rng = np.random.default_rng([seed, i])
        factors = rng.uniform(1 - params.jitter, 1 + params.jitter, size=3) if params.jitter else np.ones(3)
        rate = params.arrival_rate * float(factors[0])
        map_work = params.map_tasks * params.map_task_time * params.workload_scale * float(factors[1])
        reduce_work = params.reduce_work * params.workload_scale * float(factors[2])
        values = {"arrival_rate": rate, "map_work": map_work, "reduce_work": reduce_work}
        if params.history_slices:
            history = {
                key: _ar1_series(rng, value, params.history_slices, params.history_phi, params.history_cv)
                for key, value in values.items()
            }
            if rate == 0:
                history["arrival_rate"] = (0.0,) * params.history_slices
            priorities.append(Priority(id=f"T{i}", deadline=deadline, history=history))
        else:
            rate, map_work, reduce_work = (float(f"{v:.6g}") for v in (rate, map_work, reduce_work))
            priorities.append(
                Priority(id=f"T{i}", deadline=deadline, arrival_rate=rate, map_work=map_work, reduce_work=reduce_work)
            )
    record = {"model": MODEL_NAME, "model_version": MODEL_VERSION, "seed": seed, "params": params.record()}
    return PriorityInstance(
        map_slots=params.map_slots,
        reduce_slots=params.reduce_slots,
        priorities=tuple(priorities),
        pattern_mix=dict(params.pattern_mix),
        iterations=params.iterations,
        name=f"mpsa-l{params.arrival_rate * 60:g}pm-w{params.workload_scale:g}-s{seed}",
        meta={"generator": record},
    )
