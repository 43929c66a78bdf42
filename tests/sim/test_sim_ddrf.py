"""DRF, DDRF and delay scheduling on the simulator (DDRF paper sec. 3.1, Table 1; sec. 4.1 listing)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from mropt.model.errors import InputError
from mropt.sim.engine import Simulation
from mropt.sim.policy import Decision, make_policy
from mropt.sim.recorder import Recorder
from mropt.sim.verify import verify_simulation

from sim_helpers import workload


def run_traced(w: Any, policy: str, params: dict[str, Any] | None = None) -> tuple[list[Any], Recorder]:
    trace: list[Decision] = []
    rec = Simulation(w, make_policy(policy, params, trace=trace)).run()
    verdict = verify_simulation(w, rec.jobs_columns(), rec.tasks_columns())
    assert verdict.ok, verdict.problems
    return trace, rec


def table1_workload() -> Any:
    """9 CPUs and 18 GB on one node; user A's tasks <1 CPU, 4 GB>, user B's <3 CPU, 1 GB>."""
    return workload(
        [{"id": "n", "resources": {"cpu": 9, "mem": 18}}],
        [
            {
                "id": "a",
                "user": "A",
                "stages": [{"type": "map", "tasks": [{"duration": 100, "count": 6, "demand": {"cpu": 1, "mem": 4}}]}],
            },
            {
                "id": "b",
                "user": "B",
                "stages": [{"type": "map", "tasks": [{"duration": 100, "count": 6, "demand": {"cpu": 3, "mem": 1}}]}],
            },
        ],
    )


def test_drf_launches_in_table_1_order() -> None:
    trace, rec = run_traced(table1_workload(), "drf")
    at_zero = [job for t, job, _, what in trace if t == 0.0]
    # Table 1: B, A, A, B, A; then CPU is used up (9 of 9): A 3 tasks <3, 12>, B 2 tasks <6, 2>
    assert at_zero == ["b", "a", "a", "b", "a"]
    assert all(what == "none" for _, _, _, what in trace)  # no replicas: no locality
    t = rec.tasks_columns()
    assert sorted(zip(t["start"].tolist(), t["job_id"])).count((0.0, "a")) == 3


def locality_workload() -> Any:
    """Racks rack0 = n0, n1, n2 and rack1 = n3, n4; one CPU per node but n4 has two.

    Job b (user u1) needs 2 CPUs (fits n4 only) and has no replicas; job j (user u2) has two
    one-CPU map tasks of 5 s whose input is on n4 only.
    """
    nodes = [
        {"id": f"n{i}", "rack": "rack0" if i < 3 else "rack1", "resources": {"cpu": 2 if i == 4 else 1}}
        for i in range(5)
    ]
    jobs = [
        {"id": "b", "user": "u1", "stages": [{"type": "map", "tasks": [{"duration": 10, "demand": {"cpu": 2}}]}]},
        {
            "id": "j",
            "user": "u2",
            "stages": [
                {
                    "type": "map",
                    "tasks": [{"duration": 5, "count": 2, "demand": {"cpu": 1}, "replicas": [["n4"], ["n4"]]}],
                }
            ],
        },
    ]
    return workload(nodes, jobs)


def test_ddrf_rack_local_between_e1_and_e2_and_reset() -> None:
    trace, rec = run_traced(locality_workload(), "ddrf", {"e1": 1, "e2": 4})
    # skip 0 < E1: n0 declined; skips 1, 2 < E2: rack-local only, n1 and n2 (rack0) declined;
    # skip 3: n3 is rack-local (rack1): launch, count back to 0; b takes n4. At 7.5 (5 s x
    # rack factor 1.5) n3 frees: skip 0 < E1, declined; at 10 b ends: skip 1, n4 node-local.
    assert trace == [
        (0.0, "j", 0, "skip"),
        (0.0, "j", 1, "skip"),
        (0.0, "j", 2, "skip"),
        (0.0, "j", 3, "rack"),
        (0.0, "b", 4, "none"),
        (7.5, "j", 3, "skip"),
        (10.0, "j", 4, "node"),
    ]
    t = rec.tasks_columns()
    assert sorted(x for x in t["locality"] if x is not None) == ["node", "rack"]


def test_ddrf_any_node_once_skips_reach_e2() -> None:
    trace, rec = run_traced(locality_workload(), "ddrf", {"e1": 1, "e2": 2})
    assert trace == [
        (0.0, "j", 0, "skip"),  # skip 0 < E1: node-local only
        (0.0, "j", 1, "skip"),  # skip 1: rack-local only, n1 is off-rack
        (0.0, "j", 2, "any"),  # skip 2 >= E2: any node; count back to 0
        (0.0, "j", 3, "skip"),  # skip 0 again: node-local only
        (0.0, "b", 4, "none"),
        (10.0, "j", 4, "node"),  # skip 1: rack-local allowed, n4 holds the input
    ]
    t = rec.tasks_columns()
    assert dict(zip(t["task"].tolist(), t["locality"])) == {0: "any", 1: "node"}
    assert dict(zip(t["task"].tolist(), t["end"].tolist())) == {0: 15.0, 1: 15.0}  # 5 x 3 off-rack; 10 + 5


def test_delay_waits_exactly_d_skips() -> None:
    trace, _ = run_traced(locality_workload(), "delay", {"d": 3})
    # three skips, then any node; a non-local launch does not reset the count (Zaharia)
    assert trace == [
        (0.0, "j", 0, "skip"),
        (0.0, "j", 1, "skip"),
        (0.0, "j", 2, "skip"),
        (0.0, "j", 3, "rack"),
        (0.0, "b", 4, "none"),
        (7.5, "j", 3, "rack"),
    ]
    trace, _ = run_traced(locality_workload(), "delay", {"d": 4})
    assert trace == [
        (0.0, "j", 0, "skip"),
        (0.0, "j", 1, "skip"),
        (0.0, "j", 2, "skip"),
        (0.0, "j", 3, "skip"),
        (0.0, "b", 4, "none"),
        (10.0, "j", 4, "node"),
        (10.0, "j", 4, "node"),
    ]


def test_waiting_job_on_an_idle_cluster_is_reoffered_after_a_heartbeat() -> None:
    """Nothing runs and the job declines every node: one heartbeat later (3 s) it is offered them again."""
    w = workload(
        [{"id": f"n{i}", "rack": "r0", "resources": {"cpu": 1}} for i in range(3)],
        [
            {
                "id": "j",
                "stages": [{"type": "map", "tasks": [{"duration": 5, "demand": {"cpu": 1}, "replicas": [["n2"]]}]}],
            }
        ],
        faults=[{"node": "n2", "down": 0, "up": 100}],
    )
    trace, rec = run_traced(w, "ddrf", {"e1": 4, "e2": 4})
    assert trace == [
        (0.0, "j", 0, "skip"),
        (0.0, "j", 1, "skip"),
        (3.0, "j", 0, "skip"),
        (3.0, "j", 1, "skip"),
        (6.0, "j", 0, "rack"),  # skip 4 >= E2: any node (it is on the input's rack)
    ]


def small_cluster(seed: int = 1) -> Any:
    from mropt.instances.workload_gen import generate_workload

    return generate_workload("ddrf", seed, nodes=40, jobs=12)


def test_ddrf_with_zero_waits_equals_drf() -> None:
    w = small_cluster()
    _, plain = run_traced(w, "drf")
    _, zero = run_traced(w, "ddrf", {"e1": 0, "e2": 0})
    for a, b in ((plain.jobs_columns(), zero.jobs_columns()), (plain.tasks_columns(), zero.tasks_columns())):
        assert list(a) == list(b)
        for key in a:
            np.testing.assert_array_equal(np.asarray(a[key]), np.asarray(b[key]), err_msg=key)
    assert plain.event_log_hash() == zero.event_log_hash()


def _launch_calls(w: Any, policy: str, params: dict[str, Any]) -> tuple[str, list[int]]:
    """The event-log hash of a run and the tasks each of its ``sim.launch_tasks`` calls started."""
    sim = Simulation(w, make_policy(policy, params))
    started: list[int] = []
    launch_tasks = sim.launch_tasks

    def counting(*args: Any) -> Any:
        out = launch_tasks(*args)
        started.append(out[1])
        return out

    sim.launch_tasks = counting  # type: ignore[method-assign]
    return sim.run().event_log_hash(), started


def test_delay_with_zero_wait_equals_drf_and_launches_runs_as_drf_does() -> None:
    # D = 0: every level is ANY and no skip is ever counted, so a user that stays first after a
    # launch gets its next tasks in one call (``_run_level``), as under drf; tasks with replicas
    # (node-local launches reset the count) on 4 slot nodes, users arriving one after the other
    maps = [{"type": "map", "tasks": [{"duration": 5.0, "count": 12}]}]
    w = workload(
        [{"id": f"n{i}", "rack": f"r{i % 2}", "map_slots": 4, "reduce_slots": 1} for i in range(4)],
        [{"id": f"j{i}", "user": f"u{i % 3}", "submit_time": 2.0 * i, "stages": maps} for i in range(6)],
        placement={"replicas": 2, "seed": 1},
    )
    drf_log, drf_started = _launch_calls(w, "drf", {})
    log, started = _launch_calls(w, "delay", {"d": 0})
    assert log == drf_log
    assert started == drf_started
    assert sum(started) > len(started)  # runs of several tasks were launched


@pytest.mark.parametrize("policy,params", [("drf", {}), ("ddrf", {"e1": 5, "e2": 20}), ("delay", {"d": 10})])
def test_locality_column_on_the_ddrf_preset(policy: str, params: dict[str, Any]) -> None:
    w = small_cluster(2)
    _, rec = run_traced(w, policy, params)
    t = rec.tasks_columns()
    levels = set(t["locality"])
    assert levels <= {"node", "rack", "any"}
    assert "node" in levels
    assert not np.isnan(np.asarray(rec.jobs_columns()["finish"], dtype=float)).any()  # every job finished


def test_ddrf_parameters_are_checked() -> None:
    with pytest.raises(InputError, match="e1"):
        make_policy("ddrf", {"e1": 3, "e2": 2})
    with pytest.raises(InputError, match="'d'"):
        make_policy("delay", {"d": -1})


def test_generate_workload_preset_ddrf_cli(tmp_path: Any) -> None:
    from mropt.cli.main import main
    from mropt.model.workload import WorkloadInstance

    out = tmp_path / "w.json"
    args = ["generate", "workload", "--preset", "ddrf", "--nodes", "130", "--tasks-per-job", "7"]
    assert main([*args, "--replicas", "2", "--jobs", "4", "--seed", "3", "-o", str(out)]) == 0
    w = WorkloadInstance.from_dict(json.loads(out.read_text()))
    assert [(n.count, n.rack, dict(n.resources)) for n in w.nodes] == [
        *((20, f"rack{i}", {"cpu": 4, "mem": 8}) for i in range(6)),
        (10, "rack6", {"cpu": 4, "mem": 8}),
    ]
    assert w.placement is not None and (w.placement.replicas, w.placement.seed) == (2, 3)
    assert [sum(g.count for g in j.stages[0].tasks) for j in w.jobs] == [7] * 4
    assert [j.user for j in w.jobs] == ["u1", "u2", "u3", "u4"]
    assert dict(w.jobs[0].stages[0].tasks[0].demand) == {"cpu": 1, "mem": 1}
    assert dict(w.jobs[1].stages[0].tasks[0].demand) == {"cpu": 0.5, "mem": 2}
    again = tmp_path / "again.json"
    assert main([*args, "--replicas", "2", "--jobs", "4", "--seed", "3", "-o", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()
    assert main([*args, "--replicas", "-1"]) == 2


def test_drf_over_slots_releases_shares_at_completions() -> None:
    """Nodes of slots only: DRF over the map and reduce slot types; a finished task gives its share back.

    One node, 2 map slots. a (user A): four 10 s maps at 0; b (user B): two at 5. At 0 A takes
    both slots; at 10 both shares are 0 again (A's maps ended): A first (tie, lower index),
    then B (share 0 < A's 1/2); at 20 likewise.
    """
    w = workload(
        [{"id": "n", "map_slots": 2, "reduce_slots": 0}],
        [
            {"id": "a", "user": "A", "stages": [{"type": "map", "tasks": [{"duration": 10, "count": 4}]}]},
            {
                "id": "b",
                "user": "B",
                "submit_time": 5,
                "stages": [{"type": "map", "tasks": [{"duration": 10, "count": 2}]}],
            },
        ],
    )
    trace, _ = run_traced(w, "drf")
    assert [(t, job) for t, job, _, _ in trace] == [
        (0.0, "a"),
        (0.0, "a"),
        (10.0, "a"),
        (10.0, "b"),
        (20.0, "a"),
        (20.0, "b"),
    ]


def test_idle_users_leave_the_drf_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    """A user without runnable work (share 0, top of the heap) is dropped when popped, not re-pushed.

    200 users, one job of three 1-s tasks each, arriving 2 s apart on one 2-CPU node: job
    i's tasks start at 2i, 2i and 2i + 1. At 2i + 1 the user (share 0.5, a task waiting) is
    below every finished user (share 0). Each user is pushed a fixed number of times (its
    arrival, three launches and three completions; popped entries put back at each launch)
    and a user without work is popped once and dropped: a constant per user (14 here). Keeping finished users in the heap made every
    offer pop all of them: 42,399 pops here (the decision cost per launch grew
    linearly in the number of users, benchmarks/bench_sim_ddrf.py part 3).
    """
    import heapq

    from mropt.sim.policies import drf as drf_module

    n = 200
    w = workload(
        [{"id": "n", "resources": {"cpu": 2, "mem": 2}}],
        [
            {
                "id": f"j{i}",
                "user": f"u{i}",
                "submit_time": 2.0 * i,
                "stages": [{"type": "map", "tasks": [{"duration": 1, "count": 3, "demand": {"cpu": 1, "mem": 1}}]}],
            }
            for i in range(n)
        ],
    )
    pops = [0]
    real = heapq.heappop

    def counting(heap: list[Any]) -> Any:
        pops[0] += 1
        return real(heap)

    monkeypatch.setattr(drf_module.heapq, "heappop", counting)
    _, rec = run_traced(w, "drf")
    t = rec.tasks_columns()
    assert sorted(t["start"].tolist()) == sorted([2.0 * i for i in range(n)] * 2 + [2.0 * i + 1 for i in range(n)])
    assert pops[0] <= 20 * n


def test_drf_user_returns_for_its_reduce_stage() -> None:
    """Map then reduce: the user leaves the heap while its map runs and is back at the stage end."""
    w = workload(
        [{"id": "n", "resources": {"cpu": 2, "mem": 2}}],
        [
            {
                "id": "a",
                "user": "A",
                "stages": [
                    {"type": "map", "tasks": [{"duration": 3, "demand": {"cpu": 1, "mem": 1}}]},
                    {"type": "reduce", "tasks": [{"duration": 2, "demand": {"cpu": 1, "mem": 1}}]},
                ],
            },
            {
                "id": "b",
                "user": "B",
                "submit_time": 1.0,
                "stages": [{"type": "map", "tasks": [{"duration": 1, "count": 2, "demand": {"cpu": 1, "mem": 1}}]}],
            },
        ],
    )
    _, rec = run_traced(w, "drf")
    t = rec.tasks_columns()
    starts = sorted(zip(t["job_id"], t["stage_type"], t["start"].tolist()))
    # a's map at 0; b's first map at 1 (one CPU free), its second at 2; a's reduce at 3 (map end)
    assert starts == [("a", "map", 0.0), ("a", "reduce", 3.0), ("b", "map", 1.0), ("b", "map", 2.0)]
