"""Multi-priority slot allocation (the MPSA paper, ``docs/papers.md``).

Sec. 3's Jackson network (:mod:`~mropt.priority.queueing`), sec. 4.2's AR(1) forecast
(:mod:`~mropt.priority.forecast`), Algorithm 1 of sec. 4.3 (``mpsa``,
:mod:`~mropt.priority.mpsa`) and the exact optimum of eq. 17 (``mpsa-exact``,
:mod:`~mropt.priority.exact`). Importing this package registers both methods.
"""

from mropt.priority import exact, mpsa  # noqa: F401  (registers methods)
from mropt.priority.forecast import PlanningLoad, ar1_forecast, lag1_autocorrelation, planning_load
from mropt.priority.queueing import (
    Routing,
    network_sojourn,
    priority_sojourn,
    routing_from_pattern_mix,
    routing_of,
    traffic_rates,
)
from mropt.priority.verify import Verdict, verify
from mropt.registry import register_verifier

register_verifier("priority", verify)

__all__ = [
    "PlanningLoad",
    "Routing",
    "Verdict",
    "ar1_forecast",
    "lag1_autocorrelation",
    "network_sojourn",
    "planning_load",
    "priority_sojourn",
    "routing_from_pattern_mix",
    "routing_of",
    "traffic_rates",
    "verify",
]
