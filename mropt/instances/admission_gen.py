"""Generator of admission instances with the AMB paper's experiment as defaults.

AMB sec. 5.1 and Table 2: N = 30 jobs; job sizes (input splits) uniform in
[0.5 L, 1.5 L] with L = 150; deadlines uniform in [0.5 D, 1.5 D] with D = 1000 s;
benefits uniform in [300, 700]; alpha = 0.3, beta = 2; 40 nodes with 2 map and 2
reduce slots each (M = R = 80); 64 MB splits. The paper's jobs are word count,
inverted index and distributed grep over a Wikipedia dump.

The paper gives no task times and no reduce counts, so mropt uses this documented
model (``model_version`` 1), every number of which can be overridden:

* each job has a type drawn from ``mix`` (equal thirds by default); a type fixes the
  mean map task time per 64 MB split, the reduce fan-out (reduce tasks per split,
  at least one reduce task) and the mean reduce task time (:data:`PAPER_JOB_TYPES`);
* task times are the type's means times a factor uniform in
  [1 - jitter, 1 + jitter] (``task_time_jitter`` = 0.2), rounded to 0.1 s, at least 0.1 s
  (as the workload generator's; a type's times are in (0, 1e9], ``check_job_types``);
* the job then has ``map_tasks`` = splits and ``reduce_tasks`` = ceil(fan-out x
  splits), so TCm = ceil(splits / M) x map task time (sec. 4.1);
* deadlines are relative to the submit time: ``deadline = submit + U[0.5 D, 1.5 D]``,
  rounded to 1 s; benefits are integers uniform in [benefit_min, benefit_max];
* submit times are 0 (the static experiment, sec. 5.1) unless ``mean_interarrival``
  is positive, when gaps are exponential with that mean (the dynamic experiment of
  sec. 5.2 submits about one job a minute: ``mean_interarrival=60``).

Job k's draws come from ``numpy.random.default_rng([seed, k])``, so the instance
with N jobs is the first N jobs of the instance with more, for the same seed and
parameters (except submit times, which accumulate). The file records the model,
its parameters, the seed and the resulting load factor (total STC over the latest
deadline) and map load (total TCm over the latest deadline) under ``generator``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from mropt.instances.params import check_counts, check_seed, check_types, check_written
from mropt.model.admission import AdmissionInstance, Cluster, Job
from mropt.model.errors import InputError
from mropt.model.fields import magnitude_problem

MODEL_NAME = "amb-paper"
MODEL_VERSION = 1


@dataclass(frozen=True)
class JobType:
    """Per-split task model of one kind of MapReduce job (64 MB splits)."""

    map_task_time: float  # mean seconds of one map task (one split)
    reduce_fanout: float  # reduce tasks per split
    reduce_task_time: float  # mean seconds of one reduce task


#: Job types of the paper's experiment (sec. 5.1). Magnitudes chosen so that TCm and TCr
#: are of the order of Table 1's (one to three waves of 25-60 s tasks on 80 slots).
PAPER_JOB_TYPES: Mapping[str, JobType] = {
    "wordcount": JobType(map_task_time=40.0, reduce_fanout=0.3, reduce_task_time=60.0),
    "inverted-index": JobType(map_task_time=50.0, reduce_fanout=0.6, reduce_task_time=50.0),
    "grep": JobType(map_task_time=25.0, reduce_fanout=0.0, reduce_task_time=15.0),
}


@dataclass(frozen=True)
class AdmissionParams:
    """Every parameter of the generator; the defaults are the paper's (Table 2).

    Each field is an option of ``mropt generate admission`` (``--benefit-min`` for
    ``benefit_min``), built from the field's type, default and ``metadata``: ``help``
    (``{default}`` is the default), ``short``, ``flag`` and ``metavar``
    (:func:`mropt.cli.common.add_param_options`). A new field is a new option.
    """

    jobs: int = field(default=30, metadata={"help": "N, number of jobs (default {default})", "short": "-n"})
    size: float = field(default=150.0, metadata={"help": "L, mean job size in 64 MB splits (default {default})"})
    deadline: float = field(default=1000.0, metadata={"help": "D, mean relative deadline in s (default {default})"})
    benefit_min: int = 300
    benefit_max: int = 700
    alpha: float = field(default=0.3, metadata={"help": "penalty ratio (default {default})"})
    beta: float = field(default=2.0, metadata={"help": "penalty threshold of eq. 3 (default {default})"})
    rho: float = field(default=1.0, metadata={"help": "slack factor (default {default})"})
    nodes: int = field(default=40, metadata={"help": "cluster nodes (default {default})"})
    map_slots_per_node: int = 2
    reduce_slots_per_node: int = 2
    task_time_jitter: float = field(
        default=0.2, metadata={"help": "task times vary by +/- this fraction (default {default})"}
    )
    mean_interarrival: float = field(
        default=0.0, metadata={"help": "mean gap between submissions in s; 0 = all at time 0 (default)"}
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
        def bad(name: str, rule: str) -> InputError:
            return InputError(f"generator: parameter '{name}' {rule}, got {getattr(self, name)!r}")

        check_types(self)
        if self.jobs < 1:
            raise bad("jobs", "must be >= 1")
        check_counts(self, ("jobs", "nodes"))
        for name in ("nodes", "map_slots_per_node", "reduce_slots_per_node"):
            if not getattr(self, name) > 0:
                raise bad(name, "must be > 0")
        for name in ("map_slots_per_node", "reduce_slots_per_node"):
            if getattr(self, name) > MAX_SLOTS_PER_NODE:
                raise bad(name, f"must be <= {MAX_SLOTS_PER_NODE}")
        for name in ("size", "deadline"):  # the splits are drawn as 64-bit integers; deadlines sum with submits
            if not 0 < getattr(self, name) <= MAX_MEAN:
                raise bad(name, f"must be in (0, {MAX_MEAN:g}]")
        if not 0 <= self.benefit_min <= self.benefit_max:
            raise bad("benefit_min", f"must be in [0, benefit_max = {self.benefit_max}]")
        if not 0 <= self.alpha <= 1:
            raise bad("alpha", "must be in [0, 1]")
        if not self.beta > 1:
            raise bad("beta", "must be > 1")
        if not self.rho > 0:
            raise bad("rho", "must be > 0")
        for name in ("alpha", "beta", "rho"):  # written as they are
            check_written(self, name)
        if not 0 <= self.task_time_jitter < 1:
            raise bad("task_time_jitter", "must be in [0, 1)")
        if not 0 <= self.mean_interarrival <= MAX_MEAN:
            raise bad("mean_interarrival", f"must be in [0, {MAX_MEAN:g}]")
        check_job_types(self.job_types, self.mix, "generator")

    def record(self) -> dict[str, Any]:
        """The parameters as written into the instance file."""
        out = asdict(self)
        out["mix"] = dict(self.mix)
        out["job_types"] = {name: asdict(jt) for name, jt in self.job_types.items()}
        return out


#: the largest mean size (splits), mean relative deadline and mean gap between submissions (s) a
#: generator takes: a million jobs of them stay far inside the readers' magnitudes (1e100)
MAX_MEAN = 1e9
#: the most map or reduce slots per node a generator takes
MAX_SLOTS_PER_NODE = 1000


def check_job_types(job_types: Mapping[str, JobType], mix: Mapping[str, float], who: str) -> None:
    """Refuse a job type or a ``mix`` the generators (this one, ``workload_gen``) cannot draw from.

    A job type's task times are in (0, :data:`MAX_MEAN`] and its reduce fan-out in [0, 1000];
    ``mix`` names known types, with weights 0 or of magnitude in [1e-100, 1e100] (their sum
    stays finite) and a positive sum.
    """
    unknown = sorted(set(mix) - set(job_types))
    if unknown:
        raise InputError(
            f"{who}: parameter 'mix' names unknown job type {unknown[0]!r} (known: {', '.join(sorted(job_types))})"
        )
    if any(w < 0 or magnitude_problem(w) for w in mix.values()) or not sum(mix.values()) > 0:
        raise InputError(
            f"{who}: parameter 'mix' must have weights 0 or in [1e-100, 1e100] with a positive sum, got {dict(mix)}"
        )
    for name, jt in job_types.items():
        times = (jt.map_task_time, jt.reduce_task_time)
        if not (all(0 < t <= MAX_MEAN for t in times) and 0 <= jt.reduce_fanout <= 1e3):
            raise InputError(
                f"{who}: job type {name!r} needs map_task_time and reduce_task_time in (0, {MAX_MEAN:g}] "
                f"and reduce_fanout in [0, 1000], got {jt}"
            )


def draw_jobs(
    seed: int,
    n: int,
    job_types: Mapping[str, JobType],
    mix: Mapping[str, float],
    *,
    mean_splits: float,
    jitter: float,
    mean_deadline: float,
    spread: float,
    benefits: tuple[int, int],
) -> Iterator[tuple[np.random.Generator, str, int, np.ndarray, float, int]]:
    """The AMB set's per-job draws (sec. 5.1), job k from ``default_rng([seed, k])`` in one order.

    Yields, for k = 1..n: the job's generator (callers may draw more from it afterwards),
    its type (weighted by ``mix``), its splits U[0.5L, 1.5L], two task-time jitter factors
    U[1 - jitter, 1 + jitter], its relative deadline U[(1 - spread)D, (1 + spread)D]
    (unrounded) and its benefit, an integer in ``benefits``. The admission generator and the
    workload presets (``mropt.instances.workload_gen``) share it, so the amb-static workload
    of a seed has the jobs of ``generate admission`` of that seed.
    """
    type_names = [name for name in job_types if mix.get(name, 0) > 0]
    weights = np.array([mix[name] for name in type_names], dtype=float)
    weights /= weights.sum()
    lo_size = max(1, math.ceil(0.5 * mean_splits))
    hi_size = max(lo_size, math.floor(1.5 * mean_splits))
    for k in range(1, n + 1):
        rng = np.random.default_rng([seed, k])
        kind = type_names[int(rng.choice(len(type_names), p=weights))]
        splits = int(rng.integers(lo_size, hi_size + 1))
        factors = rng.uniform(1 - jitter, 1 + jitter, size=2)
        relative = float(rng.uniform((1 - spread) * mean_deadline, (1 + spread) * mean_deadline))
        benefit = int(rng.integers(benefits[0], benefits[1] + 1))
        yield rng, kind, splits, factors, relative, benefit


def generate_admission(seed: int = 0, params: AdmissionParams | None = None, **overrides: Any) -> AdmissionInstance:
    """A seeded admission instance; keyword overrides set fields of :class:`AdmissionParams`.

    Same seed and parameters, same instance (and the same file, byte for byte).
    """
    seed = check_seed(seed)
    params = params or AdmissionParams()
    if overrides:
        unknown = sorted(set(overrides) - set(AdmissionParams.__dataclass_fields__))
        if unknown:
            raise InputError(f"generator: unknown parameter {unknown[0]!r}")
        params = AdmissionParams(**{**asdict(params), "mix": params.mix, "job_types": params.job_types, **overrides})
    params.check()
    cluster = Cluster(params.nodes * params.map_slots_per_node, params.nodes * params.reduce_slots_per_node)
    jobs: list[Job] = []
    submit = 0.0
    draws = draw_jobs(
        seed,
        params.jobs,
        params.job_types,
        params.mix,
        mean_splits=params.size,
        jitter=params.task_time_jitter,
        mean_deadline=params.deadline,
        spread=0.5,
        benefits=(params.benefit_min, params.benefit_max),
    )
    for k, (rng, kind, splits, jitter, relative, benefit) in enumerate(draws, start=1):
        jt = params.job_types[kind]
        relative_deadline = round(relative)
        if params.mean_interarrival > 0 and k > 1:
            submit = round(submit + float(rng.exponential(params.mean_interarrival)), 1)
        jobs.append(
            Job(
                id=f"j{k}",
                map_tasks=splits,
                reduce_tasks=max(1, math.ceil(jt.reduce_fanout * splits)),
                map_task_time=max(0.1, round(jt.map_task_time * float(jitter[0]), 1)),
                reduce_task_time=max(0.1, round(jt.reduce_task_time * float(jitter[1]), 1)),
                deadline=submit + max(1, relative_deadline),
                benefit=benefit,
                submit_time=submit,
                extra={"type": kind, "splits": splits},
            )
        )
    draft = AdmissionInstance(cluster=cluster, jobs=tuple(jobs), alpha=params.alpha, beta=params.beta, rho=params.rho)
    latest = float(draft.deadlines.max())
    record = {
        "model": MODEL_NAME,
        "model_version": MODEL_VERSION,
        "seed": seed,
        "params": params.record(),
        "load_factor": round(draft.load_factor, 6),
        "map_load": round(float(draft.tcm.sum()) / latest, 6),
    }
    return AdmissionInstance(
        cluster=cluster,
        jobs=draft.jobs,
        alpha=params.alpha,
        beta=params.beta,
        rho=params.rho,
        name=f"amb-n{params.jobs}-L{params.size:g}-D{params.deadline:g}-s{seed}",
        meta={"generator": record},
    )
