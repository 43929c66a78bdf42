"""Importer of SWIM Facebook MapReduce traces into admission instances.

SWIM (Statistical Workload Injector for MapReduce, UC Berkeley) publishes workloads
synthesised from a 2009 trace of a 600-machine Facebook Hadoop cluster. A trace file
has one job per row, six tab-separated columns and no header (read and checked by
:mod:`mropt.importers.swim_trace`, whose names this module re-exports)::

    job_id  submit_time_seconds  inter_job_gap_seconds  map_input_bytes  shuffle_bytes  reduce_output_bytes

The trace gives bytes only. This module turns a window of its rows into an
:class:`~mropt.model.admission.AdmissionInstance` with the documented model below
(``model`` ``swim-bytes``, ``model_version`` 1), every number of which is a field of
:class:`SwimParams` and is written into the file under ``"source"``.

**Window.** Rows are taken in submit-time order (stable for equal times). The window
starts at ``start`` seconds (default 0) and is either a time window (``duration`` T:
rows with ``start <= submit < start + T``) or a count window (``jobs`` N: the first N
rows with ``submit >= start``); when both are given, the first N rows of the time
window. With neither, N = 30 (:data:`DEFAULT_JOBS`). A job's ``submit_time`` in the
instance is its trace submit time minus ``start``: the time origin of the instance is
the window start, and the first job sits at its offset from it (not rebased to 0),
rounded to 1 ms when ``start`` has decimals.
An empty window is an :class:`~mropt.model.errors.InputError`.

**Cluster scaling** (as SWIM's ``GenerateReplayScript``): the target cluster has
``nodes`` machines (default 40, the AMB paper's, with 2 map and 2 reduce slots each:
M = R = 80); each byte count is scaled by ``nodes / source_machines`` (600) with
integer (floor) arithmetic, like SWIM's Java ``long`` arithmetic.

**Task counts** (as SWIM's replay): the scaled input is raised to ``min_input_bytes``
(64 MiB) and read in ``partition_bytes`` (64 MiB) partitions, so
``map_tasks = ceil(max(input, min_input) / partition) >= 1``;
``reduce_tasks = round((shuffle + output) / bytes_per_reduce)`` with scaled bytes,
rounded half up like Java's ``Math.round``, at least 1 (``bytes_per_reduce`` defaults
to 64 MiB, as SWIM's example scripts pass the partition size). Deliberate departures:

* a row with zero shuffle bytes (in the trace) is a **map-only job** with
  ``reduce_tasks = 0`` (TCr = 0); its map tasks write its output. SWIM's replay would
  force the shuffle to 1 KiB and launch one reducer; mropt deliberately does not;
* SWIM's 1 KiB floors on shuffle and output bytes are not applied (they only matter
  when ``bytes_per_reduce`` is a few KiB), nor is its cap that replaces a reduce
  count above the node count by ``nodes / 5`` (it would make the reduce count fall as
  bytes grow).

**Task times** (seconds, rounded to 0.1 s, at least 0.1 s), with MB = 10^6 bytes::

    map_task_time    = task_overhead + map_bytes / map_tasks / (map_rate x 1e6)
    reduce_task_time = task_overhead + (shuffle + output) / reduce_tasks / (reduce_rate x 1e6)

where ``map_bytes = max(input, min_input)`` plus, for a map-only job, its output.
A map-only job's ``reduce_task_time`` (unused, as TCr = 0) is ``task_overhead``.
Defaults, for 2009-era Hadoop (0.18-0.20, nodes of 8 cores and 4 SATA disks, one JVM
per task): ``map_rate`` 20 MB/s per map slot (reading a 64 MiB HDFS block, parsing and
spilling records: two map slots share a node's disks and cores with HDFS and the
reducers, far below the disks' raw 60-80 MB/s each); ``reduce_rate`` 10 MB/s per
reduce slot (half the map rate: a reducer fetches over the network, merge-sorts and
writes its output to HDFS with 3-way replication); ``task_overhead`` 5 s (JVM
start-up plus the 3 s TaskTracker heartbeat that paces task assignment). A one-block
map task then takes 8.4 s and a reducer over 64 MiB 11.7 s, the order of the short
tasks that dominate the Facebook workload. These are assumptions, not measurements:
override them to match another cluster.

**Deadlines** (seeded): ``deadline = submit + slack x standalone``, rounded to 0.1 s
(at least 0.1 s after submit), where ``standalone = TCm + TCr`` is the job alone on
the whole cluster (AMB sec. 4.1: ``TCm = ceil(map_tasks / M) x map_task_time x rho``,
likewise TCr) and ``slack`` is uniform in [``slack_min``, ``slack_max``] = [1.5, 4].
Huge jobs get large standalone times, hence late deadlines: that is intended.

**Benefits** (seeded): proportional to the job's work ``W = map_tasks x
map_task_time + reduce_tasks x reduce_task_time`` (slot-seconds) with multiplicative
noise::

    benefit = round(benefit_ref x (W / W_ref) ** benefit_exponent x noise),  at least 1

with ``noise`` uniform in [1 - ``benefit_noise``, 1 + ``benefit_noise``] = [0.6, 1.4]
and ``benefit_exponent`` 1 (proportional). ``W_ref`` is the work of the trace's
typical job: about 90 % of the Facebook rows read less than one partition after
scaling and three quarters are map-only, so the reference is the minimal job with a
reducer, one map task over ``min_input_bytes`` plus one reduce task over no bytes
(13.4 slot-seconds with the defaults). With ``benefit_ref`` 500 such a job's benefit
is uniform in [300, 700], the AMB paper's range (Table 2); a job with ten times the
work is worth about ten times more.

**Seeding.** The draws of the row at position k among the file's data rows (0-based,
blank lines not counted; ``slack`` then ``noise``) come from
``numpy.random.default_rng([seed, k])``, so a row gets the same draws whatever the
window. Same file, arguments and seed: same instance, and the same JSON byte for byte.

The file records under ``"source"``: the trace file's base name and SHA-256, the
window (start, duration, job limit, the selected rows, lines and submit times), the
model, every parameter, the seed and the resulting load factor.

**Workload** (:func:`mropt.importers.swim_workload.import_swim_workload`, ``mropt import-swim
--workload``): the same rows as a simulator workload; its model is in that module.

**Registration.** The format registers as importer ``swim`` (:mod:`mropt.importers.table`): the
``mropt import-swim`` options are the fields of :class:`SwimParams`, :class:`SwimSeed` and (with
``--workload``) :class:`SwimWorkloadParams`, each with its help in the field's metadata; an
experiment's windows sweep ``start``, ``jobs`` and ``duration``; ``mropt history import`` reads a
SWIM file's rows as they are (:func:`mropt.importers.swim_trace.swim_batch`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from mropt.importers.swim_trace import (
    COLUMNS,  # noqa: F401  (re-exported)
    MAX_BYTES,
    SwimRow,
    read_swim_rows,
    swim_batch,
)
from mropt.importers.table import Importer, Output, register_importer
from mropt.model.admission import AdmissionInstance, Cluster, Job
from mropt.model.errors import InputError
from mropt.model.workload import WorkloadInstance

MODEL_NAME = "swim-bytes"
MODEL_VERSION = 1
MIB = 1 << 20
MB = 10**6
DEFAULT_JOBS = 30
SOURCE_MACHINES = 600
#: nodes per rack of an imported workload's cluster
DEFAULT_RACK_SIZE = 20
#: Parameter ranges (MB/s per slot; a factor such as slack or rho; seconds; the exponent).
RATE_RANGE = (1e-6, 1e9)
MAX_FACTOR = 1e6
MAX_OVERHEAD = 1e9
MAX_BENEFIT_REF = 1e15
MAX_EXPONENT = 4.0


_MODEL = "deadlines and benefits"
_WORKLOAD = "workload (with --workload)"


def _opt(default: Any, help: str, group: str = "cluster", **flags: str) -> Any:
    """A parameter field with its command-line help (``{default}``: the default), group and flags."""
    return field(default=default, metadata={"help": help, "group": group, **flags})


@dataclass(frozen=True)
class SwimParams:
    """Every parameter of the importer; see the module docstring for the model."""

    # window
    start: float = _opt(0.0, "window start S, seconds of trace time (default {default})", "window")
    jobs: int | None = _opt(
        None,
        f"take the first N jobs submitted at or after S (default {DEFAULT_JOBS} unless --duration is given; "
        "with --workload: every job)",
        "window",
        short="-n",
    )
    duration: float | None = _opt(
        None,
        "take the jobs submitted in [S, S+T) (default: no time limit; with --jobs: at most N of them)",
        "window",
    )
    # cluster and scaling
    nodes: int = _opt(
        40,
        f"target cluster nodes (default {{default}}, AMB paper; with --workload {SOURCE_MACHINES}, the source cluster)",
    )
    map_slots_per_node: int = _opt(2, "map slots of each node (default {default})")
    reduce_slots_per_node: int = _opt(2, "reduce slots of each node (default {default})")
    source_machines: int = _opt(
        SOURCE_MACHINES, "machines of the traced cluster; bytes scale by nodes / this (default {default})"
    )
    # task counts (bytes)
    partition_bytes: int = _opt(64 * MIB, "bytes per map task (default 64 MiB)", "tasks", flag="--partition-size")
    min_input_bytes: int = _opt(64 * MIB, "minimum input bytes of a job (default 64 MiB)", "tasks", flag="--min-input")
    bytes_per_reduce: int = _opt(64 * MIB, "shuffle+output bytes per reduce task (default 64 MiB)", "tasks")
    # task times
    map_rate: float = _opt(20.0, "MB/s per map slot (default {default})", "tasks")
    reduce_rate: float = _opt(10.0, "MB/s per reduce slot (default {default})", "tasks")
    task_overhead: float = _opt(5.0, "seconds added to every task (default {default})", "tasks")
    # deadlines and benefits
    slack_min: float = _opt(
        1.5,
        "deadline = submit + slack x standalone time, slack uniform from this to slack_max (default {default})",
        _MODEL,
    )
    slack_max: float = _opt(4.0, "upper end of the deadline slack's range (default {default})", _MODEL)
    benefit_ref: float = _opt(500.0, "mean benefit of the reference job (default {default})", _MODEL)
    benefit_noise: float = _opt(0.4, "benefit varies by +/- this fraction (default {default})", _MODEL)
    benefit_exponent: float = _opt(1.0, "benefit grows as work ** this (default {default}: proportional)", _MODEL)
    # instance
    alpha: float = _opt(0.3, "penalty ratio (default {default})", _MODEL)
    beta: float = _opt(2.0, "penalty threshold of eq. 3 (default {default})", _MODEL)
    rho: float = _opt(1.0, "slack factor (default {default})", _MODEL)

    @property
    def job_limit(self) -> int | None:
        """The effective job cap: ``jobs``, or 30 when neither jobs nor duration is set."""
        if self.jobs is None and self.duration is None:
            return DEFAULT_JOBS
        return self.jobs

    def check(self) -> None:
        """Raise :class:`InputError` naming the first bad parameter and its value."""

        def bad(name: str, rule: str) -> InputError:
            return InputError(f"import-swim: parameter '{name}' {rule}, got {getattr(self, name)!r}")

        def number(name: str) -> float:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise bad(name, "must be a finite number")
            return value

        def integer(name: str, minimum: int) -> None:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise bad(name, "must be an integer")
            if value < minimum:
                raise bad(name, f"must be >= {minimum}")

        if not 0 <= number("start") <= MAX_BYTES:
            raise bad("start", "must be in [0, 2^63)")
        if self.jobs is not None:
            integer("jobs", 1)
        if self.duration is not None and not number("duration") > 0:
            raise bad("duration", "must be > 0")
        for name in ("nodes", "map_slots_per_node", "reduce_slots_per_node", "source_machines"):
            integer(name, 1)
        for name in ("partition_bytes", "bytes_per_reduce"):
            integer(name, 1)
        integer("min_input_bytes", 0)
        # ranges: wide enough for any cluster, narrow enough that every task
        # time, deadline and benefit the model derives stays a finite instance number
        for name in ("map_rate", "reduce_rate"):  # 1 byte/s to 1 PB/s per slot
            if not RATE_RANGE[0] <= number(name) <= RATE_RANGE[1]:
                raise bad(name, f"must be in [{RATE_RANGE[0]:g}, {RATE_RANGE[1]:g}] MB/s")
        if not 0 < number("benefit_ref") <= MAX_BENEFIT_REF:
            raise bad("benefit_ref", f"must be in (0, {MAX_BENEFIT_REF:g}]")
        if not 0 < number("rho") <= MAX_FACTOR:
            raise bad("rho", f"must be in (0, {MAX_FACTOR:g}]")
        if not 0 <= number("task_overhead") <= MAX_OVERHEAD:
            raise bad("task_overhead", f"must be in [0, {MAX_OVERHEAD:g}] s")
        if not 0 < number("slack_min") <= MAX_FACTOR:
            raise bad("slack_min", f"must be in (0, {MAX_FACTOR:g}]")
        if not self.slack_min <= number("slack_max") <= MAX_FACTOR:
            raise bad("slack_max", f"must be in [slack_min = {self.slack_min:g}, {MAX_FACTOR:g}]")
        if not 0 <= number("benefit_noise") < 1:
            raise bad("benefit_noise", "must be in [0, 1)")
        if not 0 <= number("benefit_exponent") <= MAX_EXPONENT:
            raise bad("benefit_exponent", f"must be in [0, {MAX_EXPONENT:g}]")
        if not 0 <= number("alpha") <= 1:
            raise bad("alpha", "must be in [0, 1]")
        if not number("beta") > 1:
            raise bad("beta", "must be > 1")

    def record(self) -> dict[str, Any]:
        """The parameters as written into the instance file (real-valued ones as floats,
        so that ``start=100`` and ``start=100.0`` write the same file)."""
        out = asdict(self)
        for f in fields(self):
            if "float" in str(f.type) and isinstance(out[f.name], int) and not isinstance(out[f.name], bool):
                out[f.name] = float(out[f.name])
        return out

    # -- the model, row by row ------------------------------------------------------
    @property
    def cluster(self) -> Cluster:
        return Cluster(self.nodes * self.map_slots_per_node, self.nodes * self.reduce_slots_per_node)

    def scale(self, nbytes: int) -> int:
        """Bytes on the target cluster: floor(bytes x nodes / source_machines)."""
        return nbytes * self.nodes // self.source_machines

    def task_counts(self, row: SwimRow) -> tuple[int, int]:
        """(map_tasks, reduce_tasks) of a row; reduce_tasks is 0 for a map-only row."""
        map_input = max(self.scale(row.input_bytes), self.min_input_bytes)
        map_tasks = max(1, -(-map_input // self.partition_bytes))
        if row.shuffle_bytes == 0:
            return map_tasks, 0
        reduce_bytes = self.scale(row.shuffle_bytes) + self.scale(row.output_bytes)
        # round half up, like Java's Math.round, in exact integer arithmetic
        reduce_tasks = (2 * reduce_bytes + self.bytes_per_reduce) // (2 * self.bytes_per_reduce)
        return map_tasks, max(1, reduce_tasks)

    def task_times(self, row: SwimRow) -> tuple[float, float]:
        """(map_task_time, reduce_task_time) of a row, seconds rounded to 0.1 s."""
        map_tasks, reduce_tasks = self.task_counts(row)
        map_bytes = max(self.scale(row.input_bytes), self.min_input_bytes)
        if reduce_tasks == 0:
            map_bytes += self.scale(row.output_bytes)
            reduce_time = self.task_overhead
        else:
            reduce_bytes = self.scale(row.shuffle_bytes) + self.scale(row.output_bytes)
            reduce_time = self.task_overhead + reduce_bytes / reduce_tasks / (self.reduce_rate * MB)
        map_time = self.task_overhead + map_bytes / map_tasks / (self.map_rate * MB)
        return _tenths(map_time), _tenths(reduce_time)

    def reference_work(self) -> float:
        """W_ref: slot-seconds of one map task over min_input_bytes plus one empty reduce task."""
        map_bytes = max(self.min_input_bytes, 1)
        map_tasks = -(-map_bytes // self.partition_bytes)
        map_time = _tenths(self.task_overhead + map_bytes / map_tasks / (self.map_rate * MB))
        return map_tasks * map_time + _tenths(self.task_overhead)


def _tenths(seconds: float) -> float:
    return max(0.1, round(seconds, 1))


def select_window(rows: list[SwimRow], params: SwimParams) -> list[SwimRow]:
    """The window's rows in submit-time order (see the module docstring)."""
    ordered = sorted(rows, key=lambda r: (r.submit_time, r.index))
    end = None if params.duration is None else params.start + params.duration
    chosen = [r for r in ordered if r.submit_time >= params.start and (end is None or r.submit_time < end)]
    limit = params.job_limit
    return chosen if limit is None else chosen[:limit]


def _make_params(params: SwimParams | None, overrides: dict[str, Any]) -> SwimParams:
    params = params or SwimParams()
    if overrides:
        known = {f.name for f in fields(SwimParams)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise InputError(f"import-swim: unknown parameter {unknown[0]!r} (known: {', '.join(sorted(known))})")
        params = SwimParams(**{**asdict(params), **overrides})
    params.check()
    return params


def _job(row: SwimRow, params: SwimParams, seed: int, cluster: Cluster, w_ref: float) -> Job:
    """The job of one trace row (the model of the module docstring)."""
    rng = np.random.default_rng([seed, row.index])
    slack = float(rng.uniform(params.slack_min, params.slack_max))
    noise = float(rng.uniform(1 - params.benefit_noise, 1 + params.benefit_noise))
    map_tasks, reduce_tasks = params.task_counts(row)
    map_time, reduce_time = params.task_times(row)
    submit = round(row.submit_time - params.start, 3)
    tcm = math.ceil(map_tasks / cluster.map_slots) * map_time * params.rho
    tcr = math.ceil(reduce_tasks / cluster.reduce_slots) * reduce_time * params.rho
    relative = max(0.1, round(slack * (tcm + tcr), 1))
    work = map_tasks * map_time + reduce_tasks * reduce_time
    benefit = max(1, round(params.benefit_ref * (work / w_ref) ** params.benefit_exponent * noise))
    return Job(
        id=row.job_id,
        map_tasks=map_tasks,
        reduce_tasks=reduce_tasks,
        map_task_time=map_time,
        reduce_task_time=reduce_time,
        deadline=round(submit + relative, 1),
        benefit=benefit,
        submit_time=submit,
        extra={
            "trace": {
                "row": row.index,
                "line": row.line,
                "submit_time": row.submit_time,
                "map_input_bytes": row.input_bytes,
                "shuffle_bytes": row.shuffle_bytes,
                "reduce_output_bytes": row.output_bytes,
            }
        },
    )


def _window_jobs(
    path: Path, params: SwimParams, seed: int, *, whole_file: bool = False
) -> tuple[list[SwimRow], str, list[SwimRow], list[Job]]:
    """The file's rows, its SHA-256, the window's rows and their admission jobs (the model above).

    ``whole_file``: with neither ``jobs`` nor ``duration``, every row from ``start`` (the
    workload path) instead of the first :data:`DEFAULT_JOBS`.
    """
    rows, digest = read_swim_rows(path)
    if whole_file and params.jobs is None and params.duration is None:
        window = select_window(rows, replace(params, jobs=max(1, len(rows))))
    else:
        window = select_window(rows, params)
    if not window:
        end = "" if params.duration is None else f" and before {params.start + params.duration:g}"
        raise InputError(
            f"{path.name}: empty window: no job submitted at or after {params.start:g} s{end} "
            f"({len(rows)} rows in the file)"
        )
    cluster = params.cluster
    w_ref = params.reference_work()
    jobs: list[Job] = []
    for row in window:
        try:
            jobs.append(_job(row, params, seed, cluster, w_ref))
        except (InputError, OverflowError) as exc:  # a derived number beyond an instance's magnitudes
            raise InputError(
                f"{path.name} line {row.line}: {exc} (from the task-time, slack and benefit "
                f"parameters; see mropt import-swim --help)"
            ) from None
    return rows, digest, window, jobs


def _source(
    path: Path,
    digest: str,
    rows: list[SwimRow],
    window: list[SwimRow],
    params: SwimParams,
    seed: int,
    draft: AdmissionInstance,
    job_limit: int | None,
) -> dict[str, Any]:
    """The ``source`` record of an imported file (module docstring)."""
    first, last = window[0], window[-1]
    record = params.record()
    return {
        "format": "swim",
        "trace": path.name,
        "sha256": digest,
        "rows_in_file": len(rows),
        "window": {
            "start": record["start"],
            "duration": record["duration"],
            "job_limit": job_limit,
            "jobs": len(window),
            "submit_times": "trace time minus start",
            "first": {"job_id": first.job_id, "row": first.index, "line": first.line, "submit_time": first.submit_time},
            "last": {"job_id": last.job_id, "row": last.index, "line": last.line, "submit_time": last.submit_time},
        },
        "model": MODEL_NAME,
        "model_version": MODEL_VERSION,
        "seed": seed,
        "params": record,
        "reference_work": params.reference_work(),
        "load_factor": round(draft.load_factor, 6),
    }


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"import-swim: parameter 'seed' must be a non-negative integer, got {seed!r}")
    return int(seed)


def import_swim(
    path: str | Path, params: SwimParams | None = None, *, seed: int = 0, **overrides: Any
) -> AdmissionInstance:
    """An admission instance from a window of a SWIM trace file.

    Keyword overrides set fields of :class:`SwimParams` (``jobs=10, start=600``).
    Same file, arguments and seed: the same instance, byte for byte as JSON.
    """
    seed = _check_seed(seed)
    params = _make_params(params, overrides)
    path = Path(path)
    rows, digest, window, jobs = _window_jobs(path, params, seed)
    cluster = params.cluster
    draft = AdmissionInstance(cluster=cluster, jobs=tuple(jobs), alpha=params.alpha, beta=params.beta, rho=params.rho)
    source = _source(path, digest, rows, window, params, seed, draft, params.job_limit)
    return AdmissionInstance(
        cluster=cluster,
        jobs=draft.jobs,
        alpha=params.alpha,
        beta=params.beta,
        rho=params.rho,
        name=f"swim-{path.stem}-s{params.start:g}-n{len(window)}",
        meta={"source": source},
    )


# -- the workload path's layout, the seed, the registration -------------------------------
@dataclass(frozen=True)
class SwimWorkloadParams:
    """The cluster layout and users of a SWIM day as a workload (:mod:`mropt.importers.swim_workload`)."""

    rack_size: int = _opt(DEFAULT_RACK_SIZE, "nodes per rack (default {default}: 600 nodes, 30 racks)", _WORKLOAD)
    replicas: int = _opt(
        3, "HDFS replicas of each map input, placed by the simulator; 0 = no locality (default {default})", _WORKLOAD
    )
    users: int = _opt(
        1, "users (Fair pools) drawn uniformly per job; 1 = every job in 'default' (default {default})", _WORKLOAD
    )

    def check(self) -> None:
        for name, low, high in (("rack_size", 1, 10**6), ("replicas", 0, 16), ("users", 1, 10**6)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InputError(
                    f"import-swim: parameter '{name}' must be an integer in [{low}, {high}], got {value!r}"
                )


@dataclass(frozen=True)
class SwimSeed:
    """The seed of the model's draws (deadline slack, benefit noise, users), a parameter of both paths."""

    seed: int = field(default=0, metadata={"help": "seed of deadlines and benefits (default 0)", "minimum": 0})


def _workload(path: str | Path, **given: Any) -> WorkloadInstance:
    from mropt.importers.swim_workload import import_swim_workload

    return import_swim_workload(path, **given)


def _looks_like(path: Path, head: str | None) -> bool:
    """Six tab-separated fields on the first non-blank line."""
    first = next((ln for ln in (head or "").splitlines() if ln.strip()), "")
    return head is not None and first.count("\t") == 5


register_importer(
    Importer(
        "swim",
        summary="SWIM traces (Facebook 2009, six tab-separated columns): admission instances, workloads, job rows",
        source="SWIM (UC Berkeley), GenerateReplayScript; the Facebook 2009 workload",
        title="SWIM TSV",
        detect=_looks_like,
        history=swim_batch,
        command="import-swim",
        description="Turn rows of a SWIM trace (six tab-separated columns: job_id, submit time, gap, map input, "
        "shuffle and reduce output bytes) into an admission instance. Bytes are scaled from the 600-machine "
        "source cluster to --nodes; task counts follow SWIM's replay (64 MiB partitions; map-only rows get 0 "
        "reduce tasks); task times come from the throughputs below; deadlines and benefits from a seeded model "
        "(see mropt.importers.swim). Submit times are relative to --start. Every parameter, the seed and the "
        "trace's SHA-256 are recorded under 'source'. With --workload, the rows become a workload for `mropt "
        "simulate` instead: the whole file by default, on the 600-node source cluster, with the same task counts, "
        "times, deadlines and benefits. Same arguments, same file, byte for byte.",
        trace_metavar="TRACE.tsv",
        output=Output("admission", (SwimParams, SwimSeed), import_swim),
        workload=Output("workload", (SwimParams, SwimSeed, SwimWorkloadParams), _workload),
        windows=("start", "jobs", "duration"),
    )
)
