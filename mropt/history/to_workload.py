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

``meta.source`` records the files, the counts kept and left out, and the time origin.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mropt.history.importers import detect_kind
from mropt.history.jhist import read_jhist
from mropt.history.rumen import read_rumen
from mropt.model.errors import InputError
from mropt.model.workload import NodeSpec, Stage, TaskGroup, WorkloadInstance, WorkloadJob

PRIORITIES = {"VERY_LOW": -2, "LOW": -1, "NORMAL": 0, "HIGH": 1, "VERY_HIGH": 2}
MIN_DURATION = 0.001


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
    jobs: list[dict[str, Any]] = []
    tasks: list[dict[str, Any]] = []
    attempts: list[dict[str, Any]] = []
    for p in paths:
        rows = read_history_rows(Path(p))
        key = str(p)
        jobs += [{**j, "_file": key} for j in rows["jobs"]]
        tasks += [{**t, "_file": key} for t in rows["tasks"]]
        attempts += [{**a, "_file": key} for a in rows["attempts"]]
    timed = [
        a for a in attempts if a.get("host") and a.get("start_time") is not None and a.get("finish_time") is not None
    ]
    busy: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    rack_of: dict[str, str] = {}
    for a in timed:
        if a["type"] in ("map", "reduce"):
            busy[(a["host"], a["type"])].append((a["start_time"], a["finish_time"]))
            rack_of.setdefault(a["host"], (a.get("rack") or "").strip("/") or "rack0")
    if not rack_of:
        raise InputError(f"{paths[0]}: no map or reduce attempt with a host and times: nothing to simulate")
    nodes = tuple(
        NodeSpec(
            id=host,
            rack=rack_of[host],
            map_slots=max(1, _max_concurrent(busy.get((host, "map"), []))),
            reduce_slots=max(1, _max_concurrent(busy.get((host, "reduce"), []))),
        )
        for host in sorted(rack_of)
    )
    won: dict[tuple[str, str, str], dict[str, Any]] = {}
    for a in timed:
        if a["status"] == "SUCCEEDED" and a["type"] in ("map", "reduce"):
            won.setdefault((a["_file"], a["job_id"], a["task_id"]), a)
    submits = [j["submit_time"] for j in jobs if j.get("submit_time") is not None]
    origin = min(submits) if submits else 0.0
    by_job: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for t in tasks:
        by_job[(t["_file"], t["job_id"])].append(t)
    out: list[WorkloadJob] = []
    skipped_jobs: list[str] = []
    dropped_tasks = 0
    seen_ids: set[str] = set()
    for j in sorted(jobs, key=lambda j: (j.get("submit_time") or origin, j["job_id"])):
        stages = []
        for stype in ("map", "reduce"):
            groups = []
            for t in sorted(by_job[(j["_file"], j["job_id"])], key=lambda t: t["task_id"]):
                if t["type"] != stype:
                    continue
                best = won.get((j["_file"], j["job_id"], t["task_id"]))
                if best is None:
                    dropped_tasks += 1
                    continue
                duration = max(MIN_DURATION, round(best["finish_time"] - best["start_time"], 3))
                replicas = ((best["host"],),) if stype == "map" else ()
                groups.append(TaskGroup(duration=duration, count=1, replicas=replicas))
            if groups:
                stages.append(Stage(stype, tuple(groups)))
        if not stages:
            skipped_jobs.append(j["job_id"])
            continue
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
        name=name or Path(paths[0]).stem,
        meta={"source": source},
    )
