"""When the policy (and a speculation rule) is offered a node: the engine's two assignment modes.

* ``event`` (:class:`EventOffers`): after the events of an instant, the policy is offered every
  node whose capacity freed, in node order; when new work appeared (an accepted arrival, a
  stage made runnable, a task re-queued, a policy timer), every node with free capacity, or
  those the policy names (``Policy.new_work_nodes``) and the ones that freed. Nodes are offered
  only while tasks of a type they have room for are pending: idle nodes are never polled.
* ``heartbeat`` (:class:`~mropt.sim.heartbeat_offers.HeartbeatOffers`, its own module): Hadoop 1.x trackers report every ``max(3 s,
  ceil(nodes / 100) s)`` (JobTracker 1.0.3: ``getNextHeartbeatInterval`` with 100 heartbeats
  per second); node i's heartbeats fall at ``i / nodes`` of an interval plus whole intervals (or
  now, where that sum rounds below it).
  Only a node with free capacity while work of that type is pending has its next heartbeat
  scheduled; with task demands, only while some pending task fits its free resources
  (:class:`~mropt.sim.demand_index.DemandIndex`; capacity freeing on it, or new work, schedules
  it again). A run whose policy declines work at ``stall_limit`` heartbeats in a row while
  nothing else happens stops (``Simulation.stalled``).

Under a speculation rule (:mod:`mropt.sim.speculation`) the rule is offered the slots the
policy left: in event mode the nodes freed at an instant, and every node at a *speculation
tick*, which comes back every heartbeat interval while attempts run and a slot is free (so a
task that becomes a candidate later is seen without a node freeing); in heartbeat mode at each
heartbeat, after the policy (Hadoop's ``obtainNewMapTask`` tries a speculative task when it
has no new task to give).

Both modes have one interface for the engine: :meth:`Offers.freed` (capacity grew on a node),
:meth:`Offers.work_appeared`, :meth:`Offers.after_instant`, and the events they schedule,
:meth:`~mropt.sim.heartbeat_offers.HeartbeatOffers.beat` and :meth:`Offers.tick`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from mropt.sim.launch_runs import LaunchRuns
from mropt.sim.launch_runs import allowed as launch_runs_allowed
from mropt.sim.policy import Policy
from mropt.sim.state import MAP, REDUCE

if TYPE_CHECKING:
    from mropt.sim.engine import Simulation

#: a policy's offer run (``EventOffers._pass_runs``): (nodes, launch runs, the nodes with a free map slot
#: when ``nodes`` has others)
OfferRun = Callable[[Sequence[int], LaunchRuns, Sequence[int] | None], None]

# event classes (the order of simultaneous events, ``mropt.sim.engine``) and kinds
C_DONE, C_KILL, C_ARRIVE, C_DECIDE = 0, 1, 2, 3
EV_DONE, EV_DOWN, EV_UP, EV_ARRIVE, EV_TIMER, EV_HEARTBEAT, EV_SPECULATE = 0, 1, 2, 3, 4, 5, 6


def heartbeat_interval(n_nodes: int) -> float:
    """Hadoop 1.0.3 JobTracker: max(3 s, ceil(trackers / 100) s)."""
    return max(3.0, float(math.ceil(n_nodes / 100)))


class Offers:
    """What both modes share (module docstring): the new-work flag and the speculation rule's offers."""

    #: capacity grew on a node (its attempt ended, it came back up): offer it
    freed: Callable[[int], None]

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.spec = sim.speculation
        self.new_work = False
        self._spec_tick = False  # a speculation tick is scheduled (event mode)
        self._spec_all = False  # this instant is a tick: every node is offered to the rule

    def work_appeared(self, job: int | None) -> None:
        """Job ``job``'s pending tasks became runnable (None: a policy timer fired): offer the nodes."""
        self.new_work = True

    def start(self) -> None:
        """The run begins, its policy started (``Simulation._run`` reads :meth:`after_instant` next)."""

    def tick(self) -> None:
        """A speculation tick: every node with a free slot is offered to the rule at this instant."""
        self._spec_tick = False
        self._spec_all = True

    def after_instant(self) -> None:
        """The events of the instant are done: make the offers due."""

    def beat(self, node: int) -> None:
        """Node ``node``'s heartbeat (heartbeat mode: :meth:`HeartbeatOffers.beat`)."""

    def down(self, node: int) -> None:
        """The node went down: forget its pending offer."""

    def spec_room(self, node: int) -> bool:
        """Whether the rule may be offered the node: it is up with a free slot of a type that has running attempts."""
        sim = self.sim
        if not sim.node_up[node]:
            return False
        busy = sim.busy
        if sim.uses_slots:
            return (busy[MAP] > 0 and sim.free[MAP][node] > 0) or (busy[REDUCE] > 0 and sim.free[REDUCE][node] > 0)
        return busy[MAP] + busy[REDUCE] > 0


class EventOffers(Offers):
    """Event mode (module docstring)."""

    def __init__(self, sim: Simulation) -> None:
        super().__init__(sim)
        self._dirty: set[int] = set()  # nodes whose capacity freed at this instant
        self._held: set[int] = set()  # freed nodes a pass did not offer (see ``_pass``)
        self.freed = self._dirty.add
        # speed only (``plain`` turns both off): the room index, on slots for a policy that names no
        # nodes for new work, and launch runs for its offer run where the run allows them (``_pass``)
        self._room: set[int] | None = None
        self._map_room: set[int] | None = None  # (with an offer run: ``_pass_runs``)
        self._runs: LaunchRuns | None = None
        self._offer_run: OfferRun | None = None  # the policy's, once the run began (``start``)
        self._offer_nodes: Callable[[Sequence[int]], int] | None = None  # the policy's (``start``)
        self._whole_passes = not sim.uses_slots  # ``offer_nodes`` may be used (``plain`` turns it off)
        if sim.uses_slots and type(sim.policy).new_work_nodes is Policy.new_work_nodes:
            self._room = set(range(sim.n_nodes))
            if launch_runs_allowed(sim):
                self._map_room = set(self._room)
                self._runs = LaunchRuns(sim)
        if self.spec is None:  # (the pass alone: no call in between)
            self.after_instant = self._pass  # type: ignore[method-assign]

    def plain(self) -> None:
        """Run the plain pass only (every node when work appeared, each offered to ``assign``), as the
        equivalence tests do; also after :meth:`start` (which may have made ``_pass_runs`` the end
        of an instant)."""
        self._room = None
        self._map_room = None
        self._runs = None
        self._offer_run = None
        self._offer_nodes = None
        self._whole_passes = False
        if self.spec is None:
            self.after_instant = self._pass  # type: ignore[method-assign]

    def down(self, node: int) -> None:
        self._dirty.discard(node)

    def start(self) -> None:
        """With launch runs and a policy with an offer run, the end of an instant is :meth:`_pass_runs`
        itself (speed only: ``_pass`` would find the offer run and call it, two calls an instant).
        On a cluster without slots, a policy's ``offer_nodes`` is given a pass's nodes at once (``_pass``)."""
        if self._whole_passes:
            self._offer_nodes = getattr(self.sim.policy, "offer_nodes", None)
        offer_run: OfferRun | None = getattr(self.sim.policy, "offer_run", None)
        if self.spec is None and self._runs is not None and offer_run is not None:
            self._offer_run = offer_run
            self.after_instant = self._pass_runs  # type: ignore[method-assign]

    def after_instant(self) -> None:
        if self.spec is None:
            self._pass()
            return
        sim = self.sim
        freed: Sequence[int] = range(sim.n_nodes) if self._spec_all else sorted(self._dirty)
        self._spec_all = False
        self._pass()
        self._speculation_pass(freed)

    def _pass(self) -> None:
        """Offer the nodes whose capacity freed, or every node when work appeared.

        A policy may name fewer nodes for new work (``Policy.new_work_nodes``); nodes that
        freed capacity but were not offered (no work to give then, or no free slot of a type
        with work) are *held* and offered at the next such pass, so such a policy still sees
        every node whose capacity grew.

        Speed only, no decision changes (``tests/sim/test_sim_fifo_runs.py``): the *room index*
        (``_room``, on slots when the policy names no nodes), the nodes that a pass after new work
        visits instead of every node. It is a superset of the nodes with a free slot: a node
        joins when its capacity frees (every such node passes
        through ``_dirty``, and only an attempt's end or a node coming up adds a slot) and
        leaves at a pass after new work when it has none, which the plain pass would skip (no
        free slot of a type with work). What the plain pass would add to ``held`` then is never
        read (``held`` is read only for a policy that names nodes). With an offer run,
        :meth:`_pass_runs`. On a cluster without slots, a policy's ``offer_nodes(nodes)`` (``drf``'s:
        its per-offer set-up made once a pass) replaces the loop over the nodes: it offers each node
        that is up, in order, as ``assign``, while a task is runnable, and says how many nodes it went
        through (the others are held, as the loop holds them).
        """
        sim = self.sim
        policy = sim.policy
        runnable = sim.runnable
        free_map, free_reduce = sim.free
        node_up = sim.node_up
        uses_slots = sim.uses_slots
        assign = policy.assign
        dirty = self._dirty
        held = self._held
        room = self._room
        offer_nodes = self._offer_nodes
        while dirty or self.new_work:
            if room is not None:
                room.update(dirty)
            if self.new_work:
                self.new_work = False
                chosen = policy.new_work_nodes()
                if chosen is None:
                    if room is not None:  # the nodes with a free slot, in node order
                        nodes: Sequence[int] = sorted([n for n in room if free_map[n] > 0 or free_reduce[n] > 0])
                        room.clear()
                        room.update(nodes)
                    else:
                        nodes = range(sim.n_nodes)
                    held.clear()
                else:
                    nodes = sorted(dirty.union(held, chosen))
                    held.clear()
                dirty.clear()
            else:
                nodes = sorted(dirty)
                dirty.clear()
            if offer_nodes is not None:  # (no slots, so ``room`` is None)
                went = offer_nodes(nodes)
                if went < len(nodes):  # nothing runnable: as the loop below
                    dirty.clear()
                    held.update(nodes[went:])
                    return
                continue
            for i, node in enumerate(nodes):
                maps, reduces = runnable
                if maps + reduces == 0:
                    if room is not None:
                        room.update(dirty)
                    dirty.clear()
                    held.update(nodes[i:])
                    return
                if not node_up[node]:
                    continue
                if uses_slots and not ((maps and free_map[node] > 0) or (reduces and free_reduce[node] > 0)):
                    held.add(node)
                    continue
                assign(node)

    def _pass_runs(self) -> None:
        """:meth:`_pass` for a policy with an offer run (FIFO's :mod:`mropt.sim.policies.fifo_runs`),
        the end of every instant once :meth:`start` found one.

        The offer run is given a pass's nodes at once; it offers them as the loop of ``_pass``
        would (skipping the same nodes, stopping where it would stop), plans its launches and
        has :class:`~mropt.sim.launch_runs.LaunchRuns` start them in bulk. An offer run only
        launches (no kill: no task becomes pending and no capacity frees during its pass), so a
        slot type without pending tasks when a pass starts has none at its end. A pass after
        new work is therefore given, when only maps are pending, the nodes of the room index
        of map slots (``_map_room``, kept as ``_room`` is); when reduces are pending too, every
        node (a pass places a reduce per node at most, on the first nodes with room: it stops
        early) and the map room's nodes, over which it goes on once no reduce is pending. It is
        used only with the room index (a policy that names no nodes: ``held`` is never read).
        """
        dirty = self._dirty
        if not self.new_work:  # (most instants) the nodes freed alone, without the loop's set-up
            if not dirty:
                return
            room = self._map_room
            room |= dirty  # type: ignore[operator]  # (set by ``__init__`` where ``start`` chose this pass)
            maps, reduces = self.sim.runnable
            if not (maps or reduces):
                dirty.clear()
                return
            freed = [*dirty]  # (``sorted`` looks its list's ``sort`` up by name, a call)
            freed.sort()
            dirty.clear()
            self._offer_run(freed, self._runs, None)  # type: ignore[arg-type,misc]  # (``start``: not None)
            if not dirty and not self.new_work:  # (an offer run only launches: always)
                return
        sim = self.sim
        runnable = sim.runnable
        free_map = sim.free[MAP]
        room = self._map_room
        offer_run, runs = self._offer_run, self._runs
        assert room is not None and runs is not None and offer_run is not None
        while dirty or self.new_work:
            if dirty:
                room.update(dirty)
            maps, reduces = runnable
            nodes: Sequence[int] = ()
            map_nodes: list[int] | None = None
            if self.new_work:
                self.new_work = False
                if maps:
                    map_nodes = sorted(filter(free_map.__getitem__, room))  # (a free count is never negative)
                    room.clear()
                    room.update(map_nodes)
                if reduces:
                    nodes = range(sim.n_nodes)
                elif map_nodes is not None:
                    nodes, map_nodes = map_nodes, None
            elif maps or reduces:
                nodes = sorted(dirty)
            dirty.clear()
            if nodes:
                offer_run(nodes, runs, map_nodes)

    def _speculation_pass(self, nodes: Sequence[int]) -> None:
        """After the policy's pass, offer the rule the nodes freed at this instant (every node at a
        tick); while attempts run and a slot is free, schedule the next tick."""
        sim = self.sim
        spec = self.spec
        assert spec is not None
        for node in nodes:
            if self.spec_room(node):
                spec.offer(node)
        busy = sim.busy
        running = busy[MAP] + busy[REDUCE]
        room = not sim.uses_slots or running < sim.total_slots[MAP] + sim.total_slots[REDUCE]
        if not self._spec_tick and running > 0 and room:
            self._spec_tick = True
            sim.push(sim.now + sim.heartbeat_interval, C_DECIDE, EV_SPECULATE, None)
