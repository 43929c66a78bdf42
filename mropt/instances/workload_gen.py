"""Generator of workloads (``kind`` ``workload``) for the AMB paper's experiments on the cluster.

Presets: two of the AMB paper's job sets (Table 2 and sec. 5), ``mpsa``, ``ddrf``
and ``late`` (below):

* ``amb-static`` (sec. 5.1, Figures 7-9): N = 30 jobs submitted at time 0; sizes uniform in
  [0.5 L, 1.5 L] 64 MB splits with L = 150; deadlines ``U[0.5 D, 1.5 D]`` after submit
  with D = 1000 s; benefits uniform in [300, 700]; alpha = 0.3; 40 nodes with 2 map and
  2 reduce slots each. The sweeps of Figures 7-9 vary L (``--mean-splits``, 100-200),
  N (``--jobs``, 20-40) and D (``--mean-deadline``, 800-1600).
* ``amb-dynamic`` (sec. 5.2, Figure 10): 60 jobs, average size 150 splits (the same
  ``U[0.5 L, 1.5 L]``: "other parameters as in sec. 5.1"), deadline = submit +
  ``U[400, 600]`` s (``mean_deadline`` 500, ``deadline_spread`` 0.2), benefits in
  [300, 700], one job a minute on average for one hour.

**Arrivals** (dynamic). The paper submits "on average one job every minute, for one hour".
mropt draws the ``jobs`` submit times uniformly in ``[0, jobs x mean_interarrival)`` (one
hour for 60 jobs and 60 s) and sorts them, job ``j1`` first: that is a Poisson process of
rate 1 / ``mean_interarrival`` conditioned on exactly ``jobs`` arrivals in the window, so
both sentences of the paper hold exactly (independent exponential gaps would make the set
last 59 minutes +- 8 on average). Times are rounded to 0.1 s and drawn from
``numpy.random.default_rng([seed, 0])``. ``mean_interarrival`` 0 (the static preset):
every job at time 0.

**Jobs** follow the admission generator's model (:mod:`mropt.instances.admission_gen`,
``amb-paper`` model version 1) with the same random streams: job k's type, splits, task
time jitter, relative deadline and benefit come from ``numpy.random.default_rng([seed,
k])`` in the same order, with its job types (:data:`~mropt.instances.admission_gen.PAPER_JOB_TYPES`:
word count, inverted index, grep), mix and jitter. Job k has a map stage of ``splits``
tasks of the type's map time and a reduce stage of ``max(1, ceil(fan-out x splits))``
tasks (grep's fan-out is 0: one reduce task, as in the admission generator). So the
``amb-static`` workload of seed S and the instance of ``mropt generate admission --seed S``
(with the same N, L, D) have the same jobs, task counts, task times, deadlines and
benefits; ``amb-dynamic`` shares the sizes, task times and benefits of ``generate
admission --jobs 60 --seed S``, its own arrivals and its ``U[400, 600]`` deadlines (the
same uniform draw, scaled to the narrower range). The relative deadline is
``U[(1 - s) D, (1 + s) D]`` with s = ``deadline_spread``, rounded to 1 s, at least 1 s.

**Cluster**: ``nodes`` nodes of ``map_slots_per_node`` and ``reduce_slots_per_node`` slots,
speed 1, in racks of ``rack_size`` (node ``r<i>-<k>`` is node k of rack ``rack<i>``; the
last rack takes the remainder). The paper's model has no locality: by default the tasks
list no replicas (locality factor 1, the SEQ abstraction's cluster); ``replicas`` > 0
writes ``placement`` ``{replicas, seed}`` so the simulator places the map inputs (HDFS
default policy, :mod:`mropt.sim.placement`). Timing, faults, pools and queues are the
workload defaults (Mumak's factors, no stragglers, no slow-start, one pool per user, every
job the user ``default``).

**The ddrf preset** (the locality setting of the DDRF paper, sec. 3.2.2 and 4.2). ``jobs`` (200)
map-only jobs of N = ``tasks_per_job`` (20) tasks; task times ``T x U[1 - j, 1 + j]`` with T =
``map_task_time`` (60 s) and j = ``task_time_jitter`` (0.2; the paper's tasks all last T; the
jitter keeps completions, hence freed places, from falling in waves); R = ``replicas`` (3) input
replicas per task, placed by the simulator with HDFS's default policy, seeded (``placement``
``{replicas, seed}``, :mod:`mropt.sim.placement`); M = ``nodes`` (100; the paper's 100 to 1,000)
nodes of ``<4 cpu, 8 mem>`` (no slots) in racks of ``rack_size`` = 20 (the paper's G; its value
is not printed, 20 is a common rack of 1 GbE top-of-rack switches). Job k belongs to user
``u<(k-1) mod users + 1>`` (``users`` = 10); odd users' tasks need ``<1 cpu, 1 mem>``
(CPU-dominant), even users' ``<0.5 cpu, 2 mem>`` (memory-dominant): either kind fills a node
with 4 tasks (L = 4 places per node), so DRF has two dominant resources to balance. Submit times
are uniform over ``[0, jobs x gap)`` (as above) with ``gap = N T / (load x M L)``: an offered
load of ``load`` (0.95) of the M L places. The paper's model (sec. 3.2.2) has a slot freeing
every T / S, each freed slot one chance of locality for the waiting job; a busy cluster (5% of
its places free on average at load 0.95) frees them one at a time at random nodes, as the model
assumes. (Table 2's p = 0.05 is the model's *preferred fraction* ``p_i = |P_i| / M``, the share
of nodes holding the job's input: here ``1 - (1 - K / M)^R`` with K tasks left, e.g. 0.05 for
K = 17 on M = 1,000 nodes.) The other fields (deadlines, benefits, job types) are unused.

**The late preset** (LATE: speculative execution in a heterogeneous cluster, the LATE
paper's virtualised setting where co-located VMs run slower): the jobs of
``amb-static`` drawn as above (``jobs`` 20, ``mean_splits`` 40, submitted over ``[0, jobs x
mean_interarrival)`` with ``mean_interarrival`` 30 s), on ``nodes`` (40) nodes of 2 + 2 slots
in racks of 20, of which ``round(slow_fraction x nodes)`` (``slow_fraction`` 0.25) run at
``slow_speed`` (0.5: a task takes twice as long there; mropt's choice, the paper's slowdowns
vary with co-location) and the others at 1. The slow nodes are a seeded sample
(``numpy.random.default_rng([seed, 4])``, without replacement). Stragglers: every attempt is
drawn slow with probability ``straggler_rate`` (0.05) and then takes ``straggler_slowdown``
(3) times longer (the simulator's per-attempt draw, ``timing``); reduces start at Hadoop's
default slow-start, 5 % of the maps finished (``timing.reduce_slowstart`` 0.05), so a
reduce's copy third overlaps the maps as in Hadoop. Node ids are those of the other presets
(``r<i>-<k>``), one entry per node.

Same preset, parameters and seed: the same workload, and the same JSON byte for byte. The
file records the model, the preset, the parameters and the seed under ``generator``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from mropt.instances.admission_gen import draw_jobs
from mropt.instances.params import check_seed
from mropt.instances.workload_params import PRESETS, WHO, WorkloadParams, ddrf_gap, preset_params
from mropt.model.errors import InputError
from mropt.model.workload import (
    NodeSpec,
    Placement,
    PoolSpec,
    QueueSpec,
    Stage,
    TaskGroup,
    Timing,
    WorkloadInstance,
    WorkloadJob,
)

MODEL_NAME = "amb-workload"
MODEL_VERSION = 1


#: the late preset's reduce slow-start (Hadoop's mapred.reduce.slowstart.completed.maps default)
LATE_SLOWSTART = 0.05

#: the ddrf preset's node (4 task places of either kind) and its two task demands (module docstring)
DDRF_NODE = {"cpu": 4.0, "mem": 8.0}
DDRF_DEMANDS = ({"cpu": 1.0, "mem": 1.0}, {"cpu": 0.5, "mem": 2.0})


def rack_nodes(nodes: int, rack_size: int, map_slots: int, reduce_slots: int) -> tuple[NodeSpec, ...]:
    """``nodes`` identical nodes in racks of ``rack_size``: one entry ``r<i>`` (``count`` nodes) per rack."""
    out = []
    for i, first in enumerate(range(0, nodes, rack_size)):
        count = min(rack_size, nodes - first)
        out.append(NodeSpec(id=f"r{i}", rack=f"rack{i}", map_slots=map_slots, reduce_slots=reduce_slots, count=count))
    return tuple(out)


def late_nodes(seed: int, params: WorkloadParams) -> tuple[NodeSpec, ...]:
    """The late preset's cluster: one entry per node ``r<i>-<k>``, a seeded ``slow_fraction`` at ``slow_speed``."""
    n = params.nodes
    k = round(params.slow_fraction * n)
    slow = set(np.random.default_rng([seed, 4]).choice(n, size=k, replace=False).tolist()) if k else set()
    out = []
    for i, first in enumerate(range(0, n, params.rack_size)):
        for j in range(min(params.rack_size, n - first)):
            node = first + j
            out.append(
                NodeSpec(
                    id=f"r{i}-{j}",
                    rack=f"rack{i}",
                    speed=params.slow_speed if node in slow else 1.0,
                    map_slots=params.map_slots_per_node,
                    reduce_slots=params.reduce_slots_per_node,
                )
            )
    return tuple(out)


def mapreduce_job(
    job_id: str,
    map_tasks: int,
    map_time: float,
    reduce_tasks: int,
    reduce_time: float,
    **job_fields: Any,
) -> WorkloadJob:
    """A job of one map stage and, when ``reduce_tasks`` > 0, one reduce stage (groups with counts)."""
    stages = [Stage("map", (TaskGroup(duration=map_time, count=map_tasks),))]
    if reduce_tasks > 0:
        stages.append(Stage("reduce", (TaskGroup(duration=reduce_time, count=reduce_tasks),)))
    return WorkloadJob(id=job_id, stages=tuple(stages), **job_fields)


def _submit_times(seed: int, params: WorkloadParams) -> list[float]:
    if params.mean_interarrival <= 0:
        return [0.0] * params.jobs
    horizon = params.jobs * params.mean_interarrival
    draws = np.sort(np.random.default_rng([seed, 0]).uniform(0.0, horizon, size=params.jobs))
    return [round(float(t), 1) for t in draws]


def generate_workload(
    preset: str = "amb-static", seed: int = 0, params: WorkloadParams | None = None, **overrides: Any
) -> WorkloadInstance:
    """A seeded workload of ``preset`` (module docstring).

    ``params`` replaces the preset's parameters entirely; keyword ``overrides`` set fields of
    :class:`WorkloadParams` over the preset's (or over ``params``). Same arguments, same
    workload, byte for byte as JSON.
    """
    seed = check_seed(seed, WHO)
    if params is None:
        params = preset_params(preset, **overrides)
    else:
        if preset not in PRESETS:
            raise InputError(f"{WHO}: unknown preset {preset!r} (known: {', '.join(PRESETS)})")
        params = replace(params, **overrides) if overrides else params
    params.check()
    if preset == "mpsa":
        return generate_mpsa_workload(seed, params)
    if preset == "ddrf":
        return _generate_ddrf(seed, params)

    submits = _submit_times(seed, params)
    jobs: list[WorkloadJob] = []
    draws = draw_jobs(
        seed,
        params.jobs,
        params.job_types,
        params.mix,
        mean_splits=params.mean_splits,
        jitter=params.task_time_jitter,
        mean_deadline=params.mean_deadline,
        spread=params.deadline_spread,
        benefits=(params.benefit_min, params.benefit_max),
    )
    for k, (_, kind, splits, jitter, drawn, benefit) in enumerate(draws, start=1):
        jt = params.job_types[kind]
        relative = max(1, round(drawn))
        submit = submits[k - 1]
        jobs.append(
            mapreduce_job(
                f"j{k}",
                splits,
                max(0.1, round(jt.map_task_time * float(jitter[0]), 1)),
                max(1, math.ceil(jt.reduce_fanout * splits)),
                max(0.1, round(jt.reduce_task_time * float(jitter[1]), 1)),
                submit_time=submit,
                deadline=round(submit + relative, 1),
                benefit=benefit,
                extra={"type": kind, "splits": splits},
            )
        )
    record = {"model": MODEL_NAME, "model_version": MODEL_VERSION, "preset": preset, "seed": seed}
    record["params"] = params.record(preset)
    name = f"{preset}-n{params.jobs}-L{params.mean_splits:g}-D{params.mean_deadline:g}-s{seed}"
    if preset == "late":
        return WorkloadInstance(
            nodes=late_nodes(seed, params),
            jobs=tuple(jobs),
            timing=Timing(
                straggler_rate=params.straggler_rate,
                straggler_slowdown=params.straggler_slowdown,
                reduce_slowstart=LATE_SLOWSTART,
            ),
            placement=Placement(params.replicas, seed) if params.replicas > 0 else None,
            alpha=params.alpha,
            name=f"late-n{params.jobs}-L{params.mean_splits:g}-f{params.slow_fraction:g}"
            f"-r{params.straggler_rate:g}-s{seed}",
            meta={"generator": record},
        )
    return WorkloadInstance(
        nodes=rack_nodes(params.nodes, params.rack_size, params.map_slots_per_node, params.reduce_slots_per_node),
        jobs=tuple(jobs),
        placement=Placement(params.replicas, seed) if params.replicas > 0 else None,
        alpha=params.alpha,
        name=name,
        meta={"generator": record},
    )


def generate_amb_static(seed: int = 0, **overrides: Any) -> WorkloadInstance:
    """The ``amb-static`` preset as ``generate(seed, **params)`` (the harness's generator signature)."""
    return generate_workload("amb-static", seed, **overrides)


def generate_amb_dynamic(seed: int = 0, **overrides: Any) -> WorkloadInstance:
    """The ``amb-dynamic`` preset as ``generate(seed, **params)`` (the harness's generator signature)."""
    return generate_workload("amb-dynamic", seed, **overrides)


# -- the MPSA preset (MPSA paper 004, sec. 5, Tables 1-2) ----------------------------------------

#: MPSA Table 2: the sojourn deadlines T1, T2, T3 in s, most urgent first; the queue names
MPSA_DEADLINES = (600.0, 1200.0, 2400.0)
MPSA_QUEUES = ("T1", "T2", "T3")
#: the three applications of sec. 5: stage types in order
MPSA_PATTERNS: Mapping[str, tuple[str, ...]] = {
    "simple": ("map", "reduce"),
    "iterative": ("map", "reduce") * 3,
    "chain": ("map", "map", "reduce", "map"),
}


def generate_mpsa_workload(seed: int, params: WorkloadParams) -> WorkloadInstance:
    """The ``mpsa`` preset: the MPSA paper's experiment (sec. 5, Tables 1-2) as a workload.

    * **Arrivals**: a Poisson process of ``arrival_rate`` jobs per minute, the first job one
      exponential gap after time 0, gaps from ``numpy.random.default_rng([seed, 0])``, times
      rounded to 0.1 s.
    * **Patterns** (sec. 5): simple (map, reduce), iterative (map -> reduce three times), chain
      (map1 -> map2 -> reduce -> map3), in equal thirds: the list simple, iterative, chain
      repeated (the first ``jobs mod 3`` patterns get one job more) shuffled by
      ``default_rng([seed, 1])``. **Priorities**: likewise thirds, shuffled by ``default_rng([seed,
      2])``: queue T1 (priority 3, deadline 10 min), T2 (2, 20 min), T3 (1, 40 min), Table 2;
      the deadline is submit + T_i.
    * **Tasks** (SleepJob, sec. 5): every map stage has ``map_tasks`` (Table 2: 100) tasks of
      ``map_task_time`` (1 min); every reduce stage does ``reduce_work`` slot-seconds (Table 2:
      50 min) as ``reduce_tasks`` tasks of reduce_work / reduce_tasks each; 0 tasks (default)
      means one per reduce slot of the cluster, the paper's "reduce task time = the job's reduce
      workload / the number of reduce slots" (50 tasks of 1 min). No input replicas (SleepJob
      reads none) unless ``replicas`` > 0.
    * **Cluster**: ``nodes`` (25) x ``map_slots_per_node`` (4) + ``reduce_slots_per_node`` (2)
      slots, in one rack by default (``rack_size`` 25).
    * **Baselines' configuration** (sec. 5, Figs 8-9): three Fair Scheduler pools T1-T3 of equal
      weight with FIFO inside (``mode`` fifo) and minimum shares of a third of the slots (floor),
      and three Capacity Scheduler queues of 100/3 % each; a job's pool and queue are its
      priority's name.
    """
    jobs_n = params.jobs
    total_map = params.nodes * params.map_slots_per_node
    total_reduce = params.nodes * params.reduce_slots_per_node
    gaps = np.random.default_rng([seed, 0]).exponential(60.0 / params.arrival_rate, size=jobs_n)
    submits = [round(float(t), 1) for t in np.cumsum(gaps)]
    names = list(MPSA_PATTERNS)
    patterns = [names[k % 3] for k in range(jobs_n)]
    np.random.default_rng([seed, 1]).shuffle(patterns)
    classes = [k % 3 for k in range(jobs_n)]
    np.random.default_rng([seed, 2]).shuffle(classes)
    reduce_tasks = params.reduce_tasks or total_reduce
    reduce_time = params.reduce_work / reduce_tasks
    jobs: list[WorkloadJob] = []
    for k in range(jobs_n):
        pattern, c = patterns[k], int(classes[k])
        stages = tuple(
            Stage(
                t,
                (
                    TaskGroup(duration=params.map_task_time, count=params.map_tasks)
                    if t == "map"
                    else TaskGroup(duration=reduce_time, count=reduce_tasks),
                ),
            )
            for t in MPSA_PATTERNS[pattern]
        )
        name = MPSA_QUEUES[c]
        jobs.append(
            WorkloadJob(
                id=f"j{k + 1}",
                stages=stages,
                submit_time=submits[k],
                user=name,
                pool=name,
                queue=name,
                priority=3 - c,
                deadline=round(submits[k] + MPSA_DEADLINES[c], 1),
                extra={"pattern": pattern},
            )
        )
    pools = tuple(
        PoolSpec(id=q, min_maps=total_map // 3, min_reduces=total_reduce // 3, mode="fifo") for q in MPSA_QUEUES
    )
    queues = tuple(QueueSpec(id=q, capacity=100.0 / 3) for q in MPSA_QUEUES)
    record = {"model": MODEL_NAME, "model_version": MODEL_VERSION, "preset": "mpsa", "seed": seed}
    record["params"] = params.record("mpsa")
    return WorkloadInstance(
        nodes=rack_nodes(params.nodes, params.rack_size, params.map_slots_per_node, params.reduce_slots_per_node),
        jobs=tuple(jobs),
        placement=Placement(params.replicas, seed) if params.replicas > 0 else None,
        alpha=params.alpha,
        pools=pools,
        queues=queues,
        name=f"mpsa-n{jobs_n}-r{params.arrival_rate:g}-s{seed}",
        meta={"generator": record},
    )


def generate_mpsa(seed: int = 0, **overrides: Any) -> WorkloadInstance:
    """The ``mpsa`` preset as ``generate(seed, **params)`` (the harness's generator signature)."""
    return generate_workload("mpsa", seed, **overrides)


def _generate_ddrf(seed: int, params: WorkloadParams) -> WorkloadInstance:
    """The ``ddrf`` preset: the DDRF paper's locality setting (module docstring)."""
    n_tasks, t = params.tasks_per_job, params.map_task_time
    gap = ddrf_gap(params)
    submits = _submit_times(seed, replace(params, mean_interarrival=gap))
    jobs: list[WorkloadJob] = []
    for k in range(1, params.jobs + 1):
        rng = np.random.default_rng([seed, k])
        times = rng.uniform(1 - params.task_time_jitter, 1 + params.task_time_jitter, size=n_tasks) * t
        user = (k - 1) % params.users
        demand = DDRF_DEMANDS[user % 2]
        groups = tuple(TaskGroup(duration=max(0.1, round(float(x), 1)), demand=dict(demand)) for x in times)
        jobs.append(
            WorkloadJob(id=f"j{k}", stages=(Stage("map", groups),), submit_time=submits[k - 1], user=f"u{user + 1}")
        )
    nodes = []
    for i, first in enumerate(range(0, params.nodes, params.rack_size)):
        count = min(params.rack_size, params.nodes - first)
        nodes.append(NodeSpec(id=f"r{i}", rack=f"rack{i}", resources=dict(DDRF_NODE), count=count))
    record = {"model": MODEL_NAME, "model_version": MODEL_VERSION, "preset": "ddrf", "seed": seed}
    record["params"] = params.record("ddrf")
    name = f"ddrf-M{params.nodes}-N{n_tasks}-R{params.replicas}-n{params.jobs}-s{seed}"
    return WorkloadInstance(
        nodes=tuple(nodes),
        jobs=tuple(jobs),
        placement=Placement(params.replicas, seed) if params.replicas > 0 else None,
        alpha=params.alpha,
        name=name,
        meta={"generator": record},
    )


def generate_late(seed: int = 0, **overrides: Any) -> WorkloadInstance:
    """The ``late`` preset as ``generate(seed, **params)`` (the harness's generator signature)."""
    return generate_workload("late", seed, **overrides)


def generate_ddrf(seed: int = 0, **overrides: Any) -> WorkloadInstance:
    """The ``ddrf`` preset as ``generate(seed, **params)`` (the harness's generator signature)."""
    return generate_workload("ddrf", seed, **overrides)
