"""Importer of SWIM traces (job level; the Facebook 2009 workload, ``mropt.instances.swim``).

The rows are read and checked by :func:`mropt.instances.swim.read_swim_rows` (six
tab-separated columns; a malformed row is an InputError naming the file, the line and the
column). Each row becomes one ``jobs`` row: ``job_id``, ``submit_time`` (seconds from the
trace start), ``input_bytes`` (map input), ``shuffle_bytes`` and ``output_bytes``. SWIM
records no tasks, users, groups or outcomes: those columns stay null, and the tasks,
attempts and jobconf tables get nothing.
"""

from __future__ import annotations

from pathlib import Path

from mropt.history.batch import Batch, batch_from_rows
from mropt.instances.swim import read_swim_rows

KIND = "swim"


def swim_batch(path: str | Path, source: str | None = None) -> Batch:
    """The import batch of one SWIM trace file."""
    path = Path(path)
    rows, _digest = read_swim_rows(path)
    jobs = [
        {
            "job_id": r.job_id,
            "submit_time": float(r.submit_time),
            "input_bytes": r.input_bytes,
            "shuffle_bytes": r.shuffle_bytes,
            "output_bytes": r.output_bytes,
        }
        for r in rows
    ]
    return batch_from_rows(source or path.name, KIND, {"jobs": jobs})
