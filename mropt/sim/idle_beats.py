"""The next heartbeats of every idle node at once, when new work appears (heartbeat mode, speed only).

In Hadoop 1.x every TaskTracker heartbeats on its own clock (``TaskTracker.offerService``: the
next heartbeat ``heartbeatInterval`` after the last, the interval the JobTracker returns,
``JobTracker.getNextHeartbeatInterval``); the simulator gives node i the phase
``interval * i / nodes`` and heartbeats at that phase plus whole intervals
(:mod:`mropt.sim.offers`), and schedules a node's next heartbeat only while it has room for
pending work. When new work appears, every idle node with room gets one
(``HeartbeatOffers._schedule_all``): on the SWIM day under ``fair`` 7,107 such passes, one Python
step a node with a free slot (its first 3,000 jobs: 578 of the 600 nodes a pass, 353 scheduled).

:func:`schedule_idle` makes such a pass with numpy instead: the nodes up, not scheduled, with a
free slot of a type with pending work (the test of ``_schedule_all``), and their first heartbeats
at or after now, ``phase + max(ceil((now - phase) / interval), 0) * interval``, computed in
float64 with the same operations in the same order as the Python expression (IEEE division and
product, ``ceil`` exact, the integer ``k`` a float: the same doubles; ``k`` is never below 0, as
``0 <= phase < interval`` and ``now >= 0``, but the ``max`` is kept as the rule writes it). They
are held in bulk (:class:`~mropt.sim.lone_beats.HeldBeats`), except a node whose time is an instant
the queue holds or the lone heartbeat's running (a pass at a node's own heartbeat time: the node
whose phase falls then), whose heartbeat goes into the queue, in node order, as ``HeldBeats.hold``
sends it. When a time is held already or two of the pass's times are equal (phases that share a
time: never on the SWIM day), or the nodes are few (under :data:`MIN_NODES`), the pass goes node
by node as ``_schedule_all`` does. The same heartbeats are held at the same times and the same go
into the queue in the same order, so the event log is the same
(``tests/sim/test_sim_idle_beats.py``; ``HeartbeatOffers.plain`` turns it off).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from mropt.sim.offers import HeartbeatOffers

#: a pass over fewer nodes goes node by node (numpy's calls cost more than a few Python steps)
MIN_NODES = 32


class IdleBeats:
    """:func:`schedule_idle`'s arrays, made once a run: the phases and a view of the scheduled flags."""

    __slots__ = ("phases", "pending")

    def __init__(self, phases: list[float], pending: bytearray) -> None:
        self.phases = np.array(phases, dtype=np.float64)
        #: ``HeartbeatOffers._pending`` itself (a view: a write here is a write there)
        self.pending = np.frombuffer(pending, dtype=np.uint8)

    def nodes(self, offers: HeartbeatOffers, maps: bool, reduces: bool) -> np.ndarray:
        """The nodes ``_schedule_all`` would schedule now, in node order: up, not scheduled, with a
        free slot of a type with pending work (``maps``, ``reduces``)."""
        sim = offers.sim
        free_map, free_reduce = sim.free
        if maps:
            room = np.array(free_map, dtype=np.int64) > 0
            if reduces:
                room |= np.array(free_reduce, dtype=np.int64) > 0
        else:
            room = np.array(free_reduce, dtype=np.int64) > 0
        room &= self.pending == 0
        node_up = sim.node_up
        if not all(node_up):
            room &= np.array(node_up, dtype=bool)
        return np.flatnonzero(room)


def schedule_idle(offers: HeartbeatOffers, maps: bool, reduces: bool) -> list[int] | None:
    """Hold the next heartbeat of every node ``_schedule_all`` would schedule (module docstring); None
    when done, else those nodes, in node order, for the caller to schedule one by one (fewer than
    :data:`MIN_NODES`, or a time collides), nothing done."""
    idle = offers._idle
    held = offers._held
    assert idle is not None and held is not None
    found = idle.nodes(offers, maps, reduces)
    if len(found) < MIN_NODES:
        return found.tolist()
    sim = offers.sim
    interval = sim.heartbeat_interval
    phase = idle.phases[found]
    times = (phase + np.maximum(np.ceil((sim.now - phase) / interval), 0.0) * interval).tolist()
    nodes = found.tolist()
    new = set(times)
    if len(new) != len(times) or not held.at.keys().isdisjoint(new):
        return nodes
    idle.pending[found] = 1
    # a time the queue holds (the instant being run: a node whose heartbeat falls now), or the lone
    # heartbeat's running: that node's heartbeat goes into the queue (``HeldBeats.hold``), in node order
    clash = held.queued & new
    if held.open is not None and held.open in new:
        clash.add(held.open)
    if clash:
        at = sorted(times.index(time) for time in clash)
        for i in at:
            offers.sim.push_heartbeat(times[i], nodes[i])
        for i in reversed(at):
            del times[i], nodes[i]
    held.at.update(zip(times, nodes))
    held.add(times)
    return None


__all__ = ["IdleBeats", "MIN_NODES", "schedule_idle"]
