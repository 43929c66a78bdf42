"""LATE as the original paper states it (Zaharia et al., OSDI 2008, sec. 4): percentile thresholds.

The paper's parameters, "a good choice in practice" (``../shared/reference/
schedulers-and-simulators.md`` sec. 4, confirmed from secondary sources: the paper's own text
is not in the stores, so each is a named parameter):

* **SpeculativeCap** = 10 % of the cluster's task slots: no backup starts while that many
  backups (of the slot type, all jobs) run; ``speculative_cap`` (a fraction of the slots of
  the type; strictly fewer backups than ``cap x slots``);
* **SlowNodeThreshold** = the 25th percentile of node progress: a node whose total progress
  (the sum of the progress scores of the attempts that succeeded on it and of those running
  on it, all jobs) is below the 25th percentile over the nodes that are up gets no backup;
  ``slow_node_percentile``;
* **SlowTaskThreshold** = the 25th percentile of task progress rates: a running task (one
  attempt, no backup yet, never ran or failed on the node) is a candidate when its progress
  rate is strictly below the 25th percentile of the progress rates of its job's tasks of the
  type (running ones at their current rate, finished ones at their last, as Hadoop 0.21 keeps
  them; with running tasks alone the last straggler of a job could never be below the
  percentile of itself); ``slow_task_percentile``;
* the candidate with the longest estimated time left, (1 - progress) / rate, gets the backup;
* mropt keeps Hadoop's 60 s minimum run time (``lag``) so the rule is compared with 0.21 on
  the same footing; ``lag`` 0 drops it.

Percentiles interpolate linearly between order statistics (numpy's default).
"""

from __future__ import annotations

from mropt.registry import Param
from mropt.sim.speculation.base import SPECULATIVE_LAG, RuleAttempt, RuleView, Speculation, percentile, progress
from mropt.sim.speculation.table import register_rule


@register_rule(
    "late-percentile",
    summary="LATE as its paper states it: percentile thresholds of node progress and task rates, a cluster-wide cap",
    source="Zaharia et al., OSDI 2008, sec. 4 (SpeculativeCap, SlowNodeThreshold, SlowTaskThreshold)",
    params={
        "speculative_cap": Param(
            float, 0.1, "live backups per slot of the type, all jobs (SpeculativeCap)", minimum=0.0
        ),
        "slow_node_percentile": Param(
            float,
            25.0,
            "percentile of node progress below which a node is slow (SlowNodeThreshold)",
            minimum=0.0,
            maximum=100.0,
        ),
        "slow_task_percentile": Param(
            float,
            25.0,
            "percentile of a job's task rates below which a task is slow (SlowTaskThreshold)",
            minimum=0.0,
            maximum=100.0,
        ),
        "lag": Param(float, SPECULATIVE_LAG, "seconds a task runs before a backup (Hadoop's; 0: none)", minimum=0.0),
    },
)
class LatePercentile(Speculation):
    """The LATE paper's percentile form (module docstring)."""

    def __init__(
        self, *, speculative_cap: float, slow_node_percentile: float, slow_task_percentile: float, lag: float
    ) -> None:
        super().__init__(
            speculative_cap=speculative_cap,
            slow_node_percentile=slow_node_percentile,
            slow_task_percentile=slow_task_percentile,
            lag=lag,
        )
        self.speculative_cap = speculative_cap
        self.slow_node_percentile = slow_node_percentile
        self.slow_task_percentile = slow_task_percentile
        self.lag = lag

    def start(self, sim: RuleView) -> None:
        super().start(sim)
        self.succeeded_on = [0.0] * sim.n_nodes  # progress 1 per attempt that succeeded on the node
        self.finished_rates: dict[tuple[int, int], list[float]] = {}  # (job, type): last rates
        self._scores_at: float | None = None
        self._threshold = 0.0
        self._scores: list[float] = []

    def on_success(self, a: RuleAttempt) -> None:
        self.succeeded_on[a.node] += 1.0
        attempts = self.running.get((a.job, a.type), {}).get((a.stage, a.task), [a])
        self.finished_rates.setdefault((a.job, a.type), []).append(self.tip_progress_rate(attempts, self.sim.now)[1])
        self._scores_at = None

    def on_end(self, a: RuleAttempt, outcome: str) -> None:
        self._scores_at = None

    def slow_node(self, node: int) -> bool:
        """The node's total progress is below the ``slow_node_percentile`` of the nodes that are up."""
        sim = self.sim
        now = sim.now
        if self._scores_at != now:
            scores = list(self.succeeded_on)
            for tasks in self.running.values():
                for attempts in tasks.values():
                    for a in attempts:
                        scores[a.node] += progress(sim, a, now)
            self._scores = scores
            up = [scores[n] for n in range(sim.n_nodes) if sim.node_up[n]]
            self._threshold = percentile(up, self.slow_node_percentile)
            self._scores_at = now
        return self._scores[node] < self._threshold

    def choose(self, node: int, stype: int) -> tuple[int, int, int] | None:
        sim = self.sim
        now = sim.now
        if not self.backups_by_type[stype] < self.speculative_cap * sim.total_slots[stype]:
            return None
        jobs = self.job_order(stype)
        if not jobs or self.slow_node(node):
            return None
        for job in jobs:
            tasks = self.running[(job, stype)]
            measured = [(tk, attempts, *self.tip_progress_rate(attempts, now)) for tk, attempts in tasks.items()]
            rates = [r for _, _, _, r in measured] + self.finished_rates.get((job, stype), [])
            threshold = percentile(rates, self.slow_task_percentile)
            best: tuple[float, int, int] | None = None
            for (stage, task), attempts, p, r in measured:
                if len(attempts) != 1 or now - attempts[0].start < self.lag or not r < threshold:
                    continue
                if self.ran_on(job, stage, task, attempts, node):
                    continue
                score = r / max(1e-4, 1.0 - p)
                if best is None or score < best[0]:
                    best = (score, stage, task)
            if best is not None:
                return job, best[1], best[2]
        return None
