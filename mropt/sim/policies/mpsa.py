"""MPSA: the multi-priority real-time slot assignment of the MPSA paper (``docs/papers.md``).

Sec. 4.4 and Algorithm 2 on top of the slot allocation of Algorithm 1 (sec. 4.3,
:mod:`mropt.priority.mpsa`):

* **Priority queues** are the jobs' ``priority`` values (one queue per value seen). Each
  queue i holds ``s_i1`` map and ``s_i2`` reduce slots from Algorithm 1; the slots left over
  (``mapIdle``, ``reduceIdle``) are *shared*.
* **Hunger degree** (Definition 1, eqs. 19-20)::

      mHungryDegree_i = 1 - mAssigned_i / s_i1        (19)
      rHungryDegree_i = 1 - rAssigned_i / s_i2        (20)

  with ``mAssigned_i`` (``rAssigned_i``) the map (reduce) slots queue i occupies now (its
  running attempts). The paper leaves ``s = 0`` undefined; here a queue with no reservation
  has hunger 0 while it holds nothing and ``-inf`` once it holds a slot (it is owed nothing:
  :func:`hunger_degree`).
* **Shared slots first** (sec. 4.4): the shared slots in use are the slots queues hold beyond
  their reservations, ``sum_i max(0, assigned_i - s_i)``; ``Mapshared`` is the shared total
  minus that. While ``Mapshared > 0`` every queue with work competes; once it is 0 only queues
  with ``assigned_i < s_i`` may take the slot (the text's rule; the listing writes ``mAssigned_i
  > s_i1``, which would let a queue at exactly its reservation eat the next queue's reserve), and
  when none of them has work, the slot is kept idle (reserved).
* **Locality** (Algorithm 2): queues sorted by hunger, highest first (the prose: "choose the
  job of highest hunger among those satisfying locality"; the listing offers the lowest first
  and polls the head, which read literally picks the least hungry: mropt follows the prose).
  The first queue, in that order, with a job that has a map task local to the node (``level``
  parameter: ``node``-local by default, or ``rack``-local; a task without input replicas is
  local anywhere) gets the slot; if none, the hungriest queue gets it with any task. Within
  a queue jobs are served in submit order (the paper leaves it open; Hadoop's per-queue FIFO).
  Reduces likewise (eq. 20, ``s_i2``; reduces carry no locality, so the hungriest queue wins).
* **Mode**: heartbeat (Hadoop 1.0.3, the paper's platform, sec. 5): on each heartbeat every
  free slot of the tracker is assigned, one run of Algorithm 2 per slot, maps first.
* **Allocation** (sec. 4.2-4.3): every ``interval`` seconds (a ``sim.wake_at`` timer chain that
  stops once no job is active and none is still to arrive), the time since the last tick is
  closed as one slice. Per queue the slice gives the arrival rate (arrivals / interval, jobs
  per second) and, over the jobs that arrived in it, the mean work of one map visit and of one
  reduce visit (slot-seconds: the sum of a stage's task durations, averaged over the jobs' map
  stages, likewise reduce stages; slices without arrivals add no workload value). The planning
  value of each series is its AR(1) forecast (eqs. 14-15, :mod:`mropt.priority.forecast`) of
  its last ``window`` slices (the paper leaves the series' length open; default 6, 0 = all) once
  it has two values (the last value while it has one); the deadline T_i is the mean relative
  deadline (deadline - submit) of the queue's jobs seen so far (jobs without deadline are
  ignored; a queue with none gets ``default_deadline``); the routing (q11, q12, q21) is counted
  from the stage sequences of every job seen, as Table 1 counts it (a reduce followed by a
  reduce, which the model has no q22 for, counts as leaving). These build a
  :class:`~mropt.model.priority.PriorityInstance` of the cluster's slots, solved by ``method``
  (``mpsa``: Algorithm 1; ``mpsa-exact``: the exact allocation). Before the first tick, and for
  queues never seen, the reservation is 0: everything is shared.
* **Liveness** (mropt's addition, ``liveness``): when no slot of a type is busy anywhere and a
  free slot would stay reserved, the shared-slot rule is skipped for that slot (the hungriest
  queue with work takes it). Without it a queue holding a reservation whose jobs are all gone
  could block the others forever (Algorithm 1 gives an infeasible queue every slot left, so
  the later queues get 0 and no shared slot).
* **Idle reserved slots** (``lend_idle``; mropt's reading, the paper's rule by default). Sec. 4.4
  keeps a free slot idle when every queue below its reservation has no work ("新的空闲槽位将被
  保留"), so a lone job on an empty cluster gets only its queue's reservation and the shared
  slots. ``lend_idle`` reads the reserve as a guarantee instead, as the Capacity Scheduler the
  paper takes its hunger degree from does (Hadoop 1.0.3 ``CapacityTaskScheduler``: a queue over
  its capacity runs on idle capacity, which comes back as its tasks end, without preemption):

  - ``no`` (default): the paper's rule, the slot stays idle.
  - ``task_end``: the slot is lent to the hungriest queue with work (eqs. 19-20's order; a
    borrower is over its reservation, so its hunger is negative; ``liveness`` then has nothing
    left to do). Lent slots come back as the borrowers' tasks end: once the lending has used up
    the shared slots (``Mapshared`` < 0) only queues below their reservation may take a freed
    slot, by the paper's own rule.
  - ``preempt``: lent as ``task_end``, and reclaimed at once (the paper's "随时", at any time):
    when a queue below its reservation has pending tasks that the free slots cannot serve, the
    policy kills borrowed attempts through the engine's kill path (``sim.kill``, as Fair's
    preemption does): at most ``-Mapshared`` of them (the lent slots, never a queue's shared
    ones), from the queue lowest in hunger first (ties: the lower priority), latest started
    first (Hadoop's preemption order, ``FairScheduler.preemptTasks``). It checks at each
    arrival, each stage end, each recomputation and each node event (a timer at that instant,
    after the new work is runnable); reduces opened early by reduce slow-start wait for the
    next check or a task end.

**Where the rule is.** ``Mpsa.choose`` is Algorithm 2 for one slot written plain (the order of
:mod:`mropt.sim.policies.mpsa_order`); ``make_policy("mpsa", reference=True)`` runs it slot by slot.
The default runs :mod:`mropt.sim.policies.mpsa_slots` (``MpsaSlots``: the same decisions on kept
counts, a heartbeat's slots in runs of launches; ``tests/sim/test_sim_mpsa_fast.py``).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from mropt.model.errors import InputError
from mropt.model.priority import Priority, PriorityInstance
from mropt.registry import Param, solve
from mropt.sim.policies.input_places import InputPlaces
from mropt.sim.policies.mpsa_order import algorithm2_order, hunger_degree, shared_left
from mropt.sim.policies.mpsa_slots import MpsaSlots
from mropt.sim.policy import ACCEPT, HEARTBEAT, Admission, Policy, register_policy
from mropt.sim.state import ANY, MAP, NODE, RACK, REDUCE
from mropt.sim.view import AttemptView, SimView

_TIMER = "mpsa-allocation"
_RECLAIM = "mpsa-reclaim"
#: the values of ``lend_idle`` (module docstring)
LEND_IDLE = ("no", "task_end", "preempt")
#: the declined-slot memo of :meth:`Mpsa.choose` (speed only; tests turn it off to compare)
MEMO = True


@register_policy(
    "mpsa",
    summary="MPSA sec. 4.4: Algorithm 1's slots per priority, hunger degree (eqs. 19-20), Algorithm 2's locality",
    source="MPSA paper (004) sec. 4.2-4.4, eqs. 14-15, 19-20, Algorithms 1-2",
    needs=("slots",),
    params={
        "interval": Param(
            float, 600.0, "seconds between recomputations of the allocation (one AR(1) time slice)", minimum=1e-3
        ),
        "method": Param(
            str, "mpsa", "the allocation: mpsa (Algorithm 1) or mpsa-exact", choices=("mpsa", "mpsa-exact")
        ),
        "level": Param(str, "node", "locality that satisfies Algorithm 2: node or rack", choices=("node", "rack")),
        "default_deadline": Param(
            float, 3600.0, "sojourn target (s) of a queue whose seen jobs carry no deadline", minimum=1e-9
        ),
        "window": Param(
            int, 6, "AR(1) series length: the last this many slices (0: every slice since the start)", minimum=0
        ),
        "liveness": Param(bool, True, "skip the reserve when no slot of the type is busy (mropt's addition)"),
        "lend_idle": Param(
            str,
            "no",
            "idle reserved slots: no (kept idle, sec. 4.4), task_end (lent, back as tasks end), "
            "preempt (lent, reclaimed at once by killing borrowed tasks)",
            choices=LEND_IDLE,
        ),
    },
)
class Mpsa(MpsaSlots, Policy):
    mode = HEARTBEAT

    def start(self, sim: SimView) -> None:
        super().start(sim)
        p = self.params
        self.interval = float(p["interval"])
        self.method = str(p["method"])
        self.level = NODE if p["level"] == "node" else RACK
        self.default_deadline = float(p["default_deadline"])
        self.liveness = bool(p["liveness"])
        self.window = int(p["window"])
        self.lend = str(p["lend_idle"]) != "no"
        self.preempt = p["lend_idle"] == "preempt"
        self.reclaim_due = False  # a reclaim check is scheduled at this instant
        self.reclaimed = 0  # attempts killed to reclaim lent slots (preempt)
        # queues: one per priority value, highest (most urgent) first; known from the jobs' fields
        levels = sorted({j.priority for j in sim.jobs}, reverse=True)
        self.queue_of_priority = {p: k for k, p in enumerate(levels)}
        n = len(levels)
        self.levels = levels
        self.members: list[list[int]] = [[] for _ in range(n)]  # active jobs per queue, submit order
        self.reserved: list[list[int]] = [[0] * n, [0] * n]  # s_i1, s_i2
        # what has been seen: per queue, the series of closed slices and the open slice
        self.rate_series: list[list[float]] = [[] for _ in range(n)]
        self.work_series: list[list[list[float]]] = [[[] for _ in range(n)], [[] for _ in range(n)]]
        self.slice_arrivals = [0] * n
        self.slice_work: list[list[list[float]]] = [[[] for _ in range(n)], [[] for _ in range(n)]]
        self.deadline_sum = [0.0] * n
        self.deadline_count = [0] * n
        self.moves = {("M", "M"): 0, ("M", "R"): 0, ("M", "0"): 0, ("R", "M"): 0, ("R", "0"): 0}
        self.seen = 0
        self.last_tick = 0.0
        self.allocations: list[dict[str, Any]] = []  # (time, s_i1, s_i2) per recomputation, for reports
        # declined-slot memo (speed only): bumped by every change this policy sees (its own
        # launches, arrivals, job ends, timers, node events); see choose()
        self.version = 0
        self.declined: list[tuple[int, ...] | None] = [None, None]
        self.memo = MEMO
        # ``_choose_fast`` (speed only, module docstring): mAssigned_i per slot type and queue, the
        # queue of each member job (-1: none), whether the counts must be summed afresh, and the
        # (stage, nodes, racks) holding each job's map input (nodes None: locality is free there)
        self.held: list[list[int]] = [[0] * n, [0] * n]
        self.queue_of_job = [-1] * len(sim.jobs)
        self.stale = False
        self.input_places = InputPlaces(sim)
        sim.wake_at(self.interval, _TIMER)

    # -- what the simulation shows ---------------------------------------------------------------
    def on_arrival(self, job: int) -> Admission:
        sim = self.sim
        j = sim.jobs[job]
        q = self.queue_of_priority[j.priority]
        self.members[q].append(job)
        self.queue_of_job[job] = q
        self.version += 1
        self.seen += 1
        self.slice_arrivals[q] += 1
        spec = sim.workload.jobs[job]
        path = ""
        for stage in spec.stages:
            work = sum(g.duration * g.count for g in stage.tasks)
            t = MAP if stage.type == "map" else REDUCE
            self.slice_work[t][q].append(work)
            path += "M" if t == MAP else "R"
        path += "0"
        for here, there in zip(path, path[1:]):
            if here == "R" and there == "R":
                there = "0"
            self.moves[(here, there)] += 1
        if j.deadline is not None:
            self.deadline_sum[q] += j.deadline - j.submit
            self.deadline_count[q] += 1
        self.schedule_reclaim()
        return ACCEPT

    def on_job_end(self, job: int) -> None:
        q = self.queue_of_priority[self.sim.jobs[job].priority]
        self.members[q].remove(job)
        self.queue_of_job[job] = -1
        self.input_places.forget(job)
        self.stale = True
        self.version += 1

    def on_attempts_end(self, attempt: AttemptView, outcome: str, count: int) -> None:
        q = self.queue_of_job[attempt.job]
        if q >= 0:
            self.held[attempt.type][q] -= count

    def on_rule_backup(self, job: int, started: bool) -> None:
        self.stale = True  # a backup the rule started or ended counts in its job's running attempts

    def on_stage_end(self, job: int, stage: int) -> None:
        self.schedule_reclaim()  # the next stage's tasks become runnable at this instant

    def on_node(self, node: int, up: bool) -> None:
        self.version += 1
        self.stale = True
        self.schedule_reclaim()

    def on_timer(self, tag: Hashable) -> None:
        if tag == _RECLAIM:
            self.reclaim_due = False
            self.reclaim()
            return
        if tag != _TIMER:
            return
        self.version += 1
        sim = self.sim
        span = sim.now - self.last_tick
        self.last_tick = sim.now
        for q in range(len(self.levels)):
            self.rate_series[q].append(self.slice_arrivals[q] / span if span > 0 else 0.0)
            self.slice_arrivals[q] = 0
            for t in (MAP, REDUCE):
                if self.slice_work[t][q]:
                    values = self.slice_work[t][q]
                    self.work_series[t][q].append(sum(values) / len(values))
                    self.slice_work[t][q] = []
        self.recompute()
        self.reclaim()
        if sim.active or self.seen < len(sim.jobs):
            sim.wake_at(sim.now + self.interval, _TIMER)

    # -- Algorithm 1 on what was seen ----------------------------------------------------------
    def planning_instance(self) -> tuple[PriorityInstance, list[int]] | None:
        """The PriorityInstance of the queues seen so far (and their queue indices), or None."""
        sim = self.sim
        priorities: list[Priority] = []
        index: list[int] = []
        for q in range(len(self.levels)):
            if not self.rate_series[q] or not self.work_series[MAP][q]:
                continue
            values: dict[str, Any] = {}
            history: dict[str, tuple[float, ...]] = {}
            series = {
                "arrival_rate": self.rate_series[q],
                "map_work": self.work_series[MAP][q],
                "reduce_work": self.work_series[REDUCE][q] or self.work_series[MAP][q],
            }
            for key, s in series.items():
                if self.window:
                    s = s[-self.window :]
                if len(s) >= 2:
                    history[key] = tuple(s)
                else:
                    values[key] = s[-1]
            count = self.deadline_count[q]
            deadline = self.deadline_sum[q] / count if count else self.default_deadline
            priorities.append(
                Priority(id=f"p{self.levels[q]}", deadline=max(deadline, 1e-9), history=history, **values)
            )
            index.append(q)
        if not priorities:
            return None
        m = self.moves
        from_map = m[("M", "M")] + m[("M", "R")] + m[("M", "0")]
        from_reduce = m[("R", "M")] + m[("R", "0")]
        routing = {
            "q11": m[("M", "M")] / from_map,
            "q12": m[("M", "R")] / from_map,
            "q21": m[("R", "M")] / from_reduce if from_reduce else 0.0,
        }
        slots = sim.workload  # the configured cluster, not the nodes that happen to be up
        total_map = sum((n.map_slots or 0) * n.count for n in slots.nodes)
        total_reduce = sum((n.reduce_slots or 0) * n.count for n in slots.nodes)
        if total_map < 1 or total_reduce < 1:
            return None
        instance = PriorityInstance(
            map_slots=total_map, reduce_slots=total_reduce, priorities=tuple(priorities), routing=routing
        )
        return instance, index

    def recompute(self) -> None:
        """Run Algorithm 1 (or ``mpsa-exact``) on the planning instance; unseen queues reserve nothing."""
        n = len(self.levels)
        reserved: list[list[int]] = [[0] * n, [0] * n]
        built = self.planning_instance()
        if built is not None:
            instance, index = built
            try:
                solution = solve(instance, self.method)
            except InputError:
                solution = None
            if solution is not None and solution.decision:
                allocation = solution.decision["allocation"]
                for p, q in zip(instance.priorities, index):
                    reserved[MAP][q] = int(allocation[p.id]["map_slots"])
                    reserved[REDUCE][q] = int(allocation[p.id]["reduce_slots"])
        self.reserved = reserved
        self.allocations.append({"time": self.sim.now, "map": list(reserved[MAP]), "reduce": list(reserved[REDUCE])})

    # -- Algorithm 2 -------------------------------------------------------------------------------
    def assigned(self, stype: int) -> list[int]:
        """mAssigned_i / rAssigned_i: running attempts of each queue's jobs."""
        jobs = self.sim.jobs
        return [sum(jobs[j].running[stype] for j in members) for members in self.members]

    def choose(self, node: int, stype: int) -> bool:
        """Algorithm 2 for one free slot of ``stype`` on ``node``: launch a task; False if none."""
        sim = self.sim
        # Declined-slot memo: a slot declined because no queue may take it (the order is empty)
        # stays declined on every node until something changes. Between two calls with the same
        # key nothing the order depends on can have changed: attempts start only through this
        # policy's launches (version), every attempt end lowers busy, and the other changes of
        # members, runnable tasks and reservations come through the hooks that bump version.
        key = (self.version, sim.busy[MAP], sim.busy[REDUCE], sim.runnable[stype], sim.total_slots[stype])
        if MEMO and self.declined[stype] == key:
            return False
        jobs = sim.jobs
        assigned = self.assigned(stype)
        wants = [any(jobs[j].runnable[stype] for j in members) for members in self.members]
        total = sim.total_slots[stype]
        order = algorithm2_order(assigned, self.reserved[stype], total, wants)
        if not order and (self.lend or (self.liveness and sim.busy[stype] == 0)) and any(wants):
            order = algorithm2_order(assigned, self.reserved[stype], total, wants, liveness_open=True)
        if not order:
            self.declined[stype] = key
            return False
        self.version += 1  # (a launch may follow; bumping on a failed try only costs a recomputation)
        if stype == MAP:  # first the hungriest queue with a local task
            for q in order:
                for j in self.members[q]:
                    if jobs[j].runnable[MAP] and sim.launch(j, node, MAP, self.level) >= 0:
                        return True
        return any(jobs[j].runnable[stype] and sim.launch(j, node, stype, ANY) >= 0 for j in self.members[order[0]])

    def assign(self, node: int) -> None:
        """A heartbeat of ``node``: every free slot, maps first, one run of Algorithm 2 each (``choose``
        under ``reference``, else ``_choose_fast``: the same decisions)."""
        if self.reference:
            self._assign_reference(node)
        else:
            self._assign_fast(node)

    def _assign_reference(self, node: int) -> None:
        sim = self.sim
        for stype in (MAP, REDUCE):
            while sim.free[stype][node] > 0 and sim.runnable[stype] > 0:
                if not self.choose(node, stype):
                    break

    # -- lent slots taken back (lend_idle = preempt) ----------------------------------------------
    def schedule_reclaim(self) -> None:
        """Check for lent slots to take back later at this instant, once new work is runnable."""
        if self.preempt and not self.reclaim_due:
            self.reclaim_due = True
            self.sim.wake_at(self.sim.now, _RECLAIM)

    def reclaim(self) -> None:
        """Kill borrowed attempts for queues below their reservation with work (module docstring)."""
        if not self.preempt:
            return
        sim = self.sim
        jobs = sim.jobs
        for stype in (MAP, REDUCE):
            reserved = self.reserved[stype]
            assigned = self.assigned(stype)
            total = sim.total_slots[stype]
            owed = 0
            for q, members in enumerate(self.members):
                if assigned[q] < reserved[q]:
                    pending = sum(jobs[j].runnable[stype] for j in members)
                    owed += min(reserved[q] - assigned[q], pending)
            lent = -shared_left(assigned, reserved, total)
            kills = min(lent, owed - (total - sim.busy[stype]))
            if kills <= 0:
                continue
            queue_of = {j: q for q, members in enumerate(self.members) for j in members}
            victims: list[list[tuple[float, int]]] = [[] for _ in self.members]
            for a in sim.running.values():
                owner = queue_of.get(a.job)
                if a.type == stype and not a.speculative and owner is not None and assigned[owner] > reserved[owner]:
                    victims[owner].append((a.start, a.id))
            for v in victims:
                v.sort()  # latest started last: popped first
            for _ in range(kills):
                over = [q for q in range(len(victims)) if victims[q] and assigned[q] > reserved[q]]
                if not over:
                    break
                q = min(over, key=lambda i: (hunger_degree(assigned[i], reserved[i]), -i))
                sim.kill(victims[q].pop()[1], "killed")
                assigned[q] -= 1
                self.reclaimed += 1
            self.version += 1
