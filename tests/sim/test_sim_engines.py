"""Which engine runs a simulation (``simulate(..., engine=...)``), and its stops.

``mropt.sim.engines``: ``python`` runs the Python engine; ``compiled`` the compiled core (``drf``,
``ddrf``, ``delay``), and refuses (one-line InputError) any run it cannot do, or a machine without
numba; ``auto`` picks the compiled core only for those policies on a supported workload of at least
``AUTO_TASKS`` tasks, and the Python engine otherwise, silently. The run is the same either way: the
summary (but for ``wall_time``, and ``"engine": "compiled"`` on a compiled run) and every table.

The stops must be the same too: ``until`` (before the first arrival, between instants, at an instant,
after the last event), a wall-clock limit and Ctrl-C seen by the watch (looked at every ``watch.every``
events by both loops: a fake clock makes the stop instant deterministic), a second Ctrl-C (the run
abandoned), and the progress bar's last line. A compiled run stopped early passes the independent
verify.

(``mropt simulate --engine`` end to end: tests/sim/test_sim_engine_cli.py. Whole runs on many random
workloads: tests/sim/test_compiled_drf.py and test_compiled_delay.py; ``why_not``'s reasons:
tests/sim/test_compiled_refusals.py.)
"""

from __future__ import annotations

import io
import itertools
import os
import random
import re
import signal
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from mropt.model.errors import InputError
from mropt.model.workload import WorkloadInstance
from mropt.sim import engines
from mropt.sim import run as run_module
from mropt.sim.engine import Simulation
from mropt.sim.engines import AUTO_TASKS, check_engine
from mropt.sim.policy import make_policy
from mropt.sim.recorder import Recorder
from mropt.sim.run import SimRun, simulate
from mropt.sim.verify import check_stop, verify_simulation
from mropt.sim.watch import Watch

from sim_helpers import workload


#: test_sim_engine_cli.py imports this fixture (``compiled_fixture``); the tests take it as ``compiled``
@pytest.fixture(scope="module", name="compiled")
def compiled_fixture() -> Any:
    """``mropt.sim.compiled.drf_engine``, its core compiled (or loaded from numba's cache) once; the tests
    that need the compiled core take it, and are skipped without numba."""
    pytest.importorskip("numba")
    import mropt.sim.compiled.drf_core  # noqa: F401
    from mropt.sim.compiled import drf_engine

    return drf_engine


# ---------------------------------------------------------------------------------------------
# workloads

NODES = [
    {"id": "n0", "rack": "r0", "resources": {"cpu": 4, "mem": 4}},
    {"id": "n1", "rack": "r1", "resources": {"cpu": 2, "mem": 8}},
]


def _job(jid: str, count: int, duration: float, cpu: float, mem: float, submit: float, user: str) -> dict[str, Any]:
    group = {"duration": duration, "count": count, "demand": {"cpu": cpu, "mem": mem}}
    return {"id": jid, "submit_time": submit, "user": user, "stages": [{"type": "map", "tasks": [group]}]}


def supported(**extra: Any) -> WorkloadInstance:
    """Three jobs the compiled core runs, the first submitted at 1 (so that a run can stop before it)."""
    jobs = [
        _job("a", 3, 2.0, 1.0, 1.0, 1.0, "u0"),
        _job("b", 5, 3.0, 2.0, 0.5, 2.0, "u1"),
        _job("c", 4, 1.5, 0.5, 2.0, 6.0, "u0"),
    ]
    return workload(NODES, jobs, **extra)


def with_slots() -> WorkloadInstance:
    """The same jobs on nodes that also have slots: ``fair`` runs on it (compiled: ``fair_core``), ``drf``'s core does not."""
    return workload([{**n, "map_slots": 2, "reduce_slots": 1} for n in NODES], supported().to_dict()["jobs"])


def n_tasks(w: WorkloadInstance) -> int:
    return sum(g.count for job in w.jobs for stage in job.stages for g in stage.tasks)


def random_workload(rng: random.Random) -> WorkloadInstance:
    """2-6 nodes of cpu and mem on 1-2 racks, 3-15 map-only jobs of 1-12 tasks of one demand (that fits
    some node), 1-3 users, whole and fractional submit times and durations (ties and inexact sums), a
    generated placement in half of them."""
    racks = rng.randint(1, 2)
    nodes = [
        {
            "id": f"n{i}",
            "rack": f"r{i % racks}",
            "resources": {"cpu": rng.choice([2, 4, 6]), "mem": rng.choice([2, 4, 8])},
        }
        for i in range(rng.randint(2, 6))
    ]
    max_cpu = max(n["resources"]["cpu"] for n in nodes)
    max_mem = max(n["resources"]["mem"] for n in nodes if n["resources"]["cpu"] == max_cpu)
    jobs = []
    for i in range(rng.randint(3, 15)):
        cpu = min(rng.choice([0.5, 1.0, 2.0, 3.0]), max_cpu)
        mem = min(rng.choice([0.3, 1.0, 2.0]), max_mem)
        submit = float(rng.randint(0, 12)) if rng.random() < 0.7 else rng.randint(0, 50) / 4
        duration = rng.choice([1.0, 2.0, 3.0, 0.1, 0.3, 2.7])
        jobs.append(_job(f"j{i}", rng.randint(1, 12), duration, cpu, mem, submit, f"u{rng.randrange(3)}"))
    extra = {"placement": {"replicas": rng.randint(1, 2), "seed": rng.randint(0, 9)}} if rng.random() < 0.5 else {}
    return workload(nodes, jobs, **extra)


def random_workloads(name: str, n: int) -> Iterator[WorkloadInstance]:
    rng = random.Random(f"sim-engines-{name}")
    for _ in range(n):
        yield random_workload(rng)


# ---------------------------------------------------------------------------------------------
# comparing two runs


def same_column(a: Any, b: Any) -> bool:
    """Equal exactly: arrays of one dtype and shape, equal element by element with NaN equal to NaN;
    lists and scalars by ``repr``."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.dtype != b.dtype or a.shape != b.shape:
            return False
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    return repr(a) == repr(b)


def table_differences(name: str, a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    if list(a) != list(b):
        return [f"{name}: columns {list(a)} != {list(b)}"]
    return [f"{name}.{k}: {a[k]!r} != {b[k]!r}" for k in a if not same_column(a[k], b[k])]


def recorder_differences(a: Recorder, b: Recorder) -> list[str]:
    out = []
    if a.event_log_hash() != b.event_log_hash():
        out.append("event_log_hash differs")
    out += table_differences("jobs", a.jobs_columns(), b.jobs_columns())
    out += table_differences("tasks", a.tasks_columns(), b.tasks_columns())
    out += table_differences("utilisation", a.utilisation_columns(), b.utilisation_columns())
    return out


def bare(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary without what may differ between the engines' runs: ``wall_time`` and ``engine``."""
    return {k: v for k, v in summary.items() if k not in ("wall_time", "engine")}


def run_differences(py: SimRun, cc: SimRun) -> list[str]:
    """What differs between a Python run and a compiled run of :func:`simulate` (the summary by ``repr``:
    floats exactly, keys in order)."""
    assert "engine" not in py.summary, py.summary
    assert cc.summary.get("engine") == "compiled", cc.summary
    out = []
    if repr(bare(py.summary)) != repr(bare(cc.summary)):
        a, b = bare(py.summary), bare(cc.summary)
        out.append(f"summary keys {list(a)} != {list(b)}" if list(a) != list(b) else "")
        out += [f"summary[{k!r}]: {a[k]!r} != {b[k]!r}" for k in a if k in b and repr(a[k]) != repr(b[k])]
        out = [line for line in out if line] or ["summary differs"]
    out += recorder_differences(py.recorder, cc.recorder)
    return out


def both(
    w: WorkloadInstance, policy: str = "drf", params: dict[str, Any] | None = None, **options: Any
) -> tuple[SimRun, SimRun]:
    return (
        simulate(w, policy, params, engine="python", **options),
        simulate(w, policy, params, engine="compiled", **options),
    )


def assert_same(
    w: WorkloadInstance, where: str, policy: str = "drf", params: dict[str, Any] | None = None, **options: Any
) -> tuple[SimRun, SimRun]:
    py, cc = both(w, policy, params, **options)
    problems = run_differences(py, cc)
    assert not problems, f"{where} ({options}): " + "\n".join(problems[:6])
    return py, cc


# ---------------------------------------------------------------------------------------------
# 1. the engine's name


@pytest.mark.parametrize("bad", ["bogus", "Compiled", "", None, 1, "numba"])
def test_a_bad_engine_is_a_one_line_input_error_naming_it(bad: Any) -> None:
    with pytest.raises(InputError) as info:
        check_engine(bad)
    text = str(info.value)
    assert "\n" not in text and repr(bad) in text and "auto, python, compiled" in text, text
    with pytest.raises(InputError, match=re.escape(repr(bad))):
        simulate(supported(), "drf", engine=bad)


@pytest.mark.parametrize("good", ["auto", "python", "compiled"])
def test_check_engine_returns_a_good_name(good: str) -> None:
    assert check_engine(good) == good


# ---------------------------------------------------------------------------------------------
# 2. what auto picks


def test_auto_picks_the_compiled_core_from_auto_tasks_tasks_on(compiled: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    w = supported()
    tasks = n_tasks(w)
    assert "engine" not in simulate(w, "drf").summary  # the default threshold: far above 12 tasks
    monkeypatch.setattr(engines, "AUTO_TASKS", tasks)
    assert simulate(w, "drf").summary.get("engine") == "compiled"
    assert simulate(w, "drf", engine="auto").summary.get("engine") == "compiled"
    assert "engine" not in simulate(w, "drf", engine="python").summary
    monkeypatch.setattr(engines, "AUTO_TASKS", tasks + 1)
    assert "engine" not in simulate(w, "drf").summary
    monkeypatch.setattr(engines, "AUTO_TASKS", 1)
    # only the compiled policies, and only on a workload their core runs: else the Python engine, silently
    assert "engine" not in simulate(with_slots(), "drf").summary
    assert simulate(with_slots(), "fair").summary.get("engine") == "compiled"
    assert "engine" not in simulate(with_slots(), "fair", {"preemption": True}).summary
    assert simulate(with_slots(), "capacity").summary.get("engine") == "compiled"
    assert "engine" not in simulate(with_slots(), "fifo").summary  # (tasks with demands: fifo_core runs none)
    assert "engine" not in simulate(w, "drf", mode="heartbeat").summary
    assert "engine" not in simulate(w, "drf", speculation="late").summary
    # ddrf and delay run compiled too (engines.COMPILED_POLICIES), but not where the core cannot
    assert engines.COMPILED_POLICIES == ("drf", "ddrf", "delay", "fair", "capacity", "fifo")
    assert simulate(w, "ddrf", {"e1": 1, "e2": 2}).summary.get("engine") == "compiled"
    assert simulate(w, "delay", {"d": 2}).summary.get("engine") == "compiled"
    assert "engine" not in simulate(w, "ddrf", {"e1": 1, "e2": 2}, mode="heartbeat").summary
    assert "engine" not in simulate(with_slots(), "delay", {"d": 2}).summary
    assert "engine" not in simulate(w, "delay", {"d": 2}, engine="python").summary


def test_auto_at_the_default_threshold_runs_compiled(compiled: Any) -> None:
    # AUTO_TASKS tasks exactly, unpatched: compiled; one task fewer: Python (a run of some 66,000 events)
    nodes = [{"id": f"n{i}", "resources": {"cpu": 64, "mem": 64}} for i in range(20)]
    per = AUTO_TASKS // 10
    jobs = [_job(f"j{i}", per, 1.0 + i % 3, 1.0, 0.5, float(i), f"u{i % 3}") for i in range(10)]
    w = workload(nodes, jobs)
    assert n_tasks(w) == AUTO_TASKS
    big = simulate(w, "drf", record_utilisation=False)
    assert big.summary.get("engine") == "compiled" and big.summary["finished"] == 10
    jobs[0]["stages"][0]["tasks"][0]["count"] -= 1
    assert "engine" not in simulate(workload(nodes, jobs), "drf", record_utilisation=False).summary


def test_without_numba_auto_runs_python_and_compiled_says_numba_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engines, "compiled_available", lambda: False)
    monkeypatch.setattr(engines, "AUTO_TASKS", 1)
    w = supported()
    run = simulate(w, "drf")
    assert "engine" not in run.summary and run.summary["finished"] == 3
    with pytest.raises(InputError, match="numba") as info:
        simulate(w, "drf", engine="compiled")
    assert "\n" not in str(info.value) and "not installed" in str(info.value)
    assert "engine" not in simulate(w, "drf", engine="python").summary


# ---------------------------------------------------------------------------------------------
# 3. the same run either way


def test_the_same_run_either_way_on_random_workloads(compiled: Any) -> None:
    for k, w in enumerate(random_workloads("whole", 12)):
        py, cc = assert_same(w, f"workload {k}", seed=k)
        assert py.summary["finished"] == len(w.jobs)


@pytest.mark.parametrize("policy", ["ddrf", "delay"])
def test_the_same_run_either_way_under_ddrf_and_delay(compiled: Any, policy: str) -> None:
    # placed workloads (declines need replicas), random E1 <= E2 or D, and an until (timers pending then)
    rng = random.Random(f"sim-engines-{policy}-params")
    for k, w in enumerate(random_workloads(f"{policy}-whole", 8)):
        if w.placement is None:
            w = WorkloadInstance.from_dict({**w.to_dict(), "placement": {"replicas": 1, "seed": k}})
        e1 = rng.randint(0, 3)
        params = {"e1": e1, "e2": e1 + rng.randint(0, 3)} if policy == "ddrf" else {"d": rng.randint(0, 4)}
        py, cc = assert_same(w, f"{policy} workload {k}", policy, params, seed=k)
        assert py.summary["policy"] == cc.summary["policy"] == policy
        times = event_times(w)
        until = times[len(times) // 2]
        assert_same(w, f"{policy} workload {k}, until {until!r}", policy, params, until=until)


def test_the_same_run_without_utilisation_rows(compiled: Any) -> None:
    for k, w in enumerate(random_workloads("no-rows", 3)):
        assert_same(w, f"workload {k}", record_utilisation=False)


# ---------------------------------------------------------------------------------------------
# 4. stops


def event_times(w: WorkloadInstance) -> list[float]:
    """The instants of the whole run: submit times, attempt starts and ends."""
    tasks = simulate(w, "drf", engine="python").recorder.tasks_columns()
    times = {float(j.submit_time) for j in w.jobs} | set(tasks["start"].tolist()) | set(tasks["end"].tolist())
    return sorted(times)


def test_until_stops_both_engines_at_the_same_point(compiled: Any) -> None:
    w = supported()
    times = event_times(w)
    assert times[0] == 1.0
    untils = [0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 4.25, 6.0, times[-2], (times[-2] + times[-1]) / 2, times[-1], 1e9]
    kinds = set()
    for until in untils:
        py, cc = assert_same(w, f"until {until}", until=until)
        s = cc.summary
        kinds.add((s["stopped"], s.get("not_submitted", 0) > 0, s["unfinished"] > 0))
        assert list(py.recorder.jobs_columns()["unfinished_cause"]) == list(
            cc.recorder.jobs_columns()["unfinished_cause"]
        )
        if s["stopped"] is not None:
            assert s["stopped_at"] == until and py.simulation.now == cc.simulation.now == until
    assert ("until", True, False) in kinds  # before the first arrival: nothing submitted
    assert ("until", True, True) in kinds  # in the middle: running attempts cut, jobs to come
    assert ("until", False, True) in kinds  # all submitted, some unfinished
    assert (None, False, False) in kinds  # at or after the last event: the whole run


def test_until_on_random_workloads(compiled: Any) -> None:
    rng = random.Random("sim-engines-until-picks")
    stopped = 0
    for k, w in enumerate(random_workloads("until", 10)):
        times = event_times(w)
        for until in (rng.choice(times), rng.uniform(times[0], times[-1]), times[0] - 0.5, times[-1]):
            until = max(until, 0.0)
            py, cc = assert_same(w, f"workload {k}, until {until!r}", until=until)
            stopped += cc.summary["stopped"] is not None
            unfinished = list(cc.recorder.jobs_columns()["unfinished_cause"])
            assert unfinished.count("stopped") == cc.summary["unfinished"], (k, until)
    assert stopped >= 20


def ticking(start: float = 0.0) -> Callable[[], float]:
    """A wall clock that moves 1 s at each read."""
    ticks = itertools.count()
    return lambda: start + float(next(ticks))


def sim_of(w: WorkloadInstance, watch: Watch, **options: Any) -> Simulation:
    return Simulation(w, make_policy("drf", {}), watch=watch, **options)


def assert_same_sims(py: Simulation, cc: Simulation, where: str) -> None:
    state = [(s.stopped, s.now, s.events, s.jobs_finished, s.next_attempt) for s in (py, cc)]
    assert state[0] == state[1], f"{where}: (stopped, now, events, finished, next attempt) {state[0]} != {state[1]}"
    problems = recorder_differences(py.record, cc.record)
    assert not problems, f"{where}: " + "\n".join(problems[:6])


@pytest.mark.parametrize("every", [1, 5, 50])
def test_a_time_limit_stops_both_engines_at_the_same_look(compiled: Any, every: int) -> None:
    stops = set()
    for k, w in enumerate(random_workloads(f"limit-{every}", 6)):
        for limit in (1.0, 2.0, 3.0, 7.0):
            py = sim_of(w, Watch(time_limit=limit, clock=ticking(), every=every))
            py.run()
            cc = sim_of(w, Watch(time_limit=limit, clock=ticking(), every=every))
            compiled.run_compiled(cc)
            assert_same_sims(py, cc, f"workload {k}, every {every}, limit {limit}")
            stops.add(cc.stopped)
            if cc.stopped is not None:
                jobs, tasks = cc.record.jobs_columns(), cc.record.tasks_columns()
                assert verify_simulation(w, jobs, tasks).ok
                assert check_stop({"stopped": cc.stopped, "stopped_at": cc.now}, jobs, tasks) == []
    assert "time_limit" in stops


def one_task() -> WorkloadInstance:
    """One job of one 1 s task on one node: two instants, 0 (its arrival) and 1 (its end, the last)."""
    return workload([{"id": "n0", "resources": {"cpu": 1, "mem": 1}}], [_job("a", 1, 1.0, 1.0, 1.0, 0.0, "u0")])


def test_a_look_due_after_the_last_instant_is_taken_by_both_engines(compiled: Any) -> None:
    # every=1: the Python loop looks at the end of instant 0 (clock 1) and of instant 1, the last (clock 2),
    # where a limit of 2 s is reached: the run is ``time_limit`` (all its work done, stopped_at 1). The
    # compiled run must look there too (and stop the same way), not end the run before the look.
    py = sim_of(one_task(), Watch(time_limit=2.0, clock=ticking(), every=1))
    py.run()
    assert (py.stopped, py.now, py.events) == ("time_limit", 1.0, 2)
    cc = sim_of(one_task(), Watch(time_limit=2.0, clock=ticking(), every=1))
    compiled.run_compiled(cc)
    assert_same_sims(py, cc, "one task, time limit at the last look")


class LateWatch(Watch):
    """A watch whose time limit is never reached and whose Ctrl-C comes at the ``press``-th read of its
    clock (the clock read at each look: at the look that reads it, the run stops)."""

    def __init__(self, press: int, every: int) -> None:
        self.reads = 0

        def clock() -> float:
            self.reads += 1
            if self.reads == press:
                self.interrupted = True
            return 0.0

        super().__init__(clock=clock, every=every)


def test_ctrl_c_seen_at_a_look_stops_both_engines_at_the_same_instant(compiled: Any) -> None:
    stopped = 0
    for k, w in enumerate(random_workloads("ctrl-c", 8)):
        for press, every in ((2, 1), (3, 4), (2, 9), (10**6, 3)):
            py = sim_of(w, LateWatch(press, every))
            py.run()
            cc = sim_of(w, LateWatch(press, every))
            compiled.run_compiled(cc)
            assert_same_sims(py, cc, f"workload {k}, press {press}, every {every}")
            assert py.watch.reads == cc.watch.reads  # the same looks (begin's read included)
            stopped += cc.stopped == "interrupted"
            assert cc.stopped in ("interrupted", None)
    assert stopped >= 8


def sigint_clock(at: int, presses: int) -> Callable[[], float]:
    """A clock (always 0) that sends this process ``presses`` SIGINTs at its ``at``-th read."""
    reads = itertools.count(1)

    def clock() -> float:
        if next(reads) == at:
            for _ in range(presses):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.01)  # (the handler runs)
        return 0.0

    return clock


def test_a_real_ctrl_c_stops_both_engines_the_same_and_restores_the_handler(compiled: Any) -> None:
    # SIGINT sent to this process at the 3rd read of the clock (the 2nd look), stop_on_interrupt set:
    # the handler notes it, and the look that sent it stops the run
    w = next(random_workloads("sigint", 1))
    before = signal.getsignal(signal.SIGINT)
    sims = []
    for engine in ("python", "compiled"):
        clock = sigint_clock(3, presses=1)
        sim = sim_of(w, Watch(stop_on_interrupt=True, clock=clock, every=2, stream=io.StringIO()))
        sim.run() if engine == "python" else compiled.run_compiled(sim)
        assert signal.getsignal(signal.SIGINT) is before, engine
        sims.append(sim)
    assert sims[1].stopped == "interrupted"
    assert_same_sims(sims[0], sims[1], "sigint")
    assert sims[0].watch.stream.getvalue() == sims[1].watch.stream.getvalue() != ""


def test_a_second_ctrl_c_abandons_the_compiled_run_too(compiled: Any) -> None:
    w = next(random_workloads("sigint-twice", 1))
    before = signal.getsignal(signal.SIGINT)
    for engine in ("python", "compiled"):
        clock = sigint_clock(2, presses=2)
        sim = sim_of(w, Watch(stop_on_interrupt=True, clock=clock, every=1, stream=io.StringIO()))
        with pytest.raises(KeyboardInterrupt):
            sim.run() if engine == "python" else compiled.run_compiled(sim)
        assert signal.getsignal(signal.SIGINT) is before, engine


@pytest.fixture
def fake_watch(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    """``simulate``'s watches made with a clock that ticks 1 s a read and a look every ``every`` events."""

    def use(every: int) -> None:
        def make(**options: Any) -> Watch:
            return Watch(**options, clock=ticking(), every=every)

        monkeypatch.setattr(run_module, "Watch", make)

    return use


def test_a_time_limit_through_simulate_gives_the_same_summary(compiled: Any, fake_watch: Any) -> None:
    stopped = 0
    for every in (1, 7):
        fake_watch(every)
        for k, w in enumerate(random_workloads(f"simulate-limit-{every}", 4)):
            for limit in (2.0, 4.0):
                py, cc = assert_same(w, f"workload {k}, every {every}", time_limit=limit)
                if cc.summary["stopped"] == "time_limit":
                    stopped += 1
                    assert cc.summary["stopped_at"] == cc.simulation.now
                    jobs, tasks = cc.recorder.jobs_columns(), cc.recorder.tasks_columns()
                    assert check_stop(cc.summary, jobs, tasks) == []
    assert stopped >= 8


def last_postfix(text: str) -> str:
    """The bar's last ``t ... jobs finished`` text (its elapsed time differs between runs)."""
    found = re.findall(r"t [\d,.]+ s, [\d,]+ events, [\d,]+/[\d,]+ jobs finished", text)
    assert found, text[-500:]
    return found[-1]


def test_the_progress_bar_ends_on_the_same_counts(compiled: Any) -> None:
    pytest.importorskip("tqdm")
    for k, w in enumerate(random_workloads("bar", 3)):
        texts = []
        for until in (None, 5.0):
            for engine in ("python", "compiled"):
                stream = io.StringIO()
                sim = sim_of(w, Watch(progress=True, stream=stream, every=3), until=until)
                sim.run() if engine == "python" else compiled.run_compiled(sim)
                texts.append(last_postfix(stream.getvalue()))
            assert texts[-2] == texts[-1], (k, until, texts[-2:])


# ---------------------------------------------------------------------------------------------
# 5. the independent verify on a compiled run stopped early


def test_verify_passes_on_a_compiled_run_stopped_by_until(compiled: Any) -> None:
    checked = 0
    for k, w in enumerate(random_workloads("verify", 6)):
        times = event_times(w)
        for until in (times[len(times) // 3], (times[len(times) // 2] + times[len(times) // 2 + 1]) / 2):
            cc = simulate(w, "drf", engine="compiled", until=until)
            assert cc.summary["stopped"] == "until" and cc.summary["stopped_at"] == until
            jobs, tasks = cc.recorder.jobs_columns(), cc.recorder.tasks_columns()
            verdict = verify_simulation(w, jobs, tasks)
            assert verdict.ok, (k, until, verdict.problems)
            assert check_stop(cc.summary, jobs, tasks) == [], (k, until)
            assert check_stop({**cc.summary, "stopped": None}, jobs, tasks) or cc.summary["unfinished"] == 0
            checked += 1
    assert checked == 12
