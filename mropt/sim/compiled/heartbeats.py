"""Heartbeat mode's two tests, as the heartbeat loops use them (:mod:`mropt.sim.compiled.fair_core`,
:mod:`~mropt.sim.compiled.capacity_core`; numba, inlined where they are called: speed only).

The rules are :class:`mropt.sim.heartbeat_offers.HeartbeatOffers`' ``_room`` (:func:`room` on a cluster of
map slots whose tasks all have demands; :func:`room_two` on map and reduce slots, with demands or
without) and ``_next_beat``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mropt.sim.compiled.fair_order import any_fits

_FIT_EPS = 1e-9  # mropt.sim.demand_index._EPS


@njit(cache=True, inline="always")
def room(node, runnable, fslot, free0, free1, c_d0, fit, fit_size):
    """``_room``: a runnable task, a free map slot on ``node``, and a pending task whose demand fits its
    free resources (``DemandIndex.any_fits``: the fit tree of :mod:`mropt.sim.compiled.fair_order`)."""
    return (
        runnable > 0
        and fslot[node] > 0
        and any_fits(c_d0, fit, fit_size, free0[node] + _FIT_EPS, free1[node] + _FIT_EPS)
    )


@njit(cache=True, inline="always")
def next_beat(phase, now, interval):
    """``_next_beat``: the node's first heartbeat at or after ``now``, its ``phase`` plus whole intervals, or
    ``now`` where that sum rounds below it."""
    t = phase + max(np.ceil((now - phase) / interval), 0.0) * interval
    return t if t >= now else now


@njit(cache=True, inline="always")
def room_two(node, run_m, run_r, fslot, rslot, demands, free0, free1, c_d0, fit, fit_r, fit_size):
    """``_room`` on a cluster of map and reduce slots: a free slot of a type with runnable tasks, and
    (``demands``: tasks with demands) a pending task of a type with a free slot on ``node`` whose demand
    fits its free resources (``DemandIndex.any_fits``: the fit trees of the map and of the reduce tasks,
    :mod:`mropt.sim.compiled.fair_order`); without demands the slot counts alone."""
    if not ((run_m > 0 and fslot[node] > 0) or (run_r > 0 and rslot[node] > 0)):
        return False
    if not demands:
        return True
    limit0 = free0[node] + _FIT_EPS
    limit1 = free1[node] + _FIT_EPS
    return (fslot[node] > 0 and any_fits(c_d0, fit, fit_size, limit0, limit1)) or (
        run_r > 0 and rslot[node] > 0 and any_fits(c_d0, fit_r, fit_size, limit0, limit1)
    )
