"""The exact fairness methods: name, summary and parameters, each function imported on first use.

``mropt.fairness.exact`` imports OR-Tools (and through its CP-SAT, pandas) and PuLP at its top,
and ``mropt.fairness`` is imported by every simulation (the ``drf`` and ``ddrf`` policies import
:mod:`mropt.fairness.drf`): registered by name (:func:`mropt.registry.register_lazy`, as
``mropt.admission.table``), the module is imported when one of these methods runs. ``drf``
(:mod:`mropt.fairness.drf`, no solver) registers itself. The order here is the order ``mropt
methods`` lists them in, after ``drf`` (a contract).
"""

from __future__ import annotations

from mropt.registry import THREADS, register_lazy

register_lazy(
    "drf-lp",
    implementation="mropt.fairness.exact:solve_lp",
    kind="fairness",
    summary="continuous DRF: leximin LP of weighted dominant shares (PuLP, CBC/CLP)",
    exact=True,
    relaxation=True,
    params={"threads": THREADS},
)
register_lazy(
    "drf-milp",
    implementation="mropt.fairness.exact:solve_milp",
    kind="fairness",
    summary="integer DRF: leximin MILP of weighted dominant shares (PuLP, CBC)",
    exact=True,
    params={"threads": THREADS},
)
register_lazy(
    "drf-cpsat",
    implementation="mropt.fairness.exact:solve_cpsat",
    kind="fairness",
    summary="integer DRF: leximin of weighted dominant shares (OR-Tools CP-SAT)",
    exact=True,
    params={"threads": THREADS},
)
