"""Experiment files name every generator: ``generator = "fairness"`` / ``"priority"``,
their parameter dataclasses' fields as ``params`` and ``sweep`` keys, checked before anything runs."""

from __future__ import annotations

import pytest

from mropt.harness.experiment import load_experiment
from mropt.harness.instance_sets import GENERATORS
from mropt.harness.runner import results_frame, run_study
from mropt.instances.fairness_gen import generate_fairness
from mropt.instances.priority_gen import generate_priority
from mropt.model.errors import InputError

FAIRNESS = """
name = "fair"
methods = ["drf", {name = "drf-cpsat", time_limit = 10}]
[[instances]]
generator = "fairness"
seeds = [1, 2]
params = {with_nodes = true, tasks_max = 6, nodes = 3, node_cpu = 16}
sweep = {users = [3, 5]}
"""

PRIORITY = """
name = "prio"
methods = ["mpsa", {name = "mpsa-exact", time_limit = 10}]
[[instances]]
generator = "priority"
seeds = [1, 2]
params = {arrival_rate = 0.0005, deadlines = [600, 1200]}
sweep = {workload_scale = [0.5, 1]}
"""


def test_every_generator_module_is_known():
    assert set(GENERATORS) == {"admission", "fairness", "priority", "workload"}
    for gen in GENERATORS.values():
        params_class, generate = gen.load()
        assert generate(seed=1).kind == gen.name and params_class().check() is None


def test_fairness_block_expands_to_the_generators_instances(write_experiment):
    entries = load_experiment(write_experiment(FAIRNESS)).instances()
    assert [e.group for e in entries] == ["users=3", "users=3", "users=5", "users=5"]
    same = generate_fairness(2, users=5, with_nodes=True, tasks_max=6, nodes=3, node_cpu=16.0)
    assert entries[3].instance.content_hash() == same.content_hash()
    assert dict(entries[3].params) == {
        "jobs": 5,
        "with_nodes": True,
        "tasks_max": 6,
        "nodes": 3,
        "node_cpu": 16.0,
        "users": 5,
        "seed": 2,
    }


def test_priority_block_takes_lists_and_sweeps(write_experiment):
    entries = load_experiment(write_experiment(PRIORITY)).instances()
    assert [e.group for e in entries] == ["workload_scale=0.5"] * 2 + ["workload_scale=1"] * 2
    same = generate_priority(1, arrival_rate=0.0005, deadlines=(600.0, 1200.0), workload_scale=1.0)
    assert entries[2].instance.content_hash() == same.content_hash()
    assert entries[2].params["jobs"] == 2  # two priorities


@pytest.mark.parametrize(
    "body, key, rule",
    [
        ('generator = "fairness"\nparams = {users = "x"}', "instances[0].params.users", "must be an integer, got 'x'"),
        (
            'generator = "fairness"\nparams = {with_nodes = 1}',
            "instances[0].params.with_nodes",
            "must be true or false",
        ),
        ('generator = "fairness"\nparams = {users = 0}', "instances[0]", "parameter 'users' must be >= 1, got 0"),
        ('generator = "fairness"\nsweep = {users = [3, 0]}', "instances[0]' (users=0)", "'users' must be >= 1"),
        ('generator = "fairness"\nparams = {cores = 4}', "instances[0].params.cores", "is not a generator parameter"),
        (
            'generator = "priority"\nparams = {deadlines = ["a"]}',
            "instances[0].params.deadlines",
            "must be a list of numbers",
        ),
        (
            'generator = "priority"\nparams = {pattern_mix = {simple = 1, loop = 1}}',
            "instances[0]",
            "unknown pattern 'loop'",
        ),
        ('generator = "priority"\nsweep = {jitter = [0.1, 1.5]}', "instances[0]' (jitter=1.5)", "must be in [0, 1)"),
        (
            'generator = "admission"\nparams = {job_types = {x = 1}}',
            "instances[0].params.job_types",
            "cannot be set from an experiment file",
        ),
    ],
)
def test_generator_values_are_checked_before_anything_runs(write_experiment, body, key, rule):
    path = write_experiment(f'methods = ["drf"]\n[[instances]]\nseeds = [1]\n{body}\n')
    with pytest.raises(InputError) as err:
        load_experiment(path)
    message = str(err.value)
    assert message.startswith(f"{path}: key '{key}") and rule in message and "\n" not in message


@pytest.mark.slow
@pytest.mark.parametrize("text, methods", [(FAIRNESS, {"drf", "drf-cpsat"}), (PRIORITY, {"mpsa", "mpsa-exact"})])
def test_small_fairness_and_priority_studies_run_end_to_end(write_experiment, tmp_path, text, methods):
    from mropt.harness.report import write_report

    exp = load_experiment(write_experiment(text))
    summary = run_study(exp, tmp_path / "res", workers=2, progress=False)
    assert (summary.total, summary.failures) == (8, 0)
    df = results_frame(tmp_path / "res")
    assert set(df["method"]) == methods and df["verified"].all()
    exact = df[df["exact"].astype(bool)]
    assert (exact["status"] == "optimal").all() and exact["reference_tag"].eq("optimal").all()
    write_report(tmp_path / "res", tmp_path / "rep")
    kinds = (tmp_path / "rep" / "kinds.csv").read_text()
    assert exp.instances()[0].instance.kind in kinds
    instances = (tmp_path / "rep" / "instances.csv").read_text()
    assert all(e.id in instances for e in exp.instances())
