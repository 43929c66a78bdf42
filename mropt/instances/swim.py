"""Importer of SWIM Facebook MapReduce traces into admission instances.

SWIM (Statistical Workload Injector for MapReduce, UC Berkeley) publishes workloads
synthesised from a 2009 trace of a 600-machine Facebook Hadoop cluster. A trace file
has one job per row, six tab-separated columns and no header (read and checked by
:mod:`mropt.instances.swim_trace`, whose names this module re-exports)::

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

**Workload** (:func:`import_swim_workload`, ``mropt import-swim --workload``): the same
rows as a simulator workload (:mod:`mropt.model.workload`). Defaults differ from the
admission path in two places only: the window is the **whole file** from ``start`` unless
``jobs`` or ``duration`` is given, and the target cluster is the traced one, ``nodes`` =
``source_machines`` = 600 (bytes are not scaled), with 2 map and 2 reduce slots a node.
Every job gets exactly the admission path's numbers for the same parameters and seed:
``map_tasks``, ``reduce_tasks``, task times, deadline and benefit (deadlines against the
workload's own cluster, M = nodes x map slots), so the AMB-family policies can run on it;
a map-only row has no reduce stage. Tasks are one group per stage (``duration``,
``count``), never one entry per task, so the day's 5,900 jobs fit in a small file. The
nodes sit in racks of ``rack_size`` (default 20, the order of a 2009 rack of 1U servers
under one top-of-rack switch; 600 nodes make 30 racks; node ``r<i>-<k>`` is in rack
``rack<i>``). ``replicas`` (default 3, HDFS's default) writes ``placement`` ``{replicas,
seed}``: the simulator places every map input by HDFS's default policy
(:mod:`mropt.sim.placement`), so delay scheduling has locality to work with; 0 writes no
placement (no locality). SWIM rows carry no user: by default every job belongs to the
user ``default`` (one Fair Scheduler pool, fair sharing among its jobs); ``users`` U > 1
draws each row's user uniformly from ``u0`` ... ``u<U-1>`` with
``numpy.random.default_rng([seed, row, 1])`` (a stream of its own: the deadline and
benefit draws do not change), so the Fair and Capacity schedulers see several pools.
The file records ``source`` as above (``job_limit`` null for the whole file) plus the
layout under ``source.workload``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from mropt.instances.params import check_counts
from mropt.instances.swim_trace import (
    COLUMNS,  # noqa: F401  (re-exported)
    MAX_BYTES,
    SwimRow,
    read_swim_rows,
)
from mropt.instances.workload_gen import mapreduce_job, rack_nodes
from mropt.model.admission import AdmissionInstance, Cluster, Job
from mropt.model.errors import InputError
from mropt.model.workload import DEFAULT_USER, Placement, WorkloadInstance

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


@dataclass(frozen=True)
class SwimParams:
    """Every parameter of the importer; see the module docstring for the model."""

    # window
    start: float = 0.0  # S: window start, seconds of trace time
    jobs: int | None = None  # N: at most N jobs (None: 30 unless duration is given)
    duration: float | None = None  # T: time window [S, S + T)
    # cluster and scaling
    nodes: int = 40
    map_slots_per_node: int = 2
    reduce_slots_per_node: int = 2
    source_machines: int = SOURCE_MACHINES
    # task counts (bytes)
    partition_bytes: int = 64 * MIB
    min_input_bytes: int = 64 * MIB
    bytes_per_reduce: int = 64 * MIB
    # task times
    map_rate: float = 20.0  # MB/s per map slot
    reduce_rate: float = 10.0  # MB/s per reduce slot
    task_overhead: float = 5.0  # seconds per task
    # deadlines and benefits
    slack_min: float = 1.5
    slack_max: float = 4.0
    benefit_ref: float = 500.0
    benefit_noise: float = 0.4
    benefit_exponent: float = 1.0
    # instance
    alpha: float = 0.3
    beta: float = 2.0
    rho: float = 1.0

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
        # ranges (issue 14, item 7): wide enough for any cluster, narrow enough that every task
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


# -- the workload path (mropt import-swim --workload) -------------------------------------
@dataclass(frozen=True)
class SwimWorkloadParams:
    """The cluster layout and users of a SWIM day as a workload (module docstring, **Workload**)."""

    rack_size: int = DEFAULT_RACK_SIZE  # nodes per rack
    replicas: int = 3  # HDFS replicas of each map input (0: no placement, no locality)
    users: int = 1  # users (Fair Scheduler pools) drawn uniformly per job; 1: everything in 'default'

    def check(self) -> None:
        for name, low, high in (("rack_size", 1, 10**6), ("replicas", 0, 16), ("users", 1, 10**6)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InputError(
                    f"import-swim: parameter '{name}' must be an integer in [{low}, {high}], got {value!r}"
                )


def import_swim_workload(
    path: str | Path,
    params: SwimParams | None = None,
    layout: SwimWorkloadParams | None = None,
    *,
    seed: int = 0,
    **overrides: Any,
) -> WorkloadInstance:
    """A SWIM trace (the whole file by default) as a simulator workload (module docstring, **Workload**).

    ``params`` defaults to :class:`SwimParams` with ``nodes`` = ``source_machines`` (600: the
    traced cluster, no byte scaling); keyword ``overrides`` set fields of :class:`SwimParams`
    or :class:`SwimWorkloadParams`. Same file, arguments and seed: the same workload, byte
    for byte as JSON.
    """
    seed = _check_seed(seed)
    layout_names = {f.name for f in fields(SwimWorkloadParams)}
    layout = layout or SwimWorkloadParams()
    layout_over = {k: v for k, v in overrides.items() if k in layout_names}
    if layout_over:
        layout = replace(layout, **layout_over)
    layout.check()
    swim_over = {k: v for k, v in overrides.items() if k not in layout_names}
    if params is None and "nodes" not in swim_over:
        swim_over["nodes"] = swim_over.get("source_machines", SOURCE_MACHINES)
    params = _make_params(params, swim_over)
    check_counts(params, ("nodes",), "import-swim")
    path = Path(path)
    rows, digest, window, adm_jobs = _window_jobs(path, params, seed, whole_file=True)
    jobs = []
    for row, job in zip(window, adm_jobs):
        user = DEFAULT_USER
        if layout.users > 1:
            user = f"u{int(np.random.default_rng([seed, row.index, 1]).integers(layout.users))}"
        jobs.append(
            mapreduce_job(
                job.id,
                job.map_tasks,
                job.map_task_time,
                job.reduce_tasks,
                job.reduce_task_time,
                submit_time=job.submit_time,
                user=user,
                deadline=job.deadline,
                benefit=job.benefit,
                extra=dict(job.extra),
            )
        )
    draft = AdmissionInstance(
        cluster=params.cluster, jobs=tuple(adm_jobs), alpha=params.alpha, beta=params.beta, rho=params.rho
    )
    job_limit = params.jobs if params.jobs is not None or params.duration is not None else None
    source = _source(path, digest, rows, window, params, seed, draft, job_limit)
    source["workload"] = asdict(layout)
    return WorkloadInstance(
        nodes=rack_nodes(params.nodes, layout.rack_size, params.map_slots_per_node, params.reduce_slots_per_node),
        jobs=tuple(jobs),
        placement=Placement(layout.replicas, seed) if layout.replicas > 0 else None,
        alpha=params.alpha,
        name=f"swim-{path.stem}-s{params.start:g}-n{len(window)}-workload",
        meta={"source": source},
    )
