"""The simulator's policies; each module registers one (``mropt policies`` lists them).

Registration order is the listing order of ``mropt policies``.
"""

# isort: off
from mropt.sim.policies import fifo  # noqa: F401
from mropt.sim.policies import fair  # noqa: F401
from mropt.sim.policies import hei  # noqa: F401
from mropt.sim.policies import capacity  # noqa: F401
from mropt.sim.policies import seq  # noqa: F401
from mropt.sim.policies import amb  # noqa: F401
from mropt.sim.policies import dc  # noqa: F401
from mropt.sim.policies import minedf_wc  # noqa: F401
from mropt.sim.policies import mpsa  # noqa: F401
from mropt.sim.policies import drf  # noqa: F401
from mropt.sim.policies import ddrf  # noqa: F401  (ddrf, delay: after drf, which they build on)
# isort: on
