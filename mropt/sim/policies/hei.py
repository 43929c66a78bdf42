"""HEI: the history-based multi-user scheduler (HEI paper sec. 2.3) on the Fair Scheduler.

HEI is Hadoop's Fair Scheduler (:mod:`mropt.sim.policies.fair`, whose rules it keeps: pools,
update(), needy-first order, delay scheduling, preemption) with two of its settings taken from
the execution history (:class:`~mropt.sim.policies.hei_history.HeiHistory`, sec. 2.2); pools
are user groups (a job's ``pool``, by default its user).

1. **minShare, every hour** (step 1): when a new hour of day begins, each pool whose group
   has a demand history gets the minShare, per slot type,
   ``floor(min_share_fraction x slots x d_g(h) / sum_k d_k(h))``, with d_g(h) the group's
   historical demand (slot-seconds) in hour h, the sum over every group of the history, and
   slots the cluster's slots of that type (of the nodes up). The paper says "in proportion"
   and leaves the fraction of the cluster so split open (its future work); the default 1
   splits every slot. minShares are integers, as Hadoop's allocation file's; the floor's
   leftover goes to step 2. Without any demand in the hour, those pools' minShares are 0.
2. **Weights: the split of what the minShares leave** (step 2): a job of group g has the
   estimated remaining work ``D_g x unread input (MB) + reduce_cost_g x reduces left``
   (eqs. 7-9), with unread input the input of its maps not yet finished (pending or
   running; each task's ``input_mb``, default one 128 MB block,
   :data:`mropt.model.workload.DEFAULT_INPUT_MB`) and reduces left its unfinished reduce
   tasks; a pool's work is the sum over its runnable jobs. A pool's share of the slots
   left after the minShares is its work over the total: HEI makes Fair's ordering additive
   (``Fair.additive``): a pool at or past its minShare is ordered by (running -
   min(minShare, demand)) / weight, and its fair share (preemption) is
   min(demand, minShare + R x weight), so running beyond the minShares follows the weights.
   The weights are work_g / sum of work times the number of pools with work (mean 1), so a
   pool without history, which keeps the allocation file's weight (1 by default), counts as
   an average pool; the proportions between pools with history are the paper's. A pool
   with history but no work (no runnable job) keeps the file's weight; it has nothing to run.

**History parameters.** ``history``: a JSON file of :class:`HeiHistory` (name ending
``.json``; :meth:`HeiHistory.save`), else a job-history database (``mropt history``,
:meth:`HeiHistory.from_db`); empty (default): no history, and ``hei`` is ``fair`` with
additive shares, which with the default minShares of 0 is ``fair`` exactly. The file is read
before the run (:meth:`Hei.check_input`, also at ``mropt gap --check``): a missing or bad one
is an InputError, and so is one that gives nothing to schedule by (no demand in any hour, no
D, no reduce cost: a database of a SWIM import, whose jobs have no task rows), with which
``hei`` would be ``fair`` exactly (refused rather than run as ``fair`` under another
name). In Python,
:meth:`Hei.with_history` takes a :class:`HeiHistory` (e.g. from :func:`history_frames` of an
earlier run). ``start_hour``: the hour of day at simulation time 0 (hour h of the run's
clock is ``floor(t / 3600 + start_hour) mod 24``).

**A pool with no history** behaves as in Fair: a group absent from the demand history keeps
the allocation file's minShares (``pools``, 0 by default); a group with neither D nor
reduce cost keeps the file's weight. A group with one of the two gets the other from the
mean of that part over the groups that have it (0 when none has).

Simulation choices: the hour and the weights are evaluated in ``update()`` (at the first
heartbeat after each 0.5-s tick or arrival, as Fair's demands), so a new hour's minShares
apply from the first update at or after the hour boundary; nothing between heartbeats reads
them. minShares are also recomputed when the cluster's slots change (a node down or up).
:attr:`Hei.min_share_log` keeps (time, hour, {pool: (maps, reduces)}) at every change.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from mropt.model.errors import InputError
from mropt.model.workload import WorkloadInstance
from mropt.registry import Param
from mropt.sim.policies.fair import FAIR_PARAMS, Fair
from mropt.sim.policies.hei_history import HOURS, HeiHistory
from mropt.sim.policy import make_policy, register_policy
from mropt.sim.state import ACTIVE, DONE, MAP, REDUCE
from mropt.sim.view import SimView

#: the history databases whose jobs without task rows were noted on stderr (:meth:`Hei.load_history`)
_NOTED: set[str] = set()

#: the float slack of the minShare floor (6 x 0.5 computed as 2.9999999999999996 is 3)
_FLOOR_EPS = 1e-9


def hour_of(time: float, start_hour: float = 0.0) -> int:
    """The hour of day (0-23) at simulation time ``time`` when time 0 is ``start_hour``."""
    return int(math.floor(time / 3600.0 + start_hour + _FLOOR_EPS)) % HOURS


def hour_min_shares(
    history: HeiHistory, hour: int, slots: tuple[int, int], fraction: float = 1.0
) -> dict[str, tuple[int, int]]:
    """HEI step 1: each history group's (map, reduce) minShare in ``hour`` (module docstring)."""
    total = sum(hours[hour] for hours in history.demand.values())
    out: dict[str, tuple[int, int]] = {}
    for group, hours in history.demand.items():
        if total <= 0:
            out[group] = (0, 0)
            continue
        part = fraction * hours[hour] / total
        out[group] = (int(math.floor(part * slots[0] + _FLOOR_EPS)), int(math.floor(part * slots[1] + _FLOOR_EPS)))
    return out


def hei_weights(work: dict[str, float]) -> dict[str, float]:
    """HEI step 2: pool weights work_g / total work x (pools with work): mean 1, the paper's proportions."""
    positive = {g: w for g, w in work.items() if w > 0}
    total = sum(positive.values())
    return {g: len(positive) * w / total for g, w in positive.items()}


HEI_PARAMS: dict[str, Param] = {
    **FAIR_PARAMS,
    "history": Param(str, "", "a JSON file of HeiHistory (*.json) or a job-history database; empty: no history (fair)"),
    "min_share_fraction": Param(
        float, 1.0, "fraction of the cluster's slots split into the hourly minShares", minimum=0.0, maximum=1.0
    ),
    "start_hour": Param(float, 0.0, "hour of day at simulation time 0", minimum=0.0, maximum=24.0),
}


@register_policy(
    "hei",
    summary="HEI: Fair Scheduler with hourly minShares from historical demand and weights from estimated remaining work",
    source="HEI paper sec. 2.2-2.3 on Hadoop 1.0.3 contrib/fairscheduler",
    needs=("slots",),
    params=HEI_PARAMS,
)
class Hei(Fair):
    additive = True  # HEI sec. 2.3 step 2 (module docstring)

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.history_data: HeiHistory | None = None

    @classmethod
    def with_history(
        cls, history: HeiHistory, params: dict[str, Any] | None = None, *, self_check: bool = False
    ) -> Hei:
        """A ``hei`` policy (parameters checked) scheduling by ``history`` instead of its ``history`` file
        (``self_check``: ``Policy``'s test switch)."""
        policy = make_policy("hei", params, self_check=self_check)
        assert isinstance(policy, Hei)
        policy.history_data = history
        return policy

    def check_input(self, workload: WorkloadInstance) -> None:
        """Fair's needs, then the ``history`` parameter read now (:meth:`load_history`), so that a
        missing, bad or empty history is an InputError before the run and at ``mropt gap --check``."""
        super().check_input(workload)
        self.load_history()

    def load_history(self) -> HeiHistory:
        """The history scheduled by: :meth:`with_history`'s, else the ``history`` parameter's (kept).

        A history file that gives nothing to schedule by (:attr:`HeiHistory.no_task_data`: a
        job-history database of a SWIM import, whose jobs have no task rows) is refused: ``hei``
        would be ``fair`` exactly. An empty parameter is no history, documented as ``fair``. A
        database of which only some jobs lack task rows is used, with one note on stderr saying what
        their groups get (:meth:`HeiHistory.untimed_note`).
        """
        if self.history_data is None:
            given = str(self.params["history"])
            history = HeiHistory.from_param(given)
            if given and history.no_task_data:
                raise InputError(
                    f"policy 'hei': the history {given!r} gives no demand, map cost (D) or reduce cost for any "
                    "group (its jobs have no task rows, as a SWIM import's), so hei would be fair exactly; "
                    "give a history with task rows, or run fair"
                )
            if given and not given.lower().endswith(".json") and given not in _NOTED:
                _NOTED.add(given)  # once per database and process (a study's worker runs many)
                note = HeiHistory.untimed_note(given)
                if note:
                    print(f"mropt: note: {note}", file=sys.stderr)
            self.history_data = history
        return self.history_data

    def start(self, sim: SimView) -> None:
        p = self.params
        self.history: HeiHistory = self.load_history()
        self.fraction = float(p["min_share_fraction"])
        self.start_hour = float(p["start_hour"])
        h = self.history
        costed = set(h.D) | set(h.reduce_cost)
        mean_d = float(np.mean(list(h.D.values()))) if h.D else 0.0
        mean_rc = float(np.mean(list(h.reduce_cost.values()))) if h.reduce_cost else 0.0
        #: group -> (D, reduce cost) for the groups with a cost history
        self.costs = {g: (h.D.get(g, mean_d), h.reduce_cost.get(g, mean_rc)) for g in costed}
        self.hour: int | None = None
        self.hour_slots: tuple[int, int] = (0, 0)
        self.hour_mins: dict[str, tuple[int, int]] = {}
        self.base_weight: dict[str, float] = {}
        self.min_share_log: list[tuple[float, int, dict[str, tuple[int, int]]]] = []
        super().start(sim)
        n = len(sim.jobs)
        self.work = [0.0] * n  # estimated remaining work of each runnable active job (0 otherwise)
        self.mb: list[list[tuple[int, float | np.ndarray]] | None] = [
            None
        ] * n  # per job: the per-task MB of its map stages (lazily)
        self.pool_work: dict[str, float] = {}
        self.base_weight = {name: pool.weight for name, pool in self.pools.items()}

    # -- pools ---------------------------------------------------------------------------------
    def _pool(self, name: str) -> Any:
        new = name not in self.pools
        pool = super()._pool(name)
        if new:
            self.base_weight[name] = pool.weight
            if self.hour is not None and name in self.hour_mins:
                pool.min = self.hour_mins[name]
        return pool

    def _set_hour(self) -> None:
        """Step 1: the hour's minShares, when the hour (or the cluster's slots) changed."""
        sim = self.sim
        hour = hour_of(sim.now, self.start_hour)
        slots = (int(sim.total_slots[MAP]), int(sim.total_slots[REDUCE]))
        if hour == self.hour and slots == self.hour_slots:
            return
        self.hour, self.hour_slots = hour, slots
        self.hour_mins = hour_min_shares(self.history, hour, slots, self.fraction)
        for name, pool in self.pools.items():
            if name in self.hour_mins:
                pool.min = self.hour_mins[name]
        self.pools_changed()
        mins = {name: (int(pool.min[MAP]), int(pool.min[REDUCE])) for name, pool in sorted(self.pools.items())}
        self.min_share_log.append((sim.now, hour, mins))

    # -- step 2: remaining work ----------------------------------------------------------------
    def _map_mb(self, job: int) -> list[tuple[int, float | np.ndarray]]:
        """Per map stage of the job: (stage index, MB of each task, or an array of per-task MB)."""
        spec = self.sim.workload.jobs[job]
        out: list[tuple[int, float | np.ndarray]] = []
        for s, stage in enumerate(spec.stages):
            if stage.type != "map":
                continue
            sizes = {g.task_input_mb for g in stage.tasks}
            if len(sizes) == 1:
                out.append((s, sizes.pop()))
            else:
                out.append((s, np.repeat([g.task_input_mb for g in stage.tasks], [g.count for g in stage.tasks])))
        return out

    def _unread_mb(self, job: int) -> float:
        j = self.sim.jobs[job]
        if j.remaining[MAP] == 0:
            return 0.0
        info = self.mb[job]
        if info is None:
            info = self.mb[job] = self._map_mb(job)
        total = 0.0
        for s, size in info:
            stage = j.stages[s]
            left = stage.n - stage.finished
            if left == 0:
                continue
            if isinstance(size, float):
                total += left * size
            else:
                state = np.frombuffer(bytes(stage.state), dtype=np.uint8)
                total += float(size[state != DONE].sum())
        return total

    def _job_work(self, job: int) -> float:
        j = self.sim.jobs[job]
        cost = self.costs.get(j.pool)
        if cost is None or not (self.is_runnable[job] and j.status == ACTIVE):
            return 0.0
        d, rc = cost
        return d * self._unread_mb(job) + rc * j.remaining[REDUCE]

    def _update(self) -> None:
        """Fair's update(), then the hour's minShares (step 1) and the weights (step 2)."""
        changed = set(self.demand_dirty)
        super()._update()
        self._set_hour()
        if not self.costs:
            return
        changed |= self.dirty  # jobs whose runnability the update changed (their keys are refreshed next)
        touched: set[str] = set()
        for job in changed:
            new = self._job_work(job)
            if new != self.work[job]:
                self.work[job] = new
                touched.add(self.sim.jobs[job].pool)
        for name in touched:
            pool = self.pools[name]
            self.pool_work[name] = sum(self.work[job] for _, _, job in pool.members)
        if touched:
            self._set_weights()

    def _set_weights(self) -> None:
        weights = hei_weights({name: w for name, w in self.pool_work.items() if name in self.costs})
        for name, pool in self.pools.items():
            pool.weight = weights.get(name, self.base_weight.get(name, pool.weight))
        self.pools_changed()

    def weights(self) -> dict[str, float]:
        """Each pool's current weight (the last update's)."""
        return {name: pool.weight for name, pool in sorted(self.pools.items())}

    def min_shares(self) -> dict[str, tuple[int, int]]:
        """Each pool's current (map, reduce) minShare."""
        return {name: (int(pool.min[MAP]), int(pool.min[REDUCE])) for name, pool in sorted(self.pools.items())}
