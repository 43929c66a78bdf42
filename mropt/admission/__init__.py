"""Max-benefit admission of deadline MapReduce jobs (the AMB paper).

Importing this package registers its methods (``mropt methods`` lists them) and its
independent ``verify``.
"""

# The import order is the order `mropt methods` lists the methods in (a contract): keep it.
# isort: off
from mropt.admission import amb, baselines, online  # noqa: F401  (registers methods)
from mropt.admission import milp, bounds, cpsat, cpsat_direct, portfolio, slots  # noqa: F401  (registers methods)
from mropt.admission import report_panels  # noqa: F401  (registers the report panels)

# isort: on
from mropt.admission.objective import evaluate_plan, total_benefit
from mropt.admission.seq import SeqSchedule, evaluate
from mropt.admission.verify import Verdict, verify
from mropt.registry import register_verifier

register_verifier("admission", verify)

__all__ = ["SeqSchedule", "Verdict", "evaluate", "evaluate_plan", "total_benefit", "verify"]
