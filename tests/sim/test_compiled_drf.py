"""The compiled ``drf`` loop (``mropt.sim.compiled``) runs a simulation as the Python engine does, exactly.

``run_compiled(sim)`` runs a built :class:`~mropt.sim.engine.Simulation` of ``drf`` by a numba loop
and leaves the simulation as ``sim.run()`` would. On seeded random workloads of the shape the loop
supports (two resources named cpu and mem, no slots, jobs of one map stage of one task group) the
compiled run must give the Python engine's event log, event count, clock, finished count, end order,
stop and every column of the job, attempt and utilisation tables, bit for bit (NaN equal to NaN);
against the plain rule (``reference=True``) too; stopped at ``until`` or by a watch; at far times
(attempts of no time); and the independent ``verify_simulation`` must pass on its tables. Two
hand-worked scenarios check the compiled run against DRF's definition with no engine.

``ddrf`` and ``delay`` run compiled too: tests/sim/test_compiled_delay.py, with the two known
mismatches of the Python side as strict xfails there
(``test_python_accelerated_offers_are_the_plain_rule_at_far_times``: at far times the Python engine's
accelerated offers differ from its plain rule; ``test_a_job_left_waiting_after_its_decline_is_a_stated_stall``:
the Python policy leaves a job that declined waiting with no stated cause). ``why_not``'s reasons for the
simulations the loop cannot run: tests/sim/test_compiled_refusals.py. The shared helpers:
tests/sim/compiled_helpers.py.

numba compiles the core once per process (then loads its cache): one module-scoped fixture imports it.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from mropt.model.workload import WorkloadInstance  # noqa: E402
from mropt.sim.engine import Simulation  # noqa: E402
from mropt.sim.policy import make_policy  # noqa: E402
from mropt.sim.verify import verify_simulation  # noqa: E402

from compiled_helpers import (  # noqa: E402
    _counting_watch,
    _group,
    _job,
    _sim,
    assert_same_runs,
    compiled_fixture,  # noqa: F401  (the fixture compiled)
    compiled_run,
    differences,
    python_run,
    random_workload,
    run_outcome,
    supported,
)
from sim_helpers import workload  # noqa: E402

# ---------------------------------------------------------------------------------------------
# 1. the compiled run is the Python engine's run


CHUNKS = 6
PER_CHUNK = 25  # 150 workloads in all


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_compiled_run_is_the_python_engines_run_on_random_workloads(compiled: Any, chunk: int) -> None:
    # a failure names its workload: random_workload(random.Random(f"compiled-drf-{chunk}")) drawn k + 1 times
    rng = random.Random(f"compiled-drf-{chunk}")
    for k in range(PER_CHUNK):
        w = random_workload(rng)
        options: dict[str, Any] = {"batch": False} if k % 8 == 5 else {}  # attempts one by one, without batches
        assert_same_runs(compiled, w, f"chunk {chunk}, workload {k}", **options)


def test_the_random_workloads_reach_the_cases_they_are_drawn_for(compiled: Any) -> None:
    # the draws above are not vacuous: jobs left waiting, nodes exactly full, tied ends, placement, jobs
    # whose demand fits one node only
    rng = random.Random("compiled-drf-0")
    seen = {"placed": 0, "waited": 0, "full": 0, "tied_ends": 0, "one_node": 0, "no_user": 0}
    for _ in range(PER_CHUNK):
        w = random_workload(rng)
        sim, rec = compiled_run(compiled, w)
        seen["placed"] += w.placement is not None
        jobs, tasks = rec.jobs_columns(), rec.tasks_columns()
        seen["waited"] += int(np.sum(jobs["first_start"] > jobs["submit_time"]))
        ends = tasks["end"]
        seen["tied_ends"] += len(ends) - len(np.unique(ends))
        seen["no_user"] += sum(j.user == "default" for j in sim.jobs)
        caps = {n.id: n.resources for n in w.nodes}
        for job in w.jobs:
            d = job.stages[0].tasks[0].demand
            fitting = [n for n, c in caps.items() if all(c.get(r, 0.0) >= v for r, v in d.items())]
            seen["one_node"] += len(fitting) == 1
            seen["full"] += any(all(c.get(r, 0.0) == d.get(r, 0.0) for r in ("cpu", "mem")) for c in caps.values())
    assert all(v > 0 for v in seen.values()), seen


@pytest.mark.parametrize("base", [2.0**52, 1e16])
def test_compiled_run_is_the_python_engines_run_at_far_times(compiled: Any, base: float) -> None:
    # submit times shifted to 2**52 (a time's ulp 1) or 1e16 (ulp 2): a duration below half an ulp ends
    # its attempt at its start (a new instant at the same time value: the utilisation rows' breaks),
    # others round to whole ulps (many ends coincide)
    rng = random.Random(f"compiled-drf-far-{base}")
    instant = 0
    for k in range(10):
        data = random_workload(rng).to_dict()
        for job in data["jobs"]:
            job["submit_time"] = job.get("submit_time", 0.0) + base
        w = WorkloadInstance.from_dict(data)
        assert_same_runs(compiled, w, f"far workload {k}")
        tasks = compiled_run(compiled, w)[1].tasks_columns()
        instant += int(np.sum(tasks["end"] == tasks["start"]))
    assert instant > 0  # attempts of no time were run


def test_compiled_run_is_the_plain_rules_run(compiled: Any) -> None:
    # make_policy("drf", reference=True): users sorted afresh at every launch, none of the accelerations
    rng = random.Random("compiled-drf-reference")
    for k in range(30):
        assert_same_runs(compiled, random_workload(rng), f"reference workload {k}", reference=True)


def test_compiled_run_without_utilisation_records_the_same_tables(compiled: Any) -> None:
    rng = random.Random("compiled-drf-no-utilisation")
    for k in range(5):
        assert_same_runs(compiled, random_workload(rng), f"workload {k}", record_utilisation=False)


def test_compiled_run_stopped_at_until_is_the_python_engines_run(compiled: Any) -> None:
    # ``until`` (the first instant after it is not run; the attempts running then end killed): at an
    # instant's own time, between instants, before the first and after the last
    if compiled.why_not(_sim(supported(), until=2.0)) is not None:
        pytest.skip("run_compiled does not take until yet")
    rng = random.Random("compiled-drf-until")
    stopped = 0
    for k in range(24):
        w = random_workload(rng)
        sim = Simulation(w, make_policy("drf", {}))
        tasks = sim.run().tasks_columns()
        times = sorted(set(tasks["start"].tolist()) | set(tasks["end"].tolist()))
        pick = k % 4
        if pick == 0:
            until = rng.choice(times)
        elif pick == 1:
            i = rng.randrange(len(times) - 1) if len(times) > 1 else 0
            until = (times[i] + times[min(i + 1, len(times) - 1)]) / 2
        else:
            until = times[0] - 1.0 if pick == 2 else times[-1] + 1.0
        assert_same_runs(compiled, w, f"until workload {k} (until {until!r})", until=until)
        run, rec = compiled_run(compiled, w, until=until)
        stopped += run.stopped is not None
        verdict = verify_simulation(w, rec.jobs_columns(), rec.tasks_columns())  # a stopped run's tables
        assert verdict.ok, (k, until, verdict.problems)
    assert stopped > 0


def test_compiled_run_with_a_watch_is_the_python_engines_run(compiled: Any) -> None:
    # the looks at the watch come at the same instants (events counted as the Python loop counts them),
    # and a stop at the k-th look leaves the same run
    if compiled.why_not(_sim(supported(), watch=_counting_watch(None, 5))) is not None:
        pytest.skip("run_compiled does not take a watch yet")
    rng = random.Random("compiled-drf-watch")
    stopped = 0
    for k in range(20):
        w = random_workload(rng)
        looks, every = rng.choice([None, 1, 2, 5, 20]), rng.choice([1, 3, 17, 100])
        py = python_run(w, watch=_counting_watch(looks, every))
        cc = run_outcome(*compiled_run(compiled, w, watch=_counting_watch(looks, every)))
        problems = differences(py, cc)
        assert not problems, f"watch workload {k} (looks {looks}, every {every}): " + "\n".join(problems[:6])
        stopped += cc["stopped"] is not None
    assert stopped > 0


# ---------------------------------------------------------------------------------------------
# 2. the independent verify passes on the compiled run's tables


def test_verify_simulation_passes_on_the_compiled_tables(compiled: Any) -> None:
    rng = random.Random("compiled-drf-verify")
    for k in range(25):
        w = random_workload(rng)
        _, rec = compiled_run(compiled, w)
        jobs, tasks = rec.jobs_columns(), rec.tasks_columns()
        verdict = verify_simulation(w, jobs, tasks)
        assert verdict.ok, (k, verdict.problems)
        assert all(f == f for f in jobs["finish"]), (
            k
        )  # every job finished (none fits no node: see test_compiled_refusals.py)
        assert len(tasks["task"]) == sum(job.stages[0].tasks[0].count for job in w.jobs)


# ---------------------------------------------------------------------------------------------
# 3. a scenario worked by hand from DRF's definition


def test_a_hand_worked_scenario(compiled: Any) -> None:
    # one node of cpu 4, mem 4 (the totals); three users, one job each, all submitted at 0:
    #   a (user A, index 0): 4 tasks of (cpu 1, mem 1), 3 s: dominant share 1/4 a task
    #   b (user B, index 1): 3 tasks of (cpu 2, mem 0.5), 5 s: dominant share 1/2 a task (cpu)
    #   c (user C, index 2): 2 tasks of (cpu 0.5, mem 2), 4 s: dominant share 1/2 a task (mem)
    # The user of the lowest dominant share launches next; ties: the larger dominant demand of the next
    # task, then the user index; a user whose next task does not fit the free capacity is passed by.
    #  t=0: shares 0,0,0; B and C (1/2) before A (1/4), B before C (index): b0 (free 2, 3.5, B 1/2);
    #       c0 (A 0, C 0: C's larger demand; free 1.5, 1.5, C 1/2); a0 (free .5, .5, A 1/4); nothing fits
    #  t=3: a0 ends (A 0; free 1.5, 1.5): a1 (free .5, .5)
    #  t=4: c0 ends (C 0; free 1, 2.5): C lowest: c1 (free .5, .5); c is all started
    #  t=5: b0 ends (B 0; free 2.5, 1): b1 (free .5, .5)
    #  t=6: a1 ends (A 0; free 1.5, 1.5): a2 (free .5, .5)
    #  t=8: c1 ends, c finishes (free 1, 2.5): A (1/4) before B (1/2): a3 (free 0, 1.5); b2 does not fit
    #  t=9: a2 ends (free 1, 2.5): A has nothing pending; b2 (cpu 2) does not fit
    #  t=10: b1 ends (free 3, 3): b2 (free 1, 2.5)
    #  t=11: a3 ends, a finishes; t=15: b2 ends, b finishes
    nodes = [{"id": "n0", "resources": {"cpu": 4, "mem": 4}}]
    jobs = [
        _job("a", _group(3.0, 4, 1.0, 1.0), user="A"),
        _job("b", _group(5.0, 3, 2.0, 0.5), user="B"),
        _job("c", _group(4.0, 2, 0.5, 2.0), user="C"),
    ]
    w = workload(nodes, jobs)
    expected = [  # (start, job, task, end) in launch order
        (0.0, "b", 0, 5.0),
        (0.0, "c", 0, 4.0),
        (0.0, "a", 0, 3.0),
        (3.0, "a", 1, 6.0),
        (4.0, "c", 1, 8.0),
        (5.0, "b", 1, 10.0),
        (6.0, "a", 2, 9.0),
        (8.0, "a", 3, 11.0),
        (10.0, "b", 2, 15.0),
    ]
    sim, rec = compiled_run(compiled, w)
    tasks = rec.tasks_columns()
    rows = sorted(
        zip(
            tasks["attempt"].tolist(),
            tasks["start"].tolist(),
            tasks["job_id"],
            tasks["task"].tolist(),
            tasks["end"].tolist(),
            tasks["node"],
        )
    )
    assert [r[1:5] for r in rows] == expected
    assert {r[5] for r in rows} == {"n0"}
    assert [a for a, *_ in rows] == list(range(len(expected)))  # attempt ids in launch order
    jobs_table = rec.jobs_columns()
    assert jobs_table["finish"].tolist() == [11.0, 15.0, 8.0]
    assert [sim.jobs[j].id for j in rec.job_end_order] == ["c", "a", "b"]
    assert sim.now == 15.0 and sim.jobs_finished == 3
    assert sim.events == 3 + len(expected)  # the arrivals and one completion per attempt
    assert_same_runs(compiled, w, "hand-worked")


def test_a_hand_worked_scenario_on_two_nodes_with_runs_and_ties(compiled: Any) -> None:
    # two nodes of (cpu 2, mem 2): totals (4, 4); users X (index 0) and Y (index 1), all at 0:
    #   x: 6 tasks of (cpu 1, mem 0.5), 2 s: 1/4 a task (cpu); y: 4 tasks of (cpu 0.5, mem 1), 2 s: 1/4 (mem)
    # New work offers every node in order, n0 first. Equal shares and equal dominant demands: X by index.
    #  t=0, n0: X 0 -> x0 (X 1/4; n0 free 1, 1.5); Y 0 -> y0 (Y 1/4; free .5, .5); X 1/4 = Y 1/4, X by index:
    #       x's (1, .5) does not fit, y's (.5, 1) does not fit: n0 done.
    #       n1: X (1/4) -> x1 (X 1/2; free 1, 1.5); Y (1/4) -> y1 (Y 1/2; free .5, .5); nothing fits.
    #  t=2: all four end (shares 0); n0 then n1 are offered as at 0: x2, y2 on n0; x3, y3 on n1
    #  t=4: all four end; y (4 tasks) is done; x alone: n0: x4 (free 1, 1.5), x5 (free 0, 1); n1 idle
    #  t=6: x4, x5 end: x finishes; y finished at 4
    nodes = [{"id": f"n{i}", "resources": {"cpu": 2, "mem": 2}} for i in range(2)]
    jobs = [_job("x", _group(2.0, 6, 1.0, 0.5), user="X"), _job("y", _group(2.0, 4, 0.5, 1.0), user="Y")]
    w = workload(nodes, jobs)
    expected = [  # (start, job, task, node) in launch order
        (0.0, "x", 0, "n0"),
        (0.0, "y", 0, "n0"),
        (0.0, "x", 1, "n1"),
        (0.0, "y", 1, "n1"),
        (2.0, "x", 2, "n0"),
        (2.0, "y", 2, "n0"),
        (2.0, "x", 3, "n1"),
        (2.0, "y", 3, "n1"),
        (4.0, "x", 4, "n0"),
        (4.0, "x", 5, "n0"),
    ]
    sim, rec = compiled_run(compiled, w)
    tasks = rec.tasks_columns()
    rows = sorted(
        zip(tasks["attempt"].tolist(), tasks["start"].tolist(), tasks["job_id"], tasks["task"].tolist(), tasks["node"])
    )
    assert [r[1:] for r in rows] == expected
    assert tasks["end"].tolist() == [s + 2.0 for s in tasks["start"].tolist()]
    assert rec.jobs_columns()["finish"].tolist() == [6.0, 4.0]
    assert sim.now == 6.0 and sim.jobs_finished == 2
    assert_same_runs(compiled, w, "hand-worked, two nodes")
