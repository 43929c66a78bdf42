"""A study of simulator policies: ``policies`` in an experiment file, runs as rows, the report.

Two tiny workloads (a folder), two policies (FIFO in its heartbeat mode and in event mode,
labelled apart) and two seeds: 8 simulations, each a row of kind ``workload`` whose
objective is the benefit earned and whose metrics hold the simulation's summary.
"""

from __future__ import annotations

import json

import pytest

from mropt.harness.experiment import load_experiment
from mropt.harness.runner import results_frame, run_study
from mropt.model.errors import InputError
from mropt.sim.run import simulate

from .conftest import mropt


def workload(name: str, maps: int) -> dict:
    """One node of 2 map and 1 reduce slots; j1: ``maps`` 10 s maps then a 5 s reduce; j2: one 10 s map."""
    return {
        "kind": "workload",
        "schema_version": 1,
        "name": name,
        "cluster": {"nodes": [{"id": "n0", "map_slots": 2, "reduce_slots": 1}]},
        "jobs": [
            {
                "id": "j1",
                "deadline": 40,
                "benefit": 100,
                "stages": [
                    {"type": "map", "tasks": [{"duration": 10, "count": maps}]},
                    {"type": "reduce", "tasks": [{"duration": 5}]},
                ],
            },
            {"id": "j2", "deadline": 12, "benefit": 50, "stages": [{"type": "map", "tasks": [{"duration": 10}]}]},
        ],
    }


STUDY = """
name = "policies"
method_seeds = [0, 1]
time_limit = 60
policies = ["fifo", {name = "fifo", label = "fifo-event", mode = "event"}]
[[instances]]
folder = "workloads"
"""


@pytest.fixture
def study(tmp_path, write_experiment):
    folder = tmp_path / "workloads"
    folder.mkdir()
    for name, maps in (("w2", 2), ("w4", 4)):
        (folder / f"{name}.json").write_text(json.dumps(workload(name, maps)))
    return write_experiment(STUDY)


def test_two_policies_two_seeds_two_workloads_give_eight_rows(study, tmp_path):
    exp = load_experiment(study)
    out = tmp_path / "res"
    summary = run_study(exp, out, progress=False)
    assert (summary.total, summary.failures) == (8, 0)
    df = results_frame(out)
    assert len(df) == 8
    assert set(df["kind"]) == {"workload"} and set(df["status"]) == {"feasible"}
    assert sorted(df["method"].unique()) == ["fifo", "fifo-event"]
    assert set(df["method_name"]) == {"fifo"} and set(df["seed"]) == {0, 1}
    assert not df["exact"].any() and df["verified"].all()
    from mropt.model.io import load_instance

    for row in df.to_dict("records"):  # the row is the simulation's own summary
        metrics = json.loads(row["metrics"])
        mode = "event" if row["method"] == "fifo-event" else None
        inst = load_instance(tmp_path / "workloads" / f"{row['instance_id']}.json")
        again = simulate(inst, "fifo", seed=row["seed"], mode=mode).summary
        assert row["objective"] == again["benefit"]
        assert metrics["event_log_sha256"] == again["event_log_sha256"]
        assert (row["accepted"], row["on_time"], metrics["jobs"]) == (again["accepted"], again["on_time"], 2)
    # w2 in event mode, by hand: j1's maps [0, 10], reduce [10, 15]; j2's map [10, 20], late: 100 - 15
    w2 = df[(df["instance_id"] == "w2") & (df["method"] == "fifo-event")]
    assert list(w2["objective"]) == [85.0, 85.0]
    # resuming runs nothing
    assert run_study(exp, out, progress=False).skipped == 8


@pytest.mark.slow
def test_report_of_a_policy_study_compares_the_policies(study, tmp_path):
    out = tmp_path / "res"
    run_study(load_experiment(study), out, progress=False)
    done = mropt("report", str(out))
    assert done.returncode == 0, done.stderr
    report = out / "report"
    table = (report / "policies.csv").read_text().splitlines()
    assert table[0].startswith("group,policy,runs,failed,benefit")
    assert sorted(line.split(",")[1] for line in table[1:]) == ["fifo", "fifo-event"]
    assert all(line.split(",")[2] == "4" for line in table[1:])  # 2 workloads x 2 seeds each
    assert (report / "policies.png").is_file() and (report / "policy_runs.csv").is_file()
    md = (report / "report.md").read_text()
    assert "# Policy study report" in md and "Policies compared" in md
    # simulations are measured, not optimised: no gap tables, no proven optimal %
    assert not (report / "gaps.csv").exists() and not (report / "methods.csv").exists()
    assert "proven optimal" not in md and "proven optimal" not in done.stdout


@pytest.mark.parametrize(
    ("policies", "words"),
    [
        ('["no-such"]', "key 'policies[0].name': unknown policy 'no-such'"),
        ('[{name = "fifo", params = {x = 1}}]', "key 'policies[0].params.x' is not a parameter of 'fifo'"),
        ('[{name = "fifo", mode = "poll"}]', "key 'policies[0].mode' must be one of event, heartbeat"),
        ('["fifo", "fifo"]', "label 'fifo' is used twice"),
        ('[{name = "fifo", colour = 1}]', "policies[0].colour"),
    ],
)
def test_bad_policy_entries_are_one_line_errors(write_experiment, tmp_path, policies, words):
    (tmp_path / "workloads").mkdir()
    path = write_experiment(f'policies = {policies}\n[[instances]]\nfolder = "workloads"\n')
    with pytest.raises(InputError, match=None) as err:
        load_experiment(path)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_policies_refuse_instances_of_other_kinds(write_experiment):
    path = write_experiment(
        'policies = ["fifo"]\n[[instances]]\ngenerator = "fairness"\nseeds = [1]\nparams = {users = 2}\n'
    )
    with pytest.raises(InputError, match="runs on workload or admission instances"):
        load_experiment(path).instances()


SWIM_ROWS = "\n".join(  # job, submit, gap, map input, shuffle, output bytes (SWIM's six columns)
    [f"a\t0\t0\t{200 * 2**20}\t0\t{10 * 2**20}", f"b\t30\t30\t{10 * 2**20}\t{100 * 2**20}\t{28 * 2**20}"]
)


def test_an_importer_window_as_a_workload(write_experiment, tmp_path):
    """``workload = true``: each window of a trace is the importer's workload (``import-swim
    --workload``, the trace's own cluster), not its admission instance on the SEQ model's cluster."""
    from mropt.importers.swim_workload import import_swim_workload

    (tmp_path / "tiny.tsv").write_text(SWIM_ROWS + "\n")
    exp = load_experiment(
        write_experiment(
            """
            name = "trace-policies"
            method_seeds = [0]
            policies = ["fifo", "fair"]
            [[instances]]
            importer = "swim"
            trace = "tiny.tsv"
            workload = true
            windows = {start = [0, 30]}
            params = {nodes = 6, replicas = 2}
            """
        )
    )
    out = tmp_path / "res"
    assert run_study(exp, out, progress=False).failures == 0
    df = results_frame(out)
    assert len(df) == 4 and set(df["kind"]) == {"workload"} and df["verified"].all()
    for start, jobs in ((0, 2), (30, 1)):  # the window from 30 s holds b alone
        mine = df[df["instance_params"].map(lambda p, s=start: json.loads(p)["start"] == s)]
        expected = import_swim_workload(tmp_path / "tiny.tsv", start=start, nodes=6, replicas=2, seed=0)
        assert len(expected.jobs) == jobs and len(mine) == 2  # fifo and fair
        for row in mine.to_dict("records"):
            again = simulate(expected, row["method_name"], seed=0).summary
            assert json.loads(row["metrics"])["event_log_sha256"] == again["event_log_sha256"]
    with pytest.raises(InputError, match=r"key 'instances\[0\]\.workload' must be"):
        load_experiment(
            write_experiment(
                'name = "x"\npolicies = ["fifo"]\n[[instances]]\nimporter = "swim"\ntrace = "tiny.tsv"\nworkload = "yes"\n',
                "bad.toml",
            )
        )
