"""The SWIM trace importer (mropt.importers.swim, ``mropt import-swim``)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import subprocess
from pathlib import Path

import pytest

import mropt
from mropt.importers.swim import SwimParams, import_swim
from mropt.importers.swim_trace import read_swim_rows
from mropt.model import InputError, instance_to_json, load_instance

from cli_capture import run_completed

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
SAMPLE = SHARED / "traces" / "swim" / "FB-2009_samples_24_times_1hr_0_first50jobs.tsv"
MIB = 1 << 20


def sample() -> Path:
    if not SAMPLE.is_file():
        pytest.skip(f"SWIM sample trace not available at {SAMPLE} (kept in ../shared, not in the repo)")
    return SAMPLE


# -- the documented formulas, written out independently ----------------------------------
def expected_tasks(inp: int, shuffle: int, out: int, nodes: int = 40) -> tuple[int, int, float, float]:
    """(map_tasks, reduce_tasks, map_task_time, reduce_task_time) with the default parameters."""
    s_in, s_sh, s_out = (b * nodes // 600 for b in (inp, shuffle, out))
    map_bytes = max(s_in, 64 * MIB)
    maps = math.ceil(map_bytes / (64 * MIB))
    if shuffle == 0:
        reduces = 0
        map_bytes += s_out
        reduce_time = 5.0
    else:
        reduces = max(1, math.floor((s_sh + s_out) / (64 * MIB) + 0.5))
        reduce_time = round(5 + (s_sh + s_out) / reduces / 10e6, 1)
    return maps, reduces, round(5 + map_bytes / maps / 20e6, 1), reduce_time


def raw_rows(path: Path) -> dict[str, list[int]]:
    out = {}
    for line in path.read_text().splitlines():
        if line.strip():
            parts = line.split("\t")
            out[parts[0]] = [int(x) for x in parts[1:]]
    return out


def standalone(job, inst) -> float:
    m, r = inst.cluster.map_slots, inst.cluster.reduce_slots
    return math.ceil(job.map_tasks / m) * job.map_task_time + math.ceil(job.reduce_tasks / r) * job.reduce_task_time


def write_trace(tmp_path: Path, text: str, name: str = "trace.tsv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


# -- the 50-job sample --------------------------------------------------------------------
def test_sample_import_task_counts_and_times_follow_the_formulas():
    path = sample()
    inst = import_swim(path, jobs=50)
    rows = raw_rows(path)
    assert inst.n == 50
    assert inst.cluster.map_slots == 80 and inst.cluster.reduce_slots == 80
    assert inst.ids[:3] == ("job0", "job1", "job2")
    for job_id in ("job0", "job17", "job19", "job25", "job31", "job38", "job22", "job41"):
        _, _, inp, sh, out = rows[job_id]
        job = inst.job(job_id)
        got = (job.map_tasks, job.reduce_tasks, job.map_task_time, job.reduce_task_time)
        assert got == expected_tasks(inp, sh, out), job_id
    # job17: 10.3 GB input -> 685 MB scaled -> 11 partitions; 16.6 GB shuffle+output -> 17 reducers
    assert (inst.job("job17").map_tasks, inst.job("job17").reduce_tasks) == (11, 17)
    # job38: map-only, 86 GB output written by its one map task
    assert inst.job("job38").reduce_tasks == 0 and inst.job("job38").map_task_time > 200


def test_sample_map_only_rows_deadlines_submit_times_and_benefits():
    path = sample()
    inst = import_swim(path, jobs=50)
    rows = raw_rows(path)
    map_only = [j for j in inst.jobs if rows[j.id][3] == 0]
    assert len(map_only) >= 10
    assert all(j.reduce_tasks == 0 for j in map_only)
    assert all(j.reduce_tasks >= 1 for j in inst.jobs if rows[j.id][3] > 0)
    assert all(inst.tcr[inst.index[j.id]] == 0 for j in map_only)
    for job in inst.jobs:
        assert job.submit_time == rows[job.id][0]  # window starts at 0: offsets are trace times
        assert job.deadline > job.submit_time
        rel, alone = job.deadline - job.submit_time, standalone(job, inst)
        assert 1.5 * alone - 0.05 <= rel <= 4.0 * alone + 0.05, job.id
        assert job.benefit >= 1
    # the typical job (one map task over a partition, one near-empty reducer) is in [300, 700]
    typical = [j for j in inst.jobs if j.map_tasks == 1 and j.reduce_tasks == 1 and j.reduce_task_time == 5.0]
    assert len(typical) >= 5
    assert all(300 <= j.benefit <= 700 for j in typical)
    # big jobs are worth proportionally more
    assert inst.job("job17").benefit > 10 * max(j.benefit for j in typical)


def test_sample_records_source_window_and_params():
    path = sample()
    inst = import_swim(path, jobs=5, start=100, seed=7)
    data = json.loads(instance_to_json(inst))
    src = data["source"]
    assert data["name"] == f"swim-{path.stem}-s100-n5"
    assert src["trace"] == path.name
    assert src["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert src["seed"] == 7
    assert src["params"] == SwimParams(start=100, jobs=5).record()
    assert src["window"]["first"] == {"job_id": "job1", "row": 1, "line": 2, "submit_time": 101}
    assert src["window"]["last"]["job_id"] == "job5" and src["window"]["jobs"] == 5
    assert [j["submit_time"] for j in data["jobs"]] == [1, 22, 97, 108, 249]
    # the record survives a round trip through the file format
    assert type(inst).from_dict(data).content_hash() == inst.content_hash()


def test_sample_determinism_and_seed():
    path = sample()
    a = instance_to_json(import_swim(path, jobs=20, seed=3))
    assert a == instance_to_json(import_swim(path, jobs=20, seed=3))
    b = instance_to_json(import_swim(path, jobs=20, seed=4))
    assert a != b
    # same tasks, other deadlines and benefits
    ia, ib = import_swim(path, jobs=20, seed=3), import_swim(path, jobs=20, seed=4)
    assert [j.map_tasks for j in ia.jobs] == [j.map_tasks for j in ib.jobs]
    assert list(ia.deadlines) != list(ib.deadlines)


def test_same_row_same_draws_whatever_the_window():
    path = sample()
    small = import_swim(path, start=1100, jobs=3)
    full = import_swim(path, jobs=50)
    job_small, job_full = small.job("job17"), full.job("job17")
    assert job_small.submit_time == 28 and job_full.submit_time == 1128
    assert job_small.deadline - job_small.submit_time == pytest.approx(job_full.deadline - job_full.submit_time)
    assert job_small.benefit == job_full.benefit


def test_window_by_time_and_by_count():
    path = sample()
    by_time = import_swim(path, start=1100, duration=100)
    assert by_time.ids == ("job16", "job17", "job18", "job19", "job20")
    assert list(by_time.submit_times) == [12, 28, 80, 85, 87]
    assert by_time.meta["source"]["window"]["job_limit"] is None
    capped = import_swim(path, start=1100, duration=100, jobs=2)
    assert capped.ids == ("job16", "job17")
    # count window: the start is inclusive (job35 at 1974 is out, job36 and job37 at 1975 are in)
    by_count = import_swim(path, start=1975, jobs=3)
    assert by_count.ids == ("job36", "job37", "job38")
    assert list(by_count.submit_times) == [0, 0, 1]
    assert by_count.name.endswith("-s1975-n3")
    assert import_swim(path).n == 30  # default window: 30 jobs from 0
    assert import_swim(path, jobs=1000).n == 50  # fewer rows than asked: all of them
    with pytest.raises(InputError, match="empty window"):
        import_swim(path, start=10**6)
    with pytest.raises(InputError, match="empty window"):
        import_swim(path, start=1, duration=10)


def test_sample_instance_solves_and_verifies():
    inst = import_swim(sample(), jobs=50)
    sol = mropt.solve(inst, "edf-greedy")
    assert sol.status != "error"
    assert mropt.verify(inst, sol).ok


# -- traces written by the tests ----------------------------------------------------------
EDGE_TRACE = (
    "tiny\t0\t0\t40\t30\t20\r\n"
    "zero\t5\t5\t0\t0\t0\r\n"
    "\r\n"
    "huge\t10\t5\t50000000000\t20000000000\t5000000000\r\n"
    "maponly\t20\t10\t1000000000\t0\t2000000000\r\n"
    "   \n"
    "\n"
)


def test_edge_rows_import_sensibly(tmp_path):
    path = write_trace(tmp_path, EDGE_TRACE, "edge.tsv")
    inst = import_swim(path)
    assert inst.ids == ("tiny", "zero", "huge", "maponly")
    assert inst.name == "swim-edge-s0-n4"
    for job_id, row in {
        "tiny": (40, 30, 20),
        "zero": (0, 0, 0),
        "huge": (50 * 10**9, 20 * 10**9, 5 * 10**9),
        "maponly": (10**9, 0, 2 * 10**9),
    }.items():
        job = inst.job(job_id)
        assert (job.map_tasks, job.reduce_tasks, job.map_task_time, job.reduce_task_time) == expected_tasks(*row)
    assert inst.job("tiny").map_tasks == 1 and inst.job("tiny").reduce_tasks == 1
    assert inst.job("zero").map_tasks == 1 and inst.job("zero").reduce_tasks == 0
    # 50 GB on 600 machines -> 3.33 GB on 40 -> 50 partitions; 1.67 GB shuffle+output -> 25 reducers
    assert (inst.job("huge").map_tasks, inst.job("huge").reduce_tasks) == (50, 25)
    assert inst.job("maponly").reduce_tasks == 0
    for job in inst.jobs:
        assert math.isfinite(job.deadline) and job.deadline > job.submit_time
        assert math.isfinite(job.benefit) and job.benefit >= 1
    # the huge job has the largest standalone time, deadline and benefit
    assert inst.job("huge").benefit == max(inst.benefits)
    assert inst.job("huge").deadline - 10 >= 1.5 * standalone(inst.job("huge"), inst) - 0.05
    # the file loads back; the instance solves and verifies
    out = tmp_path / "edge.json"
    out.write_text(instance_to_json(inst))
    assert load_instance(out).content_hash() == inst.content_hash()
    sol = mropt.solve(inst, "edf-greedy")
    assert mropt.verify(inst, sol).ok


def test_huge_rows_on_a_full_size_cluster_and_at_the_byte_limit(tmp_path):
    path = write_trace(tmp_path, EDGE_TRACE)
    inst = import_swim(path, nodes=600)  # no scaling
    assert inst.job("huge").map_tasks == math.ceil(50 * 10**9 / (64 * MIB)) == 746
    biggest = write_trace(tmp_path, f"big\t0\t0\t{2**63 - 1}\t{2**63 - 1}\t{2**63 - 1}\n", "big.tsv")
    job = import_swim(biggest).job("big")
    assert job.map_tasks == math.ceil((2**63 - 1) * 40 // 600 / (64 * MIB))
    assert math.isfinite(job.deadline) and math.isfinite(job.benefit)
    json.loads(instance_to_json(import_swim(biggest)))  # finite, strict JSON
    over = write_trace(tmp_path, f"big\t0\t0\t{2**63}\t0\t0\n", "over.tsv")
    with pytest.raises(InputError, match=r"over.tsv line 1: column 4 \(map_input_bytes\) must be below 2\^63"):
        import_swim(over)


def test_crlf_blank_lines_and_no_trailing_newline_read_alike(tmp_path):
    unix = write_trace(tmp_path, "a\t1\t1\t10\t10\t10\nb\t2\t1\t10\t0\t10\n", "t.tsv")
    rows_unix, _ = read_swim_rows(unix)
    crlf = write_trace(tmp_path, "\r\na\t1\t1\t10\t10\t10\r\n\r\nb\t2\t1\t10\t0\t10", "t2.tsv")
    rows_crlf, _ = read_swim_rows(crlf)
    assert [(r.job_id, r.submit_time, r.shuffle_bytes) for r in rows_unix] == [
        (r.job_id, r.submit_time, r.shuffle_bytes) for r in rows_crlf
    ]
    assert [r.line for r in rows_crlf] == [2, 4]
    # the draws follow the data-row index, not the line number: same instance apart from the source record
    a, b = import_swim(unix), import_swim(crlf)
    assert [j.to_dict()["deadline"] for j in a.jobs] == [j.to_dict()["deadline"] for j in b.jobs]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("j\t1\t1\t10\t10", "expected 6 tab-separated columns .* got 5"),
        ("j\t1\t1\t10\t10\t10\t10", "expected 6 .* got 7$"),
        ("j 1 1 10 10 10", "expected 6 .* got 1$"),
        ("j\t1\t1\tabc\t10\t10", r"column 4 \(map_input_bytes\) must be a non-negative integer, got 'abc'"),
        ("j\t1\t1\t10\t-5\t10", r"column 5 \(shuffle_bytes\) must be a non-negative integer, got '-5'"),
        ("j\t1.5\t1\t10\t10\t10", r"column 2 \(submit_time_seconds\) must be a non-negative integer, got '1.5'"),
        ("j\t1\t\t10\t10\t10", r"column 3 \(inter_job_gap_seconds\) must be a non-negative integer, got ''"),
        ("j\t1\t1\t10\t10\t1e3", r"column 6 \(reduce_output_bytes\) must be a non-negative integer"),
        ("\t1\t1\t10\t10\t10", r"column 1 \(job_id\) must not be empty"),
        ("a\t1\t1\t10\t10\t10", r"column 1 \(job_id\) 'a' repeats the job id of line 1"),
    ],
)
def test_malformed_rows_name_file_and_line(tmp_path, row, message):
    path = write_trace(tmp_path, f"a\t0\t0\t1\t1\t1\n\n{row}\nz\t9\t9\t1\t1\t1\n")
    with pytest.raises(InputError, match=f"^trace.tsv line 3: {message}") as err:
        import_swim(path)
    assert "\n" not in str(err.value)


def test_missing_file_and_empty_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        import_swim(tmp_path / "absent.tsv")
    with pytest.raises(InputError, match="empty window.*0 rows"):
        import_swim(write_trace(tmp_path, "\n\n"))


@pytest.mark.parametrize(
    ("overrides", "name"),
    [
        ({"jobs": 0}, "jobs"),
        ({"duration": 0}, "duration"),
        ({"start": -1}, "start"),
        ({"nodes": 0}, "nodes"),
        ({"partition_bytes": 0}, "partition_bytes"),
        ({"map_rate": 0}, "map_rate"),
        ({"reduce_rate": float("nan")}, "reduce_rate"),
        ({"task_overhead": -1}, "task_overhead"),
        ({"slack_min": 3, "slack_max": 2}, "slack_max"),
        ({"benefit_noise": 1}, "benefit_noise"),
        ({"beta": 1}, "beta"),
        ({"alpha": 2}, "alpha"),
        ({"jobs": 2.5}, "jobs"),
    ],
)
def test_bad_parameters_are_one_line_input_errors(tmp_path, overrides, name):
    path = write_trace(tmp_path, EDGE_TRACE)
    with pytest.raises(InputError, match=f"parameter '{name}'"):
        import_swim(path, **overrides)


def test_unknown_parameter_and_bad_seed(tmp_path):
    path = write_trace(tmp_path, EDGE_TRACE)
    with pytest.raises(InputError, match="unknown parameter 'job'"):
        import_swim(path, job=3)
    with pytest.raises(InputError, match="parameter 'seed'"):
        import_swim(path, seed=-1)


def test_params_object_and_overrides_agree(tmp_path):
    path = write_trace(tmp_path, EDGE_TRACE)
    a = import_swim(path, SwimParams(jobs=3, map_rate=40.0), seed=2)
    b = import_swim(path, jobs=3, map_rate=40.0, seed=2)
    assert instance_to_json(a) == instance_to_json(b)
    assert a.n == 3
    faster = import_swim(path, map_rate=40.0).job("huge").map_task_time
    assert faster < import_swim(path).job("huge").map_task_time


# -- the CLI: exit status, stdout, stderr (in this process; the README's import-swim runs as a process) --
def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    with contextlib.chdir(cwd):
        return run_completed("import-swim", *args)


@pytest.mark.slow
def test_cli_writes_a_loadable_file_identical_to_the_api(tmp_path):
    path = write_trace(tmp_path, EDGE_TRACE)
    out = tmp_path / "inst.json"
    proc = run_cli(str(path), "--jobs", "3", "--seed", "5", "--map-rate", "25", "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr == f"mropt: wrote {out}: an admission instance of 3 jobs\n"
    inst = load_instance(out)
    assert inst.ids == ("tiny", "zero", "huge")
    assert out.read_text() == instance_to_json(import_swim(path, jobs=3, seed=5, map_rate=25.0))
    assert inst.meta["source"]["params"]["map_rate"] == 25.0
    # without -o the same text goes to stdout
    proc = run_cli(str(path), "--jobs", "3", "--seed", "5", "--map-rate", "25", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == out.read_text()


def test_cli_time_window(tmp_path):
    path = write_trace(tmp_path, EDGE_TRACE)
    proc = run_cli(str(path), "--start", "5", "--duration", "10", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [j["id"] for j in data["jobs"]] == ["zero", "huge"]
    assert data["source"]["window"]["duration"] == 10
    # integer arguments through the API write the very same bytes as the CLI's floats
    assert proc.stdout == instance_to_json(import_swim(path, start=5, duration=10))


@pytest.mark.parametrize(
    ("text", "args", "needle"),
    [
        ("a\t0\t0\t1\t1\t1\nb\t1\t1\tabc\t1\t1\n", [], "trace.tsv line 2: column 4 (map_input_bytes)"),
        ("a\t0\t0\t1\t1\t1\n", ["--start", "100"], "empty window"),
        ("a\t0\t0\t1\t1\t1\n", ["--nodes", "0"], "parameter 'nodes'"),
    ],
)
def test_cli_errors_exit_2_with_one_line(tmp_path, text, args, needle):
    path = write_trace(tmp_path, text)
    out = tmp_path / "never.json"
    proc = run_cli(str(path), *args, "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and needle in proc.stderr
    assert proc.stderr.startswith("mropt: error: ")
    assert not out.exists()


def test_cli_missing_file_exit_2(tmp_path):
    proc = run_cli(str(tmp_path / "absent.tsv"), cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == "" and "no such file" in proc.stderr


def test_cli_on_the_sample(tmp_path):
    path = sample()
    out = tmp_path / "s.json"
    proc = run_cli(str(path), "--jobs", "50", "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    inst = load_instance(out)
    assert inst.n == 50 and inst.meta["source"]["trace"] == SAMPLE.name
    assert mropt.verify(inst, mropt.solve(inst, "edf-greedy")).ok
