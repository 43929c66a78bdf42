"""``mropt simulate`` given a trace instead of a workload: the one error line names the import command.

A newcomer with the shared traces often runs ``mropt simulate TRACE`` first. The line stays one
line, exit 2, naming the file and why it is no workload (the JSON reader's words), then the
command that makes a workload of it; a JSON file that is no trace gets no such hint.
"""

from __future__ import annotations

import pytest

from tests.cli_capture import run_cli

SWIM = "job0\t0\t0\t25906\t0\t0\njob1\t80\t80\t0\t0\t214\n"
ALIBABA = "6459,6524,3,4,15740,Terminated,50,0.007956928\n6457,6533,3,5,1,Terminated,50,0.004395206\n"
RUMEN = '{\n  "priority" : "NORMAL",\n  "jobID" : "job_201009241532_0001",\n  "mapTasks" : [ ]\n}\n'


def one_line_error(result) -> str:
    assert result.code == 2, result
    assert result.out == ""
    assert len(result.err_lines) == 1, result.err
    assert result.err.startswith("mropt: error: ")
    return result.err_lines[0]


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
