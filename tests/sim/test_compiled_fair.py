"""The compiled ``fair`` core (``mropt.sim.compiled.fair_engine``) runs a simulation as the Python engine does.

``fair_engine.run_compiled(sim)`` runs a built :class:`~mropt.sim.engine.Simulation` of ``fair``
(Hadoop 1.0.3's Fair Scheduler, heartbeat mode) by a numba loop and leaves it as ``sim.run()`` would.
On seeded random workloads of the shape it supports (``fair_compiled_helpers.fair_workload``: nodes of
map slots and cpu and mem, jobs of one map stage of one task group with a demand of both, pools the
users, a generated placement or none; preemption off, the other Fair parameters random) the compiled
run must give the Python engine's event log, events, clock, stop, stall, unfinished causes and every
column of the job, attempt and utilisation tables, bit for bit; against the plain rule
(``reference=True``) too; stopped at ``until``, by a watch, or stalled (``stall_limit``); routed by
``run_simulation(sim, "fair", "compiled")``. The draws must reach the cases they are drawn for. Two
scenarios worked by hand from the Fair rules (fair.py's docstring) check both engines with no
comparison between them. ``why_not`` names a reason for what the core does not run, and ``auto``
then runs the Python engine.

numba compiles the core once per process (then loads its cache): one module-scoped fixture imports it;
every test that needs it skips while ``fair_engine`` does not exist.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from mropt.model.errors import InputError  # noqa: E402
from mropt.model.workload import WorkloadInstance  # noqa: E402
from mropt.sim.engine import Simulation  # noqa: E402
from mropt.sim.engines import run_simulation  # noqa: E402
from mropt.sim.policy import make_policy  # noqa: E402
from mropt.sim.speculation.table import make_speculation  # noqa: E402
from mropt.sim.state import ANY, MAP, NODE, RACK  # noqa: E402
from mropt.sim.verify import verify_simulation  # noqa: E402

from compiled_helpers import _counting_watch  # noqa: E402
from fair_compiled_helpers import (  # noqa: E402
    assert_same_fair_runs,
    compiled_fair_run,
    compiled_fixture,  # noqa: F401  (the fixture compiled)
    fair_case,
    fair_differences,
    fair_outcome,
    fair_sim,
    left_state,
    python_fair_run,
    task_rows,
)
from sim_helpers import workload  # noqa: E402

# ---------------------------------------------------------------------------------------------
# 1. the compiled run is the Python engine's run

CHUNKS = 6
PER_CHUNK = 25  # 150 workloads in all


def _options(k: int) -> dict[str, Any]:
    """Engine options of the k-th workload of a chunk: attempts one by one (no batches) in 1 of 8,
    no utilisation rows in 1 of 8."""
    if k % 8 == 5:
        return {"batch": False}
    if k % 8 == 6:
        return {"record_utilisation": False}
    return {}


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_compiled_run_is_the_python_engines_run_on_random_workloads(compiled: Any, chunk: int) -> None:
    # a failure names its workload: fair_case(random.Random(f"compiled-fair-{chunk}")) drawn k + 1 times
    rng = random.Random(f"compiled-fair-{chunk}")
    for k in range(PER_CHUNK):
        w, params = fair_case(rng)
        assert_same_fair_runs(compiled, w, f"chunk {chunk}, workload {k}", params, **_options(k))


def test_compiled_run_is_the_plain_rules_run(compiled: Any) -> None:
    # make_policy("fair", reference=True): pools and jobs sorted afresh before every task, update()
    # recomputing every pool and job, no quiet heartbeats in bulk
    rng = random.Random("compiled-fair-reference")
    for k in range(30):
        w, params = fair_case(rng)
        assert_same_fair_runs(compiled, w, f"reference workload {k}", params, reference=True)


class _Counts:
    """What the Python plain rule did on a run: the level delay scheduling allowed for each map it
    launched, heartbeats that launched nothing, heartbeats that launched several tasks."""

    def __init__(self) -> None:
        self.levels: Counter[int] = Counter()
        self.empty = 0
        self.several = 0


def _counted_run(w: WorkloadInstance, params: dict[str, Any], counts: _Counts) -> tuple[Simulation, Any]:
    """The plain rule's run (every heartbeat calls ``assign``), its decisions counted into ``counts``."""
    sim = fair_sim(w, params, reference=True)
    policy: Any = sim.policy
    allowed: dict[int, int] = {}
    allowed_level, launch_first, assign = policy._allowed_level, policy._launch_first, policy.assign

    def counted_allowed(job: int, pool: Any) -> int:
        allowed[job] = level = allowed_level(job, pool)
        return level

    def counted_launch(node: int, stype: int, visited: set[int]) -> int:
        job = launch_first(node, stype, visited)
        if job >= 0 and stype == MAP:
            counts.levels[allowed[job]] += 1
        return job

    def counted_assign(node: int) -> None:
        before = sim.next_attempt
        assign(node)
        launched = sim.next_attempt - before
        counts.empty += launched == 0
        counts.several += launched > 1

    policy._allowed_level, policy._launch_first, policy.assign = counted_allowed, counted_launch, counted_assign
    return sim, sim.run()


def test_the_random_workloads_reach_the_cases_they_are_drawn_for() -> None:
    # the draws of chunk 0 are not vacuous (the Python plain rule's run, which is the default's: the
    # reference test): maps launched at each level delay scheduling allows, heartbeats that launch
    # nothing and ones that launch several tasks, attempts ending at one time, jobs left waiting, nodes
    # filled exactly by one task, zero-mem demands, node entries of a count, placement, no user
    rng = random.Random("compiled-fair-0")
    counts = _Counts()
    seen = Counter[str]()
    for _ in range(PER_CHUNK):
        w, params = fair_case(rng)
        sim, rec = _counted_run(w, params, counts)
        jobs, tasks = rec.jobs_columns(), rec.tasks_columns()
        seen["placed"] += w.placement is not None
        seen["waited"] += int(np.sum(jobs["first_start"] > jobs["submit_time"]))
        seen["tied_ends"] += len(tasks["end"]) - len(np.unique(tasks["end"]))
        seen["no_user"] += sum(j.user == "default" for j in sim.jobs)
        seen["counted_nodes"] += sum(n.count > 1 for n in w.nodes)
        seen["delays_zero"] += params.get("node_delay") == 0.0
        for job in w.jobs:
            d = job.stages[0].tasks[0].demand
            seen["mem_0"] += d.get("mem", 0.0) == 0.0
            seen["full"] += any(all(n.resources[r] == d.get(r, 0.0) for r in ("cpu", "mem")) for n in w.nodes)
        for locality in ("node", "rack", "any"):
            seen[f"locality_{locality}"] += tasks["locality"].count(locality)
    assert all(counts.levels[level] > 0 for level in (NODE, RACK, ANY)), counts.levels
    assert counts.empty > 0 and counts.several > 0, (counts.empty, counts.several)
    assert all(seen[k] > 0 for k in ("placed", "waited", "tied_ends", "no_user", "counted_nodes", "mem_0", "full")), (
        seen
    )
    assert all(seen[f"locality_{x}"] > 0 for x in ("node", "rack", "any")), seen


def test_compiled_run_stopped_at_until_is_the_python_engines_run(compiled: Any) -> None:
    # ``until``: at an instant's own time (a heartbeat's, an end's), between instants, before the first
    # and after the last; the simulation left (counts, free slots and resources, jobs' states) too
    rng = random.Random("compiled-fair-until")
    stopped = 0
    for k in range(24):
        w, params = fair_case(rng)
        tasks = python_fair_run(w, params)[1].tasks_columns()
        times = sorted(set(tasks["start"].tolist()) | set(tasks["end"].tolist()))
        pick = k % 4
        if pick == 0:
            until = rng.choice(times)
        elif pick == 1:
            i = rng.randrange(len(times) - 1) if len(times) > 1 else 0
            until = (times[i] + times[min(i + 1, len(times) - 1)]) / 2
        else:
            until = times[0] - 1.0 if pick == 2 else times[-1] + 1.0
        assert_same_fair_runs(compiled, w, f"until workload {k} (until {until!r})", params, until=until)
        py = python_fair_run(w, params, until=until)[0]
        cc = compiled_fair_run(compiled, w, params, until=until)[0]
        assert left_state(cc) == left_state(py), f"until workload {k} (until {until!r})"
        stopped += cc.stopped is not None
    assert stopped > 0


def test_the_simulation_left_by_a_compiled_run_is_the_python_engines(compiled: Any) -> None:
    # besides the tables: the cluster's counts, each node's free slots and resources bit for bit,
    # the active jobs in order, each job's counts and its tasks' states
    rng = random.Random("compiled-fair-left")
    for k in range(20):
        w, params = fair_case(rng)
        py = python_fair_run(w, params)[0]
        cc = compiled_fair_run(compiled, w, params)[0]
        assert left_state(cc) == left_state(py), f"workload {k}"


def test_compiled_run_with_a_watch_is_the_python_engines_run(compiled: Any) -> None:
    # the looks at the watch come at the same instants (events counted as the Python loop counts them,
    # quiet heartbeats run in bulk included), and a stop at the k-th look leaves the same run
    rng = random.Random("compiled-fair-watch")
    stopped = 0
    for k in range(20):
        w, params = fair_case(rng)
        looks, every = rng.choice([None, 1, 2, 5, 20]), rng.choice([1, 3, 17, 100])
        py = fair_outcome(*python_fair_run(w, params, watch=_counting_watch(looks, every)))
        cc = fair_outcome(*compiled_fair_run(compiled, w, params, watch=_counting_watch(looks, every)))
        problems = fair_differences(py, cc)
        assert not problems, f"watch workload {k} (looks {looks}, every {every}): " + "\n".join(problems[:6])
        stopped += cc["stopped"] is not None
    assert stopped > 0


def _stalling_workload() -> WorkloadInstance:
    """Three nodes of one map slot on two racks; one job of 6 maps of 30 s, one replica each (placement
    seed 0: three on n0, two on n1, one on n2), node and rack delays of 1000 s: once a node's local maps
    are all started, its heartbeats (every 3 s) launch nothing while the others' maps run and nothing
    else happens (the Python engine stalls at each limit below: 0 at 32 s, 8 at 56 s)."""
    nodes = [
        {"id": f"n{i}", "rack": f"r{i % 2}", "map_slots": 1, "reduce_slots": 0, "resources": {"cpu": 4, "mem": 4}}
        for i in range(3)
    ]
    group = {"duration": 30.0, "count": 6, "demand": {"cpu": 1.0, "mem": 1.0}}
    jobs = [{"id": "a", "user": "u", "submit_time": 0.0, "stages": [{"type": "map", "tasks": [group]}]}]
    return workload(nodes, jobs, placement={"replicas": 1, "seed": 0})


STALL_PARAMS = {"node_delay": 1000.0, "rack_delay": 1000.0}


@pytest.mark.parametrize("stall_limit", [0, 1, 3, 8])
def test_a_stalled_run_is_the_python_engines(compiled: Any, stall_limit: int) -> None:
    # the Python engine stalls on it (the check: it did); the compiled run stalls at the same heartbeat
    w = _stalling_workload()
    sim = python_fair_run(w, STALL_PARAMS, stall_limit=stall_limit)[0]
    assert sim.stalled, "the stalling workload did not stall in the Python engine"
    assert_same_fair_runs(compiled, w, f"stall (limit {stall_limit})", STALL_PARAMS, stall_limit=stall_limit)
    assert_same_fair_runs(
        compiled, w, f"stall (limit {stall_limit}), plain", STALL_PARAMS, reference=True, stall_limit=stall_limit
    )


def test_random_runs_with_a_small_stall_limit_are_the_python_engines(compiled: Any) -> None:
    # the random workloads with a stall_limit of 0-12: some stall (long delays, one replica, busy
    # nodes), at a heartbeat the compiled run must find too
    rng = random.Random("compiled-fair-stall")
    stalled = 0
    for k in range(30):
        w, params = fair_case(rng, placed=0.9)
        limit = rng.randint(0, 12)
        assert_same_fair_runs(compiled, w, f"stall workload {k} (limit {limit})", params, stall_limit=limit)
        stalled += python_fair_run(w, params, stall_limit=limit)[0].stalled
    assert stalled > 0


def test_verify_simulation_passes_on_the_compiled_tables(compiled: Any) -> None:
    rng = random.Random("compiled-fair-verify")
    for k in range(20):
        w, params = fair_case(rng)
        _, rec = compiled_fair_run(compiled, w, params)
        jobs, tasks = rec.jobs_columns(), rec.tasks_columns()
        verdict = verify_simulation(w, jobs, tasks)
        assert verdict.ok, (k, verdict.problems)
        assert not np.isnan(jobs["finish"]).any(), k  # every job finished
        assert len(tasks["task"]) == sum(job.stages[0].tasks[0].count for job in w.jobs)


def test_run_simulation_routes_fair_to_the_compiled_core(compiled: Any) -> None:
    # ``simulate(..., engine="compiled")`` and ``mropt simulate --engine compiled``: the compiled core
    # runs fair, and its run is the Python engine's
    rng = random.Random("compiled-fair-route")
    for k in range(5):
        w, params = fair_case(rng)
        sim = fair_sim(w, params)
        rec, engine = run_simulation(sim, "fair", "compiled")
        assert engine == "compiled" and rec is sim.record
        problems = fair_differences(fair_outcome(*python_fair_run(w, params)), fair_outcome(sim, rec))
        assert not problems, f"routed workload {k}: " + "\n".join(problems[:6])


@pytest.mark.parametrize("heartbeat", [0.5, 1.0, 7.0])
def test_another_heartbeat_interval_is_the_python_engines_or_refused(compiled: Any, heartbeat: float) -> None:
    # ``Simulation(heartbeat=...)``: not in the core's stated shape; if why_not takes it, the run must be
    # the Python engine's (phases interval * node / nodes, the auto delays 1.5 x interval)
    rng = random.Random(f"compiled-fair-heartbeat-{heartbeat}")
    w, params = fair_case(rng)
    reason = compiled.why_not(fair_sim(w, params, heartbeat=heartbeat))
    if reason is not None:
        pytest.skip(f"heartbeat {heartbeat} refused: {reason}")
    for k in range(10):
        assert_same_fair_runs(compiled, w, f"heartbeat {heartbeat}, workload {k}", params, heartbeat=heartbeat)
        w, params = fair_case(rng)


def _shifted(w: WorkloadInstance, base: float) -> WorkloadInstance:
    data = w.to_dict()
    for job in data["jobs"]:
        job["submit_time"] = job.get("submit_time", 0.0) + base
    return WorkloadInstance.from_dict(data)


@pytest.mark.parametrize("base", [2.0**40, 2.0**52, 1e16])
def test_compiled_run_is_the_python_engines_run_at_far_times(compiled: Any, base: float) -> None:
    # submit times shifted to 2**40, 2**52 (a time's ulp 1) or 1e16 (ulp 2): heartbeat phases and
    # durations below an ulp round (attempts of no time, heartbeats at one time value, sums of a phase and
    # whole intervals rounding below now: ``_next_beat``'s, the heartbeat then at now); against the Python
    # run's rows both ways, live (``Recorder.flush``'s rule, which the loop follows) and built after the run
    rng = random.Random(f"compiled-fair-far-{base}")
    for k in range(16):
        w, params = fair_case(rng)
        w = _shifted(w, base)
        cc = fair_outcome(*compiled_fair_run(compiled, w, params))
        for rows in ("live", "built"):
            options = {"utilisation_rows": "live"} if rows == "live" else {}
            problems = fair_differences(fair_outcome(*python_fair_run(w, params, **options)), cc)
            assert not problems, f"far workload {k} (base {base!r}, fair {params}, {rows} rows): " + "\n".join(
                problems[:6]
            )


def test_python_built_rows_are_the_live_rows_at_far_times() -> None:
    # found by the compiled core's far-time test: the rows of mropt.sim.utilisation_rows.build_rows (the
    # Python engine's default, built from the ended attempts and the engine's marks) against those
    # Recorder.flush writes live, on the workload that showed it (the third of the 1e16 draws); they
    # differed while ``_next_beat`` could schedule a heartbeat before now
    rng = random.Random("compiled-fair-far-1e+16")
    for _ in range(3):
        w, params = fair_case(rng)
    w = _shifted(w, 1e16)
    live = python_fair_run(w, params, utilisation_rows="live")[1].utilisation_arrays()
    built = python_fair_run(w, params)[1].utilisation_arrays()
    assert len(live[0]) == len(built[0]) and all(np.array_equal(a, b) for a, b in zip(live, built, strict=True))


def _one_map_workload(nodes: int, submit: float) -> WorkloadInstance:
    """``nodes`` nodes of one map slot, one job of one 1 s map submitted at ``submit``."""
    cluster = [
        {"id": f"n{i}", "map_slots": 1, "reduce_slots": 0, "resources": {"cpu": 1, "mem": 1}} for i in range(nodes)
    ]
    return workload(cluster, [_map_job("a", "u", 1, 1.0, 1.0, 1.0, submit_time=submit)])


@pytest.mark.parametrize(
    ("nodes", "submit", "heartbeat"), [(6, 2.0**52 + 3, None), (2, 3.75, 0.3)], ids=["far-time", "heartbeat-0.3"]
)
def test_heartbeats_are_never_scheduled_before_now(
    compiled: Any, nodes: int, submit: float, heartbeat: float | None
) -> None:
    # ``HeartbeatOffers._next_beat``'s phase + ceil((now - phase) / interval) x interval can round below now.
    # At 2**52 + 3 on 6 nodes (interval 3 s), node 1's (phase 0.5): now - 0.5 rounds to 2**52 + 2 (ties to
    # even), k x 3 = 2**52 + 2, + 0.5 rounds to 2**52 + 2: 1 s before now. With ``heartbeat=0.3`` on 2 nodes
    # at 3.75: node 1's sum is 3.7499999999999996. Before the fix the map started before its job was
    # submitted (verify rejected the run; busier runs broke the queue: a KeyError in Simulation._run) and
    # the compiled loop stopped with a one-line error. Now the heartbeat is at now: the map starts at the
    # submit time, in both engines.
    w = _one_map_workload(nodes, submit)
    options = {} if heartbeat is None else {"heartbeat": heartbeat}
    sim, rec = python_fair_run(w, **options)
    verdict = verify_simulation(w, rec.jobs_columns(), rec.tasks_columns())
    assert verdict.ok, verdict.problems
    assert rec.jobs_columns()["first_start"][0] == submit
    py = fair_outcome(sim, rec)
    assert not fair_differences(py, fair_outcome(*compiled_fair_run(compiled, w, {}, **options)))


def test_a_cluster_of_more_than_300_nodes_is_the_python_engines(compiled: Any) -> None:
    # 301-700 nodes (entries of a count): the heartbeat interval is ceil(nodes / 100) s, 4 to 7 s, and the
    # phases interval x node / nodes are inexact; jobs of up to 1,000 maps
    rng = random.Random("compiled-fair-big")
    for k in range(4):
        w, params = fair_case(rng)
        data = w.to_dict()
        nodes = data["cluster"]["nodes"]
        n = rng.randint(301, 700)
        for node in nodes:
            node["count"] = n // len(nodes)
        nodes[-1]["count"] += n - n // len(nodes) * len(nodes)
        for job in data["jobs"]:
            group = job["stages"][0]["tasks"][0]
            group["count"] = group.get("count", 1) * rng.choice([1, 10, 40])
        assert_same_fair_runs(compiled, WorkloadInstance.from_dict(data), f"big workload {k} ({n} nodes)", params)


def test_a_heartbeat_takes_no_more_maps_than_the_nodes_free_slots(compiled: Any) -> None:
    # assign_multiple_maps 2 on a node of one map slot: the cap is above the free slots, the second map
    # finds no slot (Simulation.launch refuses it) and waits for the node's next heartbeat.
    #  t=0 n0 (phase 0): a0; a1 finds no free slot. t=1 a0 ends; n0 beats at 3: a1, ends at 4.
    nodes = [{"id": "n0", "rack": "r0", "map_slots": 1, "reduce_slots": 0, "resources": {"cpu": 64, "mem": 2}}]
    w = workload(nodes, [_map_job("a", "u", 2, 1.0, 1.0, 1.0)])
    params = {"assign_multiple_maps": 2}
    for sim, rec in (python_fair_run(w, params), compiled_fair_run(compiled, w, params)):
        assert task_rows(rec) == [("a", "n0", 0.0), ("a", "n0", 3.0)]
        assert sim.now == 4.0
    assert_same_fair_runs(compiled, w, "cap above the free slots", params)


# ---------------------------------------------------------------------------------------------
# 2. scenarios worked by hand from the Fair rules (fair.py's docstring)


def _map_job(jid: str, user: str, count: int, duration: float, cpu: float, mem: float, **fields: Any) -> dict[str, Any]:
    group = {"duration": duration, "count": count, "demand": {"cpu": cpu, "mem": mem}}
    return {"id": jid, "user": user, "stages": [{"type": "map", "tasks": [group]}], **fields}


def _both_engines(compiled: Any, w: WorkloadInstance) -> list[tuple[Simulation, Any]]:
    """The Python engine's run (default and plain rule) and the compiled run of ``fair``, default params."""
    return [python_fair_run(w), python_fair_run(w, reference=True), compiled_fair_run(compiled, w)]


def test_a_hand_worked_scenario_two_users(compiled: Any) -> None:
    # two nodes n0, n1 of 2 map slots, cpu 4, mem 4 (no placement: every map ANY). Heartbeat interval
    # max(3, ceil(2/100)) = 3 s; phases n0 0, n1 1.5. Pools A and B (the users), weight 1, minShare 0.
    #   a (A, at 0): 3 maps (cpu 1, mem 1) of 4 s; b (B, at 0): 2 maps (cpu 2, mem 1) of 2 s;
    #   c (A, at 1): 2 maps (cpu 1, mem 1) of 5 s.
    # Pools by running / weight then name; a pool's jobs by running / weight, submit, index. Each
    # heartbeat takes at most its free map slots; CapBasedLoadManager allows a node ceil(2 min(1,
    # runnable / 4)) maps as reported at the heartbeat (runnable: running + pending at update()).
    #  t=0 n0 (free 2): A 0 = B 0, A by name: a0; A 1 > B 0: b0 (n0 full)
    #  t=1.5 n1: A 1 = B 1, A: c (0) before a (1): c0; B 1 < A 2: b1 (n1 full; b all started)
    #  t=2 b0 ends on n0: n0's next beat 3; t=3 n0 (reported 1 < ceil(2 x min(1, 6/4)) = 2): only A has
    #      pending maps; a (1) = c (1), a by submit: a1
    #  t=3.5 b1 ends (b finishes); n1 beats at 4.5: a (1) = c (1): a2
    #  t=4 a0 ends; n0 beats at 6 (0 + 2 x 3): c1
    #  ends: c0 6.5, a1 7, a2 8.5 (a finishes), c1 11 (c finishes)
    nodes = [
        {"id": f"n{i}", "rack": "r0", "map_slots": 2, "reduce_slots": 0, "resources": {"cpu": 4, "mem": 4}}
        for i in range(2)
    ]
    jobs = [
        _map_job("a", "A", 3, 4.0, 1.0, 1.0, submit_time=0.0),
        _map_job("b", "B", 2, 2.0, 2.0, 1.0, submit_time=0.0),
        _map_job("c", "A", 2, 5.0, 1.0, 1.0, submit_time=1.0),
    ]
    w = workload(nodes, jobs)
    expected = [
        ("a", "n0", 0.0),
        ("b", "n0", 0.0),
        ("c", "n1", 1.5),
        ("b", "n1", 1.5),
        ("a", "n0", 3.0),
        ("a", "n1", 4.5),
        ("c", "n0", 6.0),
    ]
    for sim, rec in _both_engines(compiled, w):
        assert task_rows(rec) == expected
        assert rec.jobs_columns()["finish"].tolist() == [8.5, 3.5, 11.0]
        assert sim.now == 11.0 and sim.jobs_finished == 3 and not sim.stalled
    assert_same_fair_runs(compiled, w, "hand-worked, two users")


def test_a_hand_worked_scenario_with_weights_and_full_resources(compiled: Any) -> None:
    # n0: 3 map slots, cpu 2, mem 2; n1: 3 map slots, cpu 4, mem 1 (phases 0 and 1.5, interval 3 s).
    # All at 0, 3 s maps: x (user U, priority 1: weight 2) 4 maps (cpu 1, mem .5); y (U) 2 maps (cpu 2,
    # mem 1); z (user V) 2 maps (cpu 1, mem .5). Pools U and V; in U, jobs by running / weight.
    #  t=0 n0: U 0 = V 0, U by name; x (0/2) = y (0/1), x by index: x0; V 0 < U 1: z0 (n0 cpu 0 left);
    #      U: y and x do not fit, V neither: done (a slot left, but no pending task fits: no beat)
    #  t=1.5 n1: U 1 = V 1, U: y (0) before x (.5): y0 (n1 mem 0 left); nothing else fits
    #  t=3 x0, z0 end; n0 beats at 3: V 0 < U 1: z1; U 1 = V 1, U: x (0) before y (1): x1 (cpu 0)
    #  t=4.5 y0 ends; n1 beats at 4.5: V has no pending map; U: y (0) before x (.5): y1 (mem 0)
    #  t=6 x1, z1 end (z finishes); n0 beats at 6 (load ceil(3 x 3/6) = 2 > reported 0): x2, x3;
    #      then every runnable map runs (running 3 = runnable 3): done
    #  ends: y1 7.5 (y finishes), x2 and x3 9 (x finishes)
    nodes = [
        {"id": "n0", "rack": "r0", "map_slots": 3, "reduce_slots": 0, "resources": {"cpu": 2, "mem": 2}},
        {"id": "n1", "rack": "r0", "map_slots": 3, "reduce_slots": 0, "resources": {"cpu": 4, "mem": 1}},
    ]
    jobs = [
        _map_job("x", "U", 4, 3.0, 1.0, 0.5, priority=1),
        _map_job("y", "U", 2, 3.0, 2.0, 1.0),
        _map_job("z", "V", 2, 3.0, 1.0, 0.5),
    ]
    w = workload(nodes, jobs)
    expected = [
        ("x", "n0", 0.0),
        ("z", "n0", 0.0),
        ("y", "n1", 1.5),
        ("z", "n0", 3.0),
        ("x", "n0", 3.0),
        ("y", "n1", 4.5),
        ("x", "n0", 6.0),
        ("x", "n0", 6.0),
    ]
    for sim, rec in _both_engines(compiled, w):
        assert task_rows(rec) == expected
        assert rec.jobs_columns()["finish"].tolist() == [9.0, 7.5, 6.0]
        assert sim.now == 9.0 and sim.jobs_finished == 3 and not sim.stalled
    assert_same_fair_runs(compiled, w, "hand-worked, weights")


# ---------------------------------------------------------------------------------------------
# 3. refusals: why_not names a reason, and ``auto`` runs the Python engine


def _base(**extra: Any) -> WorkloadInstance:
    nodes = [
        {"id": f"n{i}", "rack": f"r{i}", "map_slots": 2, "reduce_slots": 1, "resources": {"cpu": 4, "mem": 4}}
        for i in range(2)
    ]
    jobs = extra.pop("jobs", None) or [
        _map_job("a", "A", 3, 2.0, 1.0, 1.0, submit_time=0.0),
        _map_job("b", "B", 2, 3.0, 2.0, 0.5, submit_time=1.0),
    ]
    return workload(nodes, jobs, **extra)


def _three_stages() -> WorkloadInstance:
    group = {"duration": 2.0, "count": 2, "demand": {"cpu": 1.0, "mem": 1.0}}
    stages = [{"type": t, "tasks": [group]} for t in ("map", "reduce", "map")]
    return _base(jobs=[{"id": "a", "user": "A", "stages": stages}])


def _no_demand() -> WorkloadInstance:
    return _base(jobs=[{"id": "a", "user": "A", "stages": [{"type": "map", "tasks": [{"duration": 2.0, "count": 2}]}]}])


def _listed_replicas() -> WorkloadInstance:
    job = _map_job("a", "A", 2, 2.0, 1.0, 1.0)
    job["stages"][0]["tasks"][0]["replicas"] = ["n0"]
    return _base(jobs=[job])


REFUSED: dict[str, Any] = {
    "preemption on": lambda: fair_sim(_base(), {"preemption": True}),
    "pool specs in the workload": lambda: fair_sim(_base(pools=[{"id": "A", "weight": 2.0}])),
    "a reduce slow-start": lambda: fair_sim(_base(timing={"reduce_slowstart": 0.05})),
    "a task without a demand": lambda: fair_sim(_no_demand()),
    "three stages": lambda: fair_sim(_three_stages()),
    "speculation": lambda: fair_sim(_base(), speculation=make_speculation("late")),
    "policy hei": lambda: Simulation(_base(), make_policy("hei", {})),
    "faults": lambda: fair_sim(_base(faults=[{"node": "n1", "down": 1.0, "up": 5.0}])),
    "stragglers": lambda: fair_sim(_base(timing={"straggler_rate": 0.2})),
    "live utilisation rows": lambda: fair_sim(_base(), utilisation_rows="live"),
    "event mode": lambda: fair_sim(_base(), mode="event"),
    "listed replicas": lambda: fair_sim(_listed_replicas()),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_why_not_names_a_reason_and_auto_runs_python(compiled: Any, case: str) -> None:
    sim = REFUSED[case]()
    reason = compiled.why_not(sim)
    assert isinstance(reason, str) and reason, case
    assert sim.events == 0 and sim.now == 0.0  # why_not leaves it untouched
    policy = "hei" if case == "policy hei" else "fair"
    with pytest.raises(InputError, match="cannot run"):
        run_simulation(REFUSED[case](), policy, "compiled")
    rec, engine = run_simulation(sim, policy, "auto")
    assert engine == "python" and rec is sim.record and sim.events > 0


def test_a_supported_simulation_has_no_reason(compiled: Any) -> None:
    # the refusals above differ from a supported simulation by their one case
    for extra in ({}, {"placement": {"replicas": 2, "seed": 3}}):
        w = _base(**extra)
        assert compiled.why_not(fair_sim(w)) is None
        assert compiled.why_not(fair_sim(w, reference=True)) is None
        assert_same_fair_runs(compiled, w, f"supported {extra}")
