"""``mropt simulate``'s (and ``solve``'s) errors on a newcomer's first tries: one line, exit 2, saying what to do.

A newcomer with the shared traces often runs ``mropt simulate TRACE`` (or ``solve TRACE``) first. The line stays one
line, exit 2, naming the file and why it is no workload (the JSON reader's words), then the
command that makes a workload of it; a JSON file that is no trace gets no such hint. An option
that needs another (``--history-source``, ``--speculation-param``) is refused before the run,
naming both options.
"""

from __future__ import annotations

import pytest

from cli_capture import Result, assert_input_error, run_cli

SWIM = "job0\t0\t0\t25906\t0\t0\njob1\t80\t80\t0\t0\t214\n"
ALIBABA = "6459,6524,3,4,15740,Terminated,50,0.007956928\n6457,6533,3,5,1,Terminated,50,0.004395206\n"
RUMEN = '{\n  "priority" : "NORMAL",\n  "jobID" : "job_201009241532_0001",\n  "mapTasks" : [ ]\n}\n'


def one_line_error(result: Result) -> str:
    """The one ``mropt: error:`` line of an exit 2 (``assert_input_error``), with nothing on stdout."""
    assert result.out == "", result.out
    return assert_input_error(result)


@pytest.mark.parametrize(
    ("name", "text", "why", "command"),
    [
        ("day.tsv", SWIM, "not valid JSON", "mropt import-swim {path} --workload -o W.json"),
        ("batch_task.csv", ALIBABA, "not valid JSON", "mropt import-alibaba {path} --workload -o W.json"),
        ("wordcount.json", RUMEN, "field 'kind' is missing", "mropt import-rumen {path} -o W.json"),
    ],
    ids=["swim", "alibaba", "rumen"],
)
def test_a_trace_given_to_simulate_names_its_import_command(tmp_path, name, text, why, command):
    path = tmp_path / name
    path.write_text(text)
    line = one_line_error(run_cli("simulate", path, "--policy", "fair"))
    assert line.startswith(f"mropt: error: {path}: ")
    assert why in line
    assert line.endswith(f"not a workload: make one first with `{command.format(path=path)}`")


@pytest.mark.parametrize(
    ("name", "text", "command"),
    [
        ("day.tsv", SWIM, "mropt import-swim {path} -o I.json"),
        ("batch_task.csv", ALIBABA, "mropt import-alibaba {path} -o I.json"),
    ],
    ids=["swim", "alibaba"],
)
def test_a_trace_given_to_solve_names_the_command_of_its_instance(tmp_path, name, text, command):
    path = tmp_path / name
    path.write_text(text)
    line = one_line_error(run_cli("solve", path, "--method", "amb"))
    assert line.startswith(f"mropt: error: {path}: not valid JSON")
    assert line.endswith(f"not an instance: make one first with `{command.format(path=path)}`")


@pytest.mark.parametrize(
    "text",
    ["[1,2,3,4,5,6,7,8]\n", '{"kind": "workload"}\n', '{"jobs": [1,2,3,4,5,6,7]}\n'],
    ids=["list-of-8", "bad-workload", "json-no-jobID"],
)
def test_a_json_file_that_is_no_trace_gets_no_import_hint(tmp_path, text):
    """A JSON document is neither a CSV nor a TSV, whatever its commas; Rumen's jobs name a jobID."""
    path = tmp_path / "w.json"
    path.write_text(text)
    line = one_line_error(run_cli("simulate", path, "--policy", "fair"))
    assert "import" not in line


def test_history_source_without_history_is_refused_before_the_run(tmp_path):
    """It was refused after the run, whose ``--out`` folder was written by then."""
    workload = tmp_path / "w.json"
    assert run_cli("generate", "workload", "--preset", "amb-static", "--jobs", "3", "-o", workload).code == 0
    out = tmp_path / "run"
    argv = ["simulate", workload, "--policy", "fifo", "--history-source", "mine", "--out", out]
    assert one_line_error(run_cli(*argv)) == "mropt: error: option '--history-source' needs --history"
    assert not out.exists()


def test_a_speculation_param_without_a_rule_names_the_option(tmp_path):
    """It was ``speculation 'none': unknown parameter 'lag' (known: none)``, as if 'none' were the list."""
    workload = tmp_path / "w.json"
    assert run_cli("generate", "workload", "--preset", "amb-static", "--jobs", "3", "-o", workload).code == 0
    line = one_line_error(run_cli("simulate", workload, "--policy", "fifo", "--speculation-param", "lag=30"))
    assert "option '--speculation-param' needs --speculation RULE" in line
    assert "'lag=30'" in line


def test_verify_against_another_workload_says_so_first(tmp_path):
    """A run checked against the wrong workload file fails on every attempt; the first line says why."""
    first, second, out = tmp_path / "s1.json", tmp_path / "s2.json", tmp_path / "run"
    for seed, path in ((1, first), (2, second)):
        argv = ["generate", "workload", "--preset", "amb-static", "--jobs", "3", "--seed", seed, "-o", path]
        assert run_cli(*argv).code == 0
    assert run_cli("simulate", first, "--policy", "fifo", "--out", out).code == 0
    assert run_cli("verify", first, out).code == 0
    result = run_cli("verify", second, out)
    assert result.code == 1
    assert result.err_lines[0] == (
        f"mropt verify: the run in {out} is of workload 'amb-static-n3-L150-D1000-s1', "
        f"{second} is 'amb-static-n3-L150-D1000-s2': is it the run's workload?"
    )


def test_a_history_source_already_in_the_database_is_refused_before_the_run(tmp_path):
    """It was refused by the import after the run, whose ``--out`` folder was written by then."""
    workload, db = tmp_path / "w.json", tmp_path / "h.duckdb"
    assert run_cli("generate", "workload", "--preset", "amb-static", "--jobs", "3", "-o", workload).code == 0
    first = run_cli("simulate", workload, "--policy", "fifo", "--history", db, "--out", tmp_path / "run")
    assert first.code == 0, first.err
    again = tmp_path / "again" / "run"  # another folder of the same name: the same source name, 'run'
    line = one_line_error(run_cli("simulate", workload, "--policy", "fifo", "--history", db, "--out", again))
    assert line.startswith(f"mropt: error: {db}: source 'run' is already in the history database (")
    assert line.endswith("give this run another name with --history-source NAME")
    assert not again.exists()
    renamed = run_cli("simulate", workload, "--policy", "fifo", "--history", db, "--history-source", "run-2")
    assert renamed.code == 0, renamed.err
