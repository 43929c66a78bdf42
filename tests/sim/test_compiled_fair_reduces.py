"""The compiled ``fair`` core with reduces and on clusters of no resources runs a simulation as the Python engine does.

The shape of the SWIM Facebook 2009 day (``benchmarks/bench_sim.py`` section 3): nodes of map and reduce
slots and no resources (tasks without demands: the room and fit tests count slots), jobs of a map stage
and perhaps a reduce stage, released when the map stage ends; and the same on clusters of cpu and mem,
every task with a demand. On seeded random workloads of that shape
(``fair_compiled_helpers.reduce_workload``: some nodes without reduce slots or map slots, a placement or
none, random Fair parameters with a reduce cap per heartbeat) the compiled run must give the Python
engine's event log, events, clock, stop, stall, unfinished causes and every column of the job, attempt
and utilisation tables (built after the run from its attempts), bit for bit; against the plain rule
(``reference=True``) too; stopped at ``until``, by a watch (leaving the jobs' stages as the Python run does) or
stalled (``stall_limit``); ``simulate``'s summary and ``--out`` tables the same. The draws must reach the
cases they are drawn for (reduces launched, on both kinds of cluster; a heartbeat that launches reduces
before maps). ``why_not`` refuses a reduce slow-start and the mixed shapes it does not run.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from mropt.model.errors import InputError  # noqa: E402
from mropt.model.workload import WorkloadInstance  # noqa: E402
from mropt.sim.engines import run_simulation  # noqa: E402
from mropt.sim.outputs import run_tables  # noqa: E402
from mropt.sim.run import simulate  # noqa: E402
from mropt.sim.state import REDUCE  # noqa: E402

from compiled_helpers import _counting_watch  # noqa: E402
from fair_compiled_helpers import (  # noqa: E402
    assert_same_fair_runs,
    compiled_fair_run,
    compiled_fixture,  # noqa: F401  (the fixture compiled)
    fair_differences,
    fair_outcome,
    fair_sim,
    left_state,
    python_fair_run,
    reduce_case,
)
from sim_helpers import workload  # noqa: E402

CHUNKS = 4
PER_CHUNK = 30  # 120 workloads in all


def _options(k: int) -> dict[str, Any]:
    """Engine options of the k-th workload of a chunk: attempts one by one (no batches) in 1 of 8, no
    utilisation rows in 1 of 8."""
    if k % 8 == 5:
        return {"batch": False}
    if k % 8 == 6:
        return {"record_utilisation": False}
    return {}


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_compiled_run_with_reduces_is_the_python_engines_run(compiled: Any, chunk: int) -> None:
    # a failure names its workload: reduce_case(random.Random(f"compiled-fair-reduces-{chunk}")) drawn k + 1 times
    rng = random.Random(f"compiled-fair-reduces-{chunk}")
    for k in range(PER_CHUNK):
        w, params = reduce_case(rng)
        where = f"chunk {chunk}, workload {k}"
        assert_same_fair_runs(compiled, w, where, params, **_options(k))
        if k % 3 == 0:
            assert_same_fair_runs(compiled, w, where + ", plain", params, reference=True, **_options(k))


@pytest.mark.parametrize("base", [2.0**40, 2.0**52, 1e16])
def test_compiled_run_with_reduces_is_the_python_engines_run_at_far_times(compiled: Any, base: float) -> None:
    # submit times shifted far (a time's ulp 1 at 2**52, 2 at 1e16): heartbeats collide, tasks round to no
    # time, and on clusters without resources lone heartbeats (``lone_next``, the clock a lone heartbeat
    # without room leaves) meet them; a failure names its workload
    rng = random.Random(f"compiled-fair-reduces-far-{base}")
    for k in range(12):
        w, params = reduce_case(rng)
        data = w.to_dict()
        for job in data["jobs"]:
            job["submit_time"] = job.get("submit_time", 0.0) + base
        assert_same_fair_runs(compiled, WorkloadInstance.from_dict(data), f"far {base!r}, workload {k}", params)


def test_the_draws_reach_reduces_on_both_kinds_of_cluster(compiled: Any) -> None:
    # reduces launched on clusters of no resources and of cpu and mem; nodes without reduce slots; a
    # heartbeat whose tracker reported more maps than reduces (reduces first) that launched both
    rng = random.Random("compiled-fair-reduces-0")
    reduces = {0: 0, 2: 0}
    no_reduce_slots = reduces_first = 0
    for _ in range(PER_CHUNK):
        w, params = reduce_case(rng)
        sim, rec = compiled_fair_run(compiled, w, params)
        t = rec.tasks_columns()
        kinds = np.asarray(t["stage_type"])
        reduces[len(sim.resources)] += int(np.count_nonzero(kinds == "reduce"))
        no_reduce_slots += any(s == 0 for s in sim.slots[REDUCE])
        # a node's reduce started at an instant where a map of it started later in the attempt order
        starts: dict[tuple[str, float], list[str]] = {}
        rows = zip(t["node"], t["start"].tolist(), np.asarray(t["attempt"]).tolist(), kinds.tolist(), strict=True)
        for node, start, _, kind in sorted(rows):
            starts.setdefault((node, start), []).append(kind)
        reduces_first += sum(
            "reduce" in v and "map" in v and v.index("reduce") < v.index("map") for v in starts.values()
        )
    assert reduces[0] > 0 and reduces[2] > 0 and no_reduce_slots > 0 and reduces_first > 0


def test_compiled_run_with_reduces_stopped_at_until_is_the_python_engines_run(compiled: Any) -> None:
    # ``until`` at an instant's own time or between instants; what the run leaves in the jobs' stages too
    rng = random.Random("compiled-fair-reduces-until")
    for k in range(16):
        w, params = reduce_case(rng)
        times = sorted({float(t) for t in python_fair_run(w, params)[1].tasks_columns()["start"].tolist()})
        until = rng.choice(times) if k % 2 else (times[len(times) // 2] + times[-1]) / 2
        assert_same_fair_runs(compiled, w, f"until workload {k} (until {until!r})", params, until=until)
        py = python_fair_run(w, params, until=until)[0]
        cc = compiled_fair_run(compiled, w, params, until=until)[0]
        assert left_state(cc) == left_state(py), f"until workload {k} (until {until!r})"


def test_compiled_run_with_reduces_and_a_watch_is_the_python_engines_run(compiled: Any) -> None:
    # the looks at the watch at the same instants, and a stop at the k-th look leaves the same run
    rng = random.Random("compiled-fair-reduces-watch")
    stopped = 0
    for k in range(12):
        w, params = reduce_case(rng)
        looks, every = rng.choice([None, 1, 2, 5]), rng.choice([1, 3, 17, 100])
        py = fair_outcome(*python_fair_run(w, params, watch=_counting_watch(looks, every)))
        cc = fair_outcome(*compiled_fair_run(compiled, w, params, watch=_counting_watch(looks, every)))
        problems = fair_differences(py, cc)
        assert not problems, f"watch workload {k} (looks {looks}, every {every}): " + "\n".join(problems[:6])
        stopped += cc["stopped"] is not None
    assert stopped > 0


def test_what_a_run_with_reduces_leaves_is_the_python_engines(compiled: Any) -> None:
    rng = random.Random("compiled-fair-reduces-left")
    for k in range(10):
        w, params = reduce_case(rng)
        assert left_state(compiled_fair_run(compiled, w, params)[0]) == left_state(python_fair_run(w, params)[0]), k


def test_random_runs_with_reduces_and_a_small_stall_limit_are_the_python_engines(compiled: Any) -> None:
    rng = random.Random("compiled-fair-reduces-stall")
    stalled = 0
    for k in range(24):
        w, params = reduce_case(rng)
        params.setdefault("node_delay", 20.0)  # (long delays: heartbeats that launch nothing)
        limit = rng.randint(0, 6)
        assert_same_fair_runs(compiled, w, f"stall workload {k} (limit {limit})", params, stall_limit=limit)
        stalled += python_fair_run(w, params, stall_limit=limit)[0].stalled
    assert stalled > 0


def test_the_summary_and_the_out_tables_with_reduces_are_the_python_engines(compiled: Any) -> None:
    rng = random.Random("compiled-fair-reduces-out")
    for k in range(6):
        w, params = reduce_case(rng)
        py = simulate(w, "fair", params, engine="python")
        cc = simulate(w, "fair", params, engine="compiled")
        assert cc.summary.pop("engine") == "compiled"
        for summary in (py.summary, cc.summary):
            summary.pop("wall_time")
        assert repr(cc.summary) == repr(py.summary), k
        mine, theirs = run_tables(cc), run_tables(py)
        assert list(mine) == list(theirs)
        for name, table in mine.items():
            other = theirs[name]
            assert table.schema == other.schema, (k, name)
            for column in table.column_names:  # (NaN equal to NaN: ``Table.equals`` has them unequal)
                a, b = table[column].to_numpy(zero_copy_only=False), other[column].to_numpy(zero_copy_only=False)
                assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), (k, name, column)
        assert cc.recorder._spilled is None  # (with reduces: the rows built after the run)
        cc.close()
        py.close()


def test_a_hand_worked_scenario_with_reduces(compiled: Any) -> None:
    # n0: 1 map slot, 1 reduce slot, no resources (interval 3 s, phase 0). Job a (user A) 2 maps of 2 s and
    # 1 reduce of 1 s, at 0. t=0: n0 beats: a0 (load 2/1: allowed); no reduce runnable. t=2: a0 ends, n0
    # beats at 3 (its phase plus an interval): a1. t=5: a1 ends, the map stage ends: the reduce runnable;
    # n0 beats at 6: reported maps 0 <= reduces 0: maps first (none pending), then the reduce, until 7.
    nodes = [{"id": "n0", "rack": "r0", "map_slots": 1, "reduce_slots": 1}]
    stages = [
        {"type": "map", "tasks": [{"duration": 2.0, "count": 2}]},
        {"type": "reduce", "tasks": [{"duration": 1.0, "count": 1}]},
    ]
    w = workload(nodes, [{"id": "a", "user": "A", "submit_time": 0.0, "stages": stages}])
    for sim, rec in (python_fair_run(w), compiled_fair_run(compiled, w)):
        t = rec.tasks_columns()
        assert t["start"].tolist() == [0.0, 3.0, 6.0] and list(t["stage_type"]) == ["map", "map", "reduce"]
        assert sim.now == 7.0 and rec.jobs_columns()["finish"].tolist() == [7.0]
    assert_same_fair_runs(compiled, w, "hand-worked, reduces")


def _cluster(resources: bool) -> list[dict[str, Any]]:
    node: dict[str, Any] = {"id": "n0", "rack": "r0", "map_slots": 2, "reduce_slots": 1}
    if resources:
        node["resources"] = {"cpu": 4, "mem": 4}
    return [node]


def _job(demand: dict[str, float] | None, reduce_demand: dict[str, float] | None = None) -> dict[str, Any]:
    maps: dict[str, Any] = {"duration": 2.0, "count": 2}
    reduces: dict[str, Any] = {"duration": 1.0, "count": 1}
    if demand is not None:
        maps["demand"] = demand
    if reduce_demand is not None:
        reduces["demand"] = reduce_demand
    return {
        "id": "a",
        "user": "A",
        "stages": [{"type": "map", "tasks": [maps]}, {"type": "reduce", "tasks": [reduces]}],
    }


_ONE = {"cpu": 1.0, "mem": 1.0}
REFUSED: dict[str, Any] = {
    "a reduce slow-start": lambda: fair_sim(workload(_cluster(False), [_job(None)], timing={"reduce_slowstart": 0.5})),
    "a reduce without a demand on a cluster of resources": lambda: fair_sim(workload(_cluster(True), [_job(_ONE)])),
    "a stage of two task groups": lambda: fair_sim(
        workload(
            _cluster(False),
            [{"id": "a", "stages": [{"type": "map", "tasks": [{"duration": 1.0}, {"duration": 2.0}]}]}],
        )
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_why_not_names_a_reason_for_the_shapes_it_does_not_run(compiled: Any, case: str) -> None:
    sim = REFUSED[case]()
    reason = compiled.why_not(sim)
    assert isinstance(reason, str) and reason and "\n" not in reason, case
    with pytest.raises(InputError, match="cannot run"):
        run_simulation(REFUSED[case](), "fair", "compiled")
    rec, engine = run_simulation(sim, "fair", "auto")
    assert engine == "python" and rec is sim.record and sim.events > 0


def test_a_map_only_run_on_a_cluster_of_no_resources_is_the_python_engines(compiled: Any) -> None:
    # (no reduces: the rows are written as the run goes, ``keep_spilled_rows``)
    nodes = [{"id": f"n{i}", "rack": f"r{i % 2}", "map_slots": 2, "reduce_slots": 1} for i in range(3)]
    jobs = [
        {"id": f"j{i}", "user": f"u{i % 2}", "submit_time": float(i), "stages": [{"type": "map", "tasks": [
            {"duration": 3.0, "count": 4 + i}]}]}
        for i in range(5)
    ]  # fmt: skip
    w = workload(nodes, jobs, placement={"replicas": 2, "seed": 1})
    sim, rec = compiled_fair_run(compiled, w)
    assert rec._spilled is not None
    assert_same_fair_runs(compiled, w, "map only, no resources")
