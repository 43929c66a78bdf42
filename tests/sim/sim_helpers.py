"""Small builders for simulator tests: workloads from a few lines, a run checked by verify."""

from __future__ import annotations

import random
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

from mropt.model.workload import WorkloadInstance
from mropt.registry import check_params
from mropt.sim.engine import Simulation
from mropt.sim.heartbeat_offers import HeartbeatOffers
from mropt.sim.policies.fifo import Fifo
from mropt.sim.policy import Policy, make_policy, policy_info
from mropt.sim.recorder import Recorder
from mropt.sim.speculation.table import make_speculation
from mropt.sim.state import NODE, RACK
from mropt.sim.verify import verify_simulation


def policy_params(name: str, **given: Any) -> dict[str, Any]:
    """Every parameter of the registered policy ``name`` as :func:`make_policy` hands them (for test subclasses)."""
    return check_params("policy", name, policy_info(name).params, given, defaults=True)


def workload(nodes: list[dict[str, Any]], jobs: list[dict[str, Any]], **extra: Any) -> WorkloadInstance:
    return WorkloadInstance.from_dict(
        {"kind": "workload", "schema_version": 1, "cluster": {"nodes": nodes}, "jobs": jobs, **extra}
    )


def mr_job(
    job_id: str, maps: list[float] | float, reduces: list[float] | float | None = None, **fields: Any
) -> dict[str, Any]:
    """A job with one map stage (a group per duration) and an optional reduce stage."""

    def groups(d: list[float] | float) -> list[dict[str, Any]]:
        return [{"duration": x} for x in d] if isinstance(d, list) else [{"duration": d}]

    stages = [{"type": "map", "tasks": groups(maps)}]
    if reduces is not None:
        stages.append({"type": "reduce", "tasks": groups(reduces)})
    return {"id": job_id, "stages": stages, **fields}


def run(
    w: WorkloadInstance, policy: str = "fifo", params: dict[str, Any] | None = None, **options: Any
) -> tuple[Simulation, Recorder]:
    """Simulate and check the outputs with the independent verify; fails the test on a problem."""
    sim = Simulation(w, make_policy(policy, params), **options)
    rec = sim.run()
    verdict = verify_simulation(w, rec.jobs_columns(), rec.tasks_columns())
    assert verdict.ok, verdict.problems
    return sim, rec


def attempts(rec: Recorder) -> list[tuple[str, int, int, str, float, float, str]]:
    """(job, stage, task, node, start, end, outcome) per attempt, in start order."""
    t = rec.tasks_columns()
    rows = list(
        zip(
            t["job_id"],
            t["stage"].tolist(),
            t["task"].tolist(),
            t["node"],
            t["start"].tolist(),
            t["end"].tolist(),
            t["outcome"],
        )
    )
    return sorted(rows, key=lambda r: (r[4], r[0], r[1], r[2], r[5]))


def map_job(jid: str, count: int, duration: float, submit: float = 0.0, **fields: Any) -> dict[str, Any]:
    """A map-only job of ``count`` identical tasks (``replicas=[...]``: their input nodes)."""
    task: dict[str, Any] = {"duration": duration, "count": count}
    if "replicas" in fields:
        task["replicas"] = fields.pop("replicas")
    return {"id": jid, "submit_time": submit, "stages": [{"type": "map", "tasks": [task]}], **fields}


def starts(rec: Recorder, jid: str) -> list[tuple[float, str, str | None]]:
    """(start, node, locality) of the job's attempts, in start order."""
    tasks = rec.tasks_columns()
    return sorted(
        (float(s), n, loc)
        for j, s, n, loc in zip(tasks["job_id"], tasks["start"], tasks["node"], tasks["locality"], strict=True)
        if j == jid
    )


#: a two-job workload of hand-checkable times (FIFO, event mode: j1's maps end at 10, its
#: reduce at 15; j2 ends at 20, late against its deadline 12)
TINY: dict[str, Any] = {
    "kind": "workload",
    "schema_version": 1,
    "name": "tiny",
    "cluster": {"nodes": [{"id": "n0", "map_slots": 2, "reduce_slots": 1}]},
    "jobs": [
        {
            "id": "j1",
            "deadline": 20,
            "benefit": 100,
            "stages": [
                {"type": "map", "tasks": [{"duration": 10, "count": 2}]},
                {"type": "reduce", "tasks": [{"duration": 5}]},
            ],
        },
        {"id": "j2", "deadline": 12, "benefit": 50, "stages": [{"type": "map", "tasks": [{"duration": 10}]}]},
    ],
}


def succeeded_once(rec: Recorder) -> None:
    """Every task of every job succeeded exactly once and every job finished."""
    tasks = rec.tasks_columns()
    done: dict[tuple[str, int, int], int] = {}
    for jid, stage, task, outcome in zip(tasks["job_id"], tasks["stage"], tasks["task"], tasks["outcome"], strict=True):
        if outcome == "succeeded":
            key = (jid, int(stage), int(task))
            done[key] = done.get(key, 0) + 1
    jobs = rec.jobs_columns()
    assert set(done.values()) == {1}
    assert len(done) == sum(jobs["tasks"])
    assert all(f is not None and f == f for f in jobs["finish"])


def count_assign_paths(policy: Any) -> dict[str, int]:
    """Wrap ``policy``'s ``_assign_reference`` and ``_assign_fast`` with call counters (returned, by
    ``"reference"`` / ``"fast"``): a reference test requires that the path it compares ran, alone."""
    calls = {"reference": 0, "fast": 0}
    for name, attr in (("reference", "_assign_reference"), ("fast", "_assign_fast")):
        inner = getattr(policy, attr)

        def counting(node: int, name: str = name, inner: Any = inner) -> None:
            calls[name] += 1
            inner(node)

        setattr(policy, attr, counting)
    return calls


def assert_only_path_ran(calls: dict[str, int], reference: bool) -> None:
    assert calls["reference" if reference else "fast"] > 0
    assert calls["fast" if reference else "reference"] == 0


# Seeded random workloads shared by the tests that compare a plain rule with its fast path. Each
# draw is made in a fixed order: a test's workloads for a seed do not change when these are shared.


def _pick(rng: random.Random, value: float | Sequence[float]) -> float:
    """``value`` itself, or one of ``value`` drawn (a single number draws nothing)."""
    return rng.choice(value) if isinstance(value, Sequence) else value


def slot_nodes(
    rng: random.Random,
    most: int = 6,
    racks: int = 2,
    map_slots: int = 3,
    speeds: bool = False,
) -> list[dict[str, Any]]:
    """2 to ``most`` slot nodes on ``racks`` racks, 1 to ``map_slots`` map slots and 0 to 2 reduce
    slots each (the first node 1), a speed of 1 or 2 each where ``speeds``."""
    return [
        {
            "id": f"n{i}",
            "rack": f"r{i % racks}",
            "map_slots": rng.randint(1, map_slots),
            "reduce_slots": rng.randint(0, 2) if i else 1,
            **({"speed": rng.choice([1.0, 2.0])} if speeds else {}),
        }
        for i in range(rng.randint(2, most))
    ]


def random_extras(
    rng: random.Random,
    placement: float,
    slowstart: float = 0.4,
    slowstarts: Sequence[float] = (0.0, 0.5, 1.0),
    faults: float = 0.2,
    down: float | Sequence[float] = 6.0,
    up: float | Sequence[float] = 20.0,
) -> dict[str, Any]:
    """A generated placement, a reduce slow-start and n1 going ``down`` and ``up``, each drawn with
    its probability (a sequence of times: one of them drawn)."""
    extra: dict[str, Any] = {}
    if rng.random() < placement:
        extra["placement"] = {"replicas": rng.randint(1, 3), "seed": rng.randint(0, 9)}
    if rng.random() < slowstart:
        extra["timing"] = {"reduce_slowstart": rng.choice(list(slowstarts))}
    if rng.random() < faults:
        extra["faults"] = [{"node": "n1", "down": _pick(rng, down), "up": _pick(rng, up)}]
    return extra


def random_queues(
    rng: random.Random,
    n: int,
    maximum: float = 0.3,
    headroom: tuple[int, int] = (0, 40),
    user_limit: float = 0.4,
    priority: float = 0.4,
) -> list[dict[str, Any]]:
    """``n`` Capacity Scheduler queues ``q0``.. whose capacities cut 100 at random; each with a
    maximum capacity (its capacity plus ``headroom`` percent), a user limit and priorities, each
    drawn with its probability."""
    cuts = sorted(rng.sample(range(1, 100), n - 1))
    queues: list[dict[str, Any]] = []
    for k, (a, b) in enumerate(zip([0, *cuts], [*cuts, 100], strict=True)):
        queue: dict[str, Any] = {"id": f"q{k}", "capacity": float(b - a)}
        if rng.random() < maximum:
            queue["maximum_capacity"] = float(min(100, b - a + rng.randint(*headroom)))
        if rng.random() < user_limit:
            queue.update(minimum_user_limit_percent=rng.choice([25.0, 50.0]), user_limit_factor=rng.choice([1.0, 2.0]))
        if rng.random() < priority:
            queue["supports_priority"] = True
        queues.append(queue)
    return queues


def slot_stages(rng: random.Random, reduce: float) -> list[dict[str, Any]]:
    """A map stage of 1 to 8 tasks of one duration and, with probability ``reduce``, a reduce stage
    of 1 to 3 tasks of 3."""
    stages: list[dict[str, Any]] = [
        {"type": "map", "tasks": [{"duration": rng.choice([1.0, 2.5, 4.0, 7.0]), "count": rng.randint(1, 8)}]}
    ]
    if rng.random() < reduce:
        stages.append({"type": "reduce", "tasks": [{"duration": 3.0, "count": rng.randint(1, 3)}]})
    return stages


def deadline_workload(rng: random.Random) -> WorkloadInstance:
    """A few slot nodes and deadline jobs arriving over a while, some tight enough to be rejected
    (DC, MinEDF-WC)."""
    nodes = slot_nodes(rng, map_slots=4)
    jobs = []
    for i in range(rng.randint(4, 24)):
        maps = [rng.choice([1.0, 2.5, 4.0, 7.0]) for _ in range(rng.randint(1, 10))]
        reduces = [3.0] * rng.randint(1, 3) if rng.random() < 0.5 else None
        submit = float(rng.randint(0, 60))
        fields: dict[str, Any] = {"submit_time": submit, "benefit": 1.0}
        if rng.random() < 0.9:  # (DC rejects a job without a deadline)
            fields["deadline"] = submit + rng.choice([0.5, 1.0, 2.0, 4.0]) * (sum(maps) + sum(reduces or [])) / 3
        jobs.append(mr_job(f"j{i}", maps, reduces, **fields))
    return workload(nodes, jobs, **random_extras(rng, placement=0.6))


def pooled_workload(rng: random.Random) -> WorkloadInstance:
    """A few slot nodes on two racks and jobs arriving faster than they can run, in Fair pools and
    Capacity queues of every setting (Fair, Capacity)."""
    nodes = slot_nodes(rng)
    n_pools = rng.randint(1, 4)
    jobs = []
    for i in range(rng.randint(3, 22)):
        stages = slot_stages(rng, reduce=0.5)
        k = rng.randrange(n_pools)
        jobs.append(
            {
                "id": f"j{i}",
                "submit_time": float(rng.randint(0, 30)),
                "priority": rng.randint(-3, 3),
                "user": f"u{rng.randint(0, 3)}",
                "pool": f"p{k}",
                "queue": f"q{k}",
                "stages": stages,
            }
        )
    pools: list[dict[str, Any]] = []
    for k in range(n_pools):
        pool: dict[str, Any] = {"id": f"p{k}", "weight": rng.choice([0.5, 1.0, 2.0, 3.0])}
        if rng.random() < 0.5:
            pool.update(min_maps=rng.randint(0, 4), min_reduces=rng.randint(0, 2))
        if rng.random() < 0.3:
            pool.update(max_maps=rng.randint(1, 4))
        if rng.random() < 0.3:
            pool.update(max_running=rng.randint(1, 3))
        if rng.random() < 0.3:
            pool.update(mode="fifo")
        if rng.random() < 0.8:  # (an unlisted pool gets the defaults)
            pools.append(pool)
    queues = random_queues(rng, n_pools)
    extra: dict[str, Any] = {"pools": pools}
    if n_pools > 1 or rng.random() < 0.5:
        extra["queues"] = queues
    extra.update(random_extras(rng, placement=0.7))
    return workload(nodes, jobs, **extra)


def fair_params(rng: random.Random) -> dict[str, Any]:
    """Fair Scheduler parameters: delays, assign-multiple and preemption."""
    params: dict[str, Any] = {"node_delay": rng.choice([-1.0, 0.0, 2.0, 6.0]), "rack_delay": rng.choice([-1.0, 3.0])}
    if rng.random() < 0.3:
        params["assign_multiple"] = False
    if rng.random() < 0.3:
        params.update(assign_multiple_maps=rng.randint(1, 2), assign_multiple_reduces=rng.randint(1, 2))
    if rng.random() < 0.4:
        params.update(preemption=True, min_share_timeout=rng.choice([1.0, 5.0]), fair_share_timeout=2.0)
    return params


def capacity_params(rng: random.Random) -> dict[str, Any]:
    """Capacity Scheduler parameters: the locality wait factor (-1: off)."""
    return {"locality_wait_factor": rng.choice([-1.0, -1.0, 0.0, 0.5])}


def with_listed_replicas(w: WorkloadInstance, rng: random.Random) -> WorkloadInstance:
    """``w`` with replicas listed for its map tasks: one to three nodes each, or none for a whole job."""
    data = w.to_dict()
    data.pop("placement", None)
    ids = [node["id"] for node in data["cluster"]["nodes"]]
    for job in data["jobs"]:
        none = rng.random() < 0.2
        for group in job["stages"][0]["tasks"]:
            count = group.get("count", 1)
            group["replicas"] = [
                [] if none else rng.sample(ids, rng.randint(1, min(3, len(ids)))) for _ in range(count)
            ]
    return WorkloadInstance.from_dict(data)


def pooled_workloads(rng: random.Random, n: int) -> Iterator[WorkloadInstance]:
    """``n`` :func:`pooled_workload` draws, every second one with its replicas listed."""
    for k in range(n):
        w = pooled_workload(rng)
        yield with_listed_replicas(w, rng) if k % 2 else w


def assert_places_are_the_engines(sim: Simulation, job: int, nodes: Any, racks: Any) -> None:
    """``nodes`` and ``racks`` are where ``Stage.take`` finds a NODE (RACK) level map of ``job``."""
    stage = sim.jobs[job].stages[0]
    for node in range(sim.n_nodes):
        rack = sim.node_rack[node]
        local = stage.take(node, rack, NODE, sim.node_rack)[0] >= 0
        near = stage.take(node, rack, RACK, sim.node_rack)[0] >= 0
        assert (node in nodes, rack in racks) == (local, near), (job, node)


def path_run(
    w: WorkloadInstance,
    policy: str,
    params: dict[str, Any],
    reference: bool,
    rule: str | None = None,
    switches: dict[str, Any] | None = None,
    **options: Any,
) -> Recorder:
    """One run of ``policy`` by its plain rule (``reference``) or its fast path, and only that path
    (``switches``: more :func:`make_policy` options; ``rule``: a speculation rule)."""
    p = make_policy(policy, params, reference=reference, **(switches or {}))
    calls = count_assign_paths(p)
    rec = Simulation(w, p, speculation=make_speculation(rule), **options).run()
    assert_only_path_ran(calls, reference)
    return rec


def same_log(
    w: WorkloadInstance,
    policy: str,
    params: dict[str, Any],
    rule: str | None = None,
    fast: dict[str, Any] | None = None,
    **options: Any,
) -> Recorder:
    """Run ``policy``'s plain rule and its fast path (``fast``: its :func:`make_policy` switches):
    the same event log and admission reasons, or the test fails. The plain run's recorder."""
    plain = path_run(w, policy, params, True, rule, **options)
    quick = path_run(w, policy, params, False, rule, fast, **options)
    got = [(r.event_log_hash(), list(r.jobs_columns()["reason"])) for r in (plain, quick)]
    assert got[0] == got[1], (policy, params, rule, fast, options, w)
    return plain


def fifo_same_as_plain(w: WorkloadInstance) -> None:
    """``fifo`` in event mode, its offer runs on (the default) and off (``reference=True``): the same
    event log, event count and attempt ids, or the test fails."""
    sim = Simulation(w, make_policy("fifo"), mode="event")
    rec = sim.run()
    plain = Simulation(w, make_policy("fifo", reference=True), mode="event")
    rec_plain = plain.run()
    assert (rec.event_log_hash(), sim.events, sim.next_attempt) == (
        rec_plain.event_log_hash(),
        plain.events,
        plain.next_attempt,
    )


class Restless(Fifo):
    """FIFO that, at its first ``most`` heartbeats (or offers) that launched, kills the attempt it
    just started (its node has room again at this very time) or sets a timer for now, in turn:
    instants at the time of the one before (``mropt.sim.lone_beats``, the utilisation rows' breaks)."""

    most = 6

    def start(self, sim: Any) -> None:
        super().start(sim)
        self.acts = 0

    def assign(self, node: int) -> None:
        sim: Any = self.sim  # (the engine: its next attempt id)
        before = sim.next_attempt
        super().assign(node)
        if sim.next_attempt == before or self.acts >= self.most:
            return
        self.acts += 1
        if self.acts % 2:
            sim.kill(sim.next_attempt - 1)
        else:
            sim.wake_at(sim.now, "now")

    def on_timer(self, tag: Hashable) -> None:
        pass


def heartbeat_outputs(
    w: WorkloadInstance,
    policy: Policy,
    plain: bool,
    *,
    seed: int,
    until: float | None,
    limit: int,
    whole_phases: bool = False,
) -> tuple[Any, ...]:
    """One heartbeat-mode run with the held heartbeats on (``mropt.sim.lone_beats``), or on the plain
    rules (``plain``: ``HeartbeatOffers.plain``): its event log's hash, event count, stall, stop,
    final time and utilisation rows. ``whole_phases``: the nodes' phases cut to whole seconds, so
    that several nodes share each."""
    sim = Simulation(w, policy, seed=seed, mode="heartbeat", stall_limit=limit, until=until)
    offers = sim.offers
    assert isinstance(offers, HeartbeatOffers) and offers._held is not None  # the held path is on
    if whole_phases:
        offers._phase = [float(int(phase)) for phase in offers._phase]
    if plain:
        offers.plain()
    rec = sim.run()
    util = rec.utilisation_columns()
    rows = (util["time"].tolist(), util["slot_type"], util["pool"], util["busy"].tolist(), util["capacity"].tolist())
    return rec.event_log_hash(), sim.events, sim.stalled, sim.stopped, sim.now, rows


def waiting_workload(
    rng: random.Random,
    *,
    nodes: tuple[int, int] = (6, 14),
    jobs: tuple[int, int] = (2, 9),
    no_replicas: float = 0.1,
    durations: Sequence[float] = (2.0, 5.0, 9.0),
    tasks: tuple[int, int] = (1, 10),
    reduce: float = 0.5,
    reduce_task: tuple[float, int] = (3.0, 3),
    min_maps: float = 0.3,
    fault: tuple[tuple[int, int], tuple[int, int]] | None = None,
) -> WorkloadInstance:
    """Jobs whose map input sits on one to three hot nodes of a cluster of ``nodes`` (a range) on 2 to 4
    racks, arriving over a minute into three pools (some with max slots or min shares), so that delay
    scheduling makes most jobs wait and most heartbeats launch nothing; a share ``no_replicas`` of
    jobs without replicas, an optional reduce stage (``reduce_task``: its duration and most tasks),
    and in 3 runs of 10 a hot node down for a while: at 20 s until 50 s, or (``fault``) at times
    drawn from the two ranges. (``fair``'s quiet heartbeats and their runs in bulk.)"""
    racks = rng.randint(2, 4)
    n = rng.randint(*nodes)
    cluster = [
        {"id": f"n{i}", "rack": f"r{i % racks}", "map_slots": rng.randint(1, 2), "reduce_slots": rng.randint(0, 1)}
        for i in range(n)
    ]
    cluster[0]["reduce_slots"] = 1
    hot = rng.sample(range(n), rng.randint(1, 3))  # the nodes holding most input
    specs = []
    for i in range(rng.randint(*jobs)):
        none = rng.random() < no_replicas
        listed = [
            {
                "duration": rng.choice(list(durations)),
                "replicas": [] if none else [f"n{k}" for k in rng.sample(hot, rng.randint(1, len(hot)))],
            }
            for _ in range(rng.randint(*tasks))
        ]
        stages: list[dict[str, Any]] = [{"type": "map", "tasks": listed}]
        if rng.random() < reduce:
            stages.append(
                {"type": "reduce", "tasks": [{"duration": reduce_task[0], "count": rng.randint(1, reduce_task[1])}]}
            )
        specs.append(
            {
                "id": f"j{i}",
                "submit_time": float(rng.randint(0, 60)),
                "priority": rng.randint(-1, 1),
                "pool": f"p{rng.randrange(3)}",
                "stages": stages,
            }
        )
    pools = []
    for k in range(3):
        pool: dict[str, Any] = {"id": f"p{k}"}
        if rng.random() < 0.3:
            pool["max_maps"] = rng.randint(1, 3)
        if rng.random() < min_maps:
            pool["min_maps"] = rng.randint(1, 4)
        pools.append(pool)
    extra: dict[str, Any] = {"pools": pools}
    if rng.random() < 0.3:
        if fault is None:
            down, up = 20.0, 50.0
        else:
            down, up = float(rng.randint(*fault[0])), float(rng.randint(*fault[1]))
        extra["faults"] = [{"node": f"n{hot[0]}", "down": down, "up": up}]
    return workload(cluster, specs, **extra)
