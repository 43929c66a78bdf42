"""The parameters of the workload generator (:mod:`mropt.instances.workload_gen`) and its presets.

:class:`WorkloadParams` holds every parameter, :data:`PRESETS` what each preset changes, and
:meth:`WorkloadParams.check` the ranges. (Split from ``workload_gen``, which re-exports them.)
Besides each parameter's own range, a parameter that puts a number in the file (a task time, a
node speed, a straggler rate) or makes one (the mpsa preset's reduce task time) is refused when
that number breaks the reader's magnitude rule (:func:`mropt.instances.params.check_written`), and
the mean gap between submissions is at most 1e9 s in every preset (``mean_interarrival``, the mpsa
preset's ``60 / arrival_rate``, the ddrf preset's :func:`ddrf_gap`): the generator writes only
files that ``mropt simulate`` reads.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from mropt.instances.admission_gen import MAX_MEAN, PAPER_JOB_TYPES, JobType, check_job_types
from mropt.instances.params import check_counts, check_types, check_written
from mropt.model.errors import InputError

WHO = "generate workload"


@dataclass(frozen=True)
class WorkloadParams:
    """Every parameter of the AMB workload generator; the defaults are the ``amb-static`` preset.

    Each field is an option of ``mropt generate workload`` (``--mean-splits`` for
    ``mean_splits``; :func:`mropt.cli.common.add_param_options`); :data:`PRESETS` gives the
    values a preset changes, and an option given on the command line overrides them.
    """

    jobs: int = field(default=30, metadata={"help": "N, number of jobs (amb-static 30, amb-dynamic 60)", "short": "-n"})
    mean_splits: float = field(default=150.0, metadata={"help": "L, mean job size in 64 MB splits (default {default})"})
    mean_deadline: float = field(
        default=1000.0, metadata={"help": "D, mean relative deadline in s (amb-static 1000, amb-dynamic 500)"}
    )
    deadline_spread: float = field(
        default=0.5,
        metadata={"help": "s: deadline = submit + U[(1-s)D, (1+s)D] (amb-static 0.5, amb-dynamic 0.2)"},
    )
    mean_interarrival: float = field(
        default=0.0,
        metadata={
            "help": "mean gap between submissions in s: submit times uniform over [0, N x gap); "
            "0 = all at time 0 (amb-static 0, amb-dynamic 60)"
        },
    )
    benefit_min: int = field(default=300, metadata={"help": "benefits are integers in [min, max] (default {default})"})
    benefit_max: int = field(default=700, metadata={"help": "default {default}"})
    alpha: float = field(default=0.3, metadata={"help": "penalty ratio of eq. 1 (default {default})"})
    nodes: int = field(default=40, metadata={"help": "cluster nodes (default {default})"})
    map_slots_per_node: int = field(default=2, metadata={"help": "default {default}"})
    reduce_slots_per_node: int = field(default=2, metadata={"help": "default {default}"})
    rack_size: int = field(default=20, metadata={"help": "nodes per rack (default {default})"})
    replicas: int = field(
        default=0,
        metadata={"help": "HDFS replicas of each map input, placed by the simulator; 0 = no locality (default)"},
    )
    task_time_jitter: float = field(
        default=0.2, metadata={"help": "task times vary by +/- this fraction (default {default})"}
    )
    arrival_rate: float = field(
        default=0.3, metadata={"help": "mpsa preset: Poisson arrivals, jobs per minute (default {default})"}
    )
    map_tasks: int = field(default=100, metadata={"help": "mpsa preset: map tasks per map stage (default {default})"})
    map_task_time: float = field(
        default=60.0,
        metadata={
            "help": "mpsa preset: SleepJob map task time in s; ddrf preset: T, mean task time (default {default})"
        },
    )
    reduce_work: float = field(
        default=3000.0,
        metadata={"help": "mpsa preset: slot-seconds of one reduce stage (Table 2: 50 min; default {default})"},
    )
    reduce_tasks: int = field(
        default=0,
        metadata={"help": "mpsa preset: reduce tasks per reduce stage; 0 = the cluster's reduce slots (default)"},
    )
    tasks_per_job: int = field(default=20, metadata={"help": "ddrf preset: N, map tasks per job (default {default})"})
    load: float = field(
        default=0.95,
        metadata={
            "help": "ddrf preset: offered load, the busy fraction of the cluster's task places (default {default})"
        },
    )
    users: int = field(
        default=10, metadata={"help": "ddrf preset: DRF users, jobs assigned in turn (default {default})"}
    )
    slow_fraction: float = field(
        default=0.25, metadata={"help": "late preset: fraction of the nodes that are slow (default {default})"}
    )
    slow_speed: float = field(
        default=0.5, metadata={"help": "late preset: speed of a slow node, 1 = normal (default {default})"}
    )
    straggler_rate: float = field(
        default=0.05,
        metadata={"help": "late preset: probability that an attempt straggles (default {default})"},
    )
    straggler_slowdown: float = field(
        default=3.0, metadata={"help": "late preset: a straggler's time factor (default {default})"}
    )
    mix: Mapping[str, float] = field(
        default_factory=lambda: {t: 1.0 for t in PAPER_JOB_TYPES},
        metadata={"help": "job type weights, e.g. wordcount=1,grep=2 (default equal thirds)"},
    )
    job_types: Mapping[str, JobType] = field(
        default_factory=lambda: dict(PAPER_JOB_TYPES),
        metadata={
            "help": "add or override a job type (known: {default})",
            "flag": "--job-type",
            "metavar": "NAME=MAP_TIME,FANOUT,REDUCE_TIME",
        },
    )

    def check(self) -> None:
        """Raise :class:`InputError` naming the first bad parameter and its value."""

        def bad(name: str, rule: str) -> InputError:
            return InputError(f"{WHO}: parameter '{name}' {rule}, got {getattr(self, name)!r}")

        check_types(self, WHO)
        for name in (
            "jobs",
            "nodes",
            "map_slots_per_node",
            "reduce_slots_per_node",
            "rack_size",
            "tasks_per_job",
            "users",
        ):
            if getattr(self, name) < 1:
                raise bad(name, "must be >= 1")
        check_counts(self, ("jobs", "nodes", "tasks_per_job", "users"), WHO)
        if not (math.isfinite(self.load) and 0 < self.load <= 10):
            raise bad("load", "must be in (0, 10]")
        for name in ("map_slots_per_node", "reduce_slots_per_node"):
            if getattr(self, name) > 1000:
                raise bad(name, "must be <= 1000")
        if not 0 <= self.replicas <= 16:
            raise bad("replicas", "must be in [0, 16]")
        for name in ("mean_splits", "mean_deadline"):
            if not (math.isfinite(getattr(self, name)) and 0 < getattr(self, name) <= 1e9):
                raise bad(name, "must be in (0, 1e9]")
        if not 0 <= self.deadline_spread < 1:
            raise bad("deadline_spread", "must be in [0, 1)")
        if not (math.isfinite(self.mean_interarrival) and 0 <= self.mean_interarrival <= 1e9):
            raise bad("mean_interarrival", "must be in [0, 1e9]")
        if not 0 <= self.benefit_min <= self.benefit_max:
            raise bad("benefit_min", f"must be in [0, benefit_max = {self.benefit_max}]")
        if not 0 <= self.alpha <= 1:
            raise bad("alpha", "must be in [0, 1]")
        if not 60 / MAX_MEAN <= self.arrival_rate <= 1e6:  # the mpsa preset's mean gap: 60 s / rate
            raise bad("arrival_rate", f"must be in [{60 / MAX_MEAN:g}, 1e6] (a mean gap of at most {MAX_MEAN:g} s)")
        if not ddrf_gap(self) <= MAX_MEAN:
            raise bad("load", f"makes the ddrf preset's mean gap {ddrf_gap(self):g} s, above {MAX_MEAN:g} s")
        if not 1 <= self.map_tasks <= 100_000:
            raise bad("map_tasks", "must be in [1, 100000]")
        if not 0 <= self.reduce_tasks <= 100_000:
            raise bad("reduce_tasks", "must be in [0, 100000]")
        for name in ("map_task_time", "reduce_work"):
            if not (math.isfinite(getattr(self, name)) and 0 < getattr(self, name) <= 1e9):
                raise bad(name, "must be in (0, 1e9]")
        reduce_tasks = self.reduce_tasks or self.nodes * self.reduce_slots_per_node
        check_written(
            self, "reduce_work", WHO, makes=("the mpsa preset's reduce task time", self.reduce_work / reduce_tasks)
        )
        if not 0 <= self.slow_fraction <= 1:
            raise bad("slow_fraction", "must be in [0, 1]")
        if not (math.isfinite(self.slow_speed) and 0 < self.slow_speed <= 1):
            raise bad("slow_speed", "must be in (0, 1]")
        if not 0 <= self.straggler_rate <= 1:
            raise bad("straggler_rate", "must be in [0, 1]")
        if not (math.isfinite(self.straggler_slowdown) and 1 <= self.straggler_slowdown <= 1000):
            raise bad("straggler_slowdown", "must be in [1, 1000]")
        if not 0 <= self.task_time_jitter < 1:
            raise bad("task_time_jitter", "must be in [0, 1)")
        for name in ("alpha", "map_task_time", "slow_speed", "straggler_rate"):  # written as they are
            check_written(self, name, WHO)
        check_job_types(self.job_types, self.mix, WHO)

    def record(self, preset: str) -> dict[str, Any]:
        """The parameters as written into the workload file: those the preset's generator reads."""
        out = {k: v for k, v in asdict(self).items() if k not in _NOT_READ.get(preset, ())}
        out["mix"] = dict(self.mix)
        out["job_types"] = {name: asdict(jt) for name, jt in self.job_types.items()}
        return out


#: fields only the mpsa and only the ddrf generator read (left out of other presets' records)
_MPSA_ONLY = frozenset({"arrival_rate", "map_tasks", "map_task_time", "reduce_work", "reduce_tasks"})
_DDRF_ONLY = frozenset({"tasks_per_job", "load", "users"})
_LATE_ONLY = frozenset({"slow_fraction", "slow_speed", "straggler_rate", "straggler_slowdown"})
_NOT_READ: Mapping[str, frozenset[str]] = {
    "amb-static": _MPSA_ONLY | _DDRF_ONLY | _LATE_ONLY,
    "amb-dynamic": _MPSA_ONLY | _DDRF_ONLY | _LATE_ONLY,
    "mpsa": _DDRF_ONLY | _LATE_ONLY,
    "ddrf": (_MPSA_ONLY - {"map_task_time"}) | _LATE_ONLY,
    "late": _MPSA_ONLY | _DDRF_ONLY,
}

#: The values each preset gives to :class:`WorkloadParams` (the others keep their defaults).
PRESETS: Mapping[str, Mapping[str, Any]] = {
    "amb-static": {},
    "amb-dynamic": {"jobs": 60, "mean_deadline": 500.0, "deadline_spread": 0.2, "mean_interarrival": 60.0},
    # MPSA paper sec. 5 and Table 2 (generate_mpsa below)
    "mpsa": {"jobs": 150, "nodes": 25, "map_slots_per_node": 4, "reduce_slots_per_node": 2, "rack_size": 25},
    "ddrf": {"jobs": 200, "nodes": 100, "replicas": 3, "rack_size": 20},
    # LATE: a heterogeneous cluster with stragglers (module docstring)
    "late": {"jobs": 20, "mean_splits": 40.0, "mean_interarrival": 30.0},
}

#: task places of a ddrf node: 4 of either demand (module docstring of workload_gen)
DDRF_PLACES = 4


def ddrf_gap(params: WorkloadParams) -> float:
    """The ddrf preset's mean gap between submissions, ``N T / (load M L)``: an offered load of
    ``load`` of the M L task places (module docstring of :mod:`mropt.instances.workload_gen`)."""
    return params.tasks_per_job * params.map_task_time / (params.load * params.nodes * DDRF_PLACES)


def preset_params(preset: str, **overrides: Any) -> WorkloadParams:
    """The parameters of ``preset`` with ``overrides`` (fields of :class:`WorkloadParams`) applied."""
    if preset not in PRESETS:
        raise InputError(f"{WHO}: unknown preset {preset!r} (known: {', '.join(PRESETS)})")
    known = {f.name for f in fields(WorkloadParams)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise InputError(f"{WHO}: unknown parameter {unknown[0]!r} (known: {', '.join(sorted(known))})")
    return replace(WorkloadParams(), **{**PRESETS[preset], **overrides})
