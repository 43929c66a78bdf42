"""A SWIM trace as a simulator workload (``mropt import-swim --workload``; the model of :mod:`.swim`).

The same rows as a simulator workload (:mod:`mropt.model.workload`). Defaults differ from the
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

from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from mropt.importers.swim import (
    SOURCE_MACHINES,
    SwimParams,
    SwimWorkloadParams,
    _check_seed,
    _make_params,
    _source,
    _window_jobs,
)
from mropt.instances.params import check_counts
from mropt.instances.workload_gen import mapreduce_job, rack_nodes
from mropt.model.admission import AdmissionInstance
from mropt.model.workload import DEFAULT_USER, Placement, WorkloadInstance


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
        # the admission path gives every SWIM job its task counts and times (mropt.importers.swim._job)
        assert job.map_tasks is not None and job.map_task_time is not None
        assert job.reduce_tasks is not None and job.reduce_task_time is not None
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
