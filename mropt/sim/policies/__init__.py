"""The simulator's policies; each module registers one (``mropt policies`` lists them).

Registration order is the listing order of ``mropt policies``.
"""

# isort: off
from mropt.sim.policies import fifo  # noqa: F401
from mropt.sim.policies import fair  # noqa: F401
from mropt.sim.policies import capacity  # noqa: F401
# isort: on
