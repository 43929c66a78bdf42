"""``fair`` in heartbeat mode as one compiled loop (numba): the plain rules of
:mod:`mropt.sim.policies.fair` (``FairAssign._assign_reference``, ``FairUpdate._update_reference``), of
:mod:`mropt.sim.heartbeat_offers` and of the engine, over arrays (issue 32).

What it runs, and nothing else (:func:`mropt.sim.compiled.fair_engine.why_not`): ``fair`` without
preemption and without pools listed by the workload (each job in its pool, its user's unless it names one,
with the allocation file's defaults: minShare 0, weight 1, no caps, fair mode), heartbeat mode on a
cluster of map and reduce slots and two resources, every task with a demand, or of slots alone, no task
with a demand (then ``free0``, ``free1`` and the demands are 0 and the room test counts slots), jobs of a
map stage and perhaps a reduce stage, each of one duration and one demand (the map stages' replicas
generated, or none; the reduces' none); no speculation, faults, straggler draws, slow-start or live
utilisation rows. The shapes of an ``mropt import-alibaba --workload --slots`` day and of the SWIM
Facebook 2009 day (``benchmarks/bench_sim.py`` section 3). The reduce side is
:mod:`mropt.sim.compiled.fair_reduce`'s, inlined here. Step for step:

* **the event order** (:mod:`mropt.sim.event_queue`): an instant runs its completions (in the order they
  were scheduled), its arrivals (in (submit, index) order), then its heartbeats (in the order they were
  scheduled), a completion scheduled at the instant's own time (a task of no time) before the next
  heartbeat; then, after new work, every node whose heartbeat is not scheduled is (``_schedule_all``).
  Completions and heartbeats share one heap, ordered by (time, class, sequence number);
* **a node's heartbeat** (``HeartbeatOffers``): scheduled at the node's phase ``interval x node / nodes``
  plus whole intervals when it has room (``_room``: a free slot of a type with runnable tasks, and with
  demands a pending task of a type with a free slot whose demand fits its free resources,
  ``DemandIndex.any_fits``; :func:`~mropt.sim.compiled.heartbeats.room_two`), when its capacity frees
  (each member of an ending batch, in order) or after new work; at the heartbeat, with room, the policy is offered the
  node (``beat``), and a node that still has room beats again an interval later. ``stall_limit``
  heartbeats in a row that launch nothing stall the run as the Python loop does (its queue cleared, the
  arrivals with it; each later instant runs one event);
* **update()** at the first heartbeat at or after each ``update_interval`` tick or after an arrival: the
  runnable totals of each slot type (every active job's running plus runnable tasks of the type, the sum
  of the pools' demands);
* **the heartbeat** (``_assign_reference``): the skipped jobs of the last heartbeat waited the time since
  it; the CapBasedLoadManager's verdict per slot type (reported tasks < ceil(slots x min(1, runnable
  total / slots))); the maps, then the reduces (:func:`~mropt.sim.compiled.fair_reduce.assign_reduces`),
  or the reduces first where the tracker reported more maps than reduces (the plain rule picks a type
  per task, but a type's verdict and cap move only with its own launches: each type goes on until it
  is rejected), one task in all without ``assign_multiple``. The maps: one at a time until the
  heartbeat's cap (the free map slots, or ``assign_multiple_maps``; one without ``assign_multiple``),
  every runnable map running, or no job launching one: the pools with a
  candidate (a job with pending maps) in key order, each pool's candidates in key order
  (:mod:`mropt.sim.compiled.fair_order`), each job visited and asked for a map at the level delay
  scheduling allows (``_allowed_level``); the first that launches one takes it. A job that could not
  launch on the node cannot later in the heartbeat (its allowed level and tasks change only with its own
  launches, the node's free capacity only shrinks), so it is passed by, as ``FairOffers`` does; the jobs
  visited that launched nothing are the heartbeat's skipped jobs;
* **the launch** (``Launches.launch_tasks``, ``Stage.take``): a free slot, then the demand must fit (1e-9
  over allowed);
  the lowest pending task with a replica on the node, else in its rack (level RACK or ANY allowed), else
  the lowest pending task (ANY); the job's level becomes the task's and its wait 0. Batches join as in
  :mod:`mropt.sim.compiled.drf_core` (a batch's stage too: ``s_stage``, ``o_stage``);
* **a batch's end** (``Completions._done_batch``): its slots and demands free, its job's place in the
  orders (``on_attempts_end``); a map stage that ends (``_stage_done``) opens the job's reduces (new
  work: every node's heartbeat, as an arrival's) or ends the job, a reduce stage's end ends it;
* **the utilisation rows** of each instant (``Recorder.flush``; :mod:`mropt.sim.compiled.rows`), which the
  driver moves to a file at its pauses (:mod:`mropt.sim.spilled_rows`); a run with reduces writes none:
  its rows are built after the run from its attempts and row breaks, as the Python engine's.

:func:`step` runs instants until the run ends, the next instant is past ``until``, the event count
reaches ``stop_events`` or the buffers are nearly full (:mod:`mropt.sim.compiled.driver` empties them and
calls it again); the state lives in the arrays it is given. Without demands, the Python engine runs a
heartbeat alone at its time before the queue's next instant outside its queue
(:mod:`mropt.sim.lone_beats`) and looks at the watch only after its queue's instants: the loop does not
pause for the watch before such an instant (:func:`~mropt.sim.compiled.heartbeats.lone_next`; ``NO_LOOK`` tells the driver at a pause
for its buffers), and such a heartbeat without room leaves the clock where it was.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from mropt.sim.compiled.drf_index import build_stacks, ev_pop, ev_push, pop_place
from mropt.sim.compiled.fair_order import fit_set, job_move, pool_move
from mropt.sim.compiled.fair_reduce import assign_reduces, end_reduces, open_reduces
from mropt.sim.compiled.heartbeats import lone_next, next_beat, room_two
from mropt.sim.compiled.rows import emit, touch

_FIT_EPS = 1e-9  # mropt.sim.capacity.FIT_EPS and mropt.sim.demand_index._EPS
_PENDING, _RUNNING, _DONE = 0, 1, 2  # mropt.sim.task_states
_NODE, _RACK, _ANY, _NONE = 0, 1, 2, -1  # mropt.sim.state
#: a heartbeat's sequence number in the event heap is its push order plus this: after every completion
#: of its time (class 3 after class 0: ``mropt.sim.offers``)
HEARTBEAT_SEQ = 1 << 60
#: the workload, as arrays (read only)
Work = namedtuple(
    "Work",
    "arrivals submit j_n j_off j_dur j_d0 j_d1 j_w j_pool j_class p_off c_d0 c_d1"
    " replicas node_rack node_speed node_slots phase j_nr j_off_r j_dur_r j_d0r j_d1r j_class_r node_rslots",
)
#: the run's state, as arrays (changed in place)
State = namedtuple(
    "State",
    "state a_task a_node pending fresh finished running first_start finish end_order built"
    " last_level waited j_key j_visit j_launch j_fail skipped visited"
    " p_running p_n p_key p_fail ck cs cj ok op c_pending fit"
    " free0 free1 fslot beating et es eslot"
    " s_job s_first s_count s_start s_end s_level free_slots"
    " o_job o_first o_count o_start o_end o_level bt ba be p_row p_touch touched rt rk rp rb rc"
    " map_end r_pending r_fresh r_finished running_r j_key_r j_fail_r p_running_r p_n_r p_key_r p_fail_r"
    " ck_r cs_r cj_r ok_r op_r c_pending_r fit_r rslot s_stage o_stage",
)
#: per job its locality stacks (a numba typed list), built at its first launch, dropped at its end
Lists = namedtuple("Lists", "stacks")
DONE, PAUSED, UNTIL = 0, 1, 2
#: the int64 registers (``R``); the names the driver reads are those of drf_core
AI, N_EV, NEXT_ATTEMPT, OPEN, EVENTS, RUNNABLE, N_ENDED, N_BREAKS, N_JOB_END, N_FREE, SEQ, STARTED = range(12)
#: running maps; running plus pending maps of the active jobs; heartbeats offered to the policy (each one's
#: stamp); pools in the order; the last heartbeat's skipped jobs; heartbeats in a row that launched
#: nothing; the run stalled; update() due at the next heartbeat (an arrival); a heartbeat was offered
BUSY, LIVE, HEARTBEAT, N_ORDER, N_SKIPPED, IDLE_BEATS, STALLED, FORCE_UPDATE, SEEN_BEAT = range(12, 21)
#: the rows in their buffer, the busy maps of the last cluster row (-1: none yet), the pools given a row
#: index, the pools touched at the instant, the instant's stamp
N_ROWS, ROW_BUSY, N_INDEXED, N_TOUCHED, INSTANT = range(21, 26)
#: the reduce side's: runnable reduces, running reduces, running plus runnable reduces of the active jobs,
#: pools in the reduce order
RUNNABLE_R, BUSY_R, LIVE_R, N_ORDER_R = range(26, 30)
#: the loop paused before an instant the Python engine runs as a lone heartbeat: the driver does not look
#: at the watch there (:func:`~mropt.sim.compiled.heartbeats.lone_next`)
NO_LOOK = 30
N_REGISTERS = 31
#: the float64 registers (``F``): the last instant's time, the first's, the open batch's running time, the
#: clock, update()'s next tick, the last heartbeat's time and the runnable totals update() last computed
#: (maps, reduces)
LAST, FIRST_TIME, OPEN_WORK, NOW, NEXT_UPDATE, LAST_BEAT, RUNNABLE_TOTAL, RUNNABLE_TOTAL_R = range(8)
N_FLOAT_REGISTERS = 8


@njit(cache=True)
def step(W, P, Q, S, L, R, F, until, stop_events):
    """Run instants from the state (module docstring); DONE, PAUSED or UNTIL. (The arrays are taken out
    of the tuples once, here: the heartbeat is inline, not a call, for the reason drf_core's are.)"""
    arrivals, submit, j_n, j_off, j_dur = W.arrivals, W.submit, W.j_n, W.j_off, W.j_dur
    j_d0, j_d1, j_w, j_pool, j_class, p_off = W.j_d0, W.j_d1, W.j_w, W.j_pool, W.j_class, W.p_off
    c_d0, c_d1, replicas, node_rack, node_speed = W.c_d0, W.c_d1, W.replicas, W.node_rack, W.node_speed
    node_slots, phase, node_rslots, j_nr, j_off_r, j_d0r, j_d1r = (
        W.node_slots, W.phase, W.node_rslots, W.j_nr, W.j_off_r, W.j_d0r, W.j_d1r
    )  # fmt: skip
    state, a_task, a_node, pending, fresh = S.state, S.a_task, S.a_node, S.pending, S.fresh
    finished, running, first_start, finish, end_order = S.finished, S.running, S.first_start, S.finish, S.end_order
    built, last_level, waited, j_key = S.built, S.last_level, S.waited, S.j_key
    j_visit, j_launch, j_fail, skipped, visited = S.j_visit, S.j_launch, S.j_fail, S.skipped, S.visited
    p_running, p_n, p_key, p_fail, ck, cs, cj = S.p_running, S.p_n, S.p_key, S.p_fail, S.ck, S.cs, S.cj
    ok, op, c_pending, fit = S.ok, S.op, S.c_pending, S.fit
    free0, free1, fslot, beating, et, es, eslot = S.free0, S.free1, S.fslot, S.beating, S.et, S.es, S.eslot
    s_job, s_first, s_count, s_start, s_end, s_level = S.s_job, S.s_first, S.s_count, S.s_start, S.s_end, S.s_level
    free_slots = S.free_slots
    o_job, o_first, o_count, o_start, o_end, o_level = S.o_job, S.o_first, S.o_count, S.o_start, S.o_end, S.o_level
    bt, ba, be, rt, rk, rp, rb, rc = S.bt, S.ba, S.be, S.rt, S.rk, S.rp, S.rb, S.rc
    p_row, p_touch, touched = S.p_row, S.p_touch, S.touched
    map_end, rslot, s_stage, o_stage, fit_r = S.map_end, S.rslot, S.s_stage, S.o_stage, S.fit_r
    stacks_of = L.stacks
    factor_rack, factor_any, interval, update_interval = P[0], P[1], P[2], P[3]
    node_delay, rack_delay, total_slots, total_r = P[4], P[5], P[6], P[7]
    slots_map, slots_reduce = Q[6], Q[7]  # (the cluster's, for its rows)
    placed, batching, n_racks, multiple, cap, stall_limit = Q[0] != 0, Q[1] != 0, Q[2], Q[3] != 0, Q[4], Q[5]
    cap_r, demands, rows_inline = Q[8], Q[9] != 0, Q[10] != 0  # (no demands: the room test counts slots)
    regs_r = (RUNNABLE_R, BUSY_R, N_ORDER_R, NEXT_ATTEMPT, OPEN, N_FREE, N_EV, SEQ)  # (``assign_reduces``')
    fregs_r = (RUNNABLE_TOTAL_R, OPEN_WORK)
    fit_size = len(fit) >> 1
    n_jobs = len(j_n)
    n_nodes = len(node_rack)
    in_flight = len(s_job)  # (the batches' slots: the most that can run at once)
    width = replicas.shape[1]
    local = placed and width > 0  # (``_no_locality``: without replicas every map is at level ANY)
    empty = np.empty(0, np.int32)
    while True:
        # a pause at the end of an instant: a look of the watch, or buffers to empty. Without demands the
        # Python engine runs a lone heartbeat outside its queue and looks at the watch only after the
        # queue's instants (:mod:`mropt.sim.lone_beats`): no look before such a one (``NO_LOOK``)
        full = R[N_ENDED] + in_flight > len(o_job) or R[N_BREAKS] == len(bt) or R[N_ROWS] + 2 + len(touched) > len(rt)
        if R[EVENTS] >= stop_events or full:
            lone = (
                R[EVENTS] >= stop_events
                and not demands
                and lone_next(R[N_EV], R[AI], R[STALLED], R[N_FREE], et, es, submit, arrivals, until, n_jobs, in_flight)
            )
            if full or not lone:
                R[NO_LOOK] = 1 if lone else 0
                return PAUSED
        arriving = R[AI] < n_jobs and R[STALLED] == 0  # (a stalled run's queue was cleared: its arrivals too)
        now = et[0] if R[N_EV] > 0 else np.inf
        if arriving and submit[arrivals[R[AI]]] < now:
            now = submit[arrivals[R[AI]]]
        if now == np.inf:
            R[NO_LOOK] = 0
            return DONE
        if now > until:
            F[NOW] = until
            R[NO_LOOK] = 0
            return UNTIL
        if R[STARTED] == 0:
            R[STARTED] = 1
            F[FIRST_TIME] = now
        if now == F[LAST]:  # the instant before wrote its rows at this time: a break
            b = R[N_BREAKS]
            bt[b], ba[b], be[b] = now, R[NEXT_ATTEMPT], R[N_ENDED]
            R[N_BREAKS] = b + 1
        # (a lone heartbeat that finds no room leaves the Python engine's clock where it was: ``HeldBeats``)
        was = F[NOW]
        lone = not demands and lone_next(
            R[N_EV], R[AI], R[STALLED], R[N_FREE], et, es, submit, arrivals, until, n_jobs, in_flight
        )
        F[LAST] = F[NOW] = now
        new_work = False
        while True:  # the instant's events: completions, arrivals, heartbeats (``event_queue.drain``)
            if R[N_EV] > 0 and et[0] == now and es[0] < HEARTBEAT_SEQ:
                # -- a completion (class 0): a batch ends
                slot = eslot[0]
                R[N_EV] = ev_pop(et, es, eslot, R[N_EV])
                R[EVENTS] += 1
                if slot == R[OPEN]:  # a task of no time, ending at its start
                    R[OPEN] = -1
                j = s_job[slot]
                st = s_stage[slot]  # (0: the map stage, 1: the reduce stage; its slot type too)
                k = s_count[slot]
                first = s_first[slot]
                if st == 0:
                    off, d0, d1, fs = j_off[j], j_d0[j], j_d1[j], fslot
                else:
                    off, d0, d1, fs = j_off_r[j], j_d0r[j], j_d1r[j], rslot
                for m in range(k):  # each member's slot and demand, then its node's heartbeat (``freed``)
                    node = a_node[first + m]
                    state[off + a_task[first + m]] = _DONE
                    fs[node] += 1
                    free0[node] += d0
                    free1[node] += d1
                    if not beating[node] and room_two(
                        node,
                        R[RUNNABLE],
                        R[RUNNABLE_R],
                        fslot,
                        rslot,
                        demands,
                        free0,
                        free1,
                        c_d0,
                        fit,
                        fit_r,
                        fit_size,
                    ):
                        beating[node] = True
                        t = next_beat(phase[node], now, interval)
                        R[N_EV] = ev_push(et, es, eslot, R[N_EV], t, HEARTBEAT_SEQ + R[SEQ], -1 - node)
                        R[SEQ] += 1
                e = R[N_ENDED]
                o_job[e], o_first[e], o_count[e] = j, first, k
                o_start[e], o_end[e], o_level[e], o_stage[e] = s_start[slot], s_end[slot], s_level[slot], st
                R[N_ENDED] = e + 1
                free_slots[R[N_FREE]] = slot
                R[N_FREE] += 1
                if st != 0:  # reduces: their counts, orders, and perhaps the job's end
                    R[BUSY_R] -= k
                    R[LIVE_R] -= k
                    if end_reduces(j, k, W, S, R, N_ORDER_R):
                        finish[j] = now
                        end_order[R[N_JOB_END]] = j
                        R[N_JOB_END] += 1
                else:  # maps
                    R[BUSY] -= k
                    R[LIVE] -= k
                    finished[j] += k
                    # on_attempts_end: the job's place among its pool's candidates, the pool's in the order
                    p = j_pool[j]
                    running[j] -= k
                    if pending[j] > 0:
                        r = running[j] / j_w[j]
                        p_n[p] = job_move(ck, cs, cj, p_off[p], p_n[p], j_key[j], r, submit[j], j)
                        j_key[j] = r
                    p_running[p] -= k
                    R[N_TOUCHED] = touch(p, R[INSTANT], R[N_TOUCHED], p_touch, touched)  # (its utilisation rows)
                    if p_n[p] > 0:
                        r = p_running[p] / 1.0
                        R[N_ORDER] = pool_move(ok, op, R[N_ORDER], p_key[p], r, p)
                        p_key[p] = r
                    if finished[j] == j_n[j]:  # the map stage ends (``_stage_done``): the reduces open, or the job ends
                        map_end[j] = now
                        if built[j]:  # (its locality stacks freed)
                            stacks_of[j] = empty
                        if j_nr[j] > 0:
                            open_reduces(j, W, S, R, RUNNABLE_R, LIVE_R, N_ORDER_R, fit_size)
                            new_work = True
                        else:
                            finish[j] = now
                            end_order[R[N_JOB_END]] = j
                            R[N_JOB_END] += 1
            elif arriving and submit[arrivals[R[AI]]] == now:
                # -- an arrival (class 2): its tasks runnable, a candidate of its pool, update() due
                j = arrivals[R[AI]]
                R[AI] += 1
                arriving = R[AI] < n_jobs
                R[EVENTS] += 1
                R[FORCE_UPDATE] = 1  # (JobListener.jobAdded -> update())
                n = j_n[j]
                R[RUNNABLE] += n
                R[LIVE] += n
                c = j_class[j]
                if c_pending[c] == 0:
                    fit_set(fit, fit_size, c, c_d1[c])
                c_pending[c] += n
                p = j_pool[j]
                was = p_n[p]
                p_n[p] = job_move(ck, cs, cj, p_off[p], was, np.nan, 0.0, submit[j], j)
                j_key[j] = 0.0
                if was == 0:
                    r = p_running[p] / 1.0
                    R[N_ORDER] = pool_move(ok, op, R[N_ORDER], np.nan, r, p)
                    p_key[p] = r
                new_work = True
            elif R[N_EV] > 0 and et[0] == now:
                # -- a heartbeat (class 3): ``HeartbeatOffers.beat``
                node = -1 - eslot[0]
                R[N_EV] = ev_pop(et, es, eslot, R[N_EV])
                R[EVENTS] += 1
                beating[node] = False
                if not room_two(
                    node, R[RUNNABLE], R[RUNNABLE_R], fslot, rslot, demands, free0, free1, c_d0, fit, fit_r, fit_size
                ):
                    if lone:
                        F[NOW] = was
                    if R[STALLED] != 0:
                        break
                    continue
                before = R[NEXT_ATTEMPT]
                # update() when due (``_update_reference``): the runnable total, every active job's
                # running and pending tasks (whole numbers: the sum is exact in any order)
                if R[FORCE_UPDATE] != 0 or now >= F[NEXT_UPDATE]:
                    R[FORCE_UPDATE] = 0
                    F[NEXT_UPDATE] = (np.floor(now / update_interval + 1e-9) + 1.0) * update_interval
                    F[RUNNABLE_TOTAL] = float(R[LIVE])
                    F[RUNNABLE_TOTAL_R] = float(R[LIVE_R])
                # updateLocalityWaitTimes: the last heartbeat's skipped jobs waited the time since it
                since = now - F[LAST_BEAT] if R[SEEN_BEAT] != 0 else 0.0
                R[SEEN_BEAT] = 1
                F[LAST_BEAT] = now
                for i in range(R[N_SKIPPED]):
                    waited[skipped[i]] += since
                R[HEARTBEAT] += 1
                hb = R[HEARTBEAT]
                # the heartbeat's caps and CapBasedLoadManager's verdicts on the reported maps and reduces
                s = node_slots[node]
                reported = s - fslot[node]
                most = (fslot[node] if cap == -1 else cap) if multiple else 1  # (the heartbeat's cap)
                load = min(1.0, F[RUNNABLE_TOTAL] / total_slots) if total_slots > 0 else 0.0
                allowed = reported < np.ceil(s * load)
                s = node_rslots[node]
                reported_r = s - rslot[node]
                most_r = (rslot[node] if cap_r == -1 else cap_r) if multiple else 1
                load = min(1.0, F[RUNNABLE_TOTAL_R] / total_r) if total_r > 0 else 0.0
                allowed_r = reported_r < np.ceil(s * load)
                # maps first when the tracker reported no more maps than reduces, each type until it is
                # rejected (each type's verdict moves only with its own launches); one task in all
                # without assign_multiple
                reduce_first = reported_r < reported
                rack = node_rack[node]
                n_visited = 0
                assigned = 0
                assigned_r = 0
                for side in range(2):  # (one call of the inlined reduce side: one copy of its code)
                    if side == (0 if reduce_first else 1):
                        if allowed_r and (multiple or assigned == 0):
                            assigned_r = assign_reduces(
                                node, now, hb, most_r, batching, fit_size, W, S, R, F, regs_r, fregs_r
                            )
                        continue
                    start = 0  # the order's first pools, each with every candidate passed by at this heartbeat
                    while (
                        allowed and (multiple or assigned_r == 0) and assigned != most and R[BUSY] != F[RUNNABLE_TOTAL]
                    ):
                        # ``_launch_first``: the first pool, and job of it, that launches a map on the node
                        chosen = -1
                        task = -1
                        level = _NONE
                        p = -1
                        i = start
                        while i < R[N_ORDER]:
                            p = op[i]
                            if p_fail[p] != hb:
                                base = p_off[p]
                                for x in range(p_n[p]):
                                    j = cj[base + x]
                                    if j_fail[j] == hb:
                                        continue
                                    if j_visit[j] != hb:
                                        j_visit[j] = hb
                                        visited[n_visited] = j
                                        n_visited += 1
                                    if (  # (``launch_tasks``: a free slot, then the demand's fit)
                                        fslot[node] > 0
                                        and j_d0[j] <= free0[node] + _FIT_EPS
                                        and j_d1[j] <= free1[node] + _FIT_EPS
                                    ):
                                        # the level delay scheduling allows (``_allowed_level``), the task
                                        # (``Stage.take``): node-local, rack-local, then any
                                        may = _ANY
                                        if local:
                                            lv = last_level[j]
                                            w = waited[j]
                                            if lv == _NODE:
                                                if w >= node_delay + rack_delay:
                                                    may = _ANY
                                                elif w >= node_delay:
                                                    may = _RACK
                                                else:
                                                    may = _NODE
                                            elif lv == _RACK:
                                                may = _ANY if w >= rack_delay else _RACK
                                        off = j_off[j]
                                        if placed:
                                            if not built[j]:
                                                stacks_of[j] = build_stacks(
                                                    replicas, off, j_n[j], node_rack, n_nodes, n_racks
                                                )
                                                built[j] = True
                                            stacks = stacks_of[j]
                                            task = pop_place(stacks, 2 + 2 * node, state, off)
                                            if task >= 0:
                                                level = _NODE
                                            elif may >= _RACK:
                                                task = pop_place(stacks, 2 + 2 * n_nodes + 2 * rack, state, off)
                                                if task >= 0:
                                                    level = _RACK
                                        if task < 0 and (may == _ANY or not placed):  # (``Stage.take_far``)
                                            task = fresh[j]
                                            while state[off + task] != _PENDING:
                                                task += 1
                                            fresh[j] = task
                                            level = _ANY if local else _NONE
                                        if task >= 0:
                                            chosen = j
                                            break
                                    j_fail[j] = hb  # it cannot launch here at this heartbeat
                                if chosen >= 0:
                                    break
                                p_fail[p] = hb  # every candidate of the pool passed by
                            if i == start:
                                start += 1
                            i += 1
                        if chosen < 0:
                            break
                        # the launch (``launch_tasks``): the task on the node
                        j = chosen
                        off = j_off[j]
                        state[off + task] = _RUNNING
                        pending[j] -= 1
                        R[RUNNABLE] -= 1
                        R[BUSY] += 1
                        c = j_class[j]
                        c_pending[c] -= 1
                        if c_pending[c] == 0:
                            fit_set(fit, fit_size, c, np.inf)
                        work = j_dur[j] / node_speed[node]
                        if level == _RACK:
                            work *= factor_rack
                        elif level == _ANY:
                            work *= factor_any
                        aid = R[NEXT_ATTEMPT]
                        R[NEXT_ATTEMPT] = aid + 1
                        a_task[aid] = task
                        a_node[aid] = node
                        b = R[OPEN]
                        if (
                            b >= 0
                            and F[OPEN_WORK] == work
                            and s_start[b] == now
                            and s_job[b] == j
                            and s_stage[b] == 0
                            and s_level[b] == level
                        ):
                            s_count[b] += 1  # (it joins the open batch)
                        else:
                            R[N_FREE] -= 1
                            b = free_slots[R[N_FREE]]
                            s_job[b], s_first[b], s_count[b], s_stage[b] = j, aid, 1, 0
                            s_start[b], s_end[b], s_level[b] = now, now + work, level
                            R[N_EV] = ev_push(et, es, eslot, R[N_EV], now + work, R[SEQ], b)
                            R[SEQ] += 1
                            R[OPEN] = b if batching else -1
                            F[OPEN_WORK] = work
                        free0[node] -= j_d0[j]
                        free1[node] -= j_d1[j]
                        fslot[node] -= 1
                        if np.isnan(first_start[j]):
                            first_start[j] = now
                        last_level[j] = _ANY if level == _NONE else level  # LocalityLevel.fromTask
                        waited[j] = 0.0
                        j_launch[j] = hb
                        assigned += 1
                        # ``_launched``: the job's place among its pool's candidates, the pool's in the order
                        running[j] += 1
                        r = running[j] / j_w[j] if pending[j] > 0 else np.nan
                        p_n[p] = job_move(ck, cs, cj, p_off[p], p_n[p], j_key[j], r, submit[j], j)
                        j_key[j] = r
                        p_running[p] += 1
                        if p_row[p] < 0:  # its index in the rows: pools in the order of their first start
                            R[N_INDEXED] += 1
                            p_row[p] = R[N_INDEXED]
                        R[N_TOUCHED] = touch(p, R[INSTANT], R[N_TOUCHED], p_touch, touched)
                        r = p_running[p] / 1.0 if p_n[p] > 0 else np.nan
                        R[N_ORDER] = pool_move(ok, op, R[N_ORDER], p_key[p], r, p)
                        p_key[p] = r
                # the jobs visited that launched no map: skipped (they wait until the next heartbeat)
                n_skipped = 0
                for i in range(n_visited):
                    j = visited[i]
                    if j_launch[j] != hb:
                        skipped[n_skipped] = j
                        n_skipped += 1
                R[N_SKIPPED] = n_skipped
                # ``beat``'s end: the stall count; a node with room beats again an interval later
                if R[NEXT_ATTEMPT] == before:
                    R[IDLE_BEATS] += 1
                    if R[IDLE_BEATS] > stall_limit:
                        R[STALLED] = 1
                        break
                else:
                    R[IDLE_BEATS] = 0
                if room_two(
                    node, R[RUNNABLE], R[RUNNABLE_R], fslot, rslot, demands, free0, free1, c_d0, fit, fit_r, fit_size
                ):
                    beating[node] = True
                    t = now + interval
                    R[N_EV] = ev_push(et, es, eslot, R[N_EV], t, HEARTBEAT_SEQ + R[SEQ], -1 - node)
                    R[SEQ] += 1
            else:
                break
            if R[STALLED] != 0:  # (a stalled run's instants end after their first event)
                break
        if R[STALLED] != 0:  # the engine clears its queue (and the arrivals in it)
            R[N_EV] = 0
        if new_work:  # ``_schedule_all``: every node whose heartbeat is not scheduled, in order
            for node in range(n_nodes):
                if not beating[node] and room_two(
                    node, R[RUNNABLE], R[RUNNABLE_R], fslot, rslot, demands, free0, free1, c_d0, fit, fit_r, fit_size
                ):
                    beating[node] = True
                    t = next_beat(phase[node], now, interval)
                    R[N_EV] = ev_push(et, es, eslot, R[N_EV], t, HEARTBEAT_SEQ + R[SEQ], -1 - node)
                    R[SEQ] += 1
        # the utilisation rows of the instant (``Recorder.flush``; :mod:`mropt.sim.compiled.rows`)
        # (a run with reduces builds them after the run from its attempts: ``Recorder.keep_row_marks``)
        if rows_inline:
            R[N_ROWS] = emit(
                now, R[N_ROWS], R[BUSY], R[ROW_BUSY], slots_map, slots_reduce, R[N_TOUCHED], touched, p_row,
                p_running, rt, rk, rp, rb, rc,
            )  # fmt: skip
            R[ROW_BUSY] = R[BUSY]
        R[N_TOUCHED] = 0
        R[INSTANT] += 1
