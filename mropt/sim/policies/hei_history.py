"""The history HEI schedules by (HEI paper sec. 2.2): demand per group and hour, D, mean reduce cost.

:class:`HeiHistory` holds the three results of the paper's analyses that the ``hei`` policy
(:mod:`mropt.sim.policies.hei`) reads, per user group (= Fair Scheduler pool):

* ``demand[group]``: 24 numbers, the slot-seconds (eq. 4: the sum of the tasks' occupied
  times) of the group's jobs submitted in each hour of day, averaged over days (sec. 2.2,
  "cluster-wide analysis", steps 1-2);
* ``D[group]``: map seconds per MB of input (eqs. 5-7);
* ``reduce_cost[group]``: mean seconds per reduce task (eq. 9).

It is built from

* three DataFrames (:meth:`HeiHistory.from_frames`): the outputs of the job-history
  database's analyses (``mropt.history.analyses``: ``demand_by_group_hour`` with columns
  ``group, hour, demand``; ``map_cost_per_unit`` with ``group, D``; ``mean_reduce_cost``
  with ``group, reduce_cost``); a null value is "no history" for that group and part;
* a job-history database (:meth:`HeiHistory.from_db`, those three analyses);
* a JSON file (:meth:`HeiHistory.load`; :meth:`HeiHistory.save` writes one):
  ``{"kind": "hei-history", "demand": {"g": [24 numbers]}, "D": {"g": x}, "reduce_cost": {"g": x}}``;
* an earlier simulated run's tables (:func:`history_frames`, pandas, the same three frames
  then :meth:`~HeiHistory.from_frames`): the plain eqs. 3, 4, 7 and 9 on the run's attempts,
  without the outlier removal of sec. 2.2 step (3), which the database's analyses do.

Bad values are an :class:`~mropt.model.errors.InputError` of one line naming the field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mropt.model.base import frozen_mapping, plain_number
from mropt.model.errors import InputError
from mropt.model.files import write_text
from mropt.model.io import read_json
from mropt.model.workload import WorkloadInstance

if TYPE_CHECKING:
    import pandas as pd

KIND = "hei-history"
HOURS = 24


def _value(value: Any, where: str, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"{where}: field '{key}' must be a number, got {value!r:.40}")
    got = float(value)
    if not math.isfinite(got) or got < 0:
        raise InputError(f"{where}: field '{key}' must be a finite number >= 0, got {got!r}")
    return got


def _null(value: Any) -> bool:
    return value is None or (isinstance(value, (float, np.floating)) and math.isnan(value))


@dataclass(frozen=True)
class HeiHistory:
    """Per group: demand per hour of day (slot-seconds), D (map s/MB, eqs. 5-7), mean reduce cost (s, eq. 9)."""

    demand: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    D: Mapping[str, float] = field(default_factory=dict)
    reduce_cost: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        demand = {}
        for group, hours in self.demand.items():
            hours = tuple(hours)
            if len(hours) != HOURS:
                raise InputError(f"hei history: field 'demand' of group {group!r} must list 24 hours, got {len(hours)}")
            demand[str(group)] = tuple(_value(v, f"hei history group {group!r}", "demand") for v in hours)
        object.__setattr__(self, "demand", frozen_mapping(demand))
        for name in ("D", "reduce_cost"):
            values = {str(g): _value(v, f"hei history group {g!r}", name) for g, v in getattr(self, name).items()}
            object.__setattr__(self, name, frozen_mapping(values))

    @property
    def empty(self) -> bool:
        return not (self.demand or self.D or self.reduce_cost)

    @property
    def no_task_data(self) -> bool:
        """No positive demand in any hour, and no D or reduce cost for any group: HEI has nothing to
        schedule by (what the analyses give for jobs without task rows, a SWIM import's)."""
        return not (self.D or self.reduce_cost or any(v > 0 for hours in self.demand.values() for v in hours))

    # -- from the history database's analyses ----------------------------------------------------
    @classmethod
    def from_frames(cls, demand: pd.DataFrame, map_cost: pd.DataFrame, reduce_cost: pd.DataFrame) -> HeiHistory:
        """From ``demand_by_group_hour``, ``map_cost_per_unit`` and ``mean_reduce_cost`` (``mropt.history.analyses``).

        Rows with a null value are skipped (no history for that group and part); a group of
        the demand frame has 0 in the hours it has no row for. A repeated (group, hour) or
        group is an error.
        """
        for frame, name, columns in (
            (demand, "demand_by_group_hour", ("group", "hour", "demand")),
            (map_cost, "map_cost_per_unit", ("group", "D")),
            (reduce_cost, "mean_reduce_cost", ("group", "reduce_cost")),
        ):
            missing = [c for c in columns if c not in frame.columns]
            if missing:
                raise InputError(f"hei history: frame {name} lacks column {missing[0]!r} (has {list(frame.columns)})")
        hours: dict[str, list[float]] = {}
        seen: set[tuple[str, int]] = set()
        for group, hour, value in zip(demand["group"], demand["hour"], demand["demand"]):
            if _null(value):
                continue
            where = f"hei history demand of group {group!r}"
            if isinstance(hour, bool) or not isinstance(hour, (int, np.integer)) or not 0 <= hour < HOURS:
                raise InputError(f"{where}: field 'hour' must be an integer in [0, 23], got {hour!r:.40}")
            if (str(group), int(hour)) in seen:
                raise InputError(f"{where}: hour {int(hour)} is listed twice")
            seen.add((str(group), int(hour)))
            hours.setdefault(str(group), [0.0] * HOURS)[int(hour)] = _value(value, where, "demand")
        per_group: list[dict[str, float]] = []
        for frame, column in ((map_cost, "D"), (reduce_cost, "reduce_cost")):
            out: dict[str, float] = {}
            for group, value in zip(frame["group"], frame[column]):
                if _null(value):
                    continue
                if str(group) in out:
                    raise InputError(f"hei history group {group!r}: field '{column}' is listed twice")
                out[str(group)] = _value(value, f"hei history group {group!r}", column)
            per_group.append(out)
        return cls({g: tuple(v) for g, v in hours.items()}, per_group[0], per_group[1])

    @classmethod
    def from_db(cls, db: Any) -> HeiHistory:
        """The three analyses of a job-history database (a path or a duckdb connection)."""
        from mropt.history import analyses  # a layer below sim, imported when used (it loads DuckDB)

        frames = (analyses.demand_by_group_hour(db), analyses.map_cost_per_unit(db), analyses.mean_reduce_cost(db))
        return cls.from_frames(*frames)

    # -- JSON ------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": KIND,
            "demand": {g: [plain_number(v) for v in hours] for g, hours in sorted(self.demand.items())},
            "D": {g: plain_number(v) for g, v in sorted(self.D.items())},
            "reduce_cost": {g: plain_number(v) for g, v in sorted(self.reduce_cost.items())},
        }

    @classmethod
    def from_dict(cls, data: Any, source: str = "hei history") -> HeiHistory:
        if not isinstance(data, Mapping):
            raise InputError(f"{source}: must be a JSON object, got {type(data).__name__}")
        if data.get("kind") != KIND:
            raise InputError(f"{source}: field 'kind' must be {KIND!r}, got {data.get('kind')!r:.40}")
        unknown = sorted(set(data) - {"kind", "demand", "D", "reduce_cost"})
        if unknown:
            raise InputError(f"{source}: unknown field {unknown[0]!r} (known: kind, demand, D, reduce_cost)")
        parts = []
        for key in ("demand", "D", "reduce_cost"):
            value = data.get(key, {})
            if not isinstance(value, Mapping):
                raise InputError(f"{source}: field '{key}' must be an object of groups, got {value!r:.40}")
            parts.append(value)
        for group, hours in parts[0].items():
            if not isinstance(hours, list):
                raise InputError(f"{source}: field 'demand' of group {group!r} must be a list of 24 numbers")
        return cls(parts[0], parts[1], parts[2])

    @classmethod
    def load(cls, path: str | Path) -> HeiHistory:
        return cls.from_dict(read_json(path), str(path))

    def save(self, path: str | Path) -> None:
        import json

        write_text(path, json.dumps(self.to_dict(), indent=1) + "\n")

    @staticmethod
    def untimed_note(db: str | Path) -> str | None:
        """One line when some jobs of the database ``db`` have no task rows with times (a SWIM import's),
        else None: they add no demand, D or reduce cost, so a group with only such jobs has demand 0
        in every hour (HEI minShare 0, see :func:`mropt.sim.policies.hei.hour_min_shares`) and no cost
        (its pool keeps the workload's weight, as under ``fair``)."""
        from mropt.history import analyses  # a layer below sim, imported when used (it loads DuckDB)

        untimed = analyses.untimed_jobs(db)
        if not untimed:
            return None
        where = ", ".join(f"{source}: {n}" for source, n in list(untimed.items())[:3])
        more = f" and {len(untimed) - 3} more sources" if len(untimed) > 3 else ""
        return (
            f"policy 'hei': {sum(untimed.values())} job(s) of the history {str(db)!r} have no task rows with times "
            f"({where}{more}): they add no demand, D or reduce cost, so a group of only such jobs gets minShare 0 "
            "and keeps its pool's weight (fair's); see docs/simulation.md, \"HEI and its history\""
        )

    @classmethod
    def from_param(cls, value: str) -> HeiHistory:
        """The ``hei`` policy's ``history`` parameter: a ``.json`` file of this class, else a database; '' none."""
        if not value:
            return cls()
        if value.lower().endswith(".json"):
            return cls.load(value)
        if not Path(value).is_file():
            raise InputError(f"policy 'hei': parameter 'history' names no file: {value!r}")
        return cls.from_db(value)


def history_frames(
    workload: WorkloadInstance,
    jobs: Mapping[str, Any],
    tasks: Mapping[str, Any],
    *,
    start_hour: float = 0.0,
    days: int | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The three analyses' frames computed in pandas from a simulated run's tables.

    ``jobs`` and ``tasks``: the run's job and attempt tables (``Recorder.jobs_columns()``,
    ``tasks_columns()``, or the parquet files as DataFrames). A job's group is its ``pool``.
    Per attempt R_i = end - start (eq. 3). ``demand``: per group and hour of day of the job's
    submission (``start_hour`` is the hour at time 0), the sum of its attempts' R_i (eq. 4;
    every attempt holds a slot, killed ones too) divided by ``days`` (default: the number of
    days from time 0 to the last submission). ``D``: per group, the succeeded map attempts'
    sum of R_i over the sum of their input MB (eq. 7 over the group's jobs; a task's MB is its
    group's ``input_mb``, default one block). ``reduce_cost``: the mean R_i of the group's
    succeeded reduce attempts (eq. 9).
    """
    import pandas as pd

    jdf = pd.DataFrame({"job_id": list(jobs["job_id"]), "submit": jobs["submit_time"], "group": list(jobs["pool"])})
    tdf = pd.DataFrame(
        {
            "job_id": list(tasks["job_id"]),
            "stage": np.asarray(tasks["stage"]),
            "task": np.asarray(tasks["task"]),
            "type": list(tasks["stage_type"]),
            "r": np.asarray(tasks["end"], dtype=float) - np.asarray(tasks["start"], dtype=float),
            "ok": [o == "succeeded" for o in tasks["outcome"]],
        }
    )
    clock = np.asarray(jdf["submit"], dtype=float) / 3600.0 + start_hour
    jdf["hour"] = (np.floor(clock) % HOURS).astype(int)
    n_days = days if days is not None else max(1, int(math.ceil((float(clock.max()) + 1e-9) / HOURS)))
    tdf = tdf.merge(jdf[["job_id", "group", "hour"]], on="job_id", how="left")
    demand = tdf.groupby(["group", "hour"], as_index=False)["r"].sum().rename(columns={"r": "demand"})
    demand["demand"] = demand["demand"] / n_days
    # input MB per succeeded map attempt, from the workload's task groups
    maps = tdf[(tdf["type"] == "map") & tdf["ok"]].copy()
    mb = np.zeros(len(maps))
    index = {job.id: job for job in workload.jobs}
    for k, (jid, stage, task) in enumerate(zip(maps["job_id"], maps["stage"], maps["task"])):
        groups = index[jid].stages[int(stage)].tasks
        offset = 0
        for group in groups:
            if task < offset + group.count:
                mb[k] = group.task_input_mb
                break
            offset += group.count
    maps["mb"] = mb
    sums = maps.groupby("group", as_index=False)[["r", "mb"]].sum()
    map_cost = pd.DataFrame({"group": sums["group"], "D": sums["r"] / sums["mb"]})
    reduces = tdf[(tdf["type"] == "reduce") & tdf["ok"]]
    reduce_cost = reduces.groupby("group", as_index=False)["r"].mean().rename(columns={"r": "reduce_cost"})
    return demand, map_cost, reduce_cost
