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

Every name is imported on first use: ``import mropt`` loads no solver, numpy or pandas
(``mropt.registering`` has the registry import the problem packages on its first lookup).
"""

from typing import Any

from mropt import registering
from mropt._version import __version__

#: the API: each name -> (its module, its name there); imported on first use, so ``import mropt``
#: loads no solver, numpy or pandas (``mropt --version`` is fast; tests/test_startup.py)
_API = {
    "AdmissionInstance": ("mropt.model", "AdmissionInstance"),
    "Cluster": ("mropt.model", "Cluster"),
    "InputError": ("mropt.model", "InputError"),
    "Job": ("mropt.model", "Job"),
    "Solution": ("mropt.model", "Solution"),
    "instance_to_json": ("mropt.model", "instance_to_json"),
    "load_instance": ("mropt.model", "load_instance"),
    "save_instance": ("mropt.model", "save_instance"),
    "generate_admission": ("mropt.instances.admission_gen", "generate_admission"),
    "generate_fairness": ("mropt.instances.fairness_gen", "generate_fairness"),
    "generate_priority": ("mropt.instances.priority_gen", "generate_priority"),
    "to_admission": ("mropt.instances.workload_convert", "to_admission"),
    "to_workload": ("mropt.instances.workload_convert", "to_workload"),
    "import_alibaba": ("mropt.importers.alibaba", "import_alibaba"),
    "import_swim": ("mropt.importers.swim", "import_swim"),
    "get_method": ("mropt.registry", "get_method"),
    "methods": ("mropt.registry", "methods"),
    "solve": ("mropt.registry", "solve"),
    "verify": ("mropt.registry", "verify_solution"),
    "load_experiment": ("mropt.harness.api", "load_experiment"),
    "results_frame": ("mropt.harness.api", "results_frame"),
    "run_study": ("mropt.harness.api", "run_study"),
    "write_report": ("mropt.harness.api", "write_report"),
    "simulate": ("mropt.sim.run_result", "simulate"),
    "load_run": ("mropt.sim.run_result", "load_run"),
}


def _register_problem_packages() -> None:
    """The problem packages register their methods, verifiers and report panels on import."""
    from mropt import admission, fairness, priority  # noqa: F401


registering.provide(_register_problem_packages)


def __getattr__(name: str) -> Any:
    """An API name, its module imported on first use (then kept as an attribute of ``mropt``);
    a subpackage (``mropt.sim``) is imported as ``import mropt`` once imported it."""
    import importlib
    import importlib.util

    if name in _API:
        module, attr = _API[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'mropt' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The API (``__all__``): what ``dir(mropt)`` and tab completion show."""
    return sorted(__all__)


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
