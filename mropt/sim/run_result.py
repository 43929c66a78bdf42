"""A simulation's outcome as pandas tables: what ``mropt.simulate`` returns and ``mropt.load_run`` reads.

::

    run = mropt.simulate("amb-static.json", "fair", params={"preemption": True}, seed=1)
    run.summary["benefit"]                 # the summary (summary.json's object, mropt.sim.run)
    run.jobs, run.tasks, run.utilisation   # pandas DataFrames: jobs.parquet, tasks.parquet, utilisation.parquet
    run.verify().ok                        # mropt.sim.verify, which shares no code with the engine
    run.write("sim-fair")                  # the folder `mropt simulate --out sim-fair` writes
    same = mropt.load_run("sim-fair")      # that folder read back: equal tables, equal summary

A :class:`RunResult` made by :func:`simulate` holds the run itself (``workload``, ``recorder``)
and makes its tables on first use, as :mod:`mropt.sim.outputs` writes them
(:func:`~mropt.sim.outputs.run_tables`); its summary is ``summary.json``'s object without the
``run_id`` (:func:`~mropt.sim.outputs.summary_record`). One made by :func:`load_run` holds what
the folder holds (:func:`~mropt.sim.outputs.read_outputs`): ``summary.json``'s object, ``run_id``
included, and the three tables; it has no ``workload`` or ``recorder``, and a folder whose files
are of different runs (their run ids disagree) is refused with one line, as ``mropt report`` and
``mropt history import`` refuse it. The columns are those of the recorder's tables
(:mod:`mropt.sim.recorder`; ``docs/simulation.md``).
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import Any

from mropt.model.errors import InputError
from mropt.model.io import load_instance
from mropt.model.solution import Verdict
from mropt.model.tolerance import OBJECTIVE_RTOL, same_value
from mropt.model.workload import WorkloadInstance
from mropt.sim import outputs
from mropt.sim.run import SimRun, as_workload
from mropt.sim.run import simulate as run_simulation
from mropt.sim.verify import check_stop, verify_simulation


class RunResult:
    """One simulation: ``summary`` (a dict), ``jobs``, ``tasks``, ``utilisation`` (pandas DataFrames).

    ``workload`` and ``recorder`` are the run's own when it was simulated here (:func:`simulate`),
    None when it was read from a folder (:func:`load_run`, which sets ``folder``).
    """

    def __init__(
        self,
        summary: dict[str, Any],
        *,
        run: SimRun | None = None,
        tables: dict[str, Any] | None = None,
        folder: Path | None = None,
    ) -> None:
        self.summary = summary
        self._run = run
        self._tables = tables
        self.folder = folder

    @property
    def workload(self) -> WorkloadInstance | None:
        return None if self._run is None else self._run.workload

    @property
    def recorder(self) -> Any:
        """The engine's recorder (:class:`mropt.sim.recorder.Recorder`) of a run simulated here, else None."""
        return None if self._run is None else self._run.recorder

    def _table(self, name: str) -> Any:
        if self._tables is None:
            assert self._run is not None
            self._tables = {file: table.to_pandas() for file, table in outputs.run_tables(self._run).items()}
        return self._tables[name]

    @cached_property
    def jobs(self) -> Any:
        """One row per job (``jobs.parquet``): submit, decision, first start, finish, deadline, benefit, ..."""
        return self._table("jobs.parquet")

    @cached_property
    def tasks(self) -> Any:
        """One row per attempt (``tasks.parquet``): node, rack, start, end, locality, speculative, outcome."""
        return self._table("tasks.parquet")

    @cached_property
    def utilisation(self) -> Any:
        """The exact step series of busy slots per slot type and pool (``utilisation.parquet``)."""
        return self._table("utilisation.parquet")

    def verify(self, workload: WorkloadInstance | str | os.PathLike[str] | None = None) -> Verdict:
        """The independent check of the tables against ``workload`` (:func:`mropt.sim.verify.verify_simulation`),
        and of the summary's ``benefit`` against the total it recomputes (AMB eq. 1; ``OBJECTIVE_RTOL``);
        a run stopped early (``stopped``) is checked as a run that ended then, and against its
        stop (:func:`mropt.sim.verify.check_stop`).

        ``workload``: a workload, an admission instance or the path of either's file; the run's
        own by default, which a run read from a folder does not have (InputError).
        """
        against = self.workload if workload is None else _workload(workload)
        if against is None:
            raise InputError("verify: a run read from a folder needs its workload (a workload or its file)")
        verdict = verify_simulation(against, self.jobs, self.tasks)
        verdict.problems.extend(check_stop(self.summary, self.jobs, self.tasks))
        claimed = self.summary.get("benefit")
        if isinstance(claimed, (int, float)) and not isinstance(claimed, bool) and verdict.objective is not None:
            scale = float(self.jobs["benefit"].abs().sum()) if "benefit" in self.jobs else 0.0
            if not same_value(claimed, verdict.objective, atol=OBJECTIVE_RTOL * scale):
                verdict.problems.append(
                    f"summary: benefit {claimed!r}, but the jobs' recomputed benefit (eq. 1) totals {verdict.objective!r}"
                )
        return verdict

    def write(self, out: str | os.PathLike[str], force: bool = False) -> list[Path]:
        """Write the run's folder as ``mropt simulate --out`` does (:func:`mropt.sim.outputs.write_outputs`)."""
        if self._run is None:
            raise InputError("write: only a run simulated here can be written (this one was read from a folder)")
        return outputs.write_outputs(self._run, out, force)

    def __repr__(self) -> str:
        s = self.summary
        where = f", folder={str(self.folder)!r}" if self.folder is not None else ""
        return (
            f"RunResult(policy={s.get('policy')!r}, seed={s.get('seed')!r}, jobs={s.get('jobs')!r}, "
            f"benefit={s.get('benefit')!r}{where})"
        )


def load_workload_file(path: str | os.PathLike[str]) -> Any:
    """The instance in the file ``path``: a workload or an admission instance (one-line errors)."""
    instance = load_instance(Path(path))
    if instance.kind not in ("workload", "admission"):
        raise InputError(f"{os.fspath(path)}: field 'kind' must be 'workload' or 'admission', got {instance.kind!r}")
    return instance


def _workload(given: Any) -> WorkloadInstance:
    """A workload from a workload, an admission instance or the path of either's file (one-line errors)."""
    if isinstance(given, (str, os.PathLike)):
        return as_workload(load_workload_file(given))
    return as_workload(given)


def simulate(
    workload: Any,
    policy: str,
    params: dict[str, Any] | None = None,
    *,
    seed: int = 0,
    **options: Any,
) -> RunResult:
    """Run ``policy`` on ``workload`` (a workload, an admission instance, or the path of either's file).

    ``params`` are the policy's (``mropt policies --params``); ``options`` are those of
    :func:`mropt.sim.run.simulate` (``mode``, ``plan``, ``speculation``, ``speculation_params``,
    ``straggler_draws``, ``max_memory``; ``until`` and ``time_limit`` to stop early, the
    summary's ``stopped`` then saying which; ``progress``, ``stop_on_interrupt``: Ctrl-C raises
    KeyboardInterrupt unless it is set). Bad input is a one-line :class:`InputError`.
    """
    if isinstance(workload, (str, os.PathLike)):
        workload = _workload(workload)
    run = run_simulation(workload, policy, params, seed=seed, **options)
    return RunResult(outputs.summary_record(run), run=run)


def load_run(folder: str | os.PathLike[str]) -> RunResult:
    """Read a ``mropt simulate --out`` folder (module docstring); a swap a kill interrupted is finished first.

    InputError (one line) for a folder that is not a simulation's, or whose files are of two runs.
    """
    if not os.fspath(folder):
        raise InputError("load_run: the folder's name is empty")
    outputs.settle_outputs(folder)
    summary, tables = outputs.read_outputs(folder)
    return RunResult(summary, tables=tables, folder=Path(folder))
