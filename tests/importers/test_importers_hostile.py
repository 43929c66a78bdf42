"""Trace importers on bad rows and out-of-range options.

``import-alibaba``: bad rows are skipped and counted, never a crash, and a bad row
never swallows its neighbours. ``import-swim``: option ranges are checked, so no
derived number overflows; a row the model cannot turn into a job is one line naming it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from mropt.importers.alibaba import import_alibaba
from mropt.importers.alibaba_trace import parse_row, read_alibaba_rows
from mropt.importers.swim import SwimParams, import_swim
from mropt.model import InputError

HEADER = "task_create_time,task_end_time,job_id,task_id,number_of_instances,status,cpus,mem\n"
GOOD = ["10,20,1,1,4,Terminated,50,0.01", "12,30,1,2,2,Terminated,100,0.04", "18,40,5,6,1,Running,100,0.02"]


def _csv(tmp_path, lines, name="t.csv"):
    path = tmp_path / name
    path.write_text(HEADER + "\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_stray_double_quote_spoils_only_its_own_line(tmp_path):
    """Before: the quoted field ran on through the file (rows lost) or hit the csv module's
    field-size limit (``_csv.Error: field larger than field limit``, a traceback)."""
    many = [f"{20 + k},{40 + k},{100 + k},{k},1,Terminated,50,0.01" for k in range(3000)]
    path = _csv(tmp_path, [GOOD[0], '"' + GOOD[1], *many, GOOD[2]])
    rows, skipped, _ = read_alibaba_rows(path)
    assert skipped["malformed"] == 1
    assert len(rows) == 3002
    inst = import_alibaba(path, machines=2)
    assert "job5" in inst.ids


@pytest.mark.parametrize(
    "line",
    [
        "inf,20,1,1,4,Terminated,50,0.01",  # int(float("inf")): an OverflowError traceback before
        "10,20,1,1,inf,Terminated,50,0.01",
        "10,20,1,1,nan,Terminated,50,0.01",
        "10,20,1,1,4,Terminated,nan,0.01",
        "10,20,1,1,4,Terminated,1e400,0.01",
        "10,20,1,1,4,Terminated,50,1e300",  # beyond an instance number's magnitudes
        "1" + "0" * 5000 + ",20,1,1,4,Terminated,50,0.01",  # more digits than a float
        "99999999999999999999,20,1,1,4,Terminated,50,0.01",  # beyond 64 bits
        "10,20,1,1,4.5,Terminated,50,0.01",  # a fractional instance count
        "10,20,1,1,1e12,Terminated,50,0.01",  # more instances than MAX_INSTANCES
        "10,20,1,1,4,Terminated,-50,0.01",
        '10,20,1,1,"4\x00",Terminated,50,0.01',  # a NUL byte: csv.Error before
        "10,20,1",
        # the format's rules, one reader for every importer: the history import refuses these lines
        "10,20,1,1,4,Terminated,50,0.01,extra",  # nine fields (was read, the ninth dropped)
        "10,20,,1,4,Terminated,50,0.01",  # an empty job id (was a user 'job')
        "10,20,1,1,-4,Terminated,50,0.01",  # a negative instance count (was no_demand)
    ],
)
def test_bad_numbers_are_malformed_rows(tmp_path, line):
    assert parse_row(line) == "malformed"
    rows, skipped, _ = read_alibaba_rows(_csv(tmp_path, [*GOOD, line]))
    assert len(rows) == 3 and skipped["malformed"] == 1


def test_every_data_line_is_a_row_or_counted_once(tmp_path):
    lines = [
        *GOOD,
        "15,25,2,3,3,Waiting,,",
        "-5,25,3,4,3,Terminated,50,0.01",
        "16,x,4,5,3,Terminated,50,0.01",
        "17,25,6,7,0,Terminated,50,0.01",
        "",
        "   ",
        ",",
        " , ,,",
    ]
    rows, skipped, _ = read_alibaba_rows(_csv(tmp_path, lines))
    assert len(rows) + sum(skipped.values()) == 9  # a line of commas is a malformed row, not a blank line
    assert skipped == {"malformed": 3, "empty_request": 1, "negative_time": 1, "no_demand": 1}


def test_a_job_whose_requests_round_to_nothing_is_left_out(tmp_path):
    """A job asking for 1e-5 cores and 1e-10 memory rounds to 0 on the grid: before, the
    whole import failed ("must ask for some resource")."""
    path = _csv(tmp_path, [*GOOD, "11,20,77,1,1,Terminated,0.001,0.0000000001"])
    inst = import_alibaba(path, machines=2)
    assert "job77" not in inst.ids and len(inst.ids) == 2
    assert inst.meta["source"]["skipped"]["no_demand"] == 1


@pytest.mark.parametrize(
    "option, value, words",
    [
        ("benefit_exponent", 1e9, ["benefit_exponent", "[0, 4]"]),  # overflowed (work / w_ref) ** exponent
        ("map_rate", 1e-320, ["map_rate", "MB/s"]),  # a ValueError (NaN to integer) traceback before
        ("reduce_rate", 1e-320, ["reduce_rate", "MB/s"]),  # an OverflowError traceback before
        ("task_overhead", 1e308, ["task_overhead"]),
        ("slack_max", 1e308, ["slack_max"]),
        ("benefit_ref", 1e308, ["benefit_ref"]),
        ("rho", 1e300, ["rho"]),
        ("start", 1e300, ["start"]),
    ],
)
def test_swim_option_ranges_are_checked(option, value, words):
    with pytest.raises(InputError) as info:
        SwimParams(**{option: value}).check()
    for word in words:
        assert word in str(info.value)


def test_swim_a_row_the_model_cannot_turn_into_a_job_is_named(tmp_path):
    trace = tmp_path / "t.tsv"
    trace.write_text("a\t0\t0\t1\t1\t1\nb\t1\t1\t9000000000000000000\t1\t1\n")
    with pytest.raises(InputError) as info:
        import_swim(trace, partition_bytes=1, source_machines=1, nodes=1_000_000_000)
    message = str(info.value)
    assert "t.tsv line 2" in message and "'map_tasks'" in message and "\n" not in message


def test_swim_cli_huge_exponent_is_one_line(tmp_path):
    trace = tmp_path / "t.tsv"
    trace.write_text("".join(f"j{k}\t{k}\t1\t{10**12 * (k + 1)}\t{10**9}\t1\n" for k in range(20)))
    result = subprocess.run(
        [sys.executable, "-m", "mropt.cli.main", "import-swim", str(trace), "--benefit-exponent", "1e9"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        "mropt: error: import-swim: parameter 'benefit_exponent' must be in [0, 4], got 1000000000.0"
    ]


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("10,20,1,1,4.5,Terminated,50,0.01", "number_of_instances"),
        ("10,x,1,1,4,Terminated,50,0.01", "task_end_time"),
        ("10,20,1,,4,Terminated,50,0.01", "task_id"),
        ("10,20,1,1,4,Terminated,50,-0.01", "normalized_memory_requested_per_instance_in_the_task"),
        ("10,20,1,1,4,Terminated,50,0.01,extra", None),
    ],
)
def test_one_reader_every_importer_reads_a_bad_line_alike(tmp_path, line, field):
    """The models skip the line the history import refuses, naming its line (4) and field."""
    from mropt.importers.alibaba_trace import alibaba_batch

    path = _csv(tmp_path, [*GOOD[:2], line, GOOD[2]])
    rows, skipped, _ = read_alibaba_rows(path)
    assert len(rows) == 3 and skipped["malformed"] == 1
    with pytest.raises(InputError) as info:
        alibaba_batch(path)
    message = str(info.value)
    assert message.startswith("t.csv line 4: ") and "\n" not in message
    assert (f"field '{field}'" in message) if field else "expected 8 comma-separated fields, got 9" in message
