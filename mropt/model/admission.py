"""Admission instances: deadline MapReduce jobs on a cluster of map and reduce slots.

The problem of the AMB paper (``docs/papers.md``; sec. 3): a cluster with
``M`` map slots and ``R`` reduce slots, a set of candidate jobs, each with a deadline
and a benefit; choose the jobs to accept and how to run them to maximise eq. 1.

A job gives either its phase times directly (``map_phase_time`` = TCm,
``reduce_phase_time`` = TCr: the time the phase takes when the whole cluster serves
it), or its task counts and mean task times, from which sec. 4.1 and Appendix A
derive ``TCm = ceil(map_tasks / M) * map_task_time * rho`` and likewise TCr. The slack
factor ``rho`` applies to the task form only: phase times are taken as given.
``reduce_tasks = 0`` declares a map-only job (TCr = 0).

Times are seconds on one clock: ``submit_time`` (default 0) and ``deadline`` are
absolute, so a job submitted at 300 s with deadline 900 s has 600 s to finish.
Unknown fields are kept in ``extra`` and written back, so no data is lost.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from mropt.model.base import KeyedInstance, check_unique_ids, frozen_mapping, plain_number
from mropt.model.errors import InputError
from mropt.model.fields import read_int, read_number, read_str, require_mapping
from mropt.model.sense import MAXIMISE
from mropt.model.tolerance import method_deadline_limit

KIND = "admission"
SCHEMA_VERSION = 1
DEFAULT_ALPHA = 0.3
DEFAULT_BETA = 2.0
DEFAULT_RHO = 1.0

PHASE_FIELDS = ("map_phase_time", "reduce_phase_time")
TASK_FIELDS = ("map_tasks", "reduce_tasks", "map_task_time", "reduce_task_time")
_JOB_FIELDS = ("id", "deadline", "benefit", "submit_time", *PHASE_FIELDS, *TASK_FIELDS)
_INSTANCE_FIELDS = ("kind", "schema_version", "name", "cluster", "alpha", "beta", "rho", "jobs")
_CLUSTER_FIELDS = ("map_slots", "reduce_slots")


@dataclass(frozen=True)
class Cluster:
    """``map_slots`` (M) and ``reduce_slots`` (R) of a homogeneous cluster (AMB sec. 3)."""

    map_slots: int
    reduce_slots: int
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        values = {"map_slots": self.map_slots, "reduce_slots": self.reduce_slots}
        for key in _CLUSTER_FIELDS:
            object.__setattr__(self, key, read_int(values, key, "cluster", minimum=1))
        object.__setattr__(self, "extra", frozen_mapping(self.extra))

    @classmethod
    def from_dict(cls, data: Any) -> Cluster:
        data = require_mapping(data, "field 'cluster'")
        extra = {k: v for k, v in data.items() if k not in _CLUSTER_FIELDS}
        for key in _CLUSTER_FIELDS:
            read_int(data, key, "cluster", minimum=1)
        return cls(data["map_slots"], data["reduce_slots"], extra)

    def to_dict(self) -> dict[str, Any]:
        return {"map_slots": self.map_slots, "reduce_slots": self.reduce_slots, **self.extra}


@dataclass(frozen=True)
class Job:
    """One candidate job (AMB sec. 3: N_m, N_r, T_m, T_r, deadline, benefit).

    Give either both phase times or all four task fields; see the module docstring.
    """

    id: str
    deadline: float
    benefit: float
    submit_time: float = 0.0
    map_phase_time: float | None = None
    reduce_phase_time: float | None = None
    map_tasks: int | None = None
    reduce_tasks: int | None = None
    map_task_time: float | None = None
    reduce_task_time: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        given = {k: getattr(self, k) for k in _JOB_FIELDS if getattr(self, k) is not None}
        read_str(given, "id", "job")
        where = f"job {self.id!r}"
        checked: dict[str, Any] = {
            "deadline": read_number(given, "deadline", where, positive=True),
            "benefit": read_number(given, "benefit", where, nonnegative=True),
            "submit_time": read_number(given, "submit_time", where, nonnegative=True),
        }
        if checked["deadline"] <= checked["submit_time"]:
            raise InputError(
                f"{where}: field 'deadline' must be later than submit_time "
                f"{checked['submit_time']:g}, got {checked['deadline']:g}"
            )
        phase = [k for k in PHASE_FIELDS if k in given]
        tasks = [k for k in TASK_FIELDS if k in given]
        if phase and tasks:
            raise InputError(
                f"{where}: give either phase times ({', '.join(PHASE_FIELDS)}) or task fields "
                f"({', '.join(TASK_FIELDS)}), not both; got {', '.join(phase + tasks)}"
            )
        if not phase and not tasks:
            raise InputError(
                f"{where}: field 'map_phase_time' is missing (give map_phase_time and "
                f"reduce_phase_time, or map_tasks, reduce_tasks, map_task_time and reduce_task_time)"
            )
        if phase:
            for key in PHASE_FIELDS:
                checked[key] = read_number(given, key, where, positive=True)
        else:
            checked["map_tasks"] = read_int(given, "map_tasks", where, minimum=1)
            checked["reduce_tasks"] = read_int(given, "reduce_tasks", where, minimum=0)
            checked["map_task_time"] = read_number(given, "map_task_time", where, positive=True)
            checked["reduce_task_time"] = read_number(given, "reduce_task_time", where, positive=True)
        for key, value in checked.items():
            object.__setattr__(self, key, value)
        object.__setattr__(self, "extra", frozen_mapping(self.extra))

    @property
    def has_task_form(self) -> bool:
        """True when the job gives task counts and task times rather than phase times."""
        return self.map_tasks is not None

    def phase_times(self, cluster: Cluster, rho: float = DEFAULT_RHO) -> tuple[float, float]:
        """(TCm, TCr): AMB sec. 4.1 with the slack factor of Appendix A."""
        if not self.has_task_form:
            return float(self.map_phase_time), float(self.reduce_phase_time)  # type: ignore[arg-type]
        map_waves = math.ceil(self.map_tasks / cluster.map_slots)  # type: ignore[operator]
        reduce_waves = math.ceil(self.reduce_tasks / cluster.reduce_slots)  # type: ignore[operator]
        return (
            map_waves * self.map_task_time * rho,  # type: ignore[operator]
            reduce_waves * self.reduce_task_time * rho,  # type: ignore[operator]
        )

    @classmethod
    def from_dict(cls, data: Any, index: int) -> Job:
        data = require_mapping(data, f"jobs[{index}]")
        read_str(data, "id", f"jobs[{index}]")
        known = {k: data[k] for k in _JOB_FIELDS if k in data}
        known.setdefault("deadline", None)  # reported as missing by __post_init__
        known.setdefault("benefit", None)
        extra = {k: v for k, v in data.items() if k not in _JOB_FIELDS}
        return cls(**known, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        form = TASK_FIELDS if self.has_task_form else PHASE_FIELDS
        for key in form:
            out[key] = plain_number(getattr(self, key))
        out["deadline"] = plain_number(self.deadline)
        out["benefit"] = plain_number(self.benefit)
        if self.submit_time:
            out["submit_time"] = plain_number(self.submit_time)
        out.update(self.extra)
        return out


@dataclass(frozen=True)
class AdmissionInstance(KeyedInstance):
    """A max-benefit admission instance (AMB paper).

    ``alpha`` is the penalty ratio of eq. 1, ``beta`` the penalty threshold of eq. 3,
    ``rho`` the slack factor of Appendix A. The numpy views (``tcm``, ``tcr``,
    ``deadlines``, ``benefits``, ``submit_times``) are indexed like ``jobs``.
    """

    cluster: Cluster
    jobs: tuple[Job, ...]
    alpha: float = DEFAULT_ALPHA
    beta: float = DEFAULT_BETA
    rho: float = DEFAULT_RHO
    name: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    kind = KIND
    SENSE = MAXIMISE  # objective: total benefit of the accepted jobs (AMB eq. 1)
    schema_version = SCHEMA_VERSION
    _ITEMS = "jobs"

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        values = {"alpha": self.alpha, "beta": self.beta, "rho": self.rho}
        object.__setattr__(self, "alpha", read_number(values, "alpha", "instance", low=0.0, high=1.0))
        beta = read_number(values, "beta", "instance")
        if not beta > 1:
            raise InputError(f"instance: field 'beta' must be > 1 (AMB eq. 3), got {beta:g}")
        object.__setattr__(self, "beta", beta)
        object.__setattr__(self, "rho", read_number(values, "rho", "instance", positive=True))
        if not self.jobs:
            raise InputError("instance: field 'jobs' must list at least one job, got []")
        check_unique_ids(self.jobs, "job", "jobs")
        object.__setattr__(self, "meta", frozen_mapping(self.meta))

    # -- derived data (n, ids, index: KeyedInstance) ----------------------------------------
    @cached_property
    def _phase_times(self) -> np.ndarray:
        arr = np.array([j.phase_times(self.cluster, self.rho) for j in self.jobs], dtype=float)
        arr.setflags(write=False)
        return arr

    @property
    def tcm(self) -> np.ndarray:
        """TCm per job (sec. 4.1)."""
        return self._phase_times[:, 0]

    @property
    def tcr(self) -> np.ndarray:
        """TCr per job (sec. 4.1)."""
        return self._phase_times[:, 1]

    def _column(self, attr: str) -> np.ndarray:
        arr = np.array([getattr(j, attr) for j in self.jobs], dtype=float)
        arr.setflags(write=False)
        return arr

    @cached_property
    def deadlines(self) -> np.ndarray:
        return self._column("deadline")

    @cached_property
    def deadline_limits(self) -> np.ndarray:
        """Latest completion per job a method may call on time: ``method_deadline_limit`` (docs/tolerances.md).

        ``deadline * (1 + TIME_RTOL / 2)`` rounded down: the other half of ``TIME_RTOL``
        absorbs the float rounding of the methods' completion times, so ``verify`` (exact,
        ``C <= deadline * (1 + TIME_RTOL)``) never finds late a job a method calls on time.
        """
        arr = method_deadline_limit(self.deadlines)
        arr.setflags(write=False)
        return arr

    @cached_property
    def benefits(self) -> np.ndarray:
        return self._column("benefit")

    @cached_property
    def submit_times(self) -> np.ndarray:
        return self._column("submit_time")

    @cached_property
    def stc(self) -> np.ndarray:
        """System time cost STC = TCm*M/(M+R) + TCr*R/(M+R) (sec. 4.2, before eq. 2)."""
        m, r = self.cluster.map_slots, self.cluster.reduce_slots
        arr: np.ndarray = (self.tcm * m + self.tcr * r) / (m + r)
        arr.setflags(write=False)
        return arr

    @property
    def load_factor(self) -> float:
        """Total STC over the latest deadline: above 1, not every job can be accepted."""
        return float(self.stc.sum() / self.deadlines.max())

    def job(self, job_id: str) -> Job:
        try:
            return self.jobs[self.index[job_id]]
        except KeyError:
            raise InputError(f"unknown job id {job_id!r}") from None

    # -- JSON ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": KIND, "schema_version": SCHEMA_VERSION}
        if self.name is not None:
            out["name"] = self.name
        out["cluster"] = self.cluster.to_dict()
        out["alpha"] = plain_number(self.alpha)
        out["beta"] = plain_number(self.beta)
        out["rho"] = plain_number(self.rho)
        out["jobs"] = [j.to_dict() for j in self.jobs]
        out.update(self.meta)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> AdmissionInstance:
        data = require_mapping(data, "instance")
        if "cluster" not in data:
            raise InputError("instance: field 'cluster' is missing")
        if "jobs" not in data:
            raise InputError("instance: field 'jobs' is missing")
        jobs_data = data["jobs"]
        if not isinstance(jobs_data, Sequence) or isinstance(jobs_data, str):
            raise InputError(f"instance: field 'jobs' must be a list, got {type(jobs_data).__name__}")
        name = read_str(data, "name", "instance", default=None)
        return cls(
            cluster=Cluster.from_dict(data["cluster"]),
            jobs=tuple(Job.from_dict(j, i) for i, j in enumerate(jobs_data)),
            alpha=read_number(data, "alpha", "instance", default=DEFAULT_ALPHA),
            beta=read_number(data, "beta", "instance", default=DEFAULT_BETA),
            rho=read_number(data, "rho", "instance", default=DEFAULT_RHO),
            name=name,
            meta={k: v for k, v in data.items() if k not in _INSTANCE_FIELDS},
        )
