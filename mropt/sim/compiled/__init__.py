"""The simulator's compiled core (numba; issue 32): runs of the plain rules over arrays, for speed only.

:mod:`mropt.sim.compiled.drf_core` is ``drf`` in event mode as one compiled loop,
:mod:`mropt.sim.compiled.drf_engine` runs a built :class:`~mropt.sim.engine.Simulation` by it,
:mod:`mropt.sim.compiled.rounding` rounds to 12 significant digits as ``format`` does (the DRF key).
Every decision is the Python engine's: ``tests/sim/test_compiled_drf.py`` compares the two.
"""
