"""Max-benefit admission of deadline MapReduce jobs (the AMB paper).

Importing this package registers its methods (``mropt methods`` lists them) and its
independent ``verify``.
"""

from mropt.admission import amb, baselines, bounds, cpsat, milp, online, slots  # noqa: F401  (registers methods)
from mropt.admission.objective import evaluate_plan, total_benefit
from mropt.admission.seq import SeqSchedule, evaluate
from mropt.admission.verify import Verdict, verify
from mropt.registry import register_verifier

register_verifier("admission", verify)

__all__ = ["SeqSchedule", "Verdict", "evaluate", "evaluate_plan", "total_benefit", "verify"]
