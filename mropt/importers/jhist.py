"""Importer of Hadoop 2.x job history files (``.jhist``, Avro-JSON event logs; HEI sec. 2.1's JobHistory).

A job's MapReduce application master writes one ``.jhist`` file
(``org.apache.hadoop.mapreduce.jobhistory.JobHistoryEventHandler``): line 1 ``Avro-Json``,
line 2 the Avro schema of ``Event``, then one event per line,
``{"type": "MAP_ATTEMPT_FINISHED", "event": {"org.apache...TaskAttemptFinished": {...}}}``.
Avro's JSON encoding wraps a union value in a one-key object (``{"string": "x"}``); it is
unwrapped. Times are epoch milliseconds, stored as seconds.

What each table gets (the job history parser's, ``JobHistoryParser.handleEvent``):

* ``jobs``: JOB_SUBMITTED (id, name, user, submit time, queue = the user group),
  JOB_QUEUE_CHANGED, JOB_PRIORITY_CHANGED, JOB_INITED (launch time, total maps and
  reduces), JOB_INFO_CHANGED, JOB_FINISHED (finish time, finished and failed maps and
  reduces, ``HDFS_BYTES_READ`` / ``REDUCE_SHUFFLE_BYTES`` / ``HDFS_BYTES_WRITTEN`` of the
  total counters) or JOB_FAILED / JOB_KILLED / JOB_ERROR (status). No final event: RUNNING.
* ``tasks``: TASK_STARTED, TASK_FINISHED, TASK_FAILED (its ``status``: FAILED or KILLED),
  TASK_UPDATED; input bytes = the task's ``HDFS_BYTES_READ`` counter (HEI's M_i, the data
  a map reads from HDFS), output = ``HDFS_BYTES_WRITTEN``; host and rack of its
  successful attempt, else of its last attempt.
* ``attempts``: ``*_ATTEMPT_STARTED`` (start, tracker; ``avataar`` SPECULATIVE marks a
  speculative attempt, Hadoop >= 2.6), ``*_ATTEMPT_FINISHED`` (finish, host, rack, status,
  a reduce's shuffle and sort finish times), ``*_ATTEMPT_FAILED`` / ``*_ATTEMPT_KILLED``.
* ``jobconf``: the job's ACLs and ``jobConfPath`` from JOB_SUBMITTED (the configuration
  itself is in the separate ``job.xml``, which the history file does not hold).

A line that is not a JSON event, or an event without a needed field or with a field of the
wrong type, is an InputError naming the file, the line and the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mropt.history.batch import Batch, batch_from_rows, read_text
from mropt.importers.table import Importer, register_importer
from mropt.model.errors import InputError

KIND = "jhist"
MAGIC = "Avro-Json"

_TASK_TYPES = {"MAP": "map", "REDUCE": "reduce"}


def unwrap(value: Any) -> Any:
    """Avro JSON's union encoding ``{"type": value}`` -> value."""
    if isinstance(value, dict) and len(value) == 1:
        ((key, inner),) = value.items()
        if key in ("string", "long", "int", "boolean", "double", "float", "bytes", "null"):
            return inner
    return value


def counter(counters: Any, name: str) -> int | None:
    """The value of the counter ``name`` in Hadoop's JhCounters record (any group), or None."""
    counters = unwrap(counters)
    if not isinstance(counters, dict):
        return None
    for group in counters.get("groups") or ():
        for c in group.get("counts") or ():
            if c.get("name") == name and isinstance(c.get("value"), int):
                return int(c["value"])
    return None


class _Event:
    """One event's record, with field readers that name the file, line and field on error."""

    def __init__(self, name: str, line: int, etype: str, record: dict[str, Any]) -> None:
        self.name, self.line, self.type, self.record = name, line, etype, record

    def error(self, field: str, rule: str, value: Any) -> InputError:
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        return InputError(f"{self.name} line {self.line}: event {self.type}: field '{field}' {rule}, got {shown}")

    def text(self, field: str, required: bool = True) -> str | None:
        value = unwrap(self.record.get(field))
        if value is None:
            if required:
                raise InputError(f"{self.name} line {self.line}: event {self.type}: field '{field}' is missing")
            return None
        if not isinstance(value, str):
            raise self.error(field, "must be a string", value)
        return value

    def whole(self, field: str, required: bool = True) -> int | None:
        value = unwrap(self.record.get(field))
        if value is None:
            if required:
                raise InputError(f"{self.name} line {self.line}: event {self.type}: field '{field}' is missing")
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(field, "must be a whole number", value)
        return value

    def time(self, field: str, required: bool = True) -> float | None:
        """An epoch-milliseconds field as seconds (Hadoop writes -1 or 0 for 'not known')."""
        value = self.whole(field, required)
        if value is None or value <= 0:
            return None
        return value / 1000.0


def _events(path: Path) -> tuple[str, list[_Event]]:
    name = path.name
    text = read_text(path)
    lines = text.split("\n")
    if not lines or lines[0].strip() != MAGIC:
        raise InputError(f"{name} line 1: not a Hadoop job history file (expected {MAGIC!r}, got {lines[0][:40]!r})")
    events = []
    for lineno, line in enumerate(lines[2:], start=3):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{name} line {lineno}: not a JSON event ({exc.msg} at column {exc.colno})") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            raise InputError(f"{name} line {lineno}: field 'type' is missing (not a history event)")
        body = obj.get("event")
        if not isinstance(body, dict) or len(body) != 1 or not isinstance(next(iter(body.values())), dict):
            raise InputError(f"{name} line {lineno}: event {obj['type']}: field 'event' must hold one record")
        events.append(_Event(name, lineno, obj["type"], next(iter(body.values()))))
    return name, events


def read_jhist(path: str | Path) -> dict[str, list[dict[str, Any]]]:
    """The rows of one ``.jhist`` file per table (module docstring); InputError on a malformed event."""
    name, events = _events(Path(path))
    rows = _JobRows()
    for ev in events:
        rows.handle(ev)
    return rows.tables(name)


class _JobRows:
    """The rows of one job's history, event by event (``JobHistoryParser``'s JobInfo, TaskInfo and
    TaskAttemptInfo, filled by its ``handleEvent``)."""

    def __init__(self) -> None:
        self.job: dict[str, Any] = {}
        self.conf: list[dict[str, Any]] = []
        self.tasks: dict[str, dict[str, Any]] = {}
        self.attempts: dict[str, dict[str, Any]] = {}
        self.succeeded_attempt: dict[str, str] = {}

    def handle(self, ev: _Event) -> None:
        """Apply one event to the rows (``JobHistoryParser.handleEvent``'s dispatch on the event type)."""
        et = ev.type
        if et == "JOB_SUBMITTED":
            self.job_submitted(ev)
        elif et == "JOB_QUEUE_CHANGED":
            self.job["user_group"] = ev.text("jobQueueName")
        elif et == "JOB_PRIORITY_CHANGED":
            self.job["priority"] = ev.text("priority")
        elif et == "JOB_INITED":
            self.job.update(
                launch_time=ev.time("launchTime"), maps=ev.whole("totalMaps"), reduces=ev.whole("totalReduces")
            )
        elif et == "JOB_INFO_CHANGED":
            self.job.update(submit_time=ev.time("submitTime"), launch_time=ev.time("launchTime"))
        elif et == "JOB_FINISHED":
            self.job_finished(ev)
        elif et in ("JOB_FAILED", "JOB_KILLED", "JOB_ERROR"):
            self.job.update(
                status=ev.text("jobStatus", required=False) or et.split("_")[1],
                finish_time=ev.time("finishTime"),
                finished_maps=ev.whole("finishedMaps", required=False),
                finished_reduces=ev.whole("finishedReduces", required=False),
            )
        elif et == "TASK_STARTED":
            self.task(ev)["start_time"] = ev.time("startTime")
        elif et in ("TASK_FINISHED", "TASK_FAILED"):
            self.task_ended(ev)
        elif et == "TASK_UPDATED":
            self.task(ev)["finish_time"] = ev.time("finishTime")
        elif et.endswith("_ATTEMPT_STARTED"):
            self.attempt_started(ev)
        elif et.endswith("_ATTEMPT_FINISHED") or et.endswith("_ATTEMPT_FAILED") or et.endswith("_ATTEMPT_KILLED"):
            self.attempt_ended(ev)

    def task(self, ev: _Event) -> dict[str, Any]:
        """The row of the event's task (``taskid``), made on first sight; ``taskType`` sets its type."""
        tid = ev.text("taskid")
        assert tid is not None
        row = self.tasks.setdefault(tid, {"task_id": tid, "type": "other", "status": "RUNNING"})
        ttype = ev.text("taskType", required=False)
        if ttype is not None:
            row["type"] = _TASK_TYPES.get(ttype, "other")
        return row

    def attempt(self, ev: _Event) -> dict[str, Any]:
        """The row of the event's attempt (``attemptId``), made on first sight, of the event's task."""
        aid = ev.text("attemptId")
        assert aid is not None
        t = self.task(ev)
        return self.attempts.setdefault(
            aid, {"attempt_id": aid, "task_id": t["task_id"], "type": t["type"], "status": "RUNNING"}
        )

    def job_submitted(self, ev: _Event) -> None:
        """JOB_SUBMITTED (``handleJobSubmittedEvent``): id, name, user, queue, submit time; ACLs and
        ``jobConfPath`` as jobconf rows."""
        self.job.update(
            job_id=ev.text("jobid"),
            name=ev.text("jobName", required=False),
            user=ev.text("userName", required=False),
            user_group=ev.text("jobQueueName", required=False),
            submit_time=ev.time("submitTime"),
        )
        acls = unwrap(ev.record.get("acls")) or {}
        if isinstance(acls, dict):
            self.conf += [{"key": str(k), "value": str(unwrap(v))} for k, v in sorted(acls.items())]
        path_ = ev.text("jobConfPath", required=False)
        if path_:
            self.conf.append({"key": "jobConfPath", "value": path_})

    def job_finished(self, ev: _Event) -> None:
        """JOB_FINISHED (``handleJobFinishedEvent``): finish time, finished and failed tasks, and the
        bytes of the total counters."""
        total = ev.record.get("totalCounters")
        self.job.update(
            status="SUCCEEDED",
            finish_time=ev.time("finishTime"),
            finished_maps=ev.whole("finishedMaps"),
            finished_reduces=ev.whole("finishedReduces"),
            failed_maps=ev.whole("failedMaps", required=False),
            failed_reduces=ev.whole("failedReduces", required=False),
            input_bytes=counter(total, "HDFS_BYTES_READ"),
            shuffle_bytes=counter(total, "REDUCE_SHUFFLE_BYTES"),
            output_bytes=counter(total, "HDFS_BYTES_WRITTEN"),
        )

    def task_ended(self, ev: _Event) -> None:
        """TASK_FINISHED and TASK_FAILED (``handleTaskFinishedEvent``, ``handleTaskFailedEvent``):
        finish time, status, the bytes of its counters, its successful attempt."""
        t = self.task(ev)
        t["finish_time"] = ev.time("finishTime")
        t["status"] = ev.text("status", required=False) or ("SUCCEEDED" if ev.type == "TASK_FINISHED" else "FAILED")
        counters = ev.record.get("counters")
        t["input_bytes"] = counter(counters, "HDFS_BYTES_READ")
        t["output_bytes"] = counter(counters, "HDFS_BYTES_WRITTEN")
        won = ev.text("successfulAttemptId", required=False)
        if won:
            self.succeeded_attempt[t["task_id"]] = won

    def attempt_started(self, ev: _Event) -> None:
        """``*_ATTEMPT_STARTED`` (``handleTaskAttemptStartedEvent``): start time, tracker, speculative or not."""
        a = self.attempt(ev)
        a["start_time"] = ev.time("startTime")
        a["host"] = a.get("host") or ev.text("trackerName", required=False)
        avataar = ev.text("avataar", required=False)
        a["speculative"] = None if avataar is None else avataar == "SPECULATIVE"

    def attempt_ended(self, ev: _Event) -> None:
        """``*_ATTEMPT_FINISHED``, ``_FAILED``, ``_KILLED`` (``handleMapAttemptFinishedEvent``,
        ``handleReduceAttemptFinishedEvent``, ``handleTaskAttemptFinishedEvent``,
        ``handleTaskAttemptFailedEvent``): finish time, host, rack, status; a finished one's shuffle
        and sort times and input bytes, a failed or killed one's error."""
        et = ev.type
        a = self.attempt(ev)
        a["finish_time"] = ev.time("finishTime")
        a["host"] = ev.text("hostname", required=False) or a.get("host")
        a["rack"] = ev.text("rackname", required=False) or a.get("rack")
        status = ev.text("taskStatus", required=False) or ev.text("status", required=False)
        a["status"] = status or et.rsplit("_", 1)[1].replace("FINISHED", "SUCCEEDED")
        if et.endswith("_ATTEMPT_FINISHED"):
            a["shuffle_finish"] = ev.time("shuffleFinishTime", required=False)
            a["sort_finish"] = ev.time("sortFinishTime", required=False)
            a["input_bytes"] = counter(ev.record.get("counters"), "HDFS_BYTES_READ")
            if a["status"] == "SUCCEEDED":
                self.succeeded_attempt.setdefault(a["task_id"], a["attempt_id"])
        else:
            a["error"] = (ev.text("error", required=False) or "").split("\n", 1)[0][:500] or None

    def tables(self, name: str) -> dict[str, list[dict[str, Any]]]:
        """The rows per table once every event is read: the job id on every row, a task's host and
        rack (and input bytes, when its counters had none) from its successful attempt, else its last."""
        job = self.job
        if not job.get("job_id"):
            raise InputError(f"{name}: no JOB_SUBMITTED event (field 'jobid' is missing)")
        job.setdefault("status", "RUNNING")
        job_id = job["job_id"]
        by_task: dict[str, list[dict[str, Any]]] = {}
        for a in self.attempts.values():
            a["job_id"] = job_id
            by_task.setdefault(a["task_id"], []).append(a)
        for tid, t in self.tasks.items():
            t["job_id"] = job_id
            tries = by_task.get(tid, [])
            won = self.succeeded_attempt.get(tid)
            chosen = next((a for a in tries if a["attempt_id"] == won), tries[-1] if tries else None)
            if chosen is not None:
                t["host"], t["rack"] = chosen.get("host"), chosen.get("rack")
                if t.get("input_bytes") is None:
                    t["input_bytes"] = chosen.get("input_bytes")
        for c in self.conf:
            c["job_id"] = job_id
        return {
            "jobs": [job],
            "tasks": list(self.tasks.values()),
            "attempts": list(self.attempts.values()),
            "jobconf": self.conf,
        }


def jhist_batch(path: str | Path, source: str | None = None) -> Batch:
    """The import batch of one ``.jhist`` file."""
    path = Path(path)
    return batch_from_rows(source or path.name, KIND, read_jhist(path))


def _looks_like(path: Path, head: str | None) -> bool:
    return head is not None and head.startswith(MAGIC)


register_importer(
    Importer(
        KIND,
        summary="Hadoop 2.x job history files (.jhist, Avro-JSON events): jobs, tasks, attempts, jobconf",
        source="org.apache.hadoop.mapreduce.jobhistory.JobHistoryParser (HEI sec. 2.1's JobHistory)",
        title="a .jhist",
        detect=_looks_like,
        history=jhist_batch,
    )
)
