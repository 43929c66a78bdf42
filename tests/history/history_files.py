"""Small history files written by the tests of mropt.history, and where the shared traces are."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("MROPT_SHARED") or ROOT.parent / "shared")
TRACES = SHARED / "traces"


def shared(*parts: str) -> Path:
    """A file under ../shared/traces, or skip the test with the reason."""
    path = TRACES.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not available (the traces are kept in ../shared; set MROPT_SHARED)")
    return path


def _event(etype: str, record: str, body: dict) -> str:
    return json.dumps({"type": etype, "event": {f"org.apache.hadoop.mapreduce.jobhistory.{record}": body}})


def write_jhist(path: Path, job: str = "job_1_0001", maps: int = 2, host: str = "h1") -> Path:
    """A job history file: ``maps`` maps of 10 s (input 1e6 bytes each) and one reduce of 20 s, on ``host``."""
    t0 = 1_000_000_000_000  # epoch ms
    lines = ["Avro-Json", '{"type": "record", "name": "Event"}']
    lines.append(
        _event(
            "JOB_SUBMITTED",
            "JobSubmitted",
            {"jobid": job, "jobName": "wc", "userName": "ann", "submitTime": t0, "jobQueueName": "etl", "acls": {}},
        )
    )
    lines.append(
        _event("JOB_INITED", "JobInited", {"jobid": job, "launchTime": t0 + 1000, "totalMaps": maps, "totalReduces": 1})
    )
    tasks = [(f"task_{job[4:]}_m_{i:06d}", "MAP", 10_000) for i in range(maps)] + [
        (f"task_{job[4:]}_r_000000", "REDUCE", 20_000)
    ]
    for tid, ttype, dur in tasks:
        aid = "attempt" + tid[4:] + "_0"
        start = t0 + 2000
        counters = {
            "groups": [
                {"name": "fs", "counts": [{"name": "HDFS_BYTES_READ", "value": 1_000_000 if ttype == "MAP" else 0}]}
            ]
        }
        kind = "MAP" if ttype == "MAP" else "REDUCE"
        lines.append(_event("TASK_STARTED", "TaskStarted", {"taskid": tid, "taskType": ttype, "startTime": start}))
        lines.append(
            _event(
                f"{kind}_ATTEMPT_STARTED",
                "TaskAttemptStarted",
                {"taskid": tid, "taskType": ttype, "attemptId": aid, "startTime": start, "trackerName": host},
            )
        )
        fin = {
            "taskid": tid,
            "attemptId": aid,
            "taskType": ttype,
            "taskStatus": "SUCCEEDED",
            "finishTime": start + dur,
            "hostname": host,
            "rackname": "/r1",
            "counters": counters,
        }
        if kind == "REDUCE":
            fin.update(shuffleFinishTime=start + 5000, sortFinishTime=start + 6000)
        lines.append(_event(f"{kind}_ATTEMPT_FINISHED", "ReduceAttemptFinished", fin))
        lines.append(
            _event(
                "TASK_FINISHED",
                "TaskFinished",
                {
                    "taskid": tid,
                    "taskType": ttype,
                    "finishTime": start + dur,
                    "status": "SUCCEEDED",
                    "counters": counters,
                },
            )
        )
    lines.append(
        _event(
            "JOB_FINISHED",
            "JobFinished",
            {
                "jobid": job,
                "finishTime": t0 + 30_000,
                "finishedMaps": maps,
                "finishedReduces": 1,
                "failedMaps": 0,
                "failedReduces": 0,
            },
        )
    )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def rumen_job(job: str = "job_2_0001", submit: int = 2_000_000_000_000) -> dict:
    """One Rumen LoggedJob: two maps (input 2e6 and 4e6 bytes, 4 s and 8 s) on /r1/h1 and /r1/h2, one reduce of 6 s."""

    def task(tid: str, ttype: str, start: int, dur: int, host: str, inp: int) -> dict:
        return {
            "taskID": tid,
            "taskType": ttype,
            "startTime": start,
            "finishTime": start + dur,
            "taskStatus": "SUCCESS",
            "inputBytes": inp,
            "outputBytes": -1,
            "attempts": [
                {
                    "attemptID": "attempt" + tid[4:] + "_0",
                    "result": "SUCCESS",
                    "hostName": f"/r1/{host}",
                    "startTime": start,
                    "finishTime": start + dur,
                    "shuffleFinished": -1,
                    "sortFinished": -1,
                    "hdfsBytesRead": inp,
                }
            ],
        }

    return {
        "jobID": job,
        "user": "bob",
        "jobName": "sort",
        "queue": "adhoc",
        "priority": "HIGH",
        "submitTime": submit,
        "launchTime": submit + 500,
        "finishTime": submit + 20_000,
        "outcome": "SUCCESS",
        "totalMaps": 2,
        "totalReduces": 1,
        "mapTasks": [
            task(f"task_{job[4:]}_m_000000", "MAP", submit + 1000, 4000, "h1", 2_000_000),
            task(f"task_{job[4:]}_m_000001", "MAP", submit + 1000, 8000, "h2", 4_000_000),
        ],
        "reduceTasks": [task(f"task_{job[4:]}_r_000000", "REDUCE", submit + 10_000, 6000, "h1", -1)],
        "otherTasks": [],
        "jobProperties": {"mapreduce.job.queuename": "adhoc", "mapreduce.job.reduces": "1"},
    }


def write_rumen(path: Path, jobs: list[dict] | None = None) -> Path:
    """A Rumen file of pretty-printed job objects one after the other (as Hadoop's SLS sample)."""
    jobs = jobs if jobs is not None else [rumen_job()]
    path.write_text("".join(json.dumps(j, indent=2) + "\n" for j in jobs), encoding="utf-8")
    return path


ALIBABA_HEADER = (
    "task_create_time, task_end_time, job_id, task_id,number_of_instances, status, "
    "number_of_cpus_requested_per_instance_in_the_task,normalized_memory_requested_per_instance_in_the_task\n"
)


def write_alibaba(path: Path, rows: list[str] | None = None) -> Path:
    """A batch_task.csv: header plus ``rows`` (default: three tasks of two jobs, one Waiting without requests)."""
    rows = (
        rows
        if rows is not None
        else ["100,160,1,10,4,Terminated,50,0.01", "110,150,1,11,1,Failed,100,0.02", "200,260,2,20,3,Waiting,,"]
    )
    path.write_text(ALIBABA_HEADER + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def write_swim(path: Path, rows: int = 3) -> Path:
    path.write_text(
        "".join(f"job{i}\t{10 * i}\t10\t{1000 * (i + 1)}\t{100 * i}\t{50 * i}\n" for i in range(rows)), encoding="utf-8"
    )
    return path
