"""The simulator's compiled core (numba; issue 32): runs of the plain rules over arrays, for speed only.

:mod:`mropt.sim.compiled.drf_core` is ``drf``, ``ddrf`` and ``delay`` in event mode as one compiled loop
(its heaps and stacks: :mod:`~mropt.sim.compiled.drf_index`; run from a built simulation by
:mod:`~mropt.sim.compiled.drf_engine`); :mod:`mropt.sim.compiled.fair_core` and
:mod:`~mropt.sim.compiled.capacity_core` are ``fair`` and ``capacity`` in heartbeat mode (their orders:
:mod:`~mropt.sim.compiled.fair_order`, :mod:`~mropt.sim.compiled.capacity_order`; their reduce sides,
on map and reduce slots: :mod:`~mropt.sim.compiled.fair_reduce`, :mod:`~mropt.sim.compiled.capacity_reduce`; their engines
:mod:`~mropt.sim.compiled.fair_engine`, :mod:`~mropt.sim.compiled.capacity_engine`, sharing
:mod:`~mropt.sim.compiled.heartbeat_engine`);
:mod:`~mropt.sim.compiled.driver` drives a loop and leaves the simulation as the Python engine would,
:mod:`~mropt.sim.compiled.rows` makes the utilisation rows of an instant, :mod:`~mropt.sim.compiled.rounding`
rounds to 12 significant digits as ``format`` does (the DRF key), :mod:`~mropt.sim.compiled.numba_cache`
keeps numba's on-disk cache of them true to every source of the package;
:mod:`~mropt.sim.compiled.fifo_core` is ``fifo`` in event mode on map and reduce slots (run by
:mod:`~mropt.sim.compiled.fifo_engine`).
Every decision is the Python engine's: ``tests/sim/test_compiled_drf.py``, ``test_compiled_delay.py``,
``test_compiled_fair*.py``, ``test_compiled_capacity*.py`` and ``test_compiled_fifo.py`` compare the two.
"""

from mropt.sim.compiled import numba_cache

# numba's cache of the package's compiled functions keyed on all its sources (a no-op without numba),
# before any of them is decorated
numba_cache.install()
