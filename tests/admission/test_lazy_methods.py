"""The admission methods are registered by name (``mropt.admission.table``): a method's module,
with the solvers it imports, is imported when the method runs, not when the package is.

``mropt simulate`` imports ``mropt.admission`` (the ``seq`` and ``amb`` policies), and the
package used to import every method's module, so every simulation (and every Dask worker's task)
loaded OR-Tools, PuLP and pandas. The listings ``mropt methods [--params]`` say what they said.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fresh_interpreter import loaded_after

from mropt.registry import get_method

from cli_capture import run_cli

#: the admission modules that import OR-Tools, PuLP or pandas at their top (or import one that does)
SOLVER_MODULES = (
    "mropt.admission.exact_seqcp",
    "mropt.admission.exact_master",
    "mropt.admission.time_grid",
    "mropt.admission.milp",
    "mropt.admission.bounds",
    "mropt.admission.cpsat",
    "mropt.admission.cpsat_direct",
    "mropt.admission.portfolio",
    "mropt.admission.slots",
    "mropt.admission.report_panels",
)
HEAVY = ("ortools", "pulp", "pandas")

#: ``mropt methods --kind admission`` as it was when every module registered its own methods
LISTING = """\
amb              admission  heuristic  AMB static part (Algorithm 1): score order, every valid order kept (Theorems 3-4 pruning); honours --time-limit [params: beam, search]
amb-beam16       admission  heuristic  AMB Algorithm 1 with a beam: at most 16 valid orders kept per step (not the paper's AMB: a cut can lose jobs) [params: beam]
edf-greedy       admission  heuristic  accept jobs in deadline order while the SEQ plan stays valid (baseline)
amb-online       admission  heuristic  AMB dynamic part: jobs arrive by submit time, scored per batch and inserted where Theorems 3-4 allow [params: beam]
milp-cbc         admission  exact      exact SEQ optimum: Benders with a CBC master MILP (PuLP) and an order oracle [params: threads, dominance]
milp-highs       admission  exact      exact SEQ optimum: Benders with a HiGHS master MILP (PuLP) and an order oracle [params: threads, dominance]
ideal            admission  bound      Ideal upper bound of AMB eq. 4 (fractional knapsack on STC)
bound-lp         admission  bound      upper bound: LP relaxation of the exact methods' master (energy windows, pair conflicts) [params: threads]
bound-energy     admission  bound      upper bound: 0-1 energy-window knapsack (never weaker than Ideal) [params: threads]
cpsat            admission  exact      exact SEQ optimum: Benders with a CP-SAT master and an order oracle [params: threads, weight_bits, dominance]
cpsat-direct     admission  exact      exact SEQ optimum: one CP-SAT model (map intervals, pair order, Horn's condition as chains) [params: threads, dominance]
cpsat-portfolio  admission  exact      exact SEQ optimum: Benders (cpsat) and the direct CP-SAT model (cpsat-direct) sharing plans, cuts, bounds [params: threads, dominance, probe_iterations, probe_dtime, direct_max_jobs, direct_dtime, max_dtime]
slots-cpsat      admission  exact      slot-level exact admission (M map, R reduce slots, non-preemptive tasks) with CP-SAT [params: threads, max_tasks]
"""  # noqa: E501

#: a few lines of ``mropt methods --kind admission --params`` as they were (types, ranges, defaults)
PARAM_LINES = (
    "beam: an integer >= 0: 0 (default): every valid order, Algorithm 1 exactly; K > 0 keeps K orders per "
    "step, a beam variant (label it, or use amb-beam16)",
    "search: one of oracle, enumerate; default 'oracle': with beam 0: 'oracle' keeps the orders implicitly "
    "(an exact set-feasibility test, same answer), 'enumerate' lists them (exponential)",
    "weight_bits: an integer in [8, 52]; default 40: benefit grid of the CP-SAT master: the largest benefit "
    "is about 2**weight_bits units",
    "dominance: true or false; default True: dominance rows x_j <= x_i (job i no harder than j, worth no "
    "less): keep an optimum",
    "max_tasks: an integer >= 1; default 400: refuse instances with more tasks than this",
)


def _fresh(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it sets ``result``; the modules of interest it left loaded."""
    loaded, result = loaded_after(code, SOLVER_MODULES + HEAVY)
    return {"loaded": loaded, "result": result}


def _simulate(path: Path) -> str:
    """A simulation from the command line (every policy is registered: seq and amb import mropt.admission)."""
    return (
        "from mropt.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    code = main(['simulate', {str(path)!r}, '--policy', 'fifo', '--no-progress', '--json'])\n"
        "result = [code, json.loads(out.getvalue())['jobs']]\n"
    )


@pytest.fixture(scope="module")
def workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lazy") / "w.json"
    assert run_cli("generate", "workload", "--jobs", "4", "--nodes", "2", "-o", path).code == 0
    return path


def test_a_simulation_imports_no_admission_solver_module(workload: Path) -> None:
    found = _fresh(_simulate(workload))
    assert found["result"] == [0, 4]
    assert not set(found["loaded"]) & set(SOLVER_MODULES), found["loaded"]


def test_a_simulation_imports_no_solver_nor_pandas(workload: Path) -> None:
    found = _fresh(_simulate(workload))
    assert found["result"] == [0, 4]
    assert not set(found["loaded"]) & set(HEAVY), found["loaded"]


def test_the_listing_and_parameter_checks_import_no_solver_and_a_run_imports_its_module() -> None:
    code = (
        "from mropt.registry import get_method, methods\n"
        "from mropt.model.errors import InputError\n"
        "listed = [m.name for m in methods('admission')]\n"
        "get_method('cpsat').check_params({'weight_bits': 40})\n"
        "before = sorted(m for m in sys.modules if m == 'mropt.admission.cpsat')\n"
        "func = get_method('cpsat').func\n"
        "result = [listed[:2], before, func.__module__, func.__name__]\n"
    )
    found = _fresh(code)
    listed, before, module, name = found["result"]
    assert listed == ["amb", "amb-beam16"] and before == []
    assert (module, name) == ("mropt.admission.cpsat", "cpsat")
    assert "mropt.admission.cpsat" in found["loaded"]


def test_the_listings_say_what_they_said() -> None:
    listed = run_cli("methods", "--kind", "admission")
    assert listed.code == 0 and listed.out == LISTING
    params = run_cli("methods", "--kind", "admission", "--params")
    assert params.code == 0
    lines = [line.strip() for line in params.out.splitlines()]
    for line in PARAM_LINES:
        assert line in lines, line


def test_a_lazy_method_solves_and_names_its_function_by_module() -> None:
    import mropt
    from mropt.registry import register_lazy

    inst = mropt.generate_admission(seed=3, jobs=6)
    sol = mropt.solve(inst, "edf-greedy")
    assert sol.status == "feasible" and mropt.verify(inst, sol).ok
    assert get_method("edf-greedy").implementation == "mropt.admission.baselines:edf_greedy"
    with pytest.raises(ValueError, match="'package.module:function', got 'mropt.admission.baselines'"):
        register_lazy("test-bad-path", implementation="mropt.admission.baselines", kind="admission", summary="-")


def test_a_method_whose_module_fails_to_import_is_an_error_solution_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``registry.solve`` promises a recorded error for a solver's failure; a lazily registered
    module that cannot be imported (a solver package not installed) is one."""
    import mropt
    from mropt import registry

    monkeypatch.setitem(
        registry._METHODS,
        "test-missing-solver",
        registry.Method(
            name="test-missing-solver",
            kind="admission",
            summary="-",
            implementation="mropt_no_such_solver_package:solve",
        ),
    )
    sol = mropt.solve(mropt.generate_admission(seed=3, jobs=4), "test-missing-solver")
    assert sol.status == "error"
    assert sol.details["error"].startswith("ModuleNotFoundError: No module named 'mropt_no_such_solver_package'")


def test_the_amb_report_panel_is_registered_once_after_its_module_is_imported() -> None:
    """The panel is registered by ``admission/table.py``; drawing it imports ``report_panels``,
    which registered it a second time, so a later report showed it twice."""
    import mropt.admission.report_panels  # noqa: F401  (as drawing the panel does)
    from mropt.registry import report_panels

    assert [p.name for p in report_panels("admission")] == ["amb_figures"]
