"""The codes of a task's state in ``Stage.state`` (a ``bytearray``; ``mropt.sim.state``).

A module of their own so that :mod:`mropt.sim.locality_stacks`, which ``state`` imports,
reads the same codes without importing ``state``.
"""

#: task states in ``Stage.state``
PENDING, RUNNING, DONE = 0, 1, 2

__all__ = ["DONE", "PENDING", "RUNNING"]
