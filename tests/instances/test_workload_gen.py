"""The AMB workload generator (mropt.instances.workload_gen, ``mropt generate workload``)."""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter
from pathlib import Path

import pytest

from mropt.cli.main import main
from mropt.instances.admission_gen import generate_admission
from mropt.instances.workload_gen import PRESETS, WorkloadParams, generate_workload, preset_params
from mropt.model import InputError, instance_to_json, load_instance
from mropt.model.workload import WorkloadInstance


def cli(*argv: object) -> tuple[int, str, str]:
    """``mropt ARGV`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def phases(job) -> tuple[int, float, int, float]:
    """(map tasks, map task time, reduce tasks, reduce task time) of a generated job."""
    (m,), (r,) = (s.tasks for s in job.stages)
    assert [s.type for s in job.stages] == ["map", "reduce"]
    return m.count, m.duration, r.count, r.duration


# -- determinism ---------------------------------------------------------------------------
@pytest.mark.parametrize("preset", list(PRESETS))
def test_same_seed_same_bytes_other_seed_other_jobs(preset):
    a = instance_to_json(generate_workload(preset, 3))
    assert a == instance_to_json(generate_workload(preset, 3))
    assert a != instance_to_json(generate_workload(preset, 4))


def test_cli_writes_the_api_bytes_and_repeats_them(tmp_path: Path):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    for path in (first, second):
        code, out, err = cli("generate", "workload", "--preset", "amb-static", "--seed", "1", "-o", path)
        assert (code, out, err) == (0, "", "")
    assert first.read_bytes() == second.read_bytes()
    assert first.read_text() == instance_to_json(generate_workload("amb-static", 1))
    code, out, _ = cli("generate", "workload", "--preset", "amb-dynamic", "--seed", "2", "--jobs", "7")
    assert code == 0 and out == instance_to_json(generate_workload("amb-dynamic", 2, jobs=7))
    # an option left out keeps the preset's value; a given one overrides it
    code, out, _ = cli("generate", "workload", "--preset", "amb-dynamic", "--mean-deadline", "800")
    assert code == 0
    params = json.loads(out)["generator"]["params"]
    assert (params["jobs"], params["mean_deadline"], params["deadline_spread"]) == (60, 800.0, 0.2)


# -- the static preset: Table 2 -------------------------------------------------------------
def test_static_preset_is_table_2():
    w = generate_workload("amb-static", 0)
    assert isinstance(w, WorkloadInstance) and len(w.jobs) == 30 and w.alpha == 0.3
    assert w.n_nodes == 40 and [(s.count, s.rack) for s in w.nodes] == [(20, "rack0"), (20, "rack1")]
    assert all((s.map_slots, s.reduce_slots, s.speed) == (2, 2, 1.0) for s in w.nodes)
    assert w.placement is None  # no locality: the SEQ model's cluster
    assert w.name == "amb-static-n30-L150-D1000-s0"


@pytest.mark.parametrize(("size", "deadline"), [(150.0, 1000.0), (100.0, 800.0), (200.0, 1600.0)])
def test_static_draws_stay_in_their_ranges(size, deadline):
    for seed in range(4):
        w = generate_workload("amb-static", seed, mean_splits=size, mean_deadline=deadline, jobs=40)
        for job in w.jobs:
            maps, _, reduces, _ = phases(job)
            assert 0.5 * size <= maps <= 1.5 * size and maps == job.extra["splits"]
            assert job.submit_time == 0.0
            assert 0.5 * deadline <= job.deadline <= 1.5 * deadline and job.deadline == int(job.deadline)
            assert 300 <= job.benefit <= 700 and job.benefit == int(job.benefit)
            assert reduces >= 1


def test_static_jobs_are_the_admission_generators_jobs():
    """Same seed, N, L and D: the same splits, task times, deadlines and benefits as ``generate admission``."""
    for seed in (0, 5):
        w = generate_workload("amb-static", seed, jobs=25, mean_splits=120, mean_deadline=900)
        a = generate_admission(seed, jobs=25, size=120, deadline=900)
        for wj, aj in zip(w.jobs, a.jobs, strict=True):
            assert wj.id == aj.id and wj.extra["type"] == aj.extra["type"]
            assert phases(wj) == (aj.map_tasks, aj.map_task_time, aj.reduce_tasks, aj.reduce_task_time)
            assert (wj.deadline, wj.benefit, wj.submit_time) == (aj.deadline, aj.benefit, aj.submit_time)


def test_a_workload_with_n_jobs_is_the_first_n_of_a_bigger_one():
    small, big = generate_workload("amb-static", 9, jobs=5), generate_workload("amb-static", 9, jobs=35)
    assert small.jobs == big.jobs[:5]


# -- the dynamic preset: sec. 5.2 -------------------------------------------------------------
def test_dynamic_preset_is_sec_5_2():
    for seed in range(3):
        w = generate_workload("amb-dynamic", seed)
        a = generate_admission(seed, jobs=60)
        submits = [j.submit_time for j in w.jobs]
        assert len(w.jobs) == 60 and submits == sorted(submits)
        assert 0 <= submits[0] and submits[-1] < 3600  # one hour, one a minute on average
        assert all(t == round(t, 1) for t in submits)
        for wj, aj in zip(w.jobs, a.jobs, strict=True):
            assert 400 <= round(wj.deadline - wj.submit_time, 6) <= 600
            assert 300 <= wj.benefit <= 700 and 75 <= phases(wj)[0] <= 225
            # sizes, task times and benefits shared with the admission generator's stream
            assert phases(wj) == (aj.map_tasks, aj.map_task_time, aj.reduce_tasks, aj.reduce_task_time)
            assert wj.benefit == aj.benefit
            # the same uniform draw, scaled from U[500, 1500] to U[400, 600] (both rounded to 1 s)
            u = (aj.deadline - 500) / 1000
            assert abs((wj.deadline - wj.submit_time) - (400 + 200 * u)) <= 0.7


def test_arrivals_are_uniform_over_the_window_on_average():
    """Sorted U[0, 3600) arrivals: over many seeds the mean submit time is 1800 s and the mean gap 3600/61."""
    submits = [j.submit_time for seed in range(40) for j in generate_workload("amb-dynamic", seed).jobs]
    mean = sum(submits) / len(submits)
    assert abs(mean - 1800) < 3 * 1039 / len(submits) ** 0.5  # sd of U[0, 3600) is 3600/sqrt(12)


# -- cluster layout, placement, parameters ---------------------------------------------------
def test_racks_and_placement():
    w = generate_workload("amb-static", 2, nodes=45, rack_size=20, replicas=3, jobs=2)
    assert [(s.id, s.count, s.rack) for s in w.nodes] == [("r0", 20, "rack0"), ("r1", 20, "rack1"), ("r2", 5, "rack2")]
    assert w.node_ids[:2] == ("r0-0", "r0-1") and w.node_ids[-1] == "r2-4"
    assert w.placement is not None and (w.placement.replicas, w.placement.seed) == (3, 2)
    assert json.loads(instance_to_json(w))["placement"] == {"replicas": 3, "seed": 2}


def test_preset_params_and_overrides():
    assert preset_params("amb-static") == WorkloadParams()
    dyn = preset_params("amb-dynamic", jobs=10)
    assert (dyn.jobs, dyn.mean_interarrival, dyn.mean_deadline, dyn.deadline_spread) == (10, 60.0, 500.0, 0.2)
    with pytest.raises(InputError, match="unknown preset 'amb'"):
        preset_params("amb")
    with pytest.raises(InputError, match="unknown parameter 'size'"):
        generate_workload("amb-static", 0, size=10)


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"jobs": 0}, "'jobs' must be >= 1, got 0"),
        ({"mean_splits": -1.0}, "'mean_splits'"),
        ({"deadline_spread": 1.0}, "'deadline_spread' must be in [0, 1)"),
        ({"replicas": 17}, "'replicas' must be in [0, 16]"),
        ({"benefit_min": 800}, "'benefit_min'"),
        ({"jobs": "x"}, "'jobs' must be an integer"),
        ({"mix": {"sort": 1.0}}, "unknown job type 'sort'"),
    ],
)
def test_bad_parameters_are_one_line_errors(overrides, words):
    with pytest.raises(InputError) as info:
        generate_workload("amb-static", 0, **overrides)
    assert words in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (("--jobs", "0"), "parameter 'jobs' must be >= 1"),
        (("--preset", "amb-dynamic", "--deadline-spread", "1.5"), "'deadline_spread'"),
        (("--replicas", "-1"), "'replicas'"),
        (("--seed", "-3"), "argument --seed: must be an integer in [0, 2^63 - 1], got -3"),
        (("--mix", "nope=1"), "unknown job type 'nope'"),
    ],
)
def test_cli_bad_options_exit_2_with_one_line(argv, words):
    code, out, err = cli("generate", "workload", *argv)
    lines = err.strip().splitlines()
    assert (code, out) == (2, "") and len(lines) == 1, err
    assert lines[0].startswith("mropt: error: generate workload: ") and words in lines[0]


def test_cli_unknown_preset_and_bad_number_exit_2():
    assert cli("generate", "workload", "--preset", "amb-huge")[0] == 2
    assert cli("generate", "workload", "--mean-splits", "many")[0] == 2


# -- the simulator runs it -------------------------------------------------------------------
@pytest.mark.parametrize(("preset", "replicas"), [("amb-static", 0), ("amb-dynamic", 3)])
def test_generated_workload_loads_and_runs_under_fifo(tmp_path: Path, preset, replicas):
    import mropt.sim.policies  # noqa: F401  (registers the policies)
    from mropt.sim.engine import Simulation
    from mropt.sim.policy import make_policy

    path = tmp_path / "w.json"
    code, _, _ = cli("generate", "workload", "--preset", preset, "--jobs", "8", "--replicas", replicas, "-o", path)
    assert code == 0
    w = load_instance(path)
    assert isinstance(w, WorkloadInstance) and instance_to_json(w) == path.read_text()
    rec = Simulation(w, make_policy("fifo")).run()
    tasks = rec.tasks_columns()
    done = Counter(
        (j, s, t)
        for j, s, t, o in zip(tasks["job_id"], tasks["stage"], tasks["task"], tasks["outcome"])
        if o == "succeeded"
    )
    assert sum(done.values()) == w.n_tasks and set(done.values()) == {1}  # every task succeeded exactly once
    jobs = rec.jobs_columns()
    assert list(jobs["job_id"]) == [j.id for j in w.jobs] and all(jobs["accepted"])
    # no map starts before its job arrives, no reduce before its job's last map ends
    submit = {j.id: j.submit_time for j in w.jobs}
    map_end = dict(zip(jobs["job_id"], jobs["map_end"]))
    for j, stype, start in zip(tasks["job_id"], tasks["stage_type"], tasks["start"]):
        assert start >= submit[j] - 1e-9
        if stype == "reduce":
            assert start >= map_end[j] - 1e-9


def test_preset_functions_have_the_harness_signature():
    from mropt.instances.workload_gen import generate_amb_dynamic, generate_amb_static

    assert instance_to_json(generate_amb_static(2, jobs=4)) == instance_to_json(
        generate_workload("amb-static", 2, jobs=4)
    )
    assert generate_amb_dynamic(2, jobs=4) == generate_workload("amb-dynamic", 2, jobs=4)
    assert generate_amb_dynamic(1).n == 60
