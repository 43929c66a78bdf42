"""mropt: optimisation research on cluster (MapReduce) scheduling.

The Python API in one screen::

    import mropt
    inst = mropt.generate_admission(jobs=30, seed=1)      # paper-default instance
    # also generate_priority, generate_fairness, import_swim, import_alibaba
    sol = mropt.solve(inst, "edf-greedy")                  # any registered method
    mropt.verify(inst, sol).ok                             # independent check
    [m.name for m in mropt.methods()]                      # what is registered

Gap studies (mropt.harness.api; imported on first use)::

    exp = mropt.load_experiment("benchmarks/smoke.toml")   # checked experiment file
    mropt.run_study(exp, "results/smoke", workers=2)       # run or resume
    df = mropt.results_frame("results/smoke")              # one row per run, with gaps
    mropt.write_report("results/smoke")                    # tables, plots, report.html

The cluster simulator (mropt.sim; imported on first use)::

    workload = mropt.to_workload(inst)                     # an admission instance on SEQ's cluster
    run = mropt.simulate(workload, "fifo", seed=0)         # a workload (or its file), an admission instance
    run.summary["benefit"], run.jobs, run.tasks            # summary dict, pandas DataFrames
    run.verify().ok                                        # mropt.sim.verify, independent of the engine
    mropt.load_run("results/sim-fair")                     # a `mropt simulate --out` folder, the same object
"""

# the problem packages register their methods and verifiers on import
from mropt import admission, fairness, priority  # noqa: F401  (isort: skip)
from typing import Any

from mropt._version import __version__
from mropt.importers.alibaba import import_alibaba
from mropt.importers.swim import import_swim
from mropt.instances.admission_gen import generate_admission
from mropt.instances.fairness_gen import generate_fairness
from mropt.instances.priority_gen import generate_priority
from mropt.instances.workload_convert import to_admission, to_workload
from mropt.model import (
    AdmissionInstance,
    Cluster,
    InputError,
    Job,
    Solution,
    instance_to_json,
    load_instance,
    save_instance,
)
from mropt.registry import get_method, methods, solve
from mropt.registry import verify_solution as verify

_STUDIES = ("load_experiment", "results_frame", "run_study", "write_report")


def __getattr__(name: str) -> Any:  # the gap-study API (mropt.harness.api), imported on first use
    if name in ("simulate", "load_run"):  # mropt.sim.run_result, imported on first use (the engine too)
        from mropt.sim import run_result

        return getattr(run_result, name)
    if name in _STUDIES:
        from mropt.harness import api

        return getattr(api, name)
    raise AttributeError(f"module 'mropt' has no attribute {name!r}")


__all__ = [
    "AdmissionInstance",
    "Cluster",
    "InputError",
    "Job",
    "Solution",
    "__version__",
    "generate_admission",
    "generate_fairness",
    "generate_priority",
    "get_method",
    "import_alibaba",
    "import_swim",
    "instance_to_json",
    "load_experiment",
    "load_instance",
    "load_run",
    "methods",
    "results_frame",
    "run_study",
    "save_instance",
    "simulate",
    "to_admission",
    "to_workload",
    "solve",
    "verify",
    "write_report",
]
