"""A clairvoyant reference: back up exactly the tasks whose backup would finish first.

It knows every attempt's true running time (its straggler draw included): the running
attempt's end (the engine's ``attempt.end``) and the time a backup started now on the offered
node would take there (:meth:`mropt.sim.engine.Simulation.next_work`: that node's speed, the
task's locality on it, and the straggler draw the backup would get, peeked at from the run's
stream). A running task with one attempt, not on the offered node and never failed there, is a
candidate when ``now + backup time`` is earlier than its attempt's end; in the first job (in the
policy's order) with a candidate, the one that gains the most time gets the backup. No cap, no
lag: the best a rule that can only add backups on the slots left by the policy could do at each
offer (a greedy reference, not an optimum over the whole run). A reduce whose job's maps still
run is skipped (its copy cannot end before the maps do, which no one knows yet).
"""

from __future__ import annotations

from mropt.sim.speculation.base import Speculation
from mropt.sim.speculation.table import register_rule
from mropt.sim.state import MAP, REDUCE

#: a backup must gain more than this (s) to be worth a slot
MIN_GAIN = 1e-9


@register_rule(
    "clairvoyant",
    summary="a reference that knows every attempt's time: backs up the task whose backup gains the most",
    source="mropt's greedy reference (no paper): the best a rule adding backups on the slots left could do per offer",
)
class Clairvoyant(Speculation):
    """The clairvoyant reference (module docstring)."""

    def choose(self, node: int, stype: int) -> tuple[int, int, int] | None:
        sim = self.sim
        now = sim.now
        for job in self.job_order(stype):
            stages = sim.jobs[job].stages
            best: tuple[float, int, int] | None = None
            for (stage, task), attempts in self.running[(job, stype)].items():
                if len(attempts) != 1:
                    continue
                a = attempts[0]
                if a.end is None or self.ran_on(job, stage, task, attempts, node):
                    continue
                if stype == REDUCE and stage > 0:
                    prev = stages[stage - 1]
                    if prev.type == MAP and prev.end_time is None:
                        continue
                gain = a.end - (now + sim.next_work(job, stage, task, node))
                if gain > MIN_GAIN and (best is None or gain > best[0]):
                    best = (gain, stage, task)
            if best is not None:
                return job, best[1], best[2]
        return None
