"""The SWIM importer's workload path (mropt.importers.swim_workload.import_swim_workload, ``import-swim --workload``)."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
from collections import Counter
from pathlib import Path

import pytest

from mropt.cli.main import main
from mropt.importers.swim import SwimParams, SwimWorkloadParams, import_swim
from mropt.importers.swim_workload import import_swim_workload
from mropt.model import InputError, instance_to_json, load_instance
from mropt.model.workload import WorkloadInstance

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("MROPT_SHARED") or ROOT.parent / "shared")
SAMPLE = SHARED / "traces" / "swim" / "FB-2009_samples_24_times_1hr_0_first50jobs.tsv"
MIB = 1 << 20


def sample() -> Path:
    if not SAMPLE.is_file():
        pytest.skip(f"SWIM sample trace not available at {SAMPLE} (kept in ../shared; set MROPT_SHARED)")
    return SAMPLE


def cli(*argv: object) -> tuple[int, str, str]:
    """``mropt ARGV`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def counts(job) -> tuple[int, ...]:
    """(map tasks, reduce tasks) of a workload job (reduce 0 when it has no reduce stage)."""
    by_type = {s.type: s.n_tasks for s in job.stages}
    return by_type["map"], by_type.get("reduce", 0)


#: three rows, hand-computed on the 600-node source cluster (no scaling; 64 MiB partitions, 20 and 10 MB/s, 5 s)
TRACE = "\n".join(
    [
        f"a\t0\t0\t{200 * MIB}\t0\t{10 * MIB}",  # map-only: 4 maps over 210 MiB -> 5 + 55050240/20e6 = 7.8 s
        f"b\t30\t30\t{10 * MIB}\t{100 * MIB}\t{28 * MIB}",  # 1 map of 64 MiB (8.4 s), 2 reduces of 64 MiB (11.7 s)
        f"c\t10\t10\t{640 * MIB}\t{MIB}\t0",  # 10 maps of 64 MiB, 1 reduce of 1 MiB (5.1 s)
    ]
)


def write_trace(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.tsv"
    path.write_text(TRACE + "\n")
    return path


def test_hand_computed_tasks_on_the_source_cluster(tmp_path: Path):
    w = import_swim_workload(write_trace(tmp_path))
    assert isinstance(w, WorkloadInstance)
    assert [j.id for j in w.jobs] == ["a", "c", "b"]  # submit-time order; the whole file by default
    assert [j.submit_time for j in w.jobs] == [0.0, 10.0, 30.0]
    a, c, b = w.jobs
    assert [s.type for s in a.stages] == ["map"]  # a map-only row has no reduce stage
    assert [(g.duration, g.count) for g in a.stages[0].tasks] == [(7.8, 4)]
    assert [[(g.duration, g.count) for g in s.tasks] for s in b.stages] == [[(8.4, 1)], [(11.7, 2)]]
    assert [[(g.duration, g.count) for g in s.tasks] for s in c.stages] == [[(8.4, 10)], [(5.1, 1)]]
    # deadlines against the workload's own cluster: M = R = 1200, every job one wave a phase
    for job in w.jobs:
        standalone = sum(s.tasks[0].duration for s in job.stages)
        slack = (job.deadline - job.submit_time) / standalone
        assert 1.5 - 0.01 <= slack <= 4.0 + 0.01
        assert job.user == "default" and job.pool_name == "default"
    assert w.n_nodes == 600 and len(w.nodes) == 30
    assert all((s.count, s.map_slots, s.reduce_slots) == (20, 2, 2) for s in w.nodes)
    assert w.nodes[29].id == "r29" and w.nodes[29].rack == "rack29"
    assert w.placement is not None and (w.placement.replicas, w.placement.seed) == (3, 0)
    src = w.meta["source"]
    assert src["window"]["job_limit"] is None and src["window"]["jobs"] == 3
    assert src["workload"] == {"rack_size": 20, "replicas": 3, "users": 1}
    assert src["params"]["nodes"] == 600


def test_same_numbers_as_the_admission_import(tmp_path: Path):
    path = write_trace(tmp_path)
    for nodes in (600, 40):
        w = import_swim_workload(path, nodes=nodes, seed=4)
        a = import_swim(path, nodes=nodes, seed=4)
        for wj, aj in zip(w.jobs, a.jobs, strict=True):
            assert wj.id == aj.id and counts(wj) == (aj.map_tasks, aj.reduce_tasks)
            assert (wj.submit_time, wj.deadline, wj.benefit) == (aj.submit_time, aj.deadline, aj.benefit)
            assert wj.stages[0].tasks[0].duration == aj.map_task_time
            assert wj.extra["trace"] == aj.extra["trace"]


def test_layout_options(tmp_path: Path):
    path = write_trace(tmp_path)
    w = import_swim_workload(path, nodes=45, rack_size=20, replicas=0, users=1)
    assert [(s.id, s.count) for s in w.nodes] == [("r0", 20), ("r1", 20), ("r2", 5)] and w.placement is None
    many = import_swim_workload(path, users=50, seed=1)
    plain = import_swim_workload(path, seed=1)
    assert all(j.user.startswith("u") and 0 <= int(j.user[1:]) < 50 for j in many.jobs)
    assert [(j.deadline, j.benefit) for j in many.jobs] == [(j.deadline, j.benefit) for j in plain.jobs]
    w = import_swim_workload(path, SwimParams(jobs=2, nodes=600), SwimWorkloadParams(replicas=2), seed=7)
    assert len(w.jobs) == 2 and w.placement is not None and (w.placement.replicas, w.placement.seed) == (2, 7)
    assert w.meta["source"]["window"]["job_limit"] == 2


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"replicas": 17}, "'replicas' must be an integer in [0, 16], got 17"),
        ({"users": 0}, "'users'"),
        ({"rack_size": 0}, "'rack_size'"),
        ({"nodes": 0}, "'nodes' must be >= 1"),
        ({"nodes": 10**7}, "'nodes' must be <= 1,000,000"),
        ({"start": 1000.0}, "empty window"),
    ],
)
def test_bad_workload_parameters_are_one_line_errors(tmp_path: Path, overrides, words):
    with pytest.raises(InputError) as info:
        import_swim_workload(write_trace(tmp_path), **overrides)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_cli_workload_and_its_errors(tmp_path: Path):
    path = write_trace(tmp_path)
    out = tmp_path / "w.json"
    code, text, err = cli("import-swim", path, "--workload", "--seed", "3", "--users", "2", "-o", out)
    written = import_swim_workload(path, seed=3, users=2)
    assert out.read_text() == instance_to_json(written)
    nodes = sum(n.count for n in written.nodes)
    size = f"a workload of {len(written.jobs):,} jobs, {written.n_tasks:,} tasks on {nodes:,} nodes"
    assert (code, text, err) == (0, "", f"mropt: wrote {out}: {size}\n")  # what the trace became, on stderr
    assert isinstance(load_instance(out), WorkloadInstance)
    code, text, _ = cli("import-swim", path, "--workload", "--nodes", "40", "--jobs", "2", "--replicas", "0")
    data = json.loads(text)
    assert code == 0 and len(data["jobs"]) == 2 and "placement" not in data
    assert sum(n["count"] for n in data["cluster"]["nodes"]) == 40
    # the admission path keeps its defaults (40 nodes, 30 jobs) and refuses the workload options
    code, text, _ = cli("import-swim", path)
    assert code == 0 and json.loads(text)["kind"] == "admission" and json.loads(text)["cluster"]["map_slots"] == 80
    for argv, words in [
        (("--replicas", "2"), "option '--replicas' needs --workload"),
        (("--users", "2"), "option '--users' needs --workload"),
        (("--workload", "--replicas", "99"), "'replicas'"),
        (("--workload", "--rack-size", "-1"), "'rack_size'"),
    ]:
        code, text, err = cli("import-swim", path, *argv)
        lines = err.strip().splitlines()
        assert (code, text, len(lines)) == (2, "", 1), err
        assert lines[0].startswith("mropt: error: import-swim: ") and words in lines[0]


# -- the 50-job sample of the Facebook day --------------------------------------------------
def test_sample_has_the_admission_imports_task_counts():
    path = sample()
    w = import_swim_workload(path)
    assert len(w.jobs) == 50 and w.n_nodes == 600
    a = import_swim(path, jobs=50, nodes=600)
    assert [counts(j) for j in w.jobs] == [(j.map_tasks, j.reduce_tasks) for j in a.jobs]
    assert [(j.deadline, j.benefit) for j in w.jobs] == [(j.deadline, j.benefit) for j in a.jobs]
    assert w.n_tasks == sum(j.map_tasks + j.reduce_tasks for j in a.jobs)
    # on the AMB cluster too (bytes scaled by 40/600)
    w40, a40 = import_swim_workload(path, nodes=40), import_swim(path, jobs=50)
    assert [counts(j) for j in w40.jobs] == [(j.map_tasks, j.reduce_tasks) for j in a40.jobs]
    assert instance_to_json(w) == instance_to_json(import_swim_workload(path))  # same bytes
    assert math.isclose(w.meta["source"]["load_factor"], round(a.load_factor, 6))


def test_sample_runs_under_fifo_every_task_once():
    import mropt.sim.policies  # noqa: F401  (registers the policies)
    from mropt.sim.engine import Simulation
    from mropt.sim.policy import make_policy

    w = import_swim_workload(sample(), jobs=20, seed=2)
    rec = Simulation(w, make_policy("fifo")).run()
    tasks = rec.tasks_columns()
    done = Counter(
        (j, s, t)
        for j, s, t, o in zip(tasks["job_id"], tasks["stage"], tasks["task"], tasks["outcome"])
        if o == "succeeded"
    )
    assert sum(done.values()) == w.n_tasks and set(done.values()) == {1}
    assert {"node", "rack", "any"} >= {loc for loc in tasks["locality"] if loc is not None}


def test_whole_day_imports_and_stays_compact():
    """How long the import takes (seconds): benchmarks/bench_time_claims.py."""
    day = SHARED / "traces" / "swim" / "FB-2009_samples_24_times_1hr_0.tsv"
    if not day.is_file():
        pytest.skip(f"SWIM day trace not available at {day} (kept in ../shared; set MROPT_SHARED)")
    w = import_swim_workload(day)
    text = instance_to_json(w)
    assert len(w.jobs) == 5894 and w.n_nodes == 600
    # task groups with counts: a few hundred bytes a job, whatever its task count
    assert w.n_tasks > 500_000 and len(text) < 800 * len(w.jobs)
    assert max(len(s.tasks) for j in w.jobs for s in j.stages) == 1
