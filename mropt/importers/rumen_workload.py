"""Rumen traces and Hadoop job history files as simulator workloads (``mropt import-rumen``).

Like Hadoop's Rumen-driven simulators (Mumak, SLS), the real attempts become the
simulated tasks (:mod:`mropt.model.workload`):

* **Nodes**: one node per host that ran an attempt (Rumen ``hostName`` / job history
  ``hostname``), in its rack (the rack name without the leading ``/``; ``rack0`` when
  none), speed 1. Its ``map_slots`` (``reduce_slots``) is the most map (reduce) attempts
  the trace shows running on it at once, at least 1: the capacity the trace proves it had.
* **Jobs**: ``submit_time`` relative to the earliest submission in the files, ``user``,
  ``pool`` = the user group (queue), ``priority`` (Hadoop's VERY_LOW ... VERY_HIGH ->
  -2 ... 2). A map stage with one task per map task that succeeded, its ``duration`` the
  successful attempt's finish - start (seconds, at least 1 ms) and its ``replicas`` the
  host that attempt ran on (so the task runs node-local, in its real time, where it ran);
  a reduce stage likewise (no replicas: reduces have no input locality). Setup and
  cleanup tasks, failed and killed attempts and tasks that never succeeded are left out;
  a job without any succeeded map or reduce task (a failed job) is left out and counted.
* **Reduce slow-start** (``timing.reduce_slowstart``), from the jobs that have both a map and
  a reduce stage: the job configuration's value where the file carries it (Rumen
  ``jobProperties``: ``mapreduce.job.reduce.slowstart.completedmaps``, else Hadoop 1's
  ``mapred.reduce.slowstart.completed.maps``; a value that is not a number in [0, 1] is
  ignored); else, where no such job carries one, what the attempts show: the fraction k / n of
  the job's n maps whose successful attempt had finished when its first reduce attempt
  started, written with 6 decimals rounded down so that Hadoop's threshold ``ceil(s x n)``
  (``JobInProgress``) is k again. The workload holds one value: the smallest over those jobs
  (a cluster's configured value is at most every job's observed fraction: reduces launch at
  the threshold or later). Unset when no job has both stages (``.jhist`` files carry only the
  configuration's path, so their value is always the observed one).

``meta.source`` records the files, the counts kept and left out, the time origin and, when
set, where the slow-start came from (``reduce_slowstart``: its value, ``from`` ``jobconf`` or
``attempts``, and ``jobs``, how many jobs gave a value).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mropt.importers.jhist import read_jhist
from mropt.importers.rumen import read_rumen
from mropt.importers.table import detect_kind
from mropt.model.errors import InputError
from mropt.model.workload import NodeSpec, Stage, TaskGroup, Timing, WorkloadInstance, WorkloadJob

PRIORITIES = {"VERY_LOW": -2, "LOW": -1, "NORMAL": 0, "HIGH": 1, "VERY_HIGH": 2}
MIN_DURATION = 0.001
#: the job configuration's reduce slow-start keys: Hadoop 2's name, then Hadoop 1's
SLOWSTART_KEYS = ("mapreduce.job.reduce.slowstart.completedmaps", "mapred.reduce.slowstart.completed.maps")


def _max_concurrent(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals], key=lambda x: (x[0], x[1]))
    best = cur = 0
    for _, step in events:
        cur += step
        best = max(best, cur)
    return best


def read_history_rows(path: Path) -> dict[str, list[dict[str, Any]]]:
    """The rows of one Rumen or ``.jhist`` file (other kinds are refused)."""
    kind = detect_kind(path)
    if kind == "jhist":
        return read_jhist(path)
    if kind == "rumen":
        return read_rumen(path)
    raise InputError(f"{path}: import-rumen reads Rumen JSON or .jhist files, this is a {kind} file")


def history_workload(paths: Sequence[str | Path], name: str | None = None) -> WorkloadInstance:
    """A workload from Rumen / job history files (module docstring)."""
    if not paths:
        raise InputError("import-rumen: no input file")
    jobs, tasks, attempts, conf = _read_rows(paths)
    timed = [
        a for a in attempts if a.get("host") and a.get("start_time") is not None and a.get("finish_time") is not None
    ]
    nodes = _nodes(timed, paths[0])
    submits = [j["submit_time"] for j in jobs if j.get("submit_time") is not None]
    origin = min(submits) if submits else 0.0
    out, skipped_jobs, dropped_tasks, slowstarts = _workload_jobs(jobs, tasks, attempts, conf, timed, origin)
    if not out:
        raise InputError(
            f"{paths[0]}: no job with a succeeded map or reduce task ({len(skipped_jobs)} job(s) left out): nothing to simulate"
        )
    source = {
        "model": "history-attempts",
        "model_version": 1,
        "files": [Path(p).name for p in paths],
        "time_origin": origin,
        "jobs": len(out),
        "jobs_left_out": skipped_jobs,
        "tasks_left_out": dropped_tasks,
        "nodes": len(nodes),
    }
    return WorkloadInstance(
        nodes=nodes,
        jobs=tuple(out),
        timing=_slowstart_timing(slowstarts, source),
        name=name or Path(paths[0]).stem,
        meta={"source": source},
    )


_Rows = list[dict[str, Any]]


def _read_rows(paths: Sequence[str | Path]) -> tuple[_Rows, _Rows, _Rows, _Rows]:
    """The jobs, tasks, attempts and slow-start jobconf rows of all files, each marked with its file."""
    jobs: _Rows = []
    tasks: _Rows = []
    attempts: _Rows = []
    conf: _Rows = []
    for p in paths:
        rows = read_history_rows(Path(p))
        key = str(p)
        jobs += [{**j, "_file": key} for j in rows["jobs"]]
        tasks += [{**t, "_file": key} for t in rows["tasks"]]
        attempts += [{**a, "_file": key} for a in rows["attempts"]]
        conf += [{**c, "_file": key} for c in rows.get("jobconf", ()) if c["key"] in SLOWSTART_KEYS]
    return jobs, tasks, attempts, conf


def _nodes(timed: _Rows, first: str | Path) -> tuple[NodeSpec, ...]:
    """One node per host that ran a timed map or reduce attempt, in its rack, its slots the most
    attempts of each type the trace shows on it at once, at least 1 (module docstring: Nodes)."""
    busy: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    rack_of: dict[str, str] = {}
    for a in timed:
        if a["type"] in ("map", "reduce"):
            busy[(a["host"], a["type"])].append((a["start_time"], a["finish_time"]))
            rack_of.setdefault(a["host"], (a.get("rack") or "").strip("/") or "rack0")
    if not rack_of:
        raise InputError(f"{first}: no map or reduce attempt with a host and times: nothing to simulate")
    return tuple(
        NodeSpec(
            id=host,
            rack=rack_of[host],
            map_slots=max(1, _max_concurrent(busy.get((host, "map"), []))),
            reduce_slots=max(1, _max_concurrent(busy.get((host, "reduce"), []))),
        )
        for host in sorted(rack_of)
    )


def _workload_jobs(
    jobs: _Rows, tasks: _Rows, attempts: _Rows, conf: _Rows, timed: _Rows, origin: float
) -> tuple[list[WorkloadJob], list[str], int, dict[str, list[float]]]:
    """The jobs with a succeeded map or reduce task as WorkloadJobs in submit order (module
    docstring: Jobs), the ids of those left out, the tasks left out, and each job's slow-start."""
    won: dict[tuple[str, str, str], dict[str, Any]] = {}
    for a in timed:
        if a["status"] == "SUCCEEDED" and a["type"] in ("map", "reduce"):
            won.setdefault((a["_file"], a["job_id"], a["task_id"]), a)
    by_job: dict[tuple[str, str], _Rows] = defaultdict(list)
    for t in tasks:
        by_job[(t["_file"], t["job_id"])].append(t)
    first_reduce: dict[tuple[str, str], float] = {}
    for a in attempts:
        if a["type"] == "reduce" and a.get("start_time") is not None:
            of_job = (a["_file"], a["job_id"])
            first_reduce[of_job] = min(a["start_time"], first_reduce.get(of_job, a["start_time"]))
    configured: dict[tuple[str, str], dict[str, str | None]] = defaultdict(dict)
    for c in conf:
        configured[(c["_file"], c["job_id"])][c["key"]] = c["value"]
    slowstarts: dict[str, list[float]] = {"jobconf": [], "attempts": []}
    out: list[WorkloadJob] = []
    skipped_jobs: list[str] = []
    dropped_tasks = 0
    seen_ids: set[str] = set()
    for j in sorted(jobs, key=lambda j: (j.get("submit_time") or origin, j["job_id"])):
        stages, map_ends, dropped = _job_stages(j, by_job[(j["_file"], j["job_id"])], won)
        dropped_tasks += dropped
        if not stages:
            skipped_jobs.append(j["job_id"])
            continue
        if len(stages) == 2 and stages[0].type == "map":
            of_job = (j["_file"], j["job_id"])
            _job_slowstart(configured.get(of_job, {}), map_ends, first_reduce.get(of_job), slowstarts)
        jid = j["job_id"] if j["job_id"] not in seen_ids else f"{j['job_id']}@{Path(j['_file']).name}"
        seen_ids.add(jid)
        submit = (j["submit_time"] - origin) if j.get("submit_time") is not None else 0.0
        out.append(
            WorkloadJob(
                id=jid,
                stages=tuple(stages),
                submit_time=round(submit, 3),
                user=j.get("user") or "default",
                pool=j.get("user_group") or None,
                priority=PRIORITIES.get(str(j.get("priority") or "NORMAL").upper(), 0),
            )
        )
    return out, skipped_jobs, dropped_tasks, slowstarts


def _job_stages(
    job: dict[str, Any], job_tasks: _Rows, won: dict[tuple[str, str, str], dict[str, Any]]
) -> tuple[list[Stage], list[float], int]:
    """A job's map and reduce stages, one task per task that succeeded, its duration the successful
    attempt's and a map's replica its host (module docstring: Jobs); the maps' finish times; the
    count of tasks left out."""
    stages = []
    map_ends: list[float] = []
    dropped = 0
    for stype in ("map", "reduce"):
        groups = []
        for t in sorted(job_tasks, key=lambda t: t["task_id"]):
            if t["type"] != stype:
                continue
            best = won.get((job["_file"], job["job_id"], t["task_id"]))
            if best is None:
                dropped += 1
                continue
            duration = max(MIN_DURATION, round(best["finish_time"] - best["start_time"], 3))
            replicas = ((best["host"],),) if stype == "map" else ()
            if stype == "map":
                map_ends.append(best["finish_time"])
            groups.append(TaskGroup(duration=duration, count=1, replicas=replicas))
        if groups:
            stages.append(Stage(stype, tuple(groups)))
    return stages, map_ends, dropped


def _slowstart_timing(slowstarts: dict[str, list[float]], source: dict[str, Any]) -> Timing:
    """The workload's reduce slow-start, the smallest of the jobs' values, the configured ones first
    (module docstring: Reduce slow-start), recorded in ``source``; unset without any."""
    timing = Timing()
    origin_of = "jobconf" if slowstarts["jobconf"] else "attempts"
    if slowstarts[origin_of]:
        value = min(slowstarts[origin_of])
        timing = Timing(reduce_slowstart=value)
        source["reduce_slowstart"] = {"value": value, "from": origin_of, "jobs": len(slowstarts[origin_of])}
    return timing


def _job_slowstart(
    conf: dict[str, str | None], map_ends: list[float], first_reduce: float | None, out: dict[str, list[float]]
) -> None:
    """Append a job's slow-start to ``out["jobconf"]`` (its configuration's value) or, without one,
    to ``out["attempts"]`` (the fraction of its maps done when its first reduce started)."""
    for key in SLOWSTART_KEYS:
        try:
            value = float(conf.get(key) or "nan")
        except ValueError:
            continue
        if 0.0 <= value <= 1.0:
            out["jobconf"].append(value)
            return
    if first_reduce is not None and map_ends:
        done = sum(1 for end in map_ends if end is not None and end <= first_reduce)
        out["attempts"].append(threshold_fraction(done, len(map_ends)))


def threshold_fraction(k: int, n: int) -> float:
    """The fraction ``s`` (6 decimals, rounded down) whose slow-start threshold ``ceil(s x n)``
    (Hadoop's ``JobInProgress``, and the simulator's) is ``k`` of ``n`` maps."""
    top = math.floor(k / n * 1e6)
    for m in (top, top - 1):  # the product may round just above k (7/25 = 0.28: 0.28 x 25 > 7)
        if m >= 0 and math.ceil(m / 1e6 * n) == k:
            return m / 1e6
    s = k / n  # a million maps or more: 6 decimals cannot tell k from k - 1
    while math.ceil(s * n) > k:
        s = math.nextafter(s, 0.0)
    return s
