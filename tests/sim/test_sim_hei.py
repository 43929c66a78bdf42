"""HEI (HEI paper sec. 2.3) on the simulator: hourly minShares from historical demand, weights
from estimated remaining work, the history it reads, and the ``input_mb`` of a task group.

The hand-computed history (``HAND``): groups a and b; demand (slot-seconds) in hour 0 a 3000,
b 1000, in hour 1 a 1000, b 3000 (0 elsewhere); D a 0.1 s/MB, b 0.5 s/MB; reduce cost a 20 s,
b 10 s. On 2 nodes of 4 map and 2 reduce slots (8 and 4), hour 0's minShares are
a = floor(8 x 3/4) = 6 maps, floor(4 x 3/4) = 3 reduces, b = 2 and 1; hour 1's the reverse.
Job ja (pool a): 4 maps of 128 MB (the default) and 2 reduces: work 0.1 x 512 + 20 x 2 = 91.2.
Job jb (pool b): 2 maps of 256 MB and 1 reduce: work 0.5 x 512 + 10 x 1 = 266. The weights are
the work over the total times the number of pools with work (2): a 182.4 / 357.2, b 532 / 357.2.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd
import pytest

from mropt.instances.workload_gen import generate_workload
from mropt.model.errors import InputError
from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policies.hei import HEI_PARAMS, Hei, hei_weights, hour_min_shares, hour_of
from mropt.sim.policies.hei_history import HeiHistory, history_frames
from mropt.sim.policy import make_policy
from mropt.sim.run import simulate
from mropt.sim.speculation import rules
from mropt.sim.verify import verify_simulation

from cli_capture import run_cli
from sim_helpers import run, succeeded_once, workload


def _hours(**values: float) -> tuple[float, ...]:
    out = [0.0] * 24
    for key, v in values.items():
        out[int(key[1:])] = v
    return tuple(out)


HAND = HeiHistory(
    demand={"a": _hours(h0=3000, h1=1000), "b": _hours(h0=1000, h1=3000)},
    D={"a": 0.1, "b": 0.5},
    reduce_cost={"a": 20.0, "b": 10.0},
)
NODES = [{"id": "n", "count": 2, "map_slots": 4, "reduce_slots": 2}]


def mr(jid: str, pool: str, maps: int, reduces: int, submit: float = 0.0, mb: float | None = None) -> dict[str, Any]:
    group: dict[str, Any] = {"duration": 10.0, "count": maps}
    if mb is not None:
        group["input_mb"] = mb
    stages = [{"type": "map", "tasks": [group]}]
    if reduces:
        stages.append({"type": "reduce", "tasks": [{"duration": 30.0, "count": reduces}]})
    return {"id": jid, "pool": pool, "submit_time": submit, "stages": stages}


class Spy(Hei):
    """HEI recording (time, minShares, weights) after every update()."""

    def __init__(self, history: HeiHistory, **params: Any) -> None:
        defaults = {k: p.default for k, p in HEI_PARAMS.items()}
        super().__init__(**{**defaults, **params})
        self.history_data = history
        self.seen: list[tuple[float, dict[str, tuple[int, int]], dict[str, float]]] = []

    def _update(self) -> None:
        super()._update()
        self.seen.append((self.sim.now, self.min_shares(), self.weights()))


# -- the history ----------------------------------------------------------------------------------
def test_from_frames_reads_the_three_analyses() -> None:
    demand = pd.DataFrame({"group": ["a", "a", "b", "b"], "hour": [0, 1, 0, 1], "demand": [3000, 1000, 1000, 3000.0]})
    map_cost = pd.DataFrame({"group": ["a", "b", "c"], "D": [0.1, 0.5, float("nan")]})
    reduce_cost = pd.DataFrame({"group": ["a", "b"], "reduce_cost": [20.0, 10]})
    assert HeiHistory.from_frames(demand, map_cost, reduce_cost) == HAND  # c's null D: no history


@pytest.mark.parametrize(
    "frames,message",
    [
        (
            {"demand": {"group": ["a"], "hour": [24], "demand": [1.0]}},
            "field 'hour' must be an integer in [0, 23], got 24",
        ),
        ({"demand": {"group": ["a", "a"], "hour": [3, 3], "demand": [1.0, 2.0]}}, "hour 3 is listed twice"),
        ({"demand": {"group": ["a"], "hour": [3], "demand": [-1.0]}}, "field 'demand' must be a finite number >= 0"),
        ({"map_cost": {"group": ["a"], "cost": [1.0]}}, "frame map_cost_per_unit lacks column 'D'"),
        ({"reduce_cost": {"group": ["a", "a"], "reduce_cost": [1.0, 2.0]}}, "field 'reduce_cost' is listed twice"),
        ({"map_cost": {"group": ["a"], "D": [float("inf")]}}, "field 'D' must be a finite number >= 0, got inf"),
    ],
)
def test_from_frames_rejects_bad_rows_in_one_line(frames: dict[str, Any], message: str) -> None:
    base = {
        "demand": {"group": [], "hour": [], "demand": []},
        "map_cost": {"group": [], "D": []},
        "reduce_cost": {"group": [], "reduce_cost": []},
    }
    base.update(frames)
    with pytest.raises(InputError) as err:
        HeiHistory.from_frames(*(pd.DataFrame(base[k]) for k in ("demand", "map_cost", "reduce_cost")))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_json_round_trip_and_errors(tmp_path) -> None:
    path = tmp_path / "h.json"
    HAND.save(path)
    assert HeiHistory.load(path) == HAND
    assert HeiHistory.from_param(str(path)) == HAND and HeiHistory.from_param("").empty
    bad = HAND.to_dict()
    bad["demand"]["a"] = [1.0] * 23
    with pytest.raises(InputError, match="must list 24 hours, got 23"):
        HeiHistory.from_dict(bad)
    with pytest.raises(InputError, match="field 'kind' must be 'hei-history'"):
        HeiHistory.from_dict({"demand": {}})
    with pytest.raises(InputError, match="names no file"):
        HeiHistory.from_param(str(tmp_path / "missing.duckdb"))


def test_history_frames_of_a_run_are_eqs_4_7_9() -> None:
    # a (hour 0): two 10 s maps of 128 MB and one 20 s reduce; b (hour 1): one 30 s map of 64 MB
    w = workload(
        [{"id": "n", "map_slots": 2, "reduce_slots": 1}],
        [
            {
                "id": "ja",
                "pool": "a",
                "stages": [
                    {"type": "map", "tasks": [{"duration": 10, "count": 2}]},
                    {"type": "reduce", "tasks": [{"duration": 20}]},
                ],
            },
            {
                "id": "jb",
                "pool": "b",
                "submit_time": 3700,
                "stages": [{"type": "map", "tasks": [{"duration": 30, "input_mb": 64}]}],
            },
        ],
    )
    _, rec = run(w, "fair")
    demand, map_cost, reduce_cost = history_frames(w, rec.jobs_columns(), rec.tasks_columns())
    h = HeiHistory.from_frames(demand, map_cost, reduce_cost)
    assert h.demand == {"a": _hours(h0=40.0), "b": _hours(h1=30.0)}
    assert h.D == {"a": 20 / 256, "b": 30 / 64}
    assert h.reduce_cost == {"a": 20.0}


# -- the two steps ----------------------------------------------------------------------------------
def test_hour_min_shares_and_weights_by_hand() -> None:
    assert hour_min_shares(HAND, 0, (8, 4)) == {"a": (6, 3), "b": (2, 1)}
    assert hour_min_shares(HAND, 1, (8, 4)) == {"a": (2, 1), "b": (6, 3)}
    assert hour_min_shares(HAND, 1, (8, 4), fraction=0.5) == {"a": (1, 0), "b": (3, 1)}
    assert hour_min_shares(HAND, 5, (8, 4)) == {"a": (0, 0), "b": (0, 0)}  # no demand in hour 5
    assert hei_weights({"a": 91.2, "b": 266.0, "c": 0.0}) == {"a": 2 * 91.2 / 357.2, "b": 2 * 266.0 / 357.2}
    assert [hour_of(t) for t in (0, 3599.9, 3600, 86400 + 7200)] == [0, 0, 1, 2]
    assert hour_of(0, start_hour=23.5) == 23 and hour_of(1800, start_hour=23.5) == 0


def test_policy_min_shares_and_weights_match_the_hand_computed_history() -> None:
    w = workload(NODES, [mr("ja", "a", 4, 2), mr("jb", "b", 2, 1, mb=256.0)])
    spy = Spy(HAND)
    Simulation(w, spy).run()
    t, mins, weights = spy.seen[0]
    assert t == 0.0
    assert mins == {"a": (6, 3), "b": (2, 1)}
    assert weights == {"a": 2 * 91.2 / 357.2, "b": 2 * 266.0 / 357.2}
    assert math.isclose(weights["a"] / (weights["a"] + weights["b"]), 91.2 / 357.2)


def test_min_shares_change_at_the_hour_boundary() -> None:
    jobs = [
        mr("ja", "a", 4, 2),
        mr("jb", "b", 2, 1),
        mr("ja2", "a", 4, 2, submit=3600.0),
        mr("jb2", "b", 2, 1, submit=3600.0),
    ]
    spy = Spy(HAND)
    Simulation(workload(NODES, jobs), spy).run()
    log = spy.min_share_log
    assert [(hour, mins) for _, hour, mins in log] == [(0, {"a": (6, 3), "b": (2, 1)}), (1, {"a": (2, 1), "b": (6, 3)})]
    assert log[0][0] == 0.0 and 3600.0 <= log[1][0] < 3603.0  # the first update of hour 1 (heartbeats every 3 s)
    assert all(mins == {"a": (6, 3), "b": (2, 1)} for t, mins, _ in spy.seen if t < 3600)


def test_weights_split_the_slots_left_by_the_min_shares() -> None:
    # no demand history (minShares 0); a's remaining work is 3 times b's: weights 1.5 and 0.5.
    # One node of 8 map slots, one heartbeat at 0: (running / weight) order gives a 6 and b 2; fair 4 and 4
    h = HeiHistory(D={"a": 0.1, "b": 0.1})
    w = workload(
        [{"id": "n", "map_slots": 8, "reduce_slots": 0}],
        [mr("ja", "a", 30, 0), mr("jb", "b", 10, 0)],
    )
    spy = Spy(h)
    _, rec = run(w, "fair")
    hei_rec = Simulation(w, spy).run()
    assert spy.seen[0][2] == {"a": 1.5, "b": 0.5}
    for policy_rec, expected in ((rec, {"ja": 4, "jb": 4}), (hei_rec, {"ja": 6, "jb": 2})):
        t = policy_rec.tasks_columns()
        got = {j: sum(1 for jj, s in zip(t["job_id"], t["start"]) if jj == j and s == 0.0) for j in ("ja", "jb")}
        assert got == expected


def test_a_pool_without_history_is_as_in_fair() -> None:
    # c has neither demand nor cost history: the allocation file's minShare (1, 0) and weight 2
    w = workload(
        NODES,
        [mr("ja", "a", 4, 2), mr("jc", "c", 4, 1)],
        pools=[{"id": "c", "min_maps": 1, "weight": 2.0}, {"id": "a", "min_maps": 5, "weight": 3.0}],
    )
    spy = Spy(HeiHistory(demand={"a": HAND.demand["a"]}, D={"a": 0.1}))
    Simulation(w, spy).run()
    _, mins, weights = spy.seen[0]
    assert mins == {"a": (8, 4), "c": (1, 0)}  # a: the only group of hour 0's history, all the slots
    assert weights == {"a": 1.0, "c": 2.0}  # a: its work over itself (reduce cost: no group has one, 0)


def test_without_history_hei_is_fair() -> None:
    w = mixed()
    one = Simulation(w, make_policy("hei", {}), seed=2).run().event_log_hash()
    two = Simulation(w, make_policy("fair", {}), seed=2).run().event_log_hash()
    assert one == two


def mixed() -> WorkloadInstance:
    jobs = []
    for k in range(10):
        jobs.append(
            {
                "id": f"j{k}",
                "submit_time": 2.5 * k + (3590.0 if k >= 5 else 0.0),
                "pool": ("a", "b", "c")[k % 3],
                "stages": [
                    {
                        "type": "map",
                        "tasks": [{"duration": 2.0 + k, "count": 3 + 2 * k, "input_mb": 32.0 * (1 + k % 4)}],
                    },
                    {"type": "reduce", "tasks": [{"duration": 4.0, "count": 1 + k % 3}]},
                    {"type": "map", "tasks": [{"duration": 1.5, "count": 2}, {"duration": 3.0, "input_mb": 7}]},
                ],
            }
        )
    return workload(
        [
            {"id": "a", "count": 4, "rack": "r0", "map_slots": 2, "reduce_slots": 2},
            {"id": "b", "count": 4, "rack": "r1", "map_slots": 2, "reduce_slots": 1, "speed": 1.5},
        ],
        jobs,
        placement={"replicas": 3, "seed": 3},
        timing={"reduce_slowstart": 0.05, "straggler_rate": 0.2},
        faults=[{"node": "b-2", "down": 4.0, "up": 3620.0}],
        pools=[{"id": "c", "max_running": 1}],
    )


@pytest.mark.parametrize("preemption", [False, True])
def test_every_task_once_and_the_same_log_with_a_history(preemption: bool) -> None:
    # HEI sets minShares (hourly) and weights (every update): the kept pool order must follow
    params = {"preemption": preemption, "min_share_timeout": 5.0, "fair_share_timeout": 10.0}
    logs = []
    for _ in range(2):
        policy = Hei.with_history(HAND, params, self_check=True)
        w = mixed()
        rec = Simulation(w, policy, seed=4).run()
        verdict = verify_simulation(w, rec.jobs_columns(), rec.tasks_columns())
        assert verdict.ok, verdict.problems
        succeeded_once(rec)
        logs.append(rec.event_log_hash())
        # hour 0, node b-2 down at 4 (16 -> 14 map slots), hour 1, b-2 back at 3620
        assert [hour for _, hour, _ in policy.min_share_log] == [0, 0, 1, 1]
    assert logs[0] == logs[1]


@pytest.mark.parametrize("preemption", [False, True])
def test_the_plain_heartbeat_gives_the_same_log_with_a_history(preemption: bool) -> None:
    # reference=True: Fair's plain heartbeat and update() (every pool and job afresh) under HEI's
    # minShares and weights; the default: the kept orders (tests/sim/test_sim_heartbeat_reference.py)
    params = {"preemption": preemption, "min_share_timeout": 5.0, "fair_share_timeout": 10.0}
    logs = []
    for reference in (True, False):
        policy = make_policy("hei", params, reference=reference)
        assert isinstance(policy, Hei)
        policy.history_data = HAND
        heartbeats: list[int] = []

        def counting(node: int, plain: Any = policy._assign_reference, seen: list[int] = heartbeats) -> None:
            seen.append(node)
            plain(node)

        policy._assign_reference = counting  # type: ignore[method-assign]
        logs.append(Simulation(mixed(), policy, seed=4).run().event_log_hash())
        assert bool(heartbeats) == reference  # the plain heartbeat ran, and only under reference
    assert logs[0] == logs[1]


def test_cli_takes_a_json_history(tmp_path) -> None:
    HAND.save(tmp_path / "h.json")
    (tmp_path / "w.json").write_text(json.dumps(workload(NODES, [mr("ja", "a", 4, 2), mr("jb", "b", 2, 1)]).to_dict()))
    r = run_cli(
        "simulate", tmp_path / "w.json", "--policy", "hei", "--param", f"history={tmp_path / 'h.json'}", "--json"
    )
    assert r.code == 0, r.err
    assert json.loads(r.out)["finished"] == 2
    (tmp_path / "bad.json").write_text('{"kind": "hei-history", "D": {"a": -1}}')
    r = run_cli("simulate", tmp_path / "w.json", "--policy", "hei", "--param", f"history={tmp_path / 'bad.json'}")
    assert r.code == 2 and len(r.err_lines) == 1 and "field 'D' must be a finite number >= 0, got -1.0" in r.err


# -- input_mb in the workload --------------------------------------------------------------------------
def test_input_mb_round_trips_and_is_checked() -> None:
    w = workload(NODES, [mr("ja", "a", 4, 2, mb=256.0), mr("jb", "b", 2, 1)])
    assert WorkloadInstance.from_dict(w.to_dict()) == w
    assert w.to_dict()["jobs"][0]["stages"][0]["tasks"][0]["input_mb"] == 256
    assert "input_mb" not in w.to_dict()["jobs"][1]["stages"][0]["tasks"][0]
    assert [j.stages[0].tasks[0].task_input_mb for j in w.jobs] == [256.0, 128.0]
    with pytest.raises(InputError, match=r"job 'ja': stages\[0\].tasks\[0\]: field 'input_mb' must be > 0"):
        workload(NODES, [mr("ja", "a", 4, 2, mb=0.0)])


# -- through the job-history database ------------------------------------------------------------------
def test_from_db_of_a_simulated_run_matches_its_tables(tmp_path) -> None:
    # the run of test_history_frames_of_a_run_are_eqs_4_7_9, written with --out, imported into a
    # history database (mropt history import) and read back by HeiHistory.from_db: the database's
    # demand and reduce cost are history_frames' (one attempt per task); D comes from tasks.parquet's
    # input_mb (one 128 MB block a map task here): a's 2 x 10 s over 256 MB, b's 30 s over 128 MB
    w = workload(
        [{"id": "n", "map_slots": 2, "reduce_slots": 1}],
        [
            mr("ja", "a", 2, 1),
            {"id": "jb", "pool": "b", "submit_time": 3700, "stages": [{"type": "map", "tasks": [{"duration": 30}]}]},
        ],
    )
    (tmp_path / "w.json").write_text(json.dumps(w.to_dict()))
    assert run_cli("simulate", tmp_path / "w.json", "--policy", "fair", "--out", tmp_path / "run").code == 0
    assert run_cli("history", "import", tmp_path / "h.duckdb", tmp_path / "run").code == 0
    from_db = HeiHistory.from_db(tmp_path / "h.duckdb")
    assert from_db == HeiHistory.from_param(str(tmp_path / "h.duckdb"))
    assert from_db.demand == {"a": _hours(h0=50.0), "b": _hours(h1=30.0)}  # 2 x 10 + 30; 30
    assert from_db.reduce_cost == {"a": 30.0} and from_db.D == {"a": 20 / 256, "b": 30 / 128}
    r = run_cli(
        "simulate", tmp_path / "w.json", "--policy", "hei", "--param", f"history={tmp_path / 'h.duckdb'}", "--json"
    )
    assert r.code == 0 and json.loads(r.out)["finished"] == 2


@pytest.mark.parametrize("rule", [name for name, info in rules().items() if info.cls is not None])
def test_hei_with_a_history_under_speculation_runs_each_task_once(rule: str, tmp_path) -> None:
    # the history of a fair run of the same workload (pools u0..u2), then hei with backups
    w = generate_workload("late", 1, jobs=6, mean_splits=16, nodes=10, straggler_rate=0.15, users=3)
    first = simulate(w, "fair", seed=1).recorder
    HeiHistory.from_frames(*history_frames(w, first.jobs_columns(), first.tasks_columns())).save(tmp_path / "h.json")
    run = simulate(w, "hei", {"history": str(tmp_path / "h.json")}, seed=1, speculation=rule)
    rec = run.recorder
    verdict = verify_simulation(w, rec.jobs_columns(), rec.tasks_columns())
    assert verdict.ok, verdict.problems
    assert run.summary["finished"] == 6
    succeeded_once(rec)
