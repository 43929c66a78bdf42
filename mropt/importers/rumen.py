"""Importer of Rumen job traces (Hadoop's ``LoggedJob`` JSON: Rumen TraceBuilder, Gridmix, SLS).

A Rumen file holds one or more JSON job objects one after the other (not an array; an
array of jobs is read too). Per ``org.apache.hadoop.tools.rumen.LoggedJob``:

* ``jobs``: ``jobID``, ``jobName``, ``user``, ``queue`` (the user group), ``priority``,
  ``submitTime``, ``launchTime``, ``finishTime``, ``outcome`` (SUCCESS -> SUCCEEDED),
  ``totalMaps``, ``totalReduces``; input bytes = the sum of the map tasks' ``inputBytes``,
  output bytes = the sum of the reduce tasks' ``outputBytes`` (of the map tasks' for a
  map-only job), where known.
* ``tasks`` (``LoggedTask``, from ``mapTasks``, ``reduceTasks`` and ``otherTasks``):
  ``taskID``, ``taskType``, ``startTime``, ``finishTime``, ``taskStatus``, ``inputBytes``
  (HEI's M_i), ``outputBytes``; host and rack of the successful (else last) attempt.
* ``attempts`` (``LoggedTaskAttempt``): ``attemptID``, ``result``, ``hostName``
  (``/rack/host``; ``location.layers`` when present), ``startTime``, ``finishTime``,
  ``shuffleFinished``, ``sortFinished``, ``hdfsBytesRead``. Rumen does not say which
  attempts were speculative: ``speculative`` is null.
* ``jobconf``: ``jobProperties``.

Times are epoch milliseconds (-1: unknown), stored as seconds; -1 byte counts are null.
A field of the wrong type is an InputError naming the file, the line where its job
object starts, and the field's path (``mapTasks[3].attempts[0].startTime``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mropt.history.batch import Batch, batch_from_rows, read_text
from mropt.importers.table import Importer, register_importer
from mropt.model.errors import InputError

KIND = "rumen"
_OUTCOMES = {"SUCCESS": "SUCCEEDED", "SUCCEEDED": "SUCCEEDED", "FAILED": "FAILED", "KILLED": "KILLED"}
_TYPES = {"MAP": "map", "REDUCE": "reduce"}


def read_objects(path: Path) -> list[tuple[int, Any]]:
    """The JSON values of a file of concatenated values, each with the line it starts on."""
    text = read_text(path)
    decoder = json.JSONDecoder()
    out: list[tuple[int, Any]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        line = text.count("\n", 0, i) + 1
        try:
            value, i = decoder.raw_decode(text, i)
        except ValueError as exc:
            err = exc if isinstance(exc, json.JSONDecodeError) else None
            where = f"line {err.lineno}" if err else f"line {line}"
            raise InputError(f"{path.name} {where}: not JSON ({err.msg if err else exc})") from None
        if isinstance(value, list):
            out += [(line, v) for v in value]
        else:
            out.append((line, value))
    if not out:
        raise InputError(f"{path.name}: no Rumen job in the file")
    return out


class _Reader:
    """Field readers for one job object: errors name the file, the job's line and the field path."""

    def __init__(self, name: str, line: int) -> None:
        self.name, self.line = name, line

    def fail(self, field: str, rule: str, value: Any) -> InputError:
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        return InputError(f"{self.name} line {self.line}: field '{field}' {rule}, got {shown}")

    def whole(self, obj: dict[str, Any], key: str, path: str) -> int | None:
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"{path}{key}", "must be a whole number", value)
        return None if value < 0 else value

    def time(self, obj: dict[str, Any], key: str, path: str) -> float | None:
        value = self.whole(obj, key, path)
        return None if value is None or value == 0 else value / 1000.0

    def text(self, obj: dict[str, Any], key: str, path: str, required: bool = False) -> str | None:
        value = obj.get(key)
        if value is None:
            if required:
                raise InputError(f"{self.name} line {self.line}: field '{path}{key}' is missing")
            return None
        if not isinstance(value, str):
            raise self.fail(f"{path}{key}", "must be a string", value)
        return value

    def records(self, obj: dict[str, Any], key: str, path: str) -> list[Any]:
        value = obj.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(f"{path}{key}", "must be a list", value)
        for k, item in enumerate(value):
            if not isinstance(item, dict):
                raise self.fail(f"{path}{key}[{k}]", "must be an object", item)
        return value


def _host(rd: _Reader, att: dict[str, Any], path: str) -> tuple[str | None, str | None]:
    loc = att.get("location")
    if isinstance(loc, dict) and isinstance(loc.get("layers"), list) and loc["layers"]:
        layers = [str(x) for x in loc["layers"]]
        return layers[-1], ("/" + layers[0] if len(layers) > 1 else None)
    name = rd.text(att, "hostName", path)
    if not name:
        return None, None
    parts = [p for p in name.split("/") if p]
    if not parts:
        return None, None
    return parts[-1], ("/" + "/".join(parts[:-1]) if len(parts) > 1 else None)


def read_rumen(path: str | Path) -> dict[str, list[dict[str, Any]]]:
    """The rows of a Rumen trace per table (module docstring)."""
    path = Path(path)
    rows: dict[str, list[dict[str, Any]]] = {"jobs": [], "tasks": [], "attempts": [], "jobconf": []}
    for line, obj in read_objects(path):
        rd = _Reader(path.name, line)
        if not isinstance(obj, dict):
            raise rd.fail("(job)", "must be a JSON object", obj)
        job_id = rd.text(obj, "jobID", "", required=True)
        outcome = rd.text(obj, "outcome", "")
        job: dict[str, Any] = {
            "job_id": job_id,
            "name": rd.text(obj, "jobName", ""),
            "user": rd.text(obj, "user", ""),
            "user_group": rd.text(obj, "queue", ""),
            "priority": rd.text(obj, "priority", ""),
            "submit_time": rd.time(obj, "submitTime", ""),
            "launch_time": rd.time(obj, "launchTime", ""),
            "finish_time": rd.time(obj, "finishTime", ""),
            "status": _OUTCOMES.get(outcome or "", outcome or "UNKNOWN"),
            "maps": rd.whole(obj, "totalMaps", ""),
            "reduces": rd.whole(obj, "totalReduces", ""),
        }
        sums: dict[str, list[int]] = {"map_in": [], "map_out": [], "red_out": []}
        done = {"map": 0, "reduce": 0}
        failed = {"map": 0, "reduce": 0}
        for key in ("mapTasks", "reduceTasks", "otherTasks"):
            for k, task in enumerate(rd.records(obj, key, "")):
                tp = f"{key}[{k}]."
                tid = rd.text(task, "taskID", tp, required=True)
                ttype = _TYPES.get(rd.text(task, "taskType", tp) or "", "other")
                status = rd.text(task, "taskStatus", tp)
                trow: dict[str, Any] = {
                    "job_id": job_id,
                    "task_id": tid,
                    "type": ttype,
                    "start_time": rd.time(task, "startTime", tp),
                    "finish_time": rd.time(task, "finishTime", tp),
                    "status": _OUTCOMES.get(status or "", status or "UNKNOWN"),
                    "input_bytes": rd.whole(task, "inputBytes", tp),
                    "output_bytes": rd.whole(task, "outputBytes", tp),
                }
                if ttype in done:
                    done[ttype] += trow["status"] == "SUCCEEDED"
                    failed[ttype] += trow["status"] == "FAILED"
                if ttype == "map":
                    sums["map_in"] += [trow["input_bytes"]] if trow["input_bytes"] is not None else []
                    sums["map_out"] += [trow["output_bytes"]] if trow["output_bytes"] is not None else []
                elif ttype == "reduce" and trow["output_bytes"] is not None:
                    sums["red_out"].append(trow["output_bytes"])
                chosen = None
                for m, att in enumerate(rd.records(task, "attempts", tp)):
                    ap = f"{tp}attempts[{m}]."
                    host, rack = _host(rd, att, ap)
                    result = rd.text(att, "result", ap)
                    arow = {
                        "job_id": job_id,
                        "task_id": tid,
                        "attempt_id": rd.text(att, "attemptID", ap, required=True),
                        "type": ttype,
                        "host": host,
                        "rack": rack,
                        "start_time": rd.time(att, "startTime", ap),
                        "finish_time": rd.time(att, "finishTime", ap),
                        "status": _OUTCOMES.get(result or "", result or "UNKNOWN"),
                        "shuffle_finish": rd.time(att, "shuffleFinished", ap),
                        "sort_finish": rd.time(att, "sortFinished", ap),
                        "input_bytes": rd.whole(att, "hdfsBytesRead", ap),
                    }
                    rows["attempts"].append(arow)
                    if chosen is None or chosen["status"] != "SUCCEEDED":
                        chosen = arow
                if chosen is not None:
                    trow["host"], trow["rack"] = chosen["host"], chosen["rack"]
                rows["tasks"].append(trow)
        job.update(
            finished_maps=done["map"],
            finished_reduces=done["reduce"],
            failed_maps=failed["map"],
            failed_reduces=failed["reduce"],
            input_bytes=sum(sums["map_in"]) if sums["map_in"] else None,
            output_bytes=sum(sums["red_out"])
            if sums["red_out"]
            else (sum(sums["map_out"]) if sums["map_out"] else None),
        )
        rows["jobs"].append(job)
        props = obj.get("jobProperties") or {}
        if not isinstance(props, dict):
            raise rd.fail("jobProperties", "must be an object", props)
        rows["jobconf"] += [
            {"job_id": job_id, "key": str(k), "value": None if v is None else str(v)} for k, v in props.items()
        ]
    return rows


def rumen_batch(path: str | Path, source: str | None = None) -> Batch:
    """The import batch of one Rumen trace file."""
    path = Path(path)
    return batch_from_rows(source or path.name, KIND, read_rumen(path))


def _looks_like(path: Path, head: str | None) -> bool:
    return head is not None and head.lstrip()[:1] in ("{", "[")


register_importer(
    Importer(
        KIND,
        summary="Rumen job traces (LoggedJob JSON: TraceBuilder, Gridmix, SLS): jobs, tasks, attempts, jobconf",
        source="org.apache.hadoop.tools.rumen.LoggedJob, LoggedTask, LoggedTaskAttempt",
        title="Rumen JSON",
        detect=_looks_like,
        history=rumen_batch,
    )
)
