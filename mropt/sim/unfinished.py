"""Why an accepted job was left unfinished: the ``unfinished_cause`` column of ``jobs.parquet``.

A run ends when no event is left (``mropt.sim.engine``). An accepted job that was not dropped
and did not finish then has one of two stated causes:

* ``no_node``: some task of it that has not succeeded can run on no node that is up when the
  run ends: every node with a slot of its type (and, with task demands, the resources for its
  demand) failed for good (a fault without ``up``), or none ever had them;
* ``stalled``: the run stopped early, a heartbeat run whose policy declined work for
  ``stall_limit`` heartbeats in a row (the run's horizon; the summary's ``stalled``).

``no_node`` is given first when both hold. A run stopped before its last event (``--until``,
``--time-limit``, Ctrl-C: :mod:`mropt.sim.watch`) gives every such job the cause ``stopped``
instead: it may well have finished later, and the nodes up at the stop are not those of the
end. Any other unfinished job gets ``""``: the policy left runnable work unlaunched while
nodes could run it, which :func:`mropt.sim.verify.verify_simulation` reports as an error.
Finished, rejected, dropped and not submitted jobs get ``""`` too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mropt.sim.state import ACTIVE, DONE

if TYPE_CHECKING:
    from mropt.sim.engine import Simulation

#: the float slack of a resource fit, as the engine's
_FIT_EPS = 1e-9
NO_NODE, STALLED, STOPPED = "no_node", "stalled", "stopped"


def unfinished_causes(sim: Simulation) -> list[str]:
    """The cause per job of ``sim.jobs``, in their order (module docstring); meant for after the run."""
    causes = [""] * len(sim.jobs)
    left = [j for j in sim.active.values() if j.status == ACTIVE]
    if not left:
        return causes
    if sim.stopped is not None:
        for j in left:
            causes[j.index] = STOPPED
        return causes
    capacity = [
        [spec.resources.get(r, 0.0) for r in sim.resources] for spec in sim.workload.nodes for _ in range(spec.count)
    ]
    up = [n for n in range(sim.n_nodes) if sim.node_up[n]]
    known: dict[tuple[int, tuple[float, ...] | None], bool] = {}

    def runs_somewhere(stype: int, demand: tuple[float, ...] | None) -> bool:
        key = (stype, demand)
        if key not in known:
            known[key] = any(
                (not sim.uses_slots or sim.slots[stype][n] > 0)
                and (demand is None or all(a <= c + _FIT_EPS for a, c in zip(demand, capacity[n], strict=True)))
                for n in up
            )
        return known[key]

    for j in left:
        blocked = False
        for stage in j.stages[j.cur :]:
            ends = [*stage.offsets[1:], stage.n]
            for g, start in enumerate(stage.offsets):
                open_tasks = stage.state[start : ends[g]].count(DONE) < ends[g] - start
                if open_tasks and not runs_somewhere(stage.type, stage.demands[g]):
                    blocked = True
                    break
            if blocked:
                break
        causes[j.index] = NO_NODE if blocked else (STALLED if sim.stalled else "")
    return causes
