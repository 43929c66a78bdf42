"""DRF as a cluster policy, and the DRF base of ``ddrf`` and ``delay`` (DDRF paper, ``docs/papers.md``).

**Who is a DRF user.** The paper's sec. 3.1 orders *users* by their dominant share; its
sec. 4.1 listing keeps the skip count per *job*. Here the DRF user is the job's ``user``
field (jobs without one share the workload's default user): users are ordered by their
dominant share ``s_i = max_j u_ij / r_j`` (``u_ij``: resource j held by the running
attempts of user i's jobs; ``r_j``: the cluster's total of resource j over all nodes, as
the listing's ``R``), unweighted (w = 1). Inside a user, its active jobs are offered in
arrival order. Each job keeps its own skip count, as in the listing.

**Resources.** The vector is the workload's node resources (``cpu``, ``mem``, ...; a task's
``demand``, missing entries 0) followed, when the nodes give slots, by one map-slot and one
reduce-slot resource (a task holds one slot of its type). A workload of slots only is thus
DRF over the two slot types.

**The decision core** is :func:`mropt.fairness.drf.share_key`, the heap key of progressive
filling (sec. 3.1): users sit in a binary heap keyed by (share rounded to 12 significant
digits, larger dominant demand of the next task first, user index); entries are
invalidated lazily by a version number when a share changes. The tie-break
``largest-demand`` gives Table 1's order B, A, A, B, A.

**Offers (event mode).** The policy runs in the engine's ``event`` mode: a node is offered
when capacity frees on it (a completion) or when new work appears (every node). An offer of
node n goes to the users in increasing dominant share; a job is *offered* the node only if
its next task fits the node's free capacity (``sim.fits``; a node too full for the job is no
offer and no skip). The job then launches a task at the locality level its skip count
allows, or *declines*: its skip count grows by one. One call offers a node to a job at most
once (Hadoop's ``FairScheduler`` likewise counts a job's skip at most once per heartbeat);
after each launch the order is recomputed (the launching user's share grew) and the node is
offered again while it has room. This is the paper's model (sec. 3.2.2: a slot frees every
T/S, and each freed slot is one chance for the job). When a job declines and nothing is
running (no completion would ever offer a node again), the policy asks to be woken one
heartbeat interval later, so waiting jobs are re-offered the idle nodes, as Hadoop's
heartbeats would (a ``check`` timer at the same instant looks at the cluster once the pass
is over; the engine's pass after it is muted).

**Where the rule is.** ``_DrfBase._assign_reference`` is the offer of a node written plain (users
sorted by their key at each launch), ``_offer`` the launch-or-skip decision of one job, ``_level``
and ``_after_launch`` (per policy: ``ddrf``'s and ``delay``'s in :mod:`mropt.sim.policies.ddrf`,
with their rules) the delay rule, ``on_attempts_end``/``_add``/``_push`` the shares
and keys, ``on_timer`` the heartbeat re-offer. ``make_policy(..., reference=True)`` runs that; the
default runs the accelerated offers (:class:`~mropt.sim.policies.drf_offers.DrfOffers`,
``_assign_fast``), and ``tests/sim/test_sim_drf_reference.py`` requires the same event log of both
on random workloads.

**Speed on a saturated cluster** (a replay of a trace's day; none of it changes a decision:
``tests/sim/test_sim_drf_blocking.py`` compares every table with it on and off, off being
``make_policy(..., reference=True)``): a node that no waiting task fits (or too full for any
task of the workload) is *blocked* and offered afterwards only to the jobs that may have gained
work (``assign``; :mod:`mropt.sim.policies.blocked_nodes`, with ``new_work_nodes`` telling the
engine which nodes an arrival can concern); whether any waiting task fits a node is one bisection
(:mod:`mropt.sim.demand_index`); a job whose next maps are too big for the node is passed by
without an offer call (what the offer would find); users whose waiting tasks are too big for
a node are *parked* by demand, out of the way of offers they cannot take
(:mod:`mropt.sim.policies.parked_users`); a user that stays first in the order after a launch
gets its next tasks on the node in one ``sim.launch(count=k)`` (``_launch_run``; how many,
``_run_length``, rounds its share to the key's 12 digits only within 1e-11 of the next user's,
and the run's shares are added in one ``_add``); and a user
whose attempts end gets its new heap entry once, before the next offer (``_flush``), however
many of its attempts ended at that instant (and its tie key is looked up once, unless its jobs
gained work in between). A user's jobs are looked at from a kept position before which none has
work (``_idle_before``, see ``_next_tie``; ``self_check`` checks it at every offer), a run with no
rival needs no tie key, and a share's rounded key is kept once computed. Blocked nodes, the demand index, parked users, launch runs and the
deferred pushes each turn off alone (the heap and the pass-by stay): ``make_policy(...,
without={"blocked", "index", "parked", "runs", "deferred"})`` or any part of it
(``tests/sim/test_sim_drf_reference.py`` runs each alone and random subsets against the plain rule).

**drf**: DRF without delay (every launch at any level, node-local tasks first, as
``sim.launch`` picks the best task for the node).
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable
from operator import truediv
from typing import Any

from mropt.fairness.drf import share_key_with_tie, tie_key
from mropt.sim.capacity import FIT_EPS
from mropt.sim.demand_index import DemandIndex, NoDemandIndex
from mropt.sim.policies.blocked_nodes import BlockedNodes, NeverBlocked
from mropt.sim.policies.drf_offers import _DECLINED, _EPS, _LAUNCHED, _NO_FIT, DrfOffers, _Vector
from mropt.sim.policies.parked_users import ParkedUsers
from mropt.sim.policy import ACCEPT, EVENT, Admission, Policy, register_policy
from mropt.sim.state import ANY, MAP, NODE, RACK, REDUCE
from mropt.sim.view import AttemptView, SimView


class _DrfBase(DrfOffers, Policy):
    """DRF ordering of users by dominant share; subclasses choose the locality of a launch."""

    mode = EVENT
    tie_break = "largest-demand"
    #: ``without`` (``Policy``; tests) turns these off one by one in the accelerated offers: blocked
    #: nodes, parked users, the demand index, runs of launches, pushes deferred to the next offer
    accelerations = ("blocked", "parked", "index", "runs", "deferred")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        #: offer a blocked node only to the jobs that may take it (``assign``); off under
        #: ``reference``: always the whole heap (the same decisions, slower: the tests compare the two).
        #: ``trace`` receives (time, job id, node, what) per offer: "skip", or the locality of the
        #: launch ("node", "rack", "any"; "none" without replicas)
        self.blocking = not self.reference

    def start(self, sim: SimView) -> None:
        super().start(sim)
        self._slots = sim.workload.uses_slots
        n_res = len(sim.resources)
        totals = [sum(free[k] for free in sim.free_resources) for k in range(n_res)]
        if self._slots:
            totals += [float(sum(sim.slots[MAP])), float(sum(sim.slots[REDUCE]))]
        self._n_res = n_res
        self._totals = totals
        self._all_positive = all(t > 0 for t in totals)
        # two resources (cpu and mem, or the two slot types), all present: ``_add`` spelled out
        self._two = len(totals) == 2 and self._all_positive
        self._idle_tie = tie_key(0.0, self.tie_break)  # a user with no work
        # the smallest demand of any task, per node resource: a node below it fits nothing
        lows = [float("inf")] * n_res
        for j in sim.jobs:
            for st in j.stages:
                for d in st.demands:
                    for k in range(n_res):
                        lows[k] = min(lows[k], d[k] if d is not None else 0.0)
        self._low = [x if x != float("inf") else 0.0 for x in lows]
        self._user_index: dict[str, int] = {}
        self._users: list[str] = []
        self._use: list[list[float]] = []
        self._share: list[float] = []
        self._ver: list[int] = []
        self._jobs_of: list[list[int]] = []
        self._heap: list[tuple[float, float, int, int]] = []
        self._entry: list[tuple[float, float, int, int]] = []  # each user's last pushed entry
        self._in_heap: list[bool] = []  # whether the user's last entry is in the heap
        self._user_of: dict[int, int] = {}  # active job -> its user's index
        self._arriving = -1  # the job in on_arrival
        self._launched_type = MAP  # the slot type of the last launch of _offer
        self._launched_demand: tuple[float, ...] | None = None  # and its demand
        self._vectors: dict[tuple[Any, int], _Vector] = {}  # (demand, type) -> vector, dominant, tie
        self.skips: dict[int, int] = {}
        self._timer = False  # a reoffer is pending
        self._check = False  # a check is pending
        self._mute = -1.0  # the instant whose pass follows a check: offers nothing
        # blocked nodes (see assign): jobs that may have gained work, in order; jobs whose
        # next task's demand can change between launches (stages of several demands)
        self._fresh: list[int] = []
        off = self.without
        self._index = NoDemandIndex(sim) if "index" in off else DemandIndex(sim)
        self._volatile: set[int] = set()
        self._blocked = (NeverBlocked if "blocked" in off else BlockedNodes)(
            sim.n_nodes, n_res + (2 if self._slots else 0)
        )
        self._parking = "parked" not in off
        self._runs = self.trace is None and "runs" not in off  # (a trace lists launches one by one)
        # ``_offer``'s and ``_next_tie``'s steps spelled out in ``DrfOffers._assign_fast`` (speed only),
        # not where a subclass has its own of either, nor under a trace (``_offer`` traces its decisions)
        cls = type(self)
        self._inline = self.trace is None and cls._offer is _DrfBase._offer and cls._next_tie is _DrfBase._next_tie
        self._defer = self.blocking and "deferred" not in off
        self._passed = 0  # the part of _fresh that new_work_nodes has looked at
        self._parked = ParkedUsers()
        self._parked_at: list[Any] = []  # per user: the keys it is parked under, or None
        self._later: dict[int, float] = {}  # users whose entry is pushed at the next offer -> tie key
        self._retie: set[int] = set()  # users of ``_later`` whose jobs may have changed since its tie
        # per user (accelerated offers): a position in its jobs before which no job has work (``_next_tie``)
        self._idle_before: list[int] = []
        self._settling: set[int] = set()  # users whose jobs gained work since the last offer (``_next_tie``)
        self._share_keys: dict[float, float] = {}  # share -> its key's first member (``_push``)

    # -- shares ---------------------------------------------------------------------------
    def _vector(self, demand: tuple[float, ...] | None, stype: int) -> _Vector:
        """The resource vector of one task of ``demand`` and slot type, its dominant share and its
        :func:`~mropt.fairness.drf.tie_key` (cached)."""
        got = self._vectors.get((demand, stype))
        if got is None:
            vec = list(demand) if demand is not None else [0.0] * self._n_res
            if self._slots:
                vec += [1.0, 0.0] if stype == MAP else [0.0, 1.0]
            dominant = self._dominant(vec)
            got = self._vectors[(demand, stype)] = (vec, dominant, tie_key(dominant, self.tie_break))
        return got

    def _dominant(self, vec: list[float]) -> float:
        if self._all_positive:
            return max(map(truediv, vec, self._totals))
        return max((x / t for x, t in zip(vec, self._totals) if t > 0), default=0.0)

    def _next_tie(self, u: int) -> float:
        """The tie key of one task of the user's first job with work (Table 1's tie-break).

        (``DrfOffers._assign_fast`` gives it without the call for a launching job that is that first
        job with maps of its current stage left, unless a subclass has its own: ``_inline``.)

        The accelerated offers start the look at the user's ``_idle_before`` position, moved up to the
        first job with work found: a job gains work only through ``_gained``, which moves it back to 0
        and keeps it there until the next offer (the engine makes the job's tasks runnable after the
        hook), and launches only take work away."""
        jobs = self.sim.jobs
        arriving = self._arriving  # its tasks become runnable only after on_arrival returns
        slowstart = self.sim.slowstart
        mine = self._jobs_of[u]
        keep = self.blocking and u not in self._settling  # (the reference looks from the first job)
        for i in range(self._idle_before[u] if keep else 0, len(mine)):
            job = mine[i]
            j = jobs[job]
            runnable = j.runnable
            if not (runnable[MAP] or runnable[REDUCE]) and job != arriving:
                continue  # (cheap: a user may hold many jobs whose tasks all run)
            if keep:
                self._idle_before[u] = i  # the jobs before i have no work
                keep = False
            for stype in (MAP, REDUCE):
                stage = j.launchable(stype, slowstart)
                if stage is not None:
                    got = self._vectors.get((stage.demands[0], stype))  # (``_vector``, its common case inline)
                    return (got if got is not None else self._vector(stage.demands[0], stype))[2]
        if keep:
            self._idle_before[u] = len(mine)
        return self._idle_tie

    def _push(self, u: int, tie: float | None = None) -> None:
        """The user's new entry in the heap (its share or its next task changed; ``tie``: its
        next task's tie key if known)."""
        self._later.pop(u, None)
        self._ver[u] += 1
        self._parked_at[u] = None
        if tie is None:
            tie = self._next_tie(u)
        share = self._share[u]
        key = self._share_keys.get(share)
        if key is None:  # (a share's key is the same each time: kept, as the shares repeat on a busy day)
            if len(self._share_keys) >= _KEPT_KEYS:
                self._share_keys.clear()
            key = self._share_keys[share] = share_key_with_tie(share, tie, u)[0]
        entry = (key, tie, u, self._ver[u])
        self._entry[u] = entry
        if self.blocking:  # (the reference sorts the users' entries at each offer)
            self._in_heap[u] = True
            heapq.heappush(self._heap, entry)

    def _back(self, u: int) -> None:
        """Put the user's last entry back in the heap if ``assign`` took it out (no work, or parked)."""
        if not self.blocking:
            return
        if self._parked_at[u] is not None:
            self._parked_at[u] = None  # its next tasks may differ: back in the heap, same entry
            heapq.heappush(self._heap, self._entry[u])
        elif not self._in_heap[u]:
            self._in_heap[u] = True
            heapq.heappush(self._heap, self._entry[u])

    def _add(self, u: int, demand: tuple[float, ...] | None, stype: int, count: float = 1.0, times: int = 1) -> None:
        """``count`` more (negative: fewer) tasks of ``demand`` and slot type held by user ``u``,
        added ``times`` times in a row: the same sums as that many calls (a run of launches)."""
        use = self._use[u]
        got = self._vectors.get((demand, stype))  # (``_vector``, its common case inline)
        vec = (got if got is not None else self._vector(demand, stype))[0]
        if self._two:
            x, y = count * vec[0], count * vec[1]
            a = use[0] + x
            b = use[1] + y
            if times > 1:
                for _ in range(times - 1):
                    a += x
                    b += y
            use[0], use[1] = a, b
            totals = self._totals
            self._share[u] = max(a / totals[0], b / totals[1])
            return
        for _ in range(times):
            for k, x in enumerate(vec):
                if x:
                    use[k] += count * x
        self._share[u] = self._dominant(use)

    # -- hooks ------------------------------------------------------------------------------
    def on_arrival(self, job: int) -> Admission:
        user = self.sim.jobs[job].user
        u = self._user_index.get(user)
        if u is None:
            u = self._user_index[user] = len(self._users)
            self._users.append(user)
            self._use.append([0.0] * len(self._totals))
            self._share.append(0.0)
            self._ver.append(0)
            self._jobs_of.append([])
            self._entry.append((0.0, 0.0, u, 0))
            self._in_heap.append(False)
            self._parked_at.append(None)
            self._idle_before.append(0)
        self._jobs_of[u].append(job)
        self._user_of[job] = u
        self._arriving = job
        self.skips[job] = 0
        if any(len(st.demands) > 1 for st in self.sim.jobs[job].stages):
            self._volatile.add(job)
        self._gained(job)
        self._push(u)
        self._arriving = -1
        return ACCEPT

    def _gained(self, job: int) -> None:
        """``job`` may have gained pending tasks, or tasks of a new demand (see ``assign``)."""
        if not self.blocking:
            return  # (what the accelerated offers note)
        self._fresh.append(job)
        self._index.note(job)
        u = self._user_of.get(job)
        if u is not None:
            self._retie.add(u)
            self._idle_before[u] = 0
            self._settling.add(u)

    def on_stage_end(self, job: int, stage: int) -> None:
        self._gained(job)
        self._back(self._user_of[job])  # its next stage may be runnable

    def on_job_end(self, job: int) -> None:
        u = self._user_of.pop(job)
        mine = self._jobs_of[u]
        i = mine.index(job)
        del mine[i]
        if i < self._idle_before[u]:
            self._idle_before[u] -= 1
        self.skips.pop(job, None)
        self._volatile.discard(job)

    def on_attempts_end(self, attempt: AttemptView, outcome: str, count: int) -> None:
        job = attempt.job
        u = self._user_of.get(job)
        if u is None:  # (a dropped job's attempts)
            u = self._user_index[self.sim.jobs[job].user]
        self._add(u, attempt.demand, attempt.type, -count)
        if outcome != "succeeded" or (attempt.type == MAP and self.sim.slowstart is not None):
            self._gained(job)  # a task back to pending, or reduces that slow-start may open
        if not self._defer:
            self._push(u)  # the user's new share now
            return
        # the push is made before the next offer (``_flush``): the user's entry is then what its
        # last push at this instant would have made (shares change only at ends until then). The
        # tie key of an earlier end at this instant still holds unless the user's jobs gained work
        # (``_gained``: arrivals, new stages, tasks back to pending; a success changes no job's
        # next task, and a job that ends had none)
        later = self._later
        if u not in later or u in self._retie:
            later[u] = self._next_tie(u)
            self._retie.discard(u)

    def _flush(self) -> None:
        """Push the entries of the users whose attempts ended since the last offer (``on_attempts_end``)."""
        later = self._later
        for u, tie in list(later.items()):
            self._push(u, tie)
        self._retie.clear()

    def on_timer(self, tag: Hashable) -> None:
        """``check`` (same instant, after the pass): if nothing runs, ask for ``reoffer`` a heartbeat later.

        The engine offers every node after any timer; the pass right after ``check`` is muted
        (nothing changed since the pass before it, which saw every node with work). After
        ``reoffer`` the pass is real: idle nodes are offered again to the waiting jobs.
        """
        sim = self.sim
        if tag == "check":
            self._check = False
            self._mute = sim.now
            if sum(sim.busy) == 0 and not self._timer:
                self._timer = True
                sim.wake_at(sim.now + sim.heartbeat_interval, "reoffer")
        elif tag == "reoffer":
            self._timer = False

    # -- locality rules (subclasses) ------------------------------------------------------------
    def _level(self, job: int) -> int:
        return ANY

    def _after_launch(self, job: int, level: int) -> None:
        self.skips[job] = 0

    # -- offers ---------------------------------------------------------------------------------
    def _offer(self, job: int, node: int) -> int:
        # (its steps for a job of maps of one demand are spelled out in ``DrfOffers._assign_fast``:
        # a change here is made there too; ``_inline`` keeps a subclass's own ``_offer`` called)
        sim = self.sim
        j = sim.jobs[job]
        wanted = False
        level = self._level(job)
        for stype in (MAP, REDUCE):
            if not j.runnable[stype]:
                continue
            stage = j.launchable(stype, sim.slowstart)
            if stage is None:
                continue
            # one demand: the launch itself tells whether the task fits (at level ANY a task that
            # fits always launches); several: a stage fits as ``sim.fits`` says (its first demand)
            one = len(stage.demands) == 1
            if not one and not sim.fits(job, stype, node):
                continue
            first, _, got, demand = sim.launch_tasks(job, node, stype, level)
            if first >= 0:
                self._launched_type = stype
                self._launched_demand = demand
                self._add(self._user_of[job], demand, stype)
                self._after_launch(job, got)
                if self.trace is not None:
                    self.trace.append((sim.now, j.id, node, _LEVEL.get(got, "none")))
                return _LAUNCHED
            if not one or (level != ANY and self._fits_one(stage.demands[0], stype, node)):
                wanted = True  # it fits, but no task at the level allowed
        if wanted:
            self.skips[job] += 1
            if self.trace is not None:
                self.trace.append((sim.now, j.id, node, "skip"))
            return _DECLINED
        return _NO_FIT

    def _fits_one(self, demand: tuple[float, ...] | None, stype: int, node: int) -> bool:
        """``sim.fits`` for a launchable stage of one ``demand``, without looking the stage up again."""
        sim = self.sim
        if not sim.node_up[node] or (self._slots and sim.free[stype][node] <= 0):
            return False
        if demand is None:
            return True
        free = sim.free_resources[node]  # (``Capacity.fits``)
        if len(demand) == 2:
            return demand[0] <= free[0] + FIT_EPS and demand[1] <= free[1] + FIT_EPS
        return all(amount <= free[k] + FIT_EPS for k, amount in enumerate(demand))

    def _room(self, node: int) -> bool:
        sim = self.sim
        if self._slots and not (sim.free[MAP][node] > 0 or sim.free[REDUCE][node] > 0):
            return False
        free = sim.free_resources[node]
        low = self._low
        if len(low) == 2:
            return free[0] + _EPS >= low[0] and free[1] + _EPS >= low[1]
        return all(free[k] + _EPS >= x for k, x in enumerate(low))

    def _capacity(self, node: int) -> list[float]:
        """The node's free resources (and free map and reduce slots) now."""
        sim = self.sim
        cap = list(sim.free_resources[node])
        if self._slots:
            cap += [sim.free[MAP][node], sim.free[REDUCE][node]]
        return cap

    def assign(self, node: int) -> None:
        """Offer ``node`` to the users in increasing dominant share: the plain rule
        (``_assign_reference``) under ``reference``, else the accelerated offers
        (:meth:`~mropt.sim.policies.drf_offers.DrfOffers._assign_fast`: the same decisions)."""
        if self.sim.now == self._mute:
            return
        if self.reference:
            self._assign_reference(node)
        else:
            self._assign_fast((node,))

    def _assign_reference(self, node: int) -> None:
        """The DRF rule, plain (DDRF paper sec. 3.1, progressive filling; Ghodsi et al., NSDI 2011,
        Algorithm 1: the next task goes to the user of the lowest dominant share).

        The users are taken in DRF's order, the increasing key (dominant share, tie key of its next
        task, user index) of their last share change (``_push``); a user's jobs in arrival order. A
        job that has work is offered the node (``_offer``: no fit, a launch at the level its skip
        count allows, or a decline). After a launch the order is taken again (the launcher's share
        grew), while the node has room; a job offered the node in this call without launching is
        not offered it again. The offer ends when nobody launches.
        """
        jobs = self.sim.jobs
        offered: set[int] = set()  # jobs offered the node in this call that did not launch
        declined = False
        while self._room(node):
            launcher = -1
            for u in sorted(range(len(self._users)), key=self._entry.__getitem__):
                for job in self._jobs_of[u]:
                    runnable = jobs[job].runnable
                    if job in offered or not (runnable[MAP] or runnable[REDUCE]):
                        continue
                    result = self._offer(job, node)
                    if result == _LAUNCHED:
                        launcher = u
                        break
                    offered.add(job)
                    declined = declined or result == _DECLINED
                if launcher >= 0:
                    break
            if launcher < 0:
                break
            self._push(launcher)  # its new share
        if declined:
            self._ask_check()  # nothing may run to offer a node again: a heartbeat later (``on_timer``)

    def _run_level(self, job: int) -> int | None:
        """The locality level of the job's next launches right after a launch, if every launch of a run
        at that level leaves it unchanged (None: launch one at a time). DRF and DDRF: the level after
        a reset of the skip count; ``delay`` overrides it."""
        return self._level(job)


_LEVEL = {NODE: "node", RACK: "rack", ANY: "any"}
#: how many share keys ``_push`` keeps before it starts again (a bound on memory, not on speed)
_KEPT_KEYS = 1 << 16


@register_policy(
    "drf",
    summary="Dominant Resource Fairness: users in increasing dominant share, no delay (DDRF paper sec. 3.1)",
    source="DDRF paper sec. 3.1 (progressive filling, Table 1)",
    needs=(),
)
class Drf(_DrfBase):
    pass
