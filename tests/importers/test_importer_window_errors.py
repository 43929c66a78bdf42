"""The importers' errors on a first try with a real trace: one line, exit 2, and what to do next.

A newcomer's first windows of a trace often miss its rows (a ``--start`` past the trace's day) or
give one importer another format's file (a SWIM TSV to ``import-alibaba``). The line names the
window as given (not rounded to 6 digits), where the file's usable rows are, and why lines were
skipped, by reason; a file with no usable row is asked whether it is the trace's format.
"""

from __future__ import annotations

import pytest

from cli_capture import Result, assert_input_error, run_cli

# two usable rows (created at 100 and 5000 s), one Waiting row with empty requests (Alibaba 2017's schema)
ALIBABA = (
    "task_create_time,task_end_time,job_id,task_id,number_of_instances,status,cpus,memory\n"
    "100,160,1,1,4,Terminated,50,0.01\n"
    "5000,5090,2,1,2,Terminated,100,0.02\n"
    "5100,5100,3,1,1,Waiting,,\n"
)
# the first three rows of SWIM's Facebook 2009 day: six tab-separated columns (the first, not a number, is
# read as a header)
SWIM = "job0\t0\t0\t25906\t0\t0\njob1\t80\t80\t0\t0\t214\njob2\t82\t2\t0\t0\t0\n"


def one_line_error(result: Result) -> str:
    """The one ``mropt: error:`` line of an exit 2 (``assert_input_error``), with nothing on stdout."""
    assert result.out == "", result.out
    return assert_input_error(result)


@pytest.mark.parametrize("workload", [False, True], ids=["fairness", "workload"])
def test_a_window_past_the_rows_names_it_whole_and_where_the_rows_are(tmp_path, workload):
    trace = tmp_path / "batch_task.csv"
    trace.write_text(ALIBABA)
    argv = ["import-alibaba", trace, "--start", "99999999", "-o", tmp_path / "out.json"]
    line = one_line_error(run_cli(*argv, *(["--workload"] if workload else [])))
    end = "end" if workload else "100003599"  # --workload's default duration 0: to the end of the file
    assert f"no usable rows with task_create_time in [99999999, {end})" in line  # not [1e+08, 1.00004e+08)
    assert "2 usable rows in the file, task_create_time 100 to 5000" in line
    assert "skipped 1 (empty_request 1)" in line
    assert not (tmp_path / "out.json").exists()


def test_a_swim_file_given_to_import_alibaba_is_asked_about_its_format(tmp_path):
    trace = tmp_path / "FB-2009.tsv"
    trace.write_text(SWIM)
    line = one_line_error(run_cli("import-alibaba", trace, "-o", tmp_path / "out.json"))
    assert "0 usable rows in the file, skipped 2 (malformed 2)" in line
    assert "is it Alibaba 2017's batch_task.csv, 8 comma-separated fields a line" in line
