"""Whether a node- or rack-local launch would find no task, asked of the stage's locality stacks
instead of the engine.

Hadoop 1.0.3's ``JobInProgress.obtainNewNodeOrRackLocalMapTask`` looks for a map in the job's
``nonRunningMapCache`` of the tracker's node, then of its rack; the simulator's ``Stage.take`` pops
the stage's per-node and per-rack stacks (:mod:`mropt.sim.locality_stacks`) the same way. A policy
that asks ``Launches.launch`` for a NODE- or RACK-level task where those stacks hold no pending task
pays the launch's checks and returns -1: on the Alibaba 2017 file at 64 slots a machine most
local launches a backlog's walk asks fail so (under ``capacity``, 496 k of 1.21 M launch calls in
the first hour). :func:`finds_no_local_task` answers that case from the stacks alone.
"""

from __future__ import annotations

from mropt.sim.state import NODE, RACK, Stage
from mropt.sim.view import JobView


def finds_no_local_task(job: JobView, slot_type: int, node: int, rack: int, level: int) -> bool:
    """True when ``launch(job, node, slot_type, level)`` at ``level`` NODE or RACK (``rack``: the
    node's) certainly finds no task: the job's current stage is of ``slot_type`` (the stage the
    launch takes from, ``Job.launchable``), its locality stacks (the engine's ``Stage``'s, which the
    view does not list) are built, and the stack of the node (NODE) or of the rack (RACK) holds no
    pending task. False: the launch may find one (ask it).

    ``Stage.take`` pops the node's stack, then (level RACK) the rack's; the rack's holds every
    pending task with a replica in the rack, the node's among them, so at RACK the rack's alone
    answers. A ``pop`` only drops the entries no longer pending from the top of the stack, as the
    launch's own would: nothing any later launch takes changes."""
    stages = job.stages
    k = job.cur
    if k >= len(stages):
        return False
    stage: Stage = stages[k]  # type: ignore[assignment]  # (the engine's, behind the view: its stacks)
    if stage.type != slot_type:
        return False
    if level == RACK:
        stacks = stage.rack_q
        place = rack
    elif level == NODE:
        stacks = stage.node_q
        place = node
    else:
        return False
    return stacks is not None and stacks.pop(place, stage.state) < 0


__all__ = ["finds_no_local_task"]
