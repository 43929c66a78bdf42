"""The simulator's entry point: :func:`simulate` runs one policy on one workload with one seed.

``simulate(workload_or_admission_instance, policy, params, seed=..., mode=..., plan=...)``
builds the policy (:func:`mropt.sim.policy.make_policy`, parameters checked against their
declarations), runs :class:`mropt.sim.engine.Simulation` and returns a :class:`SimRun`:
the :class:`~mropt.sim.recorder.Recorder` with every table, the summary dict and the wall
time.

**Admission instances** are converted on the fly by
:func:`mropt.instances.workload_convert.to_workload` (the idealised cluster of the
SEQ model, AMB sec. 3: each map and reduce slot a slot of the cluster, no locality penalty, no
stragglers, no faults).

**Plans** (``plan``: a :class:`~mropt.model.solution.Solution`, as ``mropt solve --json``
writes it) are handed to the policy before the run starts (``Policy.use_plan``); a policy
registered with ``needs_plan`` (``seq``) refuses to run without one. A plan that records another
instance's hash, or names jobs the workload lacks, is an :class:`InputError`.

**Before the run**: the run's memory is estimated from the workload
(:func:`mropt.sim.memory.check_memory`: tasks, attempts kept, jobs, nodes, replicas) and a run
above ``max_memory`` (default 16 GiB) is refused; the policy checks that it can run on the
workload (:meth:`mropt.sim.policy.Policy.check_input`: the needs it declared, ``hei``'s history).

**The summary** (:func:`summarise`, the ``mropt simulate --json`` object) and its keys are
:mod:`mropt.sim.summary`'s; its utilisation ratios :mod:`mropt.sim.utilisation`'s. This module
re-exports their names (``summarise``, ``SUMMARY_KEYS``, ``locality_shares``, ``ideal_benefit``,
``utilisation_ratio``, ``resource_ratio``, ``resource_name``), as scripts import them from here.

**The engine** (``engine``: ``auto``, the default, ``python`` or ``compiled``): which runs the
simulation, the Python engine or the compiled core where it applies (:mod:`mropt.sim.engines`); the
same run either way.

**Speculation** (``speculation``: a rule name of :mod:`mropt.sim.speculation`, default ``none``;
``speculation_params``: its parameters; ``straggler_draws``, ``stream`` or ``task``): what the
summary then adds is in :mod:`mropt.sim.summary`.
"""

from __future__ import annotations

import ctypes
import math
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mropt.instances.workload_convert import to_workload
from mropt.model.errors import InputError
from mropt.model.solution import Solution
from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.engines import check_engine, run_simulation
from mropt.sim.memory import check_memory
from mropt.sim.policy import MODES, make_policy, policy_info
from mropt.sim.recorder import Recorder
from mropt.sim.speculation import make_speculation
from mropt.sim.summary import SUMMARY_KEYS, ideal_benefit, locality_shares, summarise
from mropt.sim.utilisation import resource_name, resource_ratio, utilisation_ratio
from mropt.sim.watch import Watch

__all__ = [
    "SUMMARY_KEYS",
    "SimRun",
    "as_workload",
    "check_plan",
    "check_stops",
    "ideal_benefit",
    "locality_shares",
    "read_plan",
    "release_locality",
    "resource_name",
    "resource_ratio",
    "simulate",
    "summarise",
    "utilisation_ratio",
]


@dataclass
class SimRun:
    """One simulation's outcome: the recorder (tables), the summary and the wall time."""

    workload: WorkloadInstance
    policy: str
    recorder: Recorder
    summary: dict[str, Any]
    wall_time: float
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def simulation(self) -> Simulation:
        return self.recorder.sim

    def close(self) -> None:
        """Release what the run holds outside memory now (a compiled run's utilisation rows' temporary
        file: ``Recorder.close``) rather than when the garbage collector finds the recorder and its
        simulation, which refer to each other; the utilisation rows cannot be read after."""
        self.recorder.close()


def as_workload(instance: Any) -> WorkloadInstance:
    """The workload itself, or an admission instance converted (``mropt.to_workload``)."""
    if isinstance(instance, WorkloadInstance):
        return instance
    kind = getattr(instance, "kind", None)
    if kind == "admission":
        return to_workload(instance)
    raise InputError(f"simulate: the input must be a workload or an admission instance, got kind {kind!r}")


def read_plan(data: Any, source: str = "plan") -> Solution:
    """A plan (``mropt solve --json`` output) read from its JSON form; one-line errors naming ``source``."""
    if isinstance(data, Solution):
        return data
    try:
        return Solution.from_dict(data)
    except InputError as exc:
        raise InputError(f"{source}: {exc}") from None


def check_plan(plan: Solution, original: Any, workload: WorkloadInstance) -> None:
    """Refuse a plan computed for another instance, or one naming jobs the workload lacks."""
    problem = plan.instance_mismatch(original)
    if problem is not None and original is not workload and plan.instance_mismatch(workload) is None:
        problem = None
    if problem is not None and plan.instance_hash in _recorded_hashes(workload.meta):
        problem = None  # a workload converted from the plan's instance records its hash
    if problem is not None:
        raise InputError(f"--plan: {problem}")
    ids = {job.id for job in workload.jobs}
    for job_id in (*plan.accepted, *(plan.sequence or ())):
        if job_id not in ids:
            raise InputError(f"--plan: the plan names job {job_id!r}, which the workload does not have")


def _recorded_hashes(meta: Mapping[str, Any], depth: int = 0) -> set[str]:
    """Strings recorded in a workload's ``meta`` (two levels deep): a converter keeps its source's hash there."""
    out: set[str] = set()
    for value in meta.values():
        if isinstance(value, str) and len(value) == 64:
            out.add(value)
        elif isinstance(value, Mapping) and depth < 2:
            out |= _recorded_hashes(value, depth + 1)
    return out


def simulate(
    instance: Any,
    policy: str,
    params: Mapping[str, Any] | None = None,
    *,
    seed: int = 0,
    mode: str | None = None,
    plan: Solution | Mapping[str, Any] | None = None,
    record_utilisation: bool = True,
    speculation: str | None = None,
    speculation_params: Mapping[str, Any] | None = None,
    straggler_draws: str | None = None,
    max_memory: int | None = None,
    until: float | None = None,
    time_limit: float | None = None,
    progress: bool = False,
    stop_on_interrupt: bool = False,
    engine: str = "auto",
) -> SimRun:
    """Run ``policy`` (a registered name, ``mropt policies``) on a workload or an admission instance.

    See the module docstring for plans, conversion and the summary. Bad input (an unknown
    policy or parameter, a mode not ``event``/``heartbeat``, a plan for another instance,
    a policy that needs a plan without one, a workload the policy cannot run,
    :meth:`Policy.check_input`) is a one-line :class:`InputError`, and so is a run whose
    memory estimate exceeds ``max_memory`` bytes (default 16 GiB, :mod:`mropt.sim.memory`),
    refused before the run builds anything.

    ``until`` (simulated seconds >= 0) and ``time_limit`` (wall-clock seconds > 0) stop the run
    early, ``progress`` draws a bar on stderr, and ``stop_on_interrupt`` makes Ctrl-C stop it
    too, keeping what happened (else Ctrl-C raises KeyboardInterrupt): :mod:`mropt.sim.watch`;
    the summary's ``stopped`` says which stopped it.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise InputError(f"simulate: seed must be an integer >= 0, got {seed!r}")
    if mode is not None and mode not in MODES:
        raise InputError(f"simulate: mode must be one of {', '.join(MODES)}, got {mode!r}")
    check_stops(until, time_limit)
    check_engine(engine)
    info = policy_info(policy)
    workload = as_workload(instance)
    check_memory(workload, max_memory, speculation=speculation not in (None, "none"), until=until)
    the_plan = None if plan is None else read_plan(plan)
    if the_plan is not None:
        check_plan(the_plan, instance, workload)
    elif info.needs_plan:
        raise InputError(
            f"policy {policy!r} executes a plan: give one (--plan SOLUTION.json from `mropt solve --json`)"
        )
    rule = make_speculation(speculation, speculation_params)
    pol = make_policy(policy, params)
    pol.check_input(workload)
    if the_plan is not None:
        pol.use_plan(the_plan)
    start = time.perf_counter()
    sim = Simulation(
        workload,
        pol,
        seed=seed,
        mode=mode,
        record_utilisation=record_utilisation,
        speculation=rule,
        straggler_draws=straggler_draws,
        until=until,
        watch=Watch(time_limit=time_limit, progress=progress, stop_on_interrupt=stop_on_interrupt)
        if time_limit is not None or progress or stop_on_interrupt
        else None,
    )
    recorder, ran = run_simulation(sim, policy, engine)
    release_locality(sim)  # (before the summary reads the utilisation rows: Recorder.keep_row_marks)
    # the summary reads the utilisation rows, built as they are read: its time is the run's too
    summary = summarise(recorder, policy, pol.params, 0.0)
    return_freed_memory()
    wall = time.perf_counter() - start
    summary["wall_time"] = wall
    if ran != "python":
        summary["engine"] = ran
    return SimRun(workload, policy, recorder, summary, wall, dict(pol.params))


def release_locality(sim: Simulation) -> None:
    """Drop what only the run's launches read, once it has returned: every stage's input replicas
    and locality stacks (:mod:`mropt.sim.state`). No table, summary or check reads them (the
    attempts' locality is in the recorder's store), and generated placement
    (:mod:`mropt.sim.placement`) is one array for the whole workload, held by the stages' views of
    it: 60 MiB on the Alibaba 2017 day, freed before the summary and ``--out`` build their pieces
    (issue 32). Called by :func:`simulate` only: a :class:`Simulation` is not run twice."""
    for job in sim.jobs:
        for stage in job.stages:
            stage.replicas = None
            stage.drop_locality()


def return_freed_memory() -> None:
    """Hand the C heap's free pages back to the system (glibc's ``malloc_trim``; elsewhere nothing).

    A compiled run frees its loop's arrays, and the summary its blocks, in pieces glibc keeps for later
    use, under which the ``--out`` tables' build then stacks its own (benchmarks/RESULTS.md, issue 32,
    "the compiled core for ``fair`` and ``capacity``"). Memory only: nothing a run computes changes."""
    if sys.platform != "linux":
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):  # (not glibc: musl has no malloc_trim)
        return


def check_stops(until: Any, time_limit: Any) -> None:
    """``until`` a number >= 0 and ``time_limit`` one > 0, each finite or None (one-line InputError)."""
    for name, value, zero in (("until", until, True), ("time_limit", time_limit, False)):
        if value is None:
            continue
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or value < 0 or (value == 0 and not zero):
            raise InputError(f"simulate: {name} must be a number of seconds {'>= 0' if zero else '> 0'}, got {value!r}")
