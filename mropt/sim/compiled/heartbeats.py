"""Heartbeat mode's two tests, as the heartbeat loops use them (:mod:`mropt.sim.compiled.fair_core`,
:mod:`~mropt.sim.compiled.capacity_core`; numba, inlined where they are called: speed only).

The rules are :class:`mropt.sim.heartbeat_offers.HeartbeatOffers`' ``_room`` (:func:`room` on a cluster of
map slots whose tasks all have demands; :func:`room_two` on map and reduce slots, with demands or
without) and ``_next_beat``; :func:`lone_next` is :mod:`mropt.sim.lone_beats`' rule of when the Python engine
runs a heartbeat outside its queue (clusters without demands).
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


#: a heartbeat's sequence number in the event heap is its push order plus this (the loops' ``HEARTBEAT_SEQ``)
_HEARTBEAT_SEQ = 1 << 60


@njit(cache=True, inline="always")
def lone_next(n_ev, ai, stalled, n_free, et, es, submit, arrivals, until, n_jobs, in_flight):
    """Whether the next instant is one the Python engine runs as a lone heartbeat on a cluster without
    demands (:class:`mropt.sim.lone_beats.HeldBeats`: a heartbeat held, due before the queue's next
    instant, which looks at the watch only after its instants): a heartbeat alone at its time (no
    completion or arrival there, no other heartbeat: two at one time go into the queue), not after
    ``until``, while the queue holds something (a running batch's completion or an arrival: with the
    queue empty, the earliest held heartbeat goes into it). ``n_ev``, ``ai``, ``stalled`` and ``n_free``
    are the loop's registers: the heap's size, the next arrival, the run stalled, the free batch slots."""
    if n_ev == 0 or es[0] < _HEARTBEAT_SEQ:
        return False
    t = et[0]
    if t > until or (n_ev > 1 and et[1] == t) or (n_ev > 2 and et[2] == t):
        return False
    arriving = ai < n_jobs and stalled == 0
    if arriving and submit[arrivals[ai]] <= t:
        return False
    return arriving or n_free < in_flight  # (a batch slot taken: a completion in the heap)
