"""Max-benefit admission of deadline MapReduce jobs (the AMB paper).

Importing this package registers its methods (``mropt methods`` lists them), its report panel
and its independent ``verify``: the methods by name, summary and parameters
(:mod:`mropt.admission.table`), each method's module, with the solvers it imports, imported
when the method runs. So the simulator's ``seq`` and ``amb`` policies, which import this
package, load neither OR-Tools nor PuLP nor pandas.
"""

from mropt.admission import table  # noqa: F401  (registers the methods and the report panel)
from mropt.admission.objective import evaluate_plan, total_benefit
from mropt.admission.seq import SeqSchedule, evaluate
from mropt.admission.verify import Verdict, verify
from mropt.registry import register_verifier

register_verifier("admission", verify)

__all__ = ["SeqSchedule", "Verdict", "evaluate", "evaluate_plan", "total_benefit", "verify"]
