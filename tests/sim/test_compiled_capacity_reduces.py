"""The compiled ``capacity`` core with reduces and on clusters of no resources runs a simulation as the Python engine does.

The shape of the SWIM Facebook 2009 day (``benchmarks/bench_sim.py`` section 3): nodes of map and reduce
slots and no resources (tasks without demands: the room and fit tests count slots), jobs of a map stage
and perhaps a reduce stage, released when the map stage ends; and the same on clusters of cpu and mem,
every task with a demand. On seeded random workloads of that shape
(``fair_compiled_helpers.reduce_workload``: some nodes without reduce slots or map slots, a placement or
none; ``locality_wait_factor`` random) the compiled run must give the Python engine's event log, events,
clock, stop, stall, unfinished causes and every column of the job, attempt and utilisation tables (built
after the run from its attempts), bit for bit; against the plain rule (``reference=True``) too; stopped at
``until``, by a watch (leaving the jobs' stages as the Python run does) or stalled (``stall_limit``);
``simulate``'s summary and ``--out`` tables the same. The draws must reach the cases they are drawn for
(reduces launched on both kinds of cluster; a heartbeat that launches a map and a reduce). ``why_not``
refuses a reduce slow-start and the mixed shapes it does not run.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from mropt.model.errors import InputError  # noqa: E402
from mropt.model.workload import WorkloadInstance  # noqa: E402
from mropt.sim.engine import Simulation  # noqa: E402
from mropt.sim.engines import run_simulation  # noqa: E402
from mropt.sim.outputs import run_tables  # noqa: E402
from mropt.sim.policy import make_policy  # noqa: E402
from mropt.sim.recorder import Recorder  # noqa: E402
from mropt.sim.run import simulate  # noqa: E402
from mropt.sim.state import REDUCE  # noqa: E402

from compiled_helpers import _counting_watch  # noqa: E402
from fair_compiled_helpers import fair_differences, fair_outcome, left_state, reduce_workload  # noqa: E402
from sim_helpers import workload  # noqa: E402

CHUNKS = 4
PER_CHUNK = 25  # 100 workloads in all
#: ``locality_wait_factor`` values: Hadoop's own (-1), 0, small and large
FACTORS = (-1.0, -1.0, 0.0, 0.3, 1.0, 2.5)


@pytest.fixture(scope="module", name="compiled")
def compiled_fixture() -> Any:
    """``mropt.sim.compiled.capacity_engine``, its core imported (compiled or loaded from numba's cache)."""
    import mropt.sim.compiled.capacity_core  # noqa: F401
    from mropt.sim.compiled import capacity_engine

    return capacity_engine


def case(rng: random.Random) -> tuple[WorkloadInstance, dict[str, Any]]:
    """A random workload with reduces (``reduce_workload``) and a random ``locality_wait_factor``."""
    w = reduce_workload(rng)
    factor = rng.choice(FACTORS)
    return w, ({} if factor == -1.0 else {"locality_wait_factor": factor})


def cap_sim(
    w: WorkloadInstance, params: dict[str, Any] | None = None, reference: bool = False, **options: Any
) -> Simulation:
    return Simulation(w, make_policy("capacity", params or {}, reference=reference), **options)


def python_run(
    w: WorkloadInstance, params: dict[str, Any] | None = None, reference: bool = False, **options: Any
) -> tuple[Simulation, Recorder]:
    sim = cap_sim(w, params, reference, **options)
    return sim, sim.run()


def compiled_run(
    compiled: Any, w: WorkloadInstance, params: dict[str, Any] | None = None, **options: Any
) -> tuple[Simulation, Recorder]:
    """The compiled run of ``capacity``; fails the test if ``why_not`` names a reason."""
    sim = cap_sim(w, params, **options)
    reason = compiled.why_not(sim)
    assert reason is None, reason
    rec = compiled.run_compiled(sim)
    assert rec is sim.record
    return sim, rec


def assert_same_runs(
    compiled: Any, w: WorkloadInstance, where: str, params: dict[str, Any], reference: bool = False, **options: Any
) -> None:
    py = fair_outcome(*python_run(w, params, reference, **options))
    cc = fair_outcome(*compiled_run(compiled, w, params, **options))
    problems = fair_differences(py, cc)
    assert not problems, f"{where} (capacity {params}, {options or 'defaults'}): " + "\n".join(problems[:6])


def _options(k: int) -> dict[str, Any]:
    """Engine options of the k-th workload of a chunk: attempts one by one (no batches) in 1 of 8, no
    utilisation rows in 1 of 8."""
    if k % 8 == 5:
        return {"batch": False}
    if k % 8 == 6:
        return {"record_utilisation": False}
    return {}


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_compiled_capacity_with_reduces_is_the_python_engines_run(compiled: Any, chunk: int) -> None:
    # a failure names its workload: case(random.Random(f"compiled-capacity-reduces-{chunk}")) drawn k + 1 times
    rng = random.Random(f"compiled-capacity-reduces-{chunk}")
    for k in range(PER_CHUNK):
        w, params = case(rng)
        where = f"chunk {chunk}, workload {k}"
        assert_same_runs(compiled, w, where, params, **_options(k))
        if k % 3 == 0:
            assert_same_runs(compiled, w, where + ", plain", params, reference=True, **_options(k))


@pytest.mark.parametrize("base", [2.0**40, 2.0**52, 1e16])
def test_compiled_capacity_with_reduces_at_far_times(compiled: Any, base: float) -> None:
    # submit times shifted far: heartbeats collide, tasks round to no time, lone heartbeats on clusters
    # without resources meet them
    rng = random.Random(f"compiled-capacity-reduces-far-{base}")
    for k in range(10):
        w, params = case(rng)
        data = w.to_dict()
        for job in data["jobs"]:
            job["submit_time"] = job.get("submit_time", 0.0) + base
        assert_same_runs(compiled, WorkloadInstance.from_dict(data), f"far {base!r}, workload {k}", params)


def test_the_draws_reach_reduces_on_both_kinds_of_cluster(compiled: Any) -> None:
    # reduces launched on clusters of no resources and of cpu and mem; nodes without reduce slots; a
    # node's map and reduce started at one instant (one heartbeat: the maps, then the reduce)
    rng = random.Random("compiled-capacity-reduces-0")
    reduces = {0: 0, 2: 0}
    no_reduce_slots = both = 0
    for _ in range(PER_CHUNK):
        w, params = case(rng)
        sim, rec = compiled_run(compiled, w, params)
        t = rec.tasks_columns()
        kinds = np.asarray(t["stage_type"])
        reduces[len(sim.resources)] += int(np.count_nonzero(kinds == "reduce"))
        no_reduce_slots += any(s == 0 for s in sim.slots[REDUCE])
        starts: dict[tuple[str, float], set[str]] = {}
        for node, start, kind in zip(t["node"], t["start"].tolist(), kinds.tolist(), strict=True):
            starts.setdefault((node, start), set()).add(kind)
        both += sum(v == {"map", "reduce"} for v in starts.values())
    assert reduces[0] > 0 and reduces[2] > 0 and no_reduce_slots > 0 and both > 0


def test_compiled_capacity_with_reduces_stopped_at_until(compiled: Any) -> None:
    # ``until`` at an instant's own time or between instants; what the run leaves in the jobs' stages too
    rng = random.Random("compiled-capacity-reduces-until")
    for k in range(14):
        w, params = case(rng)
        times = sorted({float(t) for t in python_run(w, params)[1].tasks_columns()["start"].tolist()})
        until = rng.choice(times) if k % 2 else (times[len(times) // 2] + times[-1]) / 2
        assert_same_runs(compiled, w, f"until workload {k} (until {until!r})", params, until=until)
        py = python_run(w, params, until=until)[0]
        cc = compiled_run(compiled, w, params, until=until)[0]
        assert left_state(cc) == left_state(py), f"until workload {k} (until {until!r})"


def test_compiled_capacity_with_reduces_and_a_watch(compiled: Any) -> None:
    # the looks at the watch at the same instants (none before a lone heartbeat), a stop at the k-th look
    # leaves the same run
    rng = random.Random("compiled-capacity-reduces-watch")
    stopped = 0
    for k in range(14):
        w, params = case(rng)
        looks, every = rng.choice([None, 1, 2, 5]), rng.choice([1, 3, 17, 100])
        py = fair_outcome(*python_run(w, params, watch=_counting_watch(looks, every)))
        cc = fair_outcome(*compiled_run(compiled, w, params, watch=_counting_watch(looks, every)))
        problems = fair_differences(py, cc)
        assert not problems, f"watch workload {k} (looks {looks}, every {every}): " + "\n".join(problems[:6])
        stopped += cc["stopped"] is not None
    assert stopped > 0


def test_what_a_capacity_run_with_reduces_leaves_is_the_python_engines(compiled: Any) -> None:
    rng = random.Random("compiled-capacity-reduces-left")
    for k in range(10):
        w, params = case(rng)
        assert left_state(compiled_run(compiled, w, params)[0]) == left_state(python_run(w, params)[0]), k


def test_capacity_runs_with_reduces_and_a_small_stall_limit(compiled: Any) -> None:
    rng = random.Random("compiled-capacity-reduces-stall")
    stalled = 0
    for k in range(20):
        w, params = case(rng)
        params.setdefault("locality_wait_factor", 2.5)  # (off-switch maps late: heartbeats that launch nothing)
        limit = rng.randint(0, 6)
        assert_same_runs(compiled, w, f"stall workload {k} (limit {limit})", params, stall_limit=limit)
        stalled += python_run(w, params, stall_limit=limit)[0].stalled
    assert stalled > 0


def test_the_summary_and_the_out_tables_with_reduces_are_the_python_engines(compiled: Any) -> None:
    rng = random.Random("compiled-capacity-reduces-out")
    for k in range(5):
        w, params = case(rng)
        py = simulate(w, "capacity", params, engine="python")
        cc = simulate(w, "capacity", params, engine="compiled")
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
        cc.close()
        py.close()


def test_a_hand_worked_scenario_with_reduces(compiled: Any) -> None:
    # n0: 2 map slots, 1 reduce slot, no resources (interval 3 s, phase 0). Job a 2 maps of 2 s and 1 reduce
    # of 1 s at 0, job b 1 map of 4 s and 1 reduce of 1 s at 0. t=0: n0 beats: a0, a1 (the first job, a
    # walk per map); no reduce runnable. t=2: a's map stage ends: its reduce runnable; n0 beats at 3: b0
    # (map), then a's reduce (3 to 4). t=7: b's maps end; n0 beats at 9: b's reduce, until 10.
    nodes = [{"id": "n0", "rack": "r0", "map_slots": 2, "reduce_slots": 1}]

    def job(name: str, maps: int, duration: float) -> dict[str, Any]:
        stages = [
            {"type": "map", "tasks": [{"duration": duration, "count": maps}]},
            {"type": "reduce", "tasks": [{"duration": 1.0, "count": 1}]},
        ]
        return {"id": name, "user": "A", "submit_time": 0.0, "stages": stages}

    w = workload(nodes, [job("a", 2, 2.0), job("b", 1, 4.0)])
    for sim, rec in (python_run(w), compiled_run(compiled, w)):
        t = rec.tasks_columns()
        rows = sorted(zip(t["start"].tolist(), t["job_id"], t["stage_type"], strict=True))
        assert rows == [
            (0.0, "a", "map"), (0.0, "a", "map"), (3.0, "a", "reduce"), (3.0, "b", "map"), (9.0, "b", "reduce"),
        ], rows  # fmt: skip
        assert sim.now == 10.0
    assert_same_runs(compiled, w, "hand-worked, reduces", {})


def _cluster(resources: bool) -> list[dict[str, Any]]:
    node: dict[str, Any] = {"id": "n0", "rack": "r0", "map_slots": 2, "reduce_slots": 1}
    if resources:
        node["resources"] = {"cpu": 4, "mem": 4}
    return [node]


def _job(demand: dict[str, float] | None) -> dict[str, Any]:
    maps: dict[str, Any] = {"duration": 2.0, "count": 2}
    if demand is not None:
        maps["demand"] = demand
    reduces = {"duration": 1.0, "count": 1}
    return {
        "id": "a",
        "user": "A",
        "stages": [{"type": "map", "tasks": [maps]}, {"type": "reduce", "tasks": [reduces]}],
    }


_ONE = {"cpu": 1.0, "mem": 1.0}
REFUSED: dict[str, Any] = {
    "a reduce slow-start": lambda: cap_sim(workload(_cluster(False), [_job(None)], timing={"reduce_slowstart": 0.5})),
    "a reduce without a demand on a cluster of resources": lambda: cap_sim(workload(_cluster(True), [_job(_ONE)])),
    "a stage of two task groups": lambda: cap_sim(
        workload(
            _cluster(False),
            [{"id": "a", "stages": [{"type": "map", "tasks": [{"duration": 1.0}, {"duration": 2.0}]}]}],
        )
    ),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_why_not_names_a_reason_for_the_shapes_it_does_not_run(compiled: Any, name: str) -> None:
    sim = REFUSED[name]()
    reason = compiled.why_not(sim)
    assert isinstance(reason, str) and reason and "\n" not in reason, name
    with pytest.raises(InputError, match="cannot run"):
        run_simulation(REFUSED[name](), "capacity", "compiled")
