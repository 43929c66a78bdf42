"""LATE as Hadoop 0.21 implements it: ``JobInProgress.findSpeculativeTask`` (release-0.21.0).

Source: ``src/java/org/apache/hadoop/mapred/JobInProgress.java`` and ``TaskInProgress.java``
of Hadoop 0.21.0 (``../shared/reference/schedulers-and-simulators.md`` sec. 4; seed paper
``002_*.txt`` sec. 6.6.3, whose prose says "progress rate" for the slow tracker where the code
compares mean durations: the code is followed). For a job J and a tracker X asking for a task
of type T (one of J's running tasks of type T gets a backup on X, or none):

1. **Slow tracker** (``isSlowTracker``, maps *or* reduces): X is too slow for J when the mean
   duration of J's tasks that succeeded on X exceeds the mean of the per-tracker means by more
   than ``slow_node_threshold`` (1.0) standard deviations of those means (one point per
   tracker, ``updateTaskTrackerStats``; duration = finish - dispatch of the successful
   attempt). A tracker where none of J's tasks finished is never slow.
2. **Cap** (``atSpeculativeCap``, per job and type): speculation is allowed while
   ``spec < 10`` or ``spec < 0.01 x slots(T)`` or ``spec / running(T) < speculative_cap``
   (0.1), i.e. while ``spec < max(10, 0.01 slots, cap x running)``; ``spec`` = J's backups of
   type T still running, ``running`` = J's running tasks (TIPs) of type T, ``slots`` = the
   cluster's slots of type T (``ClusterStatus.getMaxMapTasks``). :func:`cap_allows`.
3. **Candidates** (``canBeSpeculated`` and ``hasRunOnMachine``): running; no backup yet (one
   active attempt); dispatched at least 60 s ago (``SPECULATIVE_LAG``); never ran or failed
   on X; its rate more than ``slow_task_threshold`` (1.0) standard deviations below the mean
   of J's running-rate statistics of type T. Those statistics hold one point per task ever
   scheduled (not per backup): its current rate while it runs, its last rate once it
   succeeded (the entry is never removed); population variance.
4. **Choice**: the candidate with the longest estimated time left, (1 - progress) / rate
   (Hadoop sorts by rate / max(1e-4, 1 - progress), ascending); ties go to the earlier
   launched task.

Not modelled: a task re-queued after a failed attempt keeps no frozen entry (it counts again
once relaunched), and the "skipping" and commit-pending states (the simulator has neither).

**The speculative cap and Hadoop's own cases** (``TestSpeculativeExecution.
testAtSpeculativeCap``): 1,200 maps all running, 800 (or 1,150) finish early, the rest are
slow, and a tracker keeps asking for tasks; the test's fake JobTracker reports
``setNumSlots(S)`` as S/2 map and S/2 reduce slots. 1,200 / 800 / 20 slots: 400 running,
max(10, 0.01 x 10, 0.1 x 400) = 40 backups; 1,200 / 1,150 / 20: 50 running, max(10, 0.1, 5)
= 10; 1,200 / 1,150 / 4,000: max(10, 0.01 x 2,000, 5) = 20. The numbers force that reading:
``running`` is the running tasks (not the remaining or total), the slots are those of the
task's type (half of 4,000 gives 20; all 4,000 would give 40), and backups do not add to
``running`` (each is a second attempt of a task already running).
"""

from __future__ import annotations

from mropt.registry import Param
from mropt.sim.speculation.base import SPECULATIVE_LAG, DataStatistics, RuleAttempt, RuleView, Speculation, mean_std
from mropt.sim.speculation.table import register_rule
from mropt.sim.state import MAP, REDUCE

#: Hadoop 0.21 JobInProgress: MIN_SPEC_CAP (at least one slow tracker's worth of slots) and MIN_SLOTS_CAP
MIN_SPEC_CAP = 10
MIN_SLOTS_CAP = 0.01


def cap_allows(
    speculative: int,
    running: int,
    slots: int,
    speculative_cap: float = 0.1,
    min_cap: int = MIN_SPEC_CAP,
    min_slots_cap: float = MIN_SLOTS_CAP,
) -> bool:
    """Whether one more backup may start: not ``atSpeculativeCap`` (Hadoop 0.21, module docstring)."""
    if running <= 0:
        return False  # "avoid divide by zero": no running task, nothing to speculate
    if speculative < min_cap:
        return True
    if speculative < slots * min_slots_cap:
        return True
    return speculative / running < speculative_cap


def cap_count(running: int, slots: int, speculative_cap: float = 0.1) -> int:
    """How many backups a job gets before the cap stops it, asking one at a time (the test's loop)."""
    k = 0
    while cap_allows(k, running, slots, speculative_cap):
        k += 1
    return k


@register_rule(
    "late",
    summary="LATE as Hadoop 0.21 runs it: slow trackers and tasks by standard deviations, a cap, longest time left",
    source="Hadoop 0.21.0 JobInProgress.findSpeculativeTask (Zaharia et al., OSDI 2008)",
    params={
        "slow_task_threshold": Param(
            float, 1.0, "standard deviations below the mean rate of a slow task (slowTaskThreshold)", minimum=0.0
        ),
        "slow_node_threshold": Param(
            float, 1.0, "standard deviations above the mean duration of a slow tracker (slowNodeThreshold)", minimum=0.0
        ),
        "speculative_cap": Param(
            float, 0.1, "backups per running task of a job and type (speculativeCap)", minimum=0.0
        ),
        "lag": Param(float, SPECULATIVE_LAG, "seconds since a task's dispatch (SPECULATIVE_LAG)", minimum=0.0),
    },
)
class Late(Speculation):
    """Hadoop 0.21's LATE rules (module docstring)."""

    def __init__(
        self, *, slow_task_threshold: float, slow_node_threshold: float, speculative_cap: float, lag: float
    ) -> None:
        super().__init__(
            slow_task_threshold=slow_task_threshold,
            slow_node_threshold=slow_node_threshold,
            speculative_cap=speculative_cap,
            lag=lag,
        )
        self.slow_task_threshold = slow_task_threshold
        self.slow_node_threshold = slow_node_threshold
        self.speculative_cap = speculative_cap
        self.lag = lag

    def start(self, sim: RuleView) -> None:
        super().start(sim)
        # (job, type): the frozen running-rate points of succeeded tasks
        self.finished_rates: dict[tuple[int, int], DataStatistics] = {}
        # (job, type): per tracker [count, sum of durations]; and the stats of the tracker means
        self.tracker: dict[tuple[int, int], dict[int, list[float]]] = {}
        self.overall: dict[tuple[int, int], DataStatistics] = {}

    def on_success(self, a: RuleAttempt) -> None:
        key = (a.job, a.type)
        now = self.sim.now
        attempts = self.running.get(key, {}).get((a.stage, a.task), [a])
        _, last_rate = self.tip_progress_rate(attempts, now)
        stats = self.finished_rates.get(key)
        if stats is None:
            stats = self.finished_rates[key] = DataStatistics()
        stats.add(last_rate)
        # updateTaskTrackerStats: duration = finish - dispatch of the successful attempt
        duration = now - a.start
        trackers = self.tracker.setdefault(key, {})
        overall = self.overall.get(key)
        if overall is None:
            overall = self.overall[key] = DataStatistics()
        entry = trackers.get(a.node)
        if entry is None:
            trackers[a.node] = [1.0, duration]
            overall.add(duration)
        else:
            old_mean = entry[1] / entry[0]
            entry[0] += 1.0
            entry[1] += duration
            overall.update(old_mean, entry[1] / entry[0])

    def slow_tracker(self, job: int, node: int) -> bool:
        """0.21 ``isSlowTracker`` (maps or reduces of the job)."""
        for stype in (MAP, REDUCE):
            entry = self.tracker.get((job, stype), {}).get(node)
            if entry is None:
                continue
            overall = self.overall[(job, stype)]
            if entry[1] / entry[0] - overall.mean() > overall.std() * self.slow_node_threshold:
                return True
        return False

    def choose(self, node: int, stype: int) -> tuple[int, int, int] | None:
        sim = self.sim
        now = sim.now
        slots = sim.total_slots[stype]
        for job in self.job_order(stype):
            key = (job, stype)
            tasks = self.running[key]
            if self.slow_tracker(job, node):
                continue
            if not cap_allows(self.live_backups.get(key, 0), len(tasks), slots, self.speculative_cap):
                continue
            measured = [(tk, attempts, *self.tip_progress_rate(attempts, now)) for tk, attempts in tasks.items()]
            mean, std = mean_std((r for _, _, _, r in measured), self.finished_rates.get(key))
            limit = self.slow_task_threshold * std
            best: tuple[float, int, int] | None = None
            lag = self.lag
            for (stage, task), attempts, p, r in measured:
                if len(attempts) != 1 or now - attempts[0].start < lag:
                    continue
                if not mean - r > limit:
                    continue
                if self.ran_on(job, stage, task, attempts, node):
                    continue
                score = r / max(1e-4, 1.0 - p)  # ascending = longest time left first
                if best is None or score < best[0]:
                    best = (score, stage, task)
            if best is not None:
                return job, best[1], best[2]
        return None
