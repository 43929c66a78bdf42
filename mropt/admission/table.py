"""The admission methods: name, summary and parameters of each, its function imported on first use.

``mropt methods`` lists these, and ``mropt solve --param``, experiment files and ``mropt gap
--check`` check parameters against them, without importing a method's module: the exact
methods' modules import OR-Tools (and, through its CP-SAT, pandas) or PuLP at their top, and
``mropt.admission`` is imported by every simulation (the ``seq`` and ``amb`` policies), where
they cost about half a second per process. Each entry names its function
(``"mropt.admission.<module>:<function>"``); :func:`mropt.registry.register_lazy` imports the
module when the method runs or its ``func`` is read (``tests/admission/test_lazy_methods.py``).
The order of this file is the order ``mropt methods`` lists them in (a contract).

The report panel of the kind (AMB Figures 7-9, :mod:`mropt.admission.report_panels`, which
imports pandas) is registered here the same way: its functions are imported when a report
draws it.
"""

from __future__ import annotations

from typing import Any

from mropt.registry import THREADS, Param, ReportPanel, register_lazy, register_report_panel

#: Orders of phi the beam variant ``amb-beam16`` keeps per step (AMB sec. 4.2; :mod:`mropt.admission.amb`),
#: and the beam of the exact methods' warm start (benchmarks/bench_amb.py).
DEFAULT_BEAM = 16
#: Name of the registered beam variant.
BEAM_VARIANT = f"amb-beam{DEFAULT_BEAM}"
#: The ways ``amb`` can keep phi with ``beam=0`` (:mod:`mropt.admission.amb`'s docstring).
SEARCHES = ("oracle", "enumerate")
#: The ``dominance`` parameter of the exact methods (:mod:`mropt.admission.exact_benders`' docstring).
DOMINANCE = Param(bool, True, "dominance rows x_j <= x_i (job i no harder than j, worth no less): keep an optimum")

_HERE = "mropt.admission"

register_lazy(
    "amb",
    implementation=f"{_HERE}.amb:amb",
    kind="admission",
    summary="AMB static part (Algorithm 1): score order, every valid order kept (Theorems 3-4 pruning); "
    "honours --time-limit",
    params={
        "beam": Param(
            int,
            0,
            "0 (default): every valid order, Algorithm 1 exactly; K > 0 keeps K orders per step, "
            f"a beam variant (label it, or use {BEAM_VARIANT})",
            minimum=0,
        ),
        "search": Param(
            str,
            "oracle",
            "with beam 0: 'oracle' keeps the orders implicitly (an exact "
            "set-feasibility test, same answer), 'enumerate' lists them (exponential)",
            choices=SEARCHES,
        ),
    },
)
register_lazy(
    BEAM_VARIANT,
    implementation=f"{_HERE}.amb:amb_beam",
    kind="admission",
    summary=f"AMB Algorithm 1 with a beam: at most {DEFAULT_BEAM} valid orders kept per step (not the paper's "
    "AMB: a cut can lose jobs)",
    params={"beam": Param(int, DEFAULT_BEAM, "valid orders kept per step", minimum=1)},
)
register_lazy(
    "edf-greedy",
    implementation=f"{_HERE}.baselines:edf_greedy",
    kind="admission",
    summary="accept jobs in deadline order while the SEQ plan stays valid (baseline)",
)
register_lazy(
    "amb-online",
    implementation=f"{_HERE}.online:amb_online",
    kind="admission",
    summary="AMB dynamic part: jobs arrive by submit time, scored per batch and inserted where Theorems 3-4 allow",
    params={
        "beam": Param(
            int,
            0,
            "valid orders kept by the static part for the first batch (0, the default: "
            f"all, Algorithm 1 exactly; K > 0: a beam variant, as {BEAM_VARIANT})",
            minimum=0,
        )
    },
)
for _backend, _name in (("cbc", "CBC"), ("highs", "HiGHS")):
    register_lazy(
        f"milp-{_backend}",
        implementation=f"{_HERE}.milp:milp_{_backend}",
        kind="admission",
        exact=True,
        params={"threads": THREADS, "dominance": DOMINANCE},
        summary=f"exact SEQ optimum: Benders with a {_name} master MILP (PuLP) and an order oracle",
    )
register_lazy(
    "ideal",
    implementation=f"{_HERE}.bounds:ideal",
    kind="admission",
    bound=True,
    summary="Ideal upper bound of AMB eq. 4 (fractional knapsack on STC)",
)
register_lazy(
    "bound-lp",
    implementation=f"{_HERE}.bounds:bound_lp",
    kind="admission",
    bound=True,
    params={"threads": THREADS},
    summary="upper bound: LP relaxation of the exact methods' master (energy windows, pair conflicts)",
)
register_lazy(
    "bound-energy",
    implementation=f"{_HERE}.bounds:bound_energy",
    kind="admission",
    bound=True,
    params={"threads": THREADS},
    summary="upper bound: 0-1 energy-window knapsack (never weaker than Ideal)",
)
register_lazy(
    "cpsat",
    implementation=f"{_HERE}.cpsat:cpsat",
    kind="admission",
    exact=True,
    params={
        "threads": THREADS,
        "weight_bits": Param(
            int,
            40,
            "benefit grid of the CP-SAT master: the largest benefit is about 2**weight_bits units",
            minimum=8,
            maximum=52,
        ),
        "dominance": DOMINANCE,
    },
    summary="exact SEQ optimum: Benders with a CP-SAT master and an order oracle",
)
register_lazy(
    "cpsat-direct",
    implementation=f"{_HERE}.cpsat_direct:cpsat_direct",
    kind="admission",
    exact=True,
    params={"threads": THREADS, "dominance": DOMINANCE},
    summary="exact SEQ optimum: one CP-SAT model (map intervals, pair order, Horn's condition as chains)",
)
register_lazy(
    "cpsat-portfolio",
    implementation=f"{_HERE}.portfolio:cpsat_portfolio",
    kind="admission",
    exact=True,
    params={
        "threads": THREADS,
        "dominance": DOMINANCE,
        "probe_iterations": Param(int, 25, "master solves of the Benders probe before the direct model", minimum=0),
        "probe_dtime": Param(
            float, 5.0, "CP-SAT deterministic seconds of master search in the Benders probe", minimum=0.0
        ),
        "direct_max_jobs": Param(
            int, 120, "largest number of candidate jobs for which the direct model is built", minimum=0
        ),
        "direct_dtime": Param(
            float, 5.0, "CP-SAT deterministic seconds of the direct model (0: until the time limit)", minimum=0.0
        ),
        "max_dtime": Param(
            float, 0.0, "CP-SAT deterministic seconds of the whole run (0: no limit but the time limit)", minimum=0.0
        ),
    },
    summary="exact SEQ optimum: Benders (cpsat) and the direct CP-SAT model (cpsat-direct) sharing plans, cuts, bounds",
)
register_lazy(
    "slots-cpsat",
    implementation=f"{_HERE}.slots:slots_cpsat",
    kind="admission",
    exact=True,
    params={"threads": THREADS, "max_tasks": Param(int, 400, "refuse instances with more tasks than this", minimum=1)},
    summary="slot-level exact admission (M map, R reduce slots, non-preemptive tasks) with CP-SAT",
)


def _figure_data(rows: Any) -> Any:
    from mropt.admission.report_panels import figure_data

    return figure_data(rows)


def _plot_figures(table: Any) -> Any:
    from mropt.admission.report_panels import plot_figures

    return plot_figures(table)


AMB_FIGURES = register_report_panel(
    "admission", ReportPanel(name="amb_figures", title="AMB Figures 7-9", table=_figure_data, plot=_plot_figures)
)
