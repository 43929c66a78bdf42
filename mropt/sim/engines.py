"""Which engine runs a simulation: the Python engine, or the compiled core where it applies (issue 32).

``simulate(..., engine=...)`` and ``mropt simulate --engine``:

* ``python``: the Python engine (:class:`mropt.sim.engine.Simulation`'s own ``run``), every policy;
* ``compiled``: the compiled core (:mod:`mropt.sim.compiled`, numba), which runs only ``drf``, ``ddrf``
  and ``delay`` in event mode on a cluster of two resources without slots, jobs of one map stage of one
  task group,
  without speculation, faults, stragglers, reduce slow-start or live utilisation rows
  (:func:`mropt.sim.compiled.drf_engine.why_not`), and ``fair`` and ``capacity`` (one default queue)
  in heartbeat mode on a cluster of map slots and two resources
  (:func:`mropt.sim.compiled.fair_engine.why_not`, :func:`mropt.sim.compiled.capacity_engine.why_not`;
  both also on map and reduce slots with two resources or none, whose tasks then have no demands,
  for jobs of a map stage and perhaps a reduce stage: the SWIM day's shape),
  and ``fifo`` in event mode on a cluster of map and reduce slots, jobs of a map stage and perhaps a
  reduce stage, each of one task group without demands or replicas, without speculation, faults,
  stragglers, reduce slow-start or live utilisation rows (:func:`mropt.sim.compiled.fifo_engine.why_not`);
  for any other run, or without numba, a one-line :class:`~mropt.model.errors.InputError` says why;
* ``auto`` (the default): the compiled core where it applies and the workload has at least
  :data:`AUTO_TASKS` tasks, else the Python engine. Below that size the Python engine takes a few
  seconds at most, while the compiled core's first run after an install compiles it (13 s on a 2-core machine,
  then loaded from numba's cache in a fraction of a second).

Both engines give the same run: the same tables, event-log hash, events and job outcomes
(``tests/sim/test_compiled_drf.py``, ``test_compiled_delay.py``, ``test_compiled_fifo.py`` and the others
compare them on random workloads); the summary of a compiled run says ``"engine": "compiled"``. One known exception: with submit times near 2^52 s (where a time's
last bit is a second), the Python engine's accelerated ``ddrf`` and ``delay`` offers differ from their
own plain rule on some workloads, and the compiled run is the plain rule's (a strict xfail in the tests).
"""

from __future__ import annotations

from importlib.util import find_spec
from typing import TYPE_CHECKING

from mropt.model.errors import InputError

if TYPE_CHECKING:
    from mropt.sim.engine import Simulation
    from mropt.sim.recorder import Recorder

#: the engines ``simulate`` offers (module docstring)
ENGINES = ("auto", "python", "compiled")
#: the fewest tasks for which ``auto`` picks the compiled core
AUTO_TASKS = 100_000
#: the policies the compiled core runs
COMPILED_POLICIES = ("drf", "ddrf", "delay", "fair", "capacity", "fifo")
_NAMES = ", ".join(COMPILED_POLICIES[:-1]) + " and " + COMPILED_POLICIES[-1]


def check_engine(engine: object) -> str:
    """``engine`` if it is one of :data:`ENGINES`, else a one-line InputError."""
    if engine not in ENGINES:
        raise InputError(f"simulate: engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    return str(engine)


_NOT_INSTALLED = "numba, which is not installed (pip install numba)"
_IMPORT: list[str | None] = []  # (the import's outcome, once a process: None, or why it failed)


def compiled_unavailable() -> str | None:
    """Why the compiled core cannot be used in this process (numba missing, or failing to import: a
    NumPy too new for it, say), or None when it can. Imported once, then remembered."""
    if not _IMPORT:
        if find_spec("numba") is None:
            _IMPORT.append(_NOT_INSTALLED)
        else:
            try:
                import mropt.sim.compiled.drf_core  # noqa: F401  (numba and the core's functions)
            except Exception as exc:  # (numba's own import errors are of several kinds)
                _IMPORT.append(f"numba, which fails to import here: {type(exc).__name__}: {exc}".splitlines()[0])
            else:
                _IMPORT.append(None)
    return _IMPORT[0]


def compiled_available() -> bool:
    """Whether the compiled core can be used in this process (:func:`compiled_unavailable`)."""
    return compiled_unavailable() is None


def run_simulation(sim: Simulation, policy: str, engine: str) -> tuple[Recorder, str]:
    """Run ``sim`` by the engine ``engine`` asks for (module docstring): its recorder and the engine that ran."""
    check_engine(engine)
    if engine == "python":
        return sim.run(), "python"
    tasks = sum(stage.n for job in sim.jobs for stage in job.stages)
    if engine == "auto" and (policy not in COMPILED_POLICIES or tasks < AUTO_TASKS or not compiled_available()):
        return sim.run(), "python"
    if not compiled_available():
        raise InputError(f"simulate: engine 'compiled' needs {compiled_unavailable() or _NOT_INSTALLED}")
    from mropt.sim.compiled import capacity_engine, drf_engine, fair_engine, fifo_engine
    from mropt.sim.compiled.driver import NotCompilable

    try:
        if policy not in COMPILED_POLICIES:
            raise NotCompilable(f"policy {policy} (only {_NAMES} run compiled)")
        engines = {
            "fair": fair_engine.run_compiled,
            "capacity": capacity_engine.run_compiled,
            "fifo": fifo_engine.run_compiled,
        }
        run = engines.get(policy, drf_engine.run_compiled)
        return run(sim), "compiled"  # (it refuses what it cannot run, the simulation untouched)
    except NotCompilable as refused:
        if engine == "auto":
            return sim.run(), "python"
        raise InputError(f"simulate: engine 'compiled' cannot run this simulation: {refused.reason}") from None


__all__ = ["AUTO_TASKS", "ENGINES", "check_engine", "compiled_available", "compiled_unavailable", "run_simulation"]
