"""Where a job's map stage holds its input: the nodes and racks a local launch can succeed on.

Speed only (no decision depends on it). ``Stage.take`` at NODE level takes a pending task whose
input has a replica on the node, at RACK level one with a replica in the node's rack
(``mropt.sim.locality_stacks``: a task sits in the stacks of its replicas' nodes and racks, and
goes back there when re-queued; Hadoop 1.0.3's ``JobInProgress.nonRunningMapCache`` per host and
rack). On a node (rack) holding none of the stage's input such a launch finds no task, so a policy
that would try it may pass the job by without the call. A stage without replicas
(``replicas is None``) launches at every level: its places are None.

:class:`InputPlaces` keeps them per job, made at the first look at a stage: ``mpsa`` uses it (on the
SWIM day it passes by 73 k of the 158 k NODE-level launches that found no task). ``fair`` keeps its
own (``FairOffers._input_places``), not the same: there a stage with any task without replicas has
no places (``Fair._no_locality``, Hadoop's ``nonLocalMaps``: the job launches at ANY). Tried in ``capacity`` and ``fifo`` (RACK level) and dropped:
on the SWIM day 30 racks of 20 nodes hold some input of nearly every job, so it passed by 6.6 k of
148 k and 6.4 k of 50 k failing launches, no gain (``benchmarks/RESULTS.md``, issue 32).
"""

from __future__ import annotations

import numpy as np

from mropt.sim.state import NODE, RACK
from mropt.sim.view import SimView

#: (the stage, the nodes holding its input or None when it has no replicas, the racks of those nodes)
Places = tuple[int, frozenset[int] | None, frozenset[int]]


class InputPlaces:
    """The places of each job's map stage (module docstring): ``known[job]`` once looked at."""

    __slots__ = ("sim", "known")

    def __init__(self, sim: SimView) -> None:
        self.sim = sim
        self.known: dict[int, Places] = {}

    def of(self, job: int, stage: int) -> Places:
        """The places of ``job``'s stage ``stage``, made and kept (``known[job]``)."""
        nodes: frozenset[int] | None = None
        racks: frozenset[int] = frozenset()
        replicas = self.sim.jobs[job].stages[stage].replicas
        if replicas is not None:
            if isinstance(replicas, np.ndarray):  # generated placement: (tasks, R), entries < 0 none
                nodes = frozenset(np.unique(replicas[replicas >= 0]).tolist())
            else:
                nodes = frozenset(n for held in replicas for n in held if n >= 0)
            node_rack = self.sim.node_rack
            racks = frozenset(node_rack[n] for n in nodes)
        places = self.known[job] = (stage, nodes, racks)
        return places

    def none_at(self, job: int, stage: int, level: int, node: int, rack: int) -> bool:
        """True when a launch of ``job``'s stage ``stage`` at ``level`` on ``node`` (in ``rack``) would
        find no task: NODE level and no input on the node, RACK level and none in its rack."""
        places = self.known.get(job)
        if places is None or places[0] != stage:
            places = self.of(job, stage)
        return places[1] is not None and (
            (level == NODE and node not in places[1]) or (level == RACK and rack not in places[2])
        )

    def forget(self, job: int) -> None:
        """The job ended: drop its places."""
        self.known.pop(job, None)


__all__ = ["InputPlaces", "Places"]
