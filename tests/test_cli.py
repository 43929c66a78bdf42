"""The ``mropt`` command line: run as a real subprocess (``mropt``), where the process matters (the
console script, exit statuses, JSON on stdout beside solver libraries, writing to devices), and in
this process (``here``: the same ``main``, no process start per call) for the other outputs and
error lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mropt.model import load_instance

from cli_capture import run_completed as here


def mropt(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mropt.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def assert_input_error(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "mropt"
    if not script.exists():
        pytest.skip("mropt console script not next to this interpreter (not installed in a venv)")
    result = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("mropt ")


@pytest.mark.slow
def test_generate_to_stdout_and_file_are_identical(tmp_path):
    out = tmp_path / "i.json"
    a = here("generate", "admission", "--jobs", "12", "--seed", "3")
    b = here("generate", "admission", "--jobs", "12", "--seed", "3", "-o", out)
    assert a.returncode == 0 and b.returncode == 0 and b.stdout == ""
    assert a.stdout == out.read_text()
    inst = load_instance(out)
    assert inst.n == 12 and inst.meta["generator"]["seed"] == 3
    c = here("generate", "admission", "--jobs", "12", "--seed", "4")
    assert c.stdout != a.stdout


def test_generate_overrides(tmp_path):
    out = tmp_path / "i.json"
    r = here(
        "generate",
        "admission",
        "--jobs",
        "5",
        "--nodes",
        "10",
        "--size",
        "100",
        "--deadline",
        "1600",
        "--mix",
        "grep=1",
        "--job-type",
        "grep=30,0.1,20",
        "--mean-interarrival",
        "60",
        "-o",
        out,
    )
    assert r.returncode == 0, r.stderr
    inst = load_instance(out)
    assert inst.cluster.map_slots == 20
    params = inst.meta["generator"]["params"]
    assert params["size"] == 100 and params["deadline"] == 1600 and params["mean_interarrival"] == 60
    assert params["job_types"]["grep"] == {"map_task_time": 30.0, "reduce_fanout": 0.1, "reduce_task_time": 20.0}
    assert all(j.extra["type"] == "grep" for j in inst.jobs)


def test_methods_lists_edf_greedy():
    r = here("methods")
    assert r.returncode == 0
    names = [line.split()[0] for line in r.stdout.splitlines()]
    assert "edf-greedy" in names
    roles = {line.split()[0]: line.split()[2] for line in r.stdout.splitlines()}
    assert roles["edf-greedy"] == "heuristic" and roles["cpsat"] == "exact" and roles["ideal"] == "bound"


@pytest.mark.slow
def test_solve_json_then_verify(tmp_path):
    inst_path, sol_path = tmp_path / "i.json", tmp_path / "s.json"
    assert mropt("generate", "admission", "--seed", "2", "-o", inst_path).returncode == 0
    r = mropt("solve", inst_path, "--method", "edf-greedy", "--json", "-o", sol_path)
    assert r.returncode == 0, r.stderr
    sol = json.loads(r.stdout)
    for key in ("method", "status", "objective", "bound", "accepted", "sequence", "wall_time", "solver"):
        assert key in sol
    assert sol["method"] == "edf-greedy" and sol["bound"] is None
    assert sorted(sol["accepted"]) == sorted(sol["sequence"])
    assert sol["solver"]["name"] == "mropt" and sol["solver"]["version"]
    assert json.loads(sol_path.read_text()) == sol

    ok = mropt("verify", inst_path, sol_path)
    assert ok.returncode == 0 and ok.stdout.startswith("ok:"), ok.stdout + ok.stderr

    human = mropt("solve", inst_path, "--method", "edf-greedy")
    assert human.returncode == 0 and "objective" in human.stdout and "status" in human.stdout

    # tampered: claim one more unit of benefit
    sol["objective"] += 1
    sol_path.write_text(json.dumps(sol))
    bad = mropt("verify", inst_path, sol_path)
    assert bad.returncode == 1 and "objective" in bad.stderr

    # tampered: swap the first two jobs of the map order so that the plan breaks
    sol["objective"] -= 1
    sol["sequence"] = sol["sequence"][::-1]
    sol_path.write_text(json.dumps(sol))
    bad = mropt("verify", inst_path, sol_path, "--json")
    verdict = json.loads(bad.stdout)
    assert bad.returncode == 1 and not verdict["ok"] and any("not valid" in p for p in verdict["problems"])


@pytest.mark.slow
def test_verify_says_when_a_solution_is_for_another_instance(tmp_path):
    """Solutions record the instance's content hash; verify against another instance exits 1."""
    a, b, sol_path = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "s.json"
    assert here("generate", "admission", "--jobs", "8", "--seed", "1", "-o", a).returncode == 0
    assert here("generate", "admission", "--jobs", "8", "--seed", "2", "-o", b).returncode == 0
    r = here("solve", a, "--method", "edf-greedy", "--json", "-o", sol_path)
    sol = json.loads(r.stdout)
    assert sol["instance_hash"] == load_instance(a).content_hash()
    assert here("verify", a, sol_path).returncode == 0
    bad = here("verify", b, sol_path)
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.splitlines() == [
        f"mropt verify: solution is for another instance (hash {sol['instance_hash'][:12]}..., "
        f"this instance {load_instance(b).content_hash()[:12]}...)"
    ]
    verdict = json.loads(here("verify", b, sol_path, "--json").stdout)
    assert not verdict["ok"] and verdict["problems"][0].startswith("solution is for another instance (hash ")
    # a file from before the field existed is checked as before
    del sol["instance_hash"]
    sol_path.write_text(json.dumps(sol))
    assert here("verify", a, sol_path).returncode == 0
    # and a hash that is not a string is an input error
    sol["instance_hash"] = 7
    sol_path.write_text(json.dumps(sol))
    assert_input_error(here("verify", a, sol_path), "'instance_hash'", "7")


@pytest.mark.parametrize(
    "content, words",
    [
        (None, ["no such file"]),
        ("{not json", ["not valid JSON"]),
        (
            '{"kind": "admission", "schema_version": 1, "cluster": {"map_slots": 3, "reduce_slots": 2}, '
            '"jobs": [{"id": "a", "map_phase_time": NaN, "reduce_phase_time": 1, "deadline": 5, "benefit": 1}]}',
            ["NaN"],
        ),
        (
            '{"kind": "admission", "schema_version": 1, "cluster": {"map_slots": 3, "reduce_slots": 2}, '
            '"jobs": [{"id": "a", "map_phase_time": -4, "reduce_phase_time": 1, "deadline": 5, "benefit": 1}]}',
            ["'a'", "'map_phase_time'", "-4"],
        ),
        (
            '{"kind": "admission", "schema_version": 3, "cluster": {"map_slots": 3, "reduce_slots": 2}, "jobs": []}',
            ["'schema_version'", "3"],
        ),
        ('{"kind": "scheduling", "schema_version": 1}', ["'kind'", "'scheduling'"]),
    ],
)
def test_bad_instance_files_exit_2_with_one_line(tmp_path, content, words):
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    assert_input_error(mropt("solve", path, "--method", "edf-greedy", "--json"), str(path), *words)


@pytest.mark.slow
def test_bad_method_param_and_generator_values(tmp_path):
    path = tmp_path / "i.json"
    here("generate", "admission", "--jobs", "3", "-o", path)
    assert_input_error(here("solve", path, "--method", "nope"), "unknown method", "'nope'")
    assert_input_error(here("solve", path, "--method", "edf-greedy", "--param", "beam=3"), "'beam'")
    assert_input_error(here("solve", path, "--method", "edf-greedy", "--time-limit", "-1"), "time limit")
    assert_input_error(here("generate", "admission", "--alpha", "3"), "'alpha'", "3")
    assert_input_error(here("generate", "admission", "--mix", "sort=1"), "'sort'")
    assert_input_error(here("generate", "admission", "-o", tmp_path / "no" / "x.json"), "does not exist")
    sol = tmp_path / "s.json"
    sol.write_text('{"method": "x", "status": "great", "objective": 1, "accepted": []}')
    assert_input_error(here("verify", path, sol), "'status'", "'great'")


@pytest.mark.slow
def test_output_to_a_device_a_link_and_a_bad_folder(tmp_path):
    """``-o`` writes through /dev/null and symlinks, and a bad folder is one line."""
    import os
    import stat

    r = mropt("generate", "admission", "--seed", "1", "-o", "/dev/null")
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    target, link = tmp_path / "real.json", tmp_path / "link.json"
    link.symlink_to(target.name)
    assert mropt("generate", "admission", "--seed", "1", "-o", link).returncode == 0
    assert link.is_symlink() and load_instance(target).meta["generator"]["seed"] == 1
    bad = mropt("generate", "admission", "--seed", "1", "-o", "/nonexistent/x.json")
    assert_input_error(bad, "/nonexistent/x.json", "does not exist")
    (tmp_path / "afile").write_text("x")
    assert_input_error(mropt("generate", "priority", "-o", tmp_path / "afile" / "x.json"), "is not a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "link.json", "real.json"]


@pytest.mark.slow
def test_demo_prints_a_comparison_table():
    r = mropt("demo", "--jobs", "8", "--time-limit", "5")
    assert r.returncode == 0, r.stderr
    assert "edf-greedy" in r.stdout and "verified" in r.stdout
    rows = [line for line in r.stdout.splitlines() if line.startswith("edf-greedy")]
    assert rows and "yes" in rows[0]


@pytest.mark.slow
def test_solve_with_profile_and_threads(tmp_path):
    path = tmp_path / "i.json"
    mropt("generate", "admission", "--jobs", "10", "--seed", "5", "-o", path)
    r = mropt("solve", path, "--profile", "cpsat", "--threads", "2", "--time-limit", "30", "--json")
    assert r.returncode == 0, r.stderr
    sol = json.loads(r.stdout)
    assert sol["method"] == "cpsat" and sol["params"]["threads"] == 2
    assert sol["status"] == "optimal" and sol["bound"] == pytest.approx(sol["objective"])
    direct = json.loads(mropt("solve", path, "-m", "milp-cbc", "--threads", "1", "--json").stdout)
    assert direct["objective"] == pytest.approx(sol["objective"])
    assert_input_error(mropt("solve", path, "--profile", "nosuchprofile"), "nosuchprofile")
    assert_input_error(mropt("solve", path, "--profile", "cpsat", "-m", "amb"), "disagrees")
    assert_input_error(mropt("solve", path, "-m", "amb", "--threads", "2"), "'threads'")
    assert_input_error(mropt("solve", path), "--method")


def test_generator_options_are_the_parameter_fields():
    """Every parameter of a generator is an option, with the dataclass's default."""
    import argparse
    import dataclasses

    from mropt.cli.common import add_param_options, param_fields, params_from_args
    from mropt.cli.main import build_parser
    from mropt.instances.admission_gen import AdmissionParams
    from mropt.instances.fairness_gen import FairnessParams
    from mropt.instances.priority_gen import PriorityParams

    parser = build_parser()
    for kind, cls in (("admission", AdmissionParams), ("priority", PriorityParams), ("fairness", FairnessParams)):
        args = parser.parse_args(["generate", kind])
        assert params_from_args(cls, args) == cls()  # no option given: the paper's defaults
        hidden = {f.name for f in dataclasses.fields(cls)} - {f.name for f in param_fields(cls)}
        assert hidden <= {"history_phi", "history_cv", "heavy_min", "heavy_max", "light_min", "light_max", "mem_unit"}
    args = parser.parse_args(["generate", "admission", "--benefit-min", "10", "--job-type", "x=1,0,2", "--mix", "x"])
    params = params_from_args(AdmissionParams, args)
    assert (
        params.benefit_min == 10
        and params.mix == {"x": 1.0}
        and set(params.job_types) == {"wordcount", "inverted-index", "grep", "x"}
    )

    @dataclasses.dataclass(frozen=True)
    class NewParams:
        rate: float = 0.5
        new_knob: int = dataclasses.field(default=7, metadata={"help": "a new knob (default {default})"})
        switch: bool = False

    p = argparse.ArgumentParser()
    add_param_options(p, NewParams)
    assert "--new-knob NEW_KNOB" in p.format_help() and "a new knob (default 7)" in p.format_help()
    assert params_from_args(NewParams, p.parse_args(["--new-knob", "3", "--switch"])) == NewParams(
        new_knob=3, switch=True
    )
    assert p.parse_args([]).seed == 0


@pytest.mark.parametrize(
    "argv, message",
    [
        (["priority", "--deadlines", "a,b"], "argument --deadlines: expected comma-separated numbers, got 'a,b'"),
        (["admission", "--mix", "a=x"], "argument --mix: expected name=weight,..., got 'a=x'"),
        (
            ["admission", "--job-type", "foo=1,2"],
            "argument --job-type: expected name=map_task_time,reduce_fanout,reduce_task_time, got 'foo=1,2'",
        ),
    ],
)
def test_bad_generator_option_values_say_what_is_expected(argv, message):
    import io
    from contextlib import redirect_stderr

    from mropt.cli.main import build_parser

    err = io.StringIO()
    with redirect_stderr(err), pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["generate", *argv])
    assert exc.value.code == 2 and err.getvalue().strip().endswith(message)
